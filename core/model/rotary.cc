#include "core/model/rotary.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>

namespace rung {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Composite (any device/dtype): explicit pair arithmetic on [B, T, G, heads/G, d/2, 2] views.
torch::Tensor CompositeRotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                              const torch::Tensor& scale, double constant) {
  const int64_t batch = x.size(0), time = x.size(1), heads = x.size(2), dim = x.size(3);
  torch::Tensor rotated = x;
  if (cos.defined()) {
    // [T, G, d/2] for every sequence, or [B, T, G, d/2] per sequence (per-document length extension).
    const bool per_row = cos.dim() == 4;
    const int64_t groups = cos.size(per_row ? 2 : 1);
    // At least fp32 (bf16/fp16 inputs are rotated in fp32), double stays double.
    auto pairs = x.to(at::promote_types(x.scalar_type(), torch::kFloat)).reshape({batch, time, groups, heads / groups, dim / 2, 2});
    auto x0 = pairs.select(-1, 0), x1 = pairs.select(-1, 1);
    auto c = per_row ? cos.unsqueeze(3) : cos.unsqueeze(0).unsqueeze(3);
    auto s = per_row ? sin.unsqueeze(3) : sin.unsqueeze(0).unsqueeze(3);
    rotated = torch::stack({x0 * c - x1 * s, x0 * s + x1 * c}, -1).reshape({batch, time, heads, dim});
  }
  if (scale.defined()) rotated = rotated * scale.unsqueeze(0).unsqueeze(-1);
  if (constant != 1.0) rotated = rotated * constant;
  return rotated.to(x.scalar_type()).permute({0, 2, 1, 3}).contiguous();
}

bool FusedApplies(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& scale) {
  return x.device().is_cpu() && x.scalar_type() == torch::kFloat && x.stride(3) == 1 &&
         (!cos.defined() || (cos.dim() == 3 && cos.scalar_type() == torch::kFloat && cos.is_contiguous())) &&
         (!scale.defined() || scale.scalar_type() == torch::kFloat);
}

// One part of a [B, T, P, d] input for the fused kernels: `heads` heads from `first_head` on, each
// rotated by tables [T, groups, d/2] (none: null), scaled by scale[t, h] (none: null) and `constant`.
struct RotaryPart {
  int64_t first_head = 0, heads = 0, groups = 1;
  const float* cos = nullptr;
  const float* sin = nullptr;
  const float* scale = nullptr;
  float constant = 1.0f;
};

// Strides (in elements) of a [B, T, P, d] tensor whose last dimension is contiguous.
struct RowStrides {
  int64_t batch, time, head;
};

// out [B, part.heads, T, d] from the part's rows of x: one pass.
void RotatePartForward(const float* xp, RowStrides x, int64_t batch, int64_t time, int64_t dim, const RotaryPart& part,
                       float* op) {
  const int64_t heads = part.heads, half = dim / 2, heads_per_group = heads / part.groups;
  at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads, g = h / heads_per_group;
      for (int64_t t = 0; t < time; ++t) {
        const float* src = xp + b * x.batch + t * x.time + (part.first_head + h) * x.head;
        float* dst = op + ((b * heads + h) * time + t) * dim;
        const float factor = part.constant * (part.scale ? part.scale[t * heads + h] : 1.0f);
        if (part.cos == nullptr) {
          for (int64_t e = 0; e < dim; ++e) dst[e] = factor * src[e];
          continue;
        }
        const float* c = part.cos + (t * part.groups + g) * half;
        const float* s = part.sin + (t * part.groups + g) * half;
        for (int64_t f = 0; f < half; ++f) {
          const float x0 = src[2 * f], x1 = src[2 * f + 1];
          dst[2 * f] = factor * (x0 * c[f] - x1 * s[f]);
          dst[2 * f + 1] = factor * (x0 * s[f] + x1 * c[f]);
        }
      }
    }
  });
}

// The backward of RotatePartForward from its output's gradient [B, part.heads, T, d]: the input's
// gradient written at the part's rows of gx (strides `gx_strides`; null: not needed), and per-(batch,
// head) partial sums of the tables' gradients ([B * heads, T, d/2]; null: not needed) and the scale's
// ([B, T, heads]; null: not needed).
void RotatePartBackward(const float* xp, RowStrides x, const float* gp, int64_t batch, int64_t time, int64_t dim,
                        const RotaryPart& part, float* gxp, RowStrides gx_strides, float* gcp, float* gsp,
                        float* gscp) {
  const int64_t heads = part.heads, half = dim / 2, heads_per_group = heads / part.groups;
  const float constant = part.constant;
  at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / heads, h = bh % heads, g = h / heads_per_group;
      for (int64_t t = 0; t < time; ++t) {
        const float* src = xp + b * x.batch + t * x.time + (part.first_head + h) * x.head;
        const float* go = gp + ((b * heads + h) * time + t) * dim;
        float* gx = gxp ? gxp + b * gx_strides.batch + t * gx_strides.time + (part.first_head + h) * gx_strides.head
                        : nullptr;
        const float factor = constant * (part.scale ? part.scale[t * heads + h] : 1.0f);
        // One branch-free loop per gradient asked for (each vectorizes on its own).
        if (part.cos == nullptr) {
          if (gx) {
            for (int64_t e = 0; e < dim; ++e) gx[e] = factor * go[e];
          }
          if (gscp) {
            float dot = 0.0f;
            for (int64_t e = 0; e < dim; ++e) dot += go[e] * src[e];
            gscp[(b * time + t) * heads + h] = constant * dot;
          }
          continue;
        }
        const float* c = part.cos + (t * part.groups + g) * half;
        const float* s = part.sin + (t * part.groups + g) * half;
        if (gx) {
          for (int64_t f = 0; f < half; ++f) {
            const float g0 = go[2 * f], g1 = go[2 * f + 1];
            gx[2 * f] = factor * (g0 * c[f] + g1 * s[f]);
            gx[2 * f + 1] = factor * (-g0 * s[f] + g1 * c[f]);
          }
        }
        if (gcp) {
          for (int64_t f = 0; f < half; ++f) {
            const float x0 = src[2 * f], x1 = src[2 * f + 1];
            const float g0 = go[2 * f], g1 = go[2 * f + 1];
            gcp[(bh * time + t) * half + f] = factor * (g0 * x0 + g1 * x1);
            gsp[(bh * time + t) * half + f] = factor * (g1 * x0 - g0 * x1);
          }
        }
        if (gscp) {
          float dot = 0.0f;
          for (int64_t f = 0; f < half; ++f) {
            const float x0 = src[2 * f], x1 = src[2 * f + 1];
            const float g0 = go[2 * f], g1 = go[2 * f + 1];
            dot += g0 * (x0 * c[f] - x1 * s[f]) + g1 * (x0 * s[f] + x1 * c[f]);
          }
          gscp[(b * time + t) * heads + h] = constant * dot;
        }
      }
    }
  });
}

// [B * heads, T, half] partial sums -> [T, G, half]: summed over the batch and the heads of a group.
torch::Tensor ReduceTableParts(const torch::Tensor& parts, int64_t batch, int64_t heads, int64_t groups) {
  const int64_t time = parts.size(1), half = parts.size(2);
  return parts.view({batch, groups, heads / groups, time, half})
      .sum(std::vector<int64_t>{0, 2})
      .permute({1, 0, 2})
      .contiguous();
}

RowStrides StridesOf(const torch::Tensor& x) { return {x.stride(0), x.stride(1), x.stride(2)}; }

// A part's table gradients: partial-sum buffers when the tables need a gradient.
struct TableGradientParts {
  torch::Tensor cos, sin;
  float* cos_data() { return cos.defined() ? cos.data_ptr<float>() : nullptr; }
  float* sin_data() { return sin.defined() ? sin.data_ptr<float>() : nullptr; }
};
TableGradientParts MakeTableGradientParts(bool needed, int64_t batch, int64_t heads, int64_t time, int64_t half,
                                          const torch::TensorOptions& options) {
  if (!needed) return {};
  return {torch::zeros({batch * heads, time, half}, options), torch::zeros({batch * heads, time, half}, options)};
}

// The part of x [B, T, heads, d] from first_head on with these tables (empty: none) and scale.
RotaryPart PartOf(int64_t first_head, int64_t heads, const torch::Tensor& cos, const torch::Tensor& sin,
                  const torch::Tensor& scale, double constant) {
  RotaryPart part;
  part.first_head = first_head;
  part.heads = heads;
  if (cos.defined() && cos.numel() > 0) {
    part.groups = cos.size(1);
    part.cos = cos.data_ptr<float>();
    part.sin = sin.data_ptr<float>();
  }
  part.scale = scale.defined() && scale.numel() > 0 ? scale.data_ptr<float>() : nullptr;
  part.constant = static_cast<float>(constant);
  return part;
}

// Fused CPU kernel: one pass over x, writes the transposed output.
class FusedRotary : public torch::autograd::Function<FusedRotary> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& cos,
                               const torch::Tensor& sin, const torch::Tensor& scale, double constant) {
    RECORD_FUNCTION("rung::RotateAndTranspose", c10::ArrayRef<const c10::IValue>{});
    const int64_t batch = x.size(0), time = x.size(1), heads = x.size(2), dim = x.size(3);
    auto out = torch::empty({batch, heads, time, dim}, x.options());
    auto scale_c = scale.contiguous();
    RotatePartForward(x.data_ptr<float>(), StridesOf(x), batch, time, dim, PartOf(0, heads, cos, sin, scale_c, constant),
                      out.data_ptr<float>());
    ctx->save_for_backward({x, cos, sin, scale_c});
    ctx->saved_data["constant"] = constant;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &cos = saved[1], &sin = saved[2], &scale = saved[3];
    torch::Tensor grad = grad_outputs[0].contiguous();
    const int64_t batch = x.size(0), time = x.size(1), heads = x.size(2), dim = x.size(3);
    const RotaryPart part = PartOf(0, heads, cos, sin, scale, ctx->saved_data["constant"].toDouble());
    const bool need_x = ctx->needs_input_grad(0);
    const bool need_table = part.cos != nullptr && (ctx->needs_input_grad(1) || ctx->needs_input_grad(2));
    const bool need_scale = part.scale != nullptr && ctx->needs_input_grad(3);
    torch::Tensor grad_x = need_x ? torch::empty({batch, time, heads, dim}, x.options()) : torch::Tensor();
    // Per-(batch, head) partial sums for the tables and scale, reduced afterwards (no races).
    TableGradientParts table_parts = MakeTableGradientParts(need_table, batch, heads, time, dim / 2, x.options());
    torch::Tensor grad_scale_parts = need_scale ? torch::zeros({batch, time, heads}, x.options()) : torch::Tensor();
    RotatePartBackward(x.data_ptr<float>(), StridesOf(x), grad.data_ptr<float>(), batch, time, dim, part,
                       need_x ? grad_x.data_ptr<float>() : nullptr,
                       need_x ? StridesOf(grad_x) : RowStrides{0, 0, 0}, table_parts.cos_data(),
                       table_parts.sin_data(), need_scale ? grad_scale_parts.data_ptr<float>() : nullptr);
    torch::Tensor grad_cos, grad_sin, grad_scale;
    if (need_table) {
      grad_cos = ReduceTableParts(table_parts.cos, batch, heads, part.groups);
      grad_sin = ReduceTableParts(table_parts.sin, batch, heads, part.groups);
    }
    if (need_scale) grad_scale = grad_scale_parts.sum(0);
    return {grad_x, grad_cos, grad_sin, grad_scale, torch::Tensor()};
  }
};

// Fused CPU kernel over the whole q/k/v projection [B, T, heads + 2 kv, d]: q, k and v heads in one
// pass each way, and one gradient for the projection (no zero fill per slice, no sum of three).
class FusedQkvRotary : public torch::autograd::Function<FusedQkvRotary> {
 public:
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& qkv, const torch::Tensor& cos,
                               const torch::Tensor& sin, const torch::Tensor& key_cos, const torch::Tensor& key_sin,
                               const torch::Tensor& scale, int64_t heads, double constant) {
    RECORD_FUNCTION("rung::RotateQkvAndTranspose", c10::ArrayRef<const c10::IValue>{});
    const int64_t batch = qkv.size(0), time = qkv.size(1), kv = (qkv.size(2) - heads) / 2, dim = qkv.size(3);
    auto q = torch::empty({batch, heads, time, dim}, qkv.options());
    auto k = torch::empty({batch, kv, time, dim}, qkv.options());
    auto v = torch::empty({batch, kv, time, dim}, qkv.options());
    auto scale_c = scale.contiguous();
    const float* xp = qkv.data_ptr<float>();
    const RowStrides strides = StridesOf(qkv);
    RotatePartForward(xp, strides, batch, time, dim, PartOf(0, heads, cos, sin, scale_c, constant),
                      q.data_ptr<float>());
    RotatePartForward(xp, strides, batch, time, dim, KeyPart(heads, kv, cos, sin, key_cos, key_sin),
                      k.data_ptr<float>());
    RotatePartForward(xp, strides, batch, time, dim, ValuePart(heads, kv), v.data_ptr<float>());
    ctx->save_for_backward({qkv, cos, sin, key_cos, key_sin, scale_c});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["constant"] = constant;
    return {q, k, v};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &qkv = saved[0], &cos = saved[1], &sin = saved[2], &key_cos = saved[3],
                        &key_sin = saved[4], &scale = saved[5];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const int64_t batch = qkv.size(0), time = qkv.size(1), kv = (qkv.size(2) - heads) / 2, dim = qkv.size(3);
    const RotaryPart q_part = PartOf(0, heads, cos, sin, scale, ctx->saved_data["constant"].toDouble());
    const RotaryPart k_part = KeyPart(heads, kv, cos, sin, key_cos, key_sin);
    const bool own_key_tables = key_cos.numel() > 0;
    const bool need_x = ctx->needs_input_grad(0);
    const bool need_table = q_part.cos != nullptr && (ctx->needs_input_grad(1) || ctx->needs_input_grad(2));
    const bool need_key_table = own_key_tables && (ctx->needs_input_grad(3) || ctx->needs_input_grad(4));
    const bool need_scale = q_part.scale != nullptr && ctx->needs_input_grad(5);
    // Every element of the projection's gradient is written by one of the three parts.
    torch::Tensor grad_qkv = need_x ? torch::empty(qkv.sizes(), qkv.options()) : torch::Tensor();
    float* gxp = need_x ? grad_qkv.data_ptr<float>() : nullptr;
    const RowStrides gx_strides = need_x ? StridesOf(grad_qkv) : RowStrides{0, 0, 0};
    const float* xp = qkv.data_ptr<float>();
    const RowStrides strides = StridesOf(qkv);
    const int64_t half = dim / 2;
    TableGradientParts q_tables = MakeTableGradientParts(need_table, batch, heads, time, half, qkv.options());
    // The keys' tables: their own, or q's (whose gradient then sums both parts).
    TableGradientParts k_tables =
        MakeTableGradientParts(own_key_tables ? need_key_table : need_table, batch, kv, time, half, qkv.options());
    torch::Tensor grad_scale_parts = need_scale ? torch::zeros({batch, time, heads}, qkv.options()) : torch::Tensor();
    auto grad_of = [](const torch::Tensor& grad, const torch::Tensor& like) {
      return grad.defined() ? grad.contiguous() : torch::zeros(like.sizes(), like.options());
    };
    const torch::Tensor grad_q = grad_of(grad_outputs[0], qkv.narrow(2, 0, heads).transpose(1, 2));
    const torch::Tensor grad_k = grad_of(grad_outputs[1], qkv.narrow(2, heads, kv).transpose(1, 2));
    const torch::Tensor grad_v = grad_of(grad_outputs[2], qkv.narrow(2, heads + kv, kv).transpose(1, 2));
    RotatePartBackward(xp, strides, grad_q.data_ptr<float>(), batch, time, dim, q_part, gxp, gx_strides,
                       q_tables.cos_data(), q_tables.sin_data(),
                       need_scale ? grad_scale_parts.data_ptr<float>() : nullptr);
    RotatePartBackward(xp, strides, grad_k.data_ptr<float>(), batch, time, dim, k_part, gxp, gx_strides,
                       k_tables.cos_data(), k_tables.sin_data(), nullptr);
    RotatePartBackward(xp, strides, grad_v.data_ptr<float>(), batch, time, dim, ValuePart(heads, kv), gxp, gx_strides,
                       nullptr, nullptr, nullptr);
    torch::Tensor grad_cos, grad_sin, grad_key_cos, grad_key_sin, grad_scale;
    if (need_table) {
      grad_cos = ReduceTableParts(q_tables.cos, batch, heads, q_part.groups);
      grad_sin = ReduceTableParts(q_tables.sin, batch, heads, q_part.groups);
    }
    if (k_tables.cos.defined()) {
      torch::Tensor from_keys_cos = ReduceTableParts(k_tables.cos, batch, kv, k_part.groups);
      torch::Tensor from_keys_sin = ReduceTableParts(k_tables.sin, batch, kv, k_part.groups);
      if (own_key_tables) {
        grad_key_cos = from_keys_cos;
        grad_key_sin = from_keys_sin;
      } else {
        grad_cos = grad_cos + from_keys_cos;
        grad_sin = grad_sin + from_keys_sin;
      }
    }
    if (need_scale) grad_scale = grad_scale_parts.sum(0);
    return {grad_qkv, grad_cos, grad_sin, grad_key_cos, grad_key_sin, grad_scale, torch::Tensor(), torch::Tensor()};
  }

 private:
  static RotaryPart KeyPart(int64_t heads, int64_t kv, const torch::Tensor& cos, const torch::Tensor& sin,
                            const torch::Tensor& key_cos, const torch::Tensor& key_sin) {
    const bool own = key_cos.numel() > 0;
    return PartOf(heads, kv, own ? key_cos : cos, own ? key_sin : sin, torch::Tensor(), 1.0);
  }
  static RotaryPart ValuePart(int64_t heads, int64_t kv) {
    RotaryPart part;
    part.first_head = heads + kv;
    part.heads = kv;
    return part;
  }
};

}  // namespace

torch::Tensor RotateAndTranspose(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                                 const torch::Tensor& scale, double constant, RotaryImplementation implementation) {
  TORCH_CHECK(x.dim() == 4, "RotateAndTranspose: x must be [B, T, heads, d]");
  TORCH_CHECK(cos.defined() == sin.defined(), "RotateAndTranspose: cos and sin go together");
  if (cos.defined()) {
    const bool per_row = cos.dim() == 4;
    const int64_t offset = per_row ? 1 : 0;
    TORCH_CHECK((cos.dim() == 3 || (per_row && cos.size(0) == x.size(0))) && cos.size(offset) == x.size(1) &&
                    cos.size(offset + 2) * 2 == x.size(3) && x.size(2) % cos.size(offset + 1) == 0,
                "RotateAndTranspose: tables must be [T, G, d/2] or [B, T, G, d/2] with G dividing heads");
  }
  bool fused = implementation == RotaryImplementation::kFusedCpu ||
               (implementation == RotaryImplementation::kAuto && FusedApplies(x, cos, scale));
  if (fused) {
    TORCH_CHECK(FusedApplies(x, cos, scale), "RotateAndTranspose: fused kernel needs fp32 CPU input");
    // LibTorch 1.13's Function::apply cannot take undefined tensors: absent inputs travel as empty ones.
    auto absent = torch::empty({0}, x.options().requires_grad(false));
    return FusedRotary::apply(x, cos.defined() ? cos : absent, sin.defined() ? sin : absent,
                              scale.defined() ? scale : absent, constant);
  }
  return CompositeRotate(x, cos, sin, scale, constant);
}

namespace {

// Tables [T, G, d/2] (fp32, contiguous) for `heads` heads, or none.
bool FusedTablesApply(const torch::Tensor& cos, const torch::Tensor& sin, int64_t time, int64_t heads, int64_t dim) {
  if (!cos.defined()) return true;
  for (const torch::Tensor* table : {&cos, &sin}) {
    if (table->dim() != 3 || table->scalar_type() != torch::kFloat || !table->is_contiguous() ||
        table->size(0) != time || table->size(2) * 2 != dim || heads % table->size(1) != 0 ||
        table->sizes() != cos.sizes()) {
      return false;
    }
  }
  return true;
}

}  // namespace

RotatedHeads RotateQkvAndTranspose(const torch::Tensor& qkv, int64_t heads, const torch::Tensor& cos,
                                   const torch::Tensor& sin, const torch::Tensor& key_cos, const torch::Tensor& key_sin,
                                   const torch::Tensor& scale, double constant, RotaryImplementation implementation) {
  TORCH_CHECK(qkv.dim() == 4 && heads > 0 && (qkv.size(2) - heads) > 0 && (qkv.size(2) - heads) % 2 == 0,
              "RotateQkvAndTranspose: qkv must be [B, T, heads + 2 kv_heads, d]");
  TORCH_CHECK(cos.defined() == sin.defined() && key_cos.defined() == key_sin.defined(),
              "RotateQkvAndTranspose: cos and sin go together");
  const int64_t kv = (qkv.size(2) - heads) / 2, time = qkv.size(1), dim = qkv.size(3);
  const bool own_key_tables = key_cos.defined();
  const bool fusable = qkv.device().is_cpu() && qkv.scalar_type() == torch::kFloat && qkv.is_contiguous() &&
                       FusedTablesApply(cos, sin, time, heads, dim) &&
                       (own_key_tables ? FusedTablesApply(key_cos, key_sin, time, kv, dim)
                                       : FusedTablesApply(cos, sin, time, kv, dim)) &&
                       (!scale.defined() || (scale.dim() == 2 && scale.scalar_type() == torch::kFloat &&
                                             scale.size(0) == time && scale.size(1) == heads));
  const bool fused = implementation == RotaryImplementation::kFusedCpu ||
                     (implementation == RotaryImplementation::kAuto && fusable);
  if (fused) {
    TORCH_CHECK(fusable, "RotateQkvAndTranspose: the fused kernel needs contiguous fp32 CPU input, tables "
                         "[T, G, d/2] with G dividing the heads they rotate, and a scale [T, heads]");
    // LibTorch 1.13's Function::apply cannot take undefined tensors: absent inputs travel as empty ones.
    auto absent = torch::empty({0}, qkv.options().requires_grad(false));
    auto given = [&](const torch::Tensor& t) { return t.defined() ? t : absent; };
    variable_list out = FusedQkvRotary::apply(qkv, given(cos), given(sin), given(key_cos), given(key_sin), given(scale),
                                              heads, constant);
    return {out[0], out[1], out[2]};
  }
  const RotaryImplementation each = implementation == RotaryImplementation::kFusedCpu ? RotaryImplementation::kAuto
                                                                                      : implementation;
  RotatedHeads out;
  out.q = RotateAndTranspose(qkv.narrow(2, 0, heads), cos, sin, scale, constant, each);
  out.k = RotateAndTranspose(qkv.narrow(2, heads, kv), own_key_tables ? key_cos : cos, own_key_tables ? key_sin : sin,
                             torch::Tensor(), 1.0, each);
  out.v = RotateAndTranspose(qkv.narrow(2, heads + kv, kv), torch::Tensor(), torch::Tensor(), torch::Tensor(), 1.0, each);
  return out;
}

}  // namespace rung

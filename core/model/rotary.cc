#include "core/model/rotary.h"

#include <ATen/Parallel.h>

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

// Fused CPU kernel: one pass over x, writes the transposed output.
class FusedRotary : public torch::autograd::Function<FusedRotary> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& cos,
                               const torch::Tensor& sin, const torch::Tensor& scale, double constant) {
    const int64_t batch = x.size(0), time = x.size(1), heads = x.size(2), dim = x.size(3);
    const bool rotate = cos.numel() > 0;
    const int64_t groups = rotate ? cos.size(1) : 1;
    const int64_t heads_per_group = heads / groups;
    auto out = torch::empty({batch, heads, time, dim}, x.options());
    auto scale_c = scale.contiguous();
    const float* xp = x.data_ptr<float>();
    const float* cp = rotate ? cos.data_ptr<float>() : nullptr;
    const float* sp = rotate ? sin.data_ptr<float>() : nullptr;
    const float* scp = scale_c.numel() > 0 ? scale_c.data_ptr<float>() : nullptr;
    float* op = out.data_ptr<float>();
    const int64_t sb = x.stride(0), st = x.stride(1), sh = x.stride(2);
    const int64_t half = dim / 2;
    at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / heads, h = bh % heads, g = h / heads_per_group;
        for (int64_t t = 0; t < time; ++t) {
          const float* src = xp + b * sb + t * st + h * sh;
          float* dst = op + ((b * heads + h) * time + t) * dim;
          const float factor = static_cast<float>(constant) * (scp ? scp[t * heads + h] : 1.0f);
          if (!rotate) {
            for (int64_t e = 0; e < dim; ++e) dst[e] = factor * src[e];
            continue;
          }
          const float* c = cp + (t * groups + g) * half;
          const float* s = sp + (t * groups + g) * half;
          for (int64_t f = 0; f < half; ++f) {
            const float x0 = src[2 * f], x1 = src[2 * f + 1];
            dst[2 * f] = factor * (x0 * c[f] - x1 * s[f]);
            dst[2 * f + 1] = factor * (x0 * s[f] + x1 * c[f]);
          }
        }
      }
    });
    ctx->save_for_backward({x, cos, sin, scale_c});
    ctx->saved_data["constant"] = constant;
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &cos = saved[1], &sin = saved[2], &scale = saved[3];
    torch::Tensor grad = grad_outputs[0].contiguous();
    const int64_t batch = x.size(0), time = x.size(1), heads = x.size(2), dim = x.size(3);
    const float constant = static_cast<float>(ctx->saved_data["constant"].toDouble());
    const bool rotate = cos.numel() > 0;
    const bool scaled = scale.numel() > 0;
    const int64_t groups = rotate ? cos.size(1) : 1;
    const int64_t heads_per_group = heads / groups;
    const int64_t half = dim / 2;
    const bool need_x = ctx->needs_input_grad(0);
    const bool need_table = rotate && (ctx->needs_input_grad(1) || ctx->needs_input_grad(2));
    const bool need_scale = scaled && ctx->needs_input_grad(3);

    torch::Tensor grad_x = need_x ? torch::empty({batch, time, heads, dim}, x.options()) : torch::Tensor();
    // Per-(batch, head) partial sums for the tables and scale, reduced afterwards (no races).
    torch::Tensor grad_cos_parts, grad_sin_parts, grad_scale_parts;
    if (need_table) {
      grad_cos_parts = torch::zeros({batch * heads, time, half}, x.options());
      grad_sin_parts = torch::zeros({batch * heads, time, half}, x.options());
    }
    if (need_scale) grad_scale_parts = torch::zeros({batch, time, heads}, x.options());

    const float* xp = x.data_ptr<float>();
    const float* gp = grad.data_ptr<float>();
    const float* cp = rotate ? cos.data_ptr<float>() : nullptr;
    const float* sp = rotate ? sin.data_ptr<float>() : nullptr;
    const float* scp = scaled ? scale.data_ptr<float>() : nullptr;
    float* gxp = need_x ? grad_x.data_ptr<float>() : nullptr;
    float* gcp = need_table ? grad_cos_parts.data_ptr<float>() : nullptr;
    float* gsp = need_table ? grad_sin_parts.data_ptr<float>() : nullptr;
    float* gscp = need_scale ? grad_scale_parts.data_ptr<float>() : nullptr;
    const int64_t sb = x.stride(0), st = x.stride(1), sh = x.stride(2);

    at::parallel_for(0, batch * heads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / heads, h = bh % heads, g = h / heads_per_group;
        for (int64_t t = 0; t < time; ++t) {
          const float* src = xp + b * sb + t * st + h * sh;
          const float* go = gp + ((b * heads + h) * time + t) * dim;
          float* gx = need_x ? gxp + ((b * time + t) * heads + h) * dim : nullptr;
          const float factor = constant * (scp ? scp[t * heads + h] : 1.0f);
          if (!rotate) {
            float dot = 0.0f;
            for (int64_t e = 0; e < dim; ++e) {
              if (gx) gx[e] = factor * go[e];
              dot += go[e] * src[e];
            }
            if (gscp) gscp[(b * time + t) * heads + h] = constant * dot;
            continue;
          }
          const float* c = cp + (t * groups + g) * half;
          const float* s = sp + (t * groups + g) * half;
          float dot = 0.0f;
          for (int64_t f = 0; f < half; ++f) {
            const float x0 = src[2 * f], x1 = src[2 * f + 1];
            const float g0 = go[2 * f], g1 = go[2 * f + 1];
            if (gx) {
              gx[2 * f] = factor * (g0 * c[f] + g1 * s[f]);
              gx[2 * f + 1] = factor * (-g0 * s[f] + g1 * c[f]);
            }
            if (gcp) {
              gcp[(bh * time + t) * half + f] = factor * (g0 * x0 + g1 * x1);
              gsp[(bh * time + t) * half + f] = factor * (g1 * x0 - g0 * x1);
            }
            if (gscp) dot += g0 * (x0 * c[f] - x1 * s[f]) + g1 * (x0 * s[f] + x1 * c[f]);
          }
          if (gscp) gscp[(b * time + t) * heads + h] = constant * dot;
        }
      }
    });

    torch::Tensor grad_cos, grad_sin, grad_scale;
    if (need_table) {
      // [B*H, T, half] -> [B, G, H/G, T, half] -> sum over batch and heads of a group -> [T, G, half]
      auto reduce = [&](const torch::Tensor& parts) {
        return parts.view({batch, groups, heads_per_group, time, half}).sum(std::vector<int64_t>{0, 2}).permute({1, 0, 2}).contiguous();
      };
      grad_cos = reduce(grad_cos_parts);
      grad_sin = reduce(grad_sin_parts);
    }
    if (need_scale) grad_scale = grad_scale_parts.sum(0);
    return {grad_x, grad_cos, grad_sin, grad_scale, torch::Tensor()};
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

}  // namespace rung

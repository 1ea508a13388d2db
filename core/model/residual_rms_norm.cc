// Compiled with -O3 -ffast-math (core/CMakeLists.txt) so that GCC vectorizes the row loops and their
// sums; nothing here tests for NaN or infinity.
#include "core/model/residual_rms_norm.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>

#include "core/model/row_grain.h"

namespace rung {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows [begin, end) of d elements: residual = x + delta (when delta is given), then normed and the
// row's inverse RMS.
template <typename T>
inline __attribute__((always_inline)) void ForwardRowsOf(const T* x, const T* delta, const T* weight, T* residual,
                                                         T* normed, T* inv_rms, int64_t begin, int64_t end,
                                                         int64_t d, T eps) {
  for (int64_t row = begin; row < end; ++row) {
    const T* xr = x + row * d;
    const T* source = xr;
    T squares = 0;
    if (delta != nullptr) {
      const T* dr = delta + row * d;
      T* rr = residual + row * d;
      for (int64_t j = 0; j < d; ++j) {
        const T sum = xr[j] + dr[j];
        rr[j] = sum;
        squares += sum * sum;
      }
      source = rr;
    } else {
      for (int64_t j = 0; j < d; ++j) squares += xr[j] * xr[j];
    }
    const T inv = T(1) / std::sqrt(squares / static_cast<T>(d) + eps);
    inv_rms[row] = inv;
    T* nr = normed + row * d;
    for (int64_t j = 0; j < d; ++j) nr[j] = source[j] * inv * weight[j];
  }
}

// Rows [begin, end): grad_x = inv g w - inv^3 r (sum_j g_j w_j r_j) / d (+ the gradient reaching the
// residual itself), and this chunk's share of grad_weight += g r inv.
template <typename T>
inline __attribute__((always_inline)) void BackwardRowsOf(const T* residual, const T* inv_rms, const T* weight,
                                                          const T* grad_normed, const T* grad_residual, T* grad_x,
                                                          T* grad_weight, int64_t begin, int64_t end, int64_t d) {
  for (int64_t row = begin; row < end; ++row) {
    const T* rr = residual + row * d;
    const T* gr = grad_normed + row * d;
    const T inv = inv_rms[row];
    T dot = 0;
    for (int64_t j = 0; j < d; ++j) dot += gr[j] * weight[j] * rr[j];
    const T coefficient = inv * inv * inv * dot / static_cast<T>(d);
    if (grad_x != nullptr) {
      T* gx = grad_x + row * d;
      if (grad_residual != nullptr) {
        const T* up = grad_residual + row * d;
        for (int64_t j = 0; j < d; ++j) gx[j] = inv * gr[j] * weight[j] - coefficient * rr[j] + up[j];
      } else {
        for (int64_t j = 0; j < d; ++j) gx[j] = inv * gr[j] * weight[j] - coefficient * rr[j];
      }
    }
    if (grad_weight != nullptr) {
      for (int64_t j = 0; j < d; ++j) grad_weight[j] += gr[j] * rr[j] * inv;
    }
  }
}

__attribute__((target_clones("avx2", "default"))) void ForwardRows(const float* x, const float* delta,
                                                                    const float* weight, float* residual,
                                                                    float* normed, float* inv_rms, int64_t begin,
                                                                    int64_t end, int64_t d, float eps) {
  ForwardRowsOf(x, delta, weight, residual, normed, inv_rms, begin, end, d, eps);
}
void ForwardRows(const double* x, const double* delta, const double* weight, double* residual, double* normed,
                 double* inv_rms, int64_t begin, int64_t end, int64_t d, double eps) {
  ForwardRowsOf(x, delta, weight, residual, normed, inv_rms, begin, end, d, eps);
}
__attribute__((target_clones("avx2", "default"))) void BackwardRows(const float* residual, const float* inv_rms,
                                                                     const float* weight, const float* grad_normed,
                                                                     const float* grad_residual, float* grad_x,
                                                                     float* grad_weight, int64_t begin, int64_t end,
                                                                     int64_t d) {
  BackwardRowsOf(residual, inv_rms, weight, grad_normed, grad_residual, grad_x, grad_weight, begin, end, d);
}
void BackwardRows(const double* residual, const double* inv_rms, const double* weight, const double* grad_normed,
                  const double* grad_residual, double* grad_x, double* grad_weight, int64_t begin, int64_t end,
                  int64_t d) {
  BackwardRowsOf(residual, inv_rms, weight, grad_normed, grad_residual, grad_x, grad_weight, begin, end, d);
}

template <typename T>
const T* DataOrNull(const torch::Tensor& tensor) {
  return tensor.defined() && tensor.numel() > 0 ? tensor.data_ptr<T>() : nullptr;
}

class FusedResidualRmsNorm : public torch::autograd::Function<FusedResidualRmsNorm> {
 public:
  // delta: an empty tensor for none. Returns {residual, normed}, or {normed} without delta.
  static variable_list forward(AutogradContext* ctx, const torch::Tensor& x, const torch::Tensor& delta,
                               const torch::Tensor& weight, double eps) {
    RECORD_FUNCTION("rung::AddRmsNorm", c10::ArrayRef<const c10::IValue>{});
    const bool has_delta = delta.numel() > 0;
    const int64_t d = x.size(-1), rows = x.numel() / d;
    torch::Tensor residual = has_delta ? torch::empty_like(x) : x;
    torch::Tensor normed = torch::empty_like(x);
    torch::Tensor inv_rms = torch::empty({rows}, x.options());
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "AddRmsNorm", [&] {
      const scalar_t* xp = x.data_ptr<scalar_t>();
      const scalar_t* dp = has_delta ? delta.data_ptr<scalar_t>() : nullptr;
      const scalar_t* wp = weight.data_ptr<scalar_t>();
      scalar_t* rp = has_delta ? residual.data_ptr<scalar_t>() : nullptr;
      scalar_t* np = normed.data_ptr<scalar_t>();
      scalar_t* ip = inv_rms.data_ptr<scalar_t>();
      at::parallel_for(0, rows, RowGrain(d), [&](int64_t begin, int64_t end) {
        ForwardRows(xp, dp, wp, rp, np, ip, begin, end, d, static_cast<scalar_t>(eps));
      });
    });
    ctx->save_for_backward({residual, inv_rms, weight});
    ctx->saved_data["has_delta"] = has_delta;
    if (!has_delta) return {normed};
    return {residual, normed};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &residual = saved[0], &inv_rms = saved[1], &weight = saved[2];
    const bool has_delta = ctx->saved_data["has_delta"].toBool();
    const torch::Tensor grad_residual = has_delta && grad_outputs[0].defined() ? grad_outputs[0].contiguous() : torch::Tensor();
    torch::Tensor grad_normed = grad_outputs[has_delta ? 1 : 0];
    const bool need_x = ctx->needs_input_grad(0) || (has_delta && ctx->needs_input_grad(1));
    const bool need_weight = ctx->needs_input_grad(2);
    if (!grad_normed.defined()) {  // only the residual was used
      return {grad_residual, has_delta ? grad_residual : torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
    grad_normed = grad_normed.contiguous();
    const int64_t d = residual.size(-1), rows = residual.numel() / d;
    torch::Tensor grad_x = need_x ? torch::empty_like(residual) : torch::Tensor();
    // One partial grad_weight per chunk of rows, summed afterwards: no races, and the same sum for
    // the same thread count.
    const int64_t chunks = std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), rows / RowGrain(d)));
    torch::Tensor weight_parts = need_weight ? torch::zeros({chunks, d}, residual.options()) : torch::Tensor();
    AT_DISPATCH_FLOATING_TYPES(residual.scalar_type(), "AddRmsNormBackward", [&] {
      const scalar_t* rp = residual.data_ptr<scalar_t>();
      const scalar_t* ip = inv_rms.data_ptr<scalar_t>();
      const scalar_t* wp = weight.data_ptr<scalar_t>();
      const scalar_t* gp = grad_normed.data_ptr<scalar_t>();
      const scalar_t* up = DataOrNull<scalar_t>(grad_residual);
      scalar_t* gxp = need_x ? grad_x.data_ptr<scalar_t>() : nullptr;
      scalar_t* gwp = need_weight ? weight_parts.data_ptr<scalar_t>() : nullptr;
      at::parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
        for (int64_t chunk = first; chunk < last; ++chunk) {
          BackwardRows(rp, ip, wp, gp, up, gxp, gwp != nullptr ? gwp + chunk * d : nullptr, chunk * rows / chunks,
                       (chunk + 1) * rows / chunks, d);
        }
      });
    });
    torch::Tensor grad_weight = need_weight ? weight_parts.sum(0) : torch::Tensor();
    return {grad_x, has_delta ? grad_x : torch::Tensor(), grad_weight, torch::Tensor()};
  }
};

bool FusedApplies(const torch::Tensor& x, const torch::Tensor& delta, const torch::Tensor& weight) {
  const bool dtype = x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble;
  return x.device().is_cpu() && dtype && x.dim() >= 1 && x.numel() > 0 && x.is_contiguous() &&
         weight.scalar_type() == x.scalar_type() && weight.dim() == 1 && weight.size(0) == x.size(-1) &&
         weight.is_contiguous() &&
         (!delta.defined() ||
          (delta.scalar_type() == x.scalar_type() && delta.sizes() == x.sizes() && delta.is_contiguous()));
}

ResidualNorm CompositeAddRmsNorm(const torch::Tensor& x, const torch::Tensor& delta, const torch::Tensor& weight,
                                 double eps) {
  ResidualNorm out;
  out.residual = delta.defined() ? x + delta : x;
  const torch::Tensor& r = out.residual;
  auto inv_rms = torch::rsqrt(r.pow(2).mean(-1, /*keepdim=*/true) + eps);
  out.normed = r * inv_rms * (weight.scalar_type() == r.scalar_type() ? weight : weight.to(r.scalar_type()));
  return out;
}

}  // namespace

ResidualNorm AddRmsNorm(const torch::Tensor& x, const torch::Tensor& delta, const torch::Tensor& weight, double eps,
                        NormImplementation implementation) {
  const bool fused = implementation == NormImplementation::kFusedCpu ||
                     (implementation == NormImplementation::kAuto && FusedApplies(x, delta, weight));
  if (!fused) return CompositeAddRmsNorm(x, delta, weight, eps);
  TORCH_CHECK(FusedApplies(x, delta, weight),
              "AddRmsNorm: the fused kernel needs contiguous fp32 or fp64 CPU tensors of one dtype and shape, "
              "and a weight of the last dimension's size");
  // LibTorch 1.13's Function::apply cannot take undefined tensors: an absent delta travels as an empty one.
  const torch::Tensor absent = torch::empty({0}, x.options().requires_grad(false));
  variable_list outputs = FusedResidualRmsNorm::apply(x, delta.defined() ? delta : absent, weight, eps);
  if (!delta.defined()) return {x, outputs[0]};
  return {outputs[0], outputs[1]};
}

torch::Tensor RmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                      NormImplementation implementation) {
  return AddRmsNorm(x, torch::Tensor(), weight, eps, implementation).normed;
}

}  // namespace rung

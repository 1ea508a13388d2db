// Compiled with -O3 (core/CMakeLists.txt) so that GCC vectorizes the update loop.
#include "core/train/adamw_update.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <cmath>

namespace rung {
namespace {

template <typename T>
struct UpdateConstants {
  T keep, beta1, one_minus_beta1, beta2, one_minus_beta2, bias2, eps, step;
};

template <typename T>
inline __attribute__((always_inline)) void UpdateRangeOf(T* __restrict__ p, const T* __restrict__ g,
                                                         T* __restrict__ m, T* __restrict__ v,
                                                         const UpdateConstants<T>& k, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const T grad = g[i];
    const T first = k.beta1 * m[i] + k.one_minus_beta1 * grad;
    const T second = k.beta2 * v[i] + k.one_minus_beta2 * grad * grad;
    m[i] = first;
    v[i] = second;
    p[i] = p[i] * k.keep + k.step * first / (std::sqrt(second / k.bias2) + k.eps);  // addcdiv_'s order
  }
}

__attribute__((target_clones("avx2", "default"))) void UpdateRange(float* p, const float* g, float* m, float* v,
                                                                    const UpdateConstants<float>& k, int64_t begin,
                                                                    int64_t end) {
  UpdateRangeOf(p, g, m, v, k, begin, end);
}
void UpdateRange(double* p, const double* g, double* m, double* v, const UpdateConstants<double>& k, int64_t begin,
                 int64_t end) {
  UpdateRangeOf(p, g, m, v, k, begin, end);
}

bool FusedApplies(const torch::Tensor& params, const torch::Tensor& grads, const torch::Tensor& exp_avg,
                  const torch::Tensor& exp_avg_sq) {
  const auto dtype = params.scalar_type();
  for (const torch::Tensor* t : {&params, &grads, &exp_avg, &exp_avg_sq}) {
    if (!t->device().is_cpu() || t->scalar_type() != dtype || !t->is_contiguous() || t->numel() != params.numel()) {
      return false;
    }
  }
  return dtype == torch::kFloat || dtype == torch::kDouble;
}

void CompositeUpdate(torch::Tensor& params, const torch::Tensor& grads, torch::Tensor& exp_avg,
                     torch::Tensor& exp_avg_sq, const AdamWCoefficients& c) {
  if (c.decay != 0.0) params.mul_(1.0 - c.decay);
  exp_avg.mul_(c.beta1).add_(grads, 1.0 - c.beta1);
  exp_avg_sq.mul_(c.beta2).addcmul_(grads, grads, 1.0 - c.beta2);
  auto denom = (exp_avg_sq / c.bias2).sqrt_().add_(c.eps);
  params.addcdiv_(exp_avg, denom, -c.lr / c.bias1);
}

}  // namespace

void AdamWUpdate(torch::Tensor& params, const torch::Tensor& grads, torch::Tensor& exp_avg, torch::Tensor& exp_avg_sq,
                 const AdamWCoefficients& c, AdamWImplementation implementation) {
  torch::NoGradGuard no_grad;
  const bool fused = implementation == AdamWImplementation::kFusedCpu ||
                     (implementation == AdamWImplementation::kAuto && FusedApplies(params, grads, exp_avg, exp_avg_sq));
  if (!fused) return CompositeUpdate(params, grads, exp_avg, exp_avg_sq, c);
  TORCH_CHECK(FusedApplies(params, grads, exp_avg, exp_avg_sq),
              "AdamWUpdate: the fused kernel needs contiguous fp32 or fp64 CPU buffers of one size and dtype");
  RECORD_FUNCTION("rung::AdamWUpdate", c10::ArrayRef<const c10::IValue>{});
  AT_DISPATCH_FLOATING_TYPES(params.scalar_type(), "AdamWUpdate", [&] {
    const UpdateConstants<scalar_t> k{static_cast<scalar_t>(1.0 - c.decay), static_cast<scalar_t>(c.beta1),
                                      static_cast<scalar_t>(1.0 - c.beta1),  static_cast<scalar_t>(c.beta2),
                                      static_cast<scalar_t>(1.0 - c.beta2),  static_cast<scalar_t>(c.bias2),
                                      static_cast<scalar_t>(c.eps),          static_cast<scalar_t>(-c.lr / c.bias1)};
    scalar_t* p = params.data_ptr<scalar_t>();
    const scalar_t* g = grads.data_ptr<scalar_t>();
    scalar_t* m = exp_avg.data_ptr<scalar_t>();
    scalar_t* v = exp_avg_sq.data_ptr<scalar_t>();
    at::parallel_for(0, params.numel(), at::internal::GRAIN_SIZE,
                     [&](int64_t begin, int64_t end) { UpdateRange(p, g, m, v, k, begin, end); });
  });
}

}  // namespace rung

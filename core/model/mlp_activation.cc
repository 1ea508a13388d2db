// Compiled with -O3 -ffast-math (core/CMakeLists.txt) so that GCC vectorizes expf with glibc's
// libmvec; nothing here tests for NaN or infinity.
#include "core/model/mlp_activation.h"

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

// SwiGLU over rows [begin, end) of [rows, 2H] -> [rows, H], and its backward into [rows, 2H]:
// d gate = d out * u * s (1 + g (1 - s)), d up = d out * silu(g), s = sigmoid(g).
template <typename T>
inline __attribute__((always_inline)) void SwiGluOf(const T* __restrict__ h, T* __restrict__ out, int64_t width,
                                                    int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const T* gate = h + row * 2 * width;
    const T* up = gate + width;
    T* o = out + row * width;
    for (int64_t j = 0; j < width; ++j) o[j] = gate[j] / (T(1) + std::exp(-gate[j])) * up[j];
  }
}
template <typename T>
inline __attribute__((always_inline)) void SwiGluBackwardOf(const T* __restrict__ h, const T* __restrict__ grad_out,
                                                            T* __restrict__ grad_h, int64_t width, int64_t begin,
                                                            int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const T* gate = h + row * 2 * width;
    const T* up = gate + width;
    const T* go = grad_out + row * width;
    T* grad_gate = grad_h + row * 2 * width;
    T* grad_up = grad_gate + width;
    for (int64_t j = 0; j < width; ++j) {
      const T g = gate[j];
      const T s = T(1) / (T(1) + std::exp(-g));
      grad_gate[j] = go[j] * up[j] * s * (T(1) + g * (T(1) - s));
      grad_up[j] = go[j] * g * s;
    }
  }
}

__attribute__((target_clones("avx2", "default"))) void SwiGlu(const float* h, float* out, int64_t width,
                                                               int64_t begin, int64_t end) {
  SwiGluOf(h, out, width, begin, end);
}
void SwiGlu(const double* h, double* out, int64_t width, int64_t begin, int64_t end) {
  SwiGluOf(h, out, width, begin, end);
}
__attribute__((target_clones("avx2", "default"))) void SwiGluBackward(const float* h, const float* grad_out,
                                                                       float* grad_h, int64_t width, int64_t begin,
                                                                       int64_t end) {
  SwiGluBackwardOf(h, grad_out, grad_h, width, begin, end);
}
void SwiGluBackward(const double* h, const double* grad_out, double* grad_h, int64_t width, int64_t begin,
                    int64_t end) {
  SwiGluBackwardOf(h, grad_out, grad_h, width, begin, end);
}

class FusedSwiGlu : public torch::autograd::Function<FusedSwiGlu> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& hidden) {
    RECORD_FUNCTION("rung::SwiGlu", c10::ArrayRef<const c10::IValue>{});
    const int64_t width = hidden.size(-1) / 2, rows = hidden.numel() / hidden.size(-1);
    std::vector<int64_t> shape = hidden.sizes().vec();
    shape.back() = width;
    torch::Tensor out = torch::empty(shape, hidden.options());
    AT_DISPATCH_FLOATING_TYPES(hidden.scalar_type(), "MlpActivation", [&] {
      const scalar_t* h = hidden.data_ptr<scalar_t>();
      scalar_t* o = out.data_ptr<scalar_t>();
      at::parallel_for(0, rows, RowGrain(width), [&](int64_t begin, int64_t end) { SwiGlu(h, o, width, begin, end); });
    });
    ctx->save_for_backward({hidden});
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor hidden = ctx->get_saved_variables()[0];
    const torch::Tensor grad_out = grad_outputs[0].contiguous();
    const int64_t width = hidden.size(-1) / 2, rows = hidden.numel() / hidden.size(-1);
    torch::Tensor grad_hidden = torch::empty_like(hidden);
    AT_DISPATCH_FLOATING_TYPES(hidden.scalar_type(), "MlpActivationBackward", [&] {
      const scalar_t* h = hidden.data_ptr<scalar_t>();
      const scalar_t* go = grad_out.data_ptr<scalar_t>();
      scalar_t* gh = grad_hidden.data_ptr<scalar_t>();
      at::parallel_for(0, rows, RowGrain(width),
                       [&](int64_t begin, int64_t end) { SwiGluBackward(h, go, gh, width, begin, end); });
    });
    return {grad_hidden};
  }
};

bool FusedApplies(const torch::Tensor& hidden) {
  const bool dtype = hidden.scalar_type() == torch::kFloat || hidden.scalar_type() == torch::kDouble;
  return hidden.device().is_cpu() && dtype && hidden.dim() >= 1 && hidden.numel() > 0 && hidden.is_contiguous() &&
         hidden.size(-1) % 2 == 0;
}

torch::Tensor CompositeSwiGlu(const torch::Tensor& hidden) {
  auto gate_up = hidden.chunk(2, -1);
  return torch::silu(gate_up[0]) * gate_up[1];
}

}  // namespace

torch::Tensor MlpActivation(const torch::Tensor& hidden, MlpActivationKind kind, ActivationImplementation implementation) {
  // GELU: ATen's own kernel, one vectorized pass each way already.
  if (kind == MlpActivationKind::kGelu) return torch::gelu(hidden);
  const bool fused = implementation == ActivationImplementation::kFusedCpu ||
                     (implementation == ActivationImplementation::kAuto && FusedApplies(hidden));
  if (!fused) return CompositeSwiGlu(hidden);
  TORCH_CHECK(FusedApplies(hidden), "MlpActivation: the fused SwiGLU kernel needs a contiguous fp32 or fp64 CPU tensor of even width");
  return FusedSwiGlu::apply(hidden);
}

}  // namespace rung

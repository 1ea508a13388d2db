// Compiled with -O3 -ffast-math (core/CMakeLists.txt) so that GCC vectorizes expf with glibc's
// libmvec; nothing here tests for NaN or infinity.
#include "core/train/token_cross_entropy.h"

#include <ATen/Dispatch.h>
#include <ATen/Parallel.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/model/row_grain.h"

namespace rung {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Rows [begin, end): each row's logsumexp, and its loss against its target.
template <typename T>
inline __attribute__((always_inline)) void ForwardRowsOf(const T* logits, const int64_t* targets, T* logsumexp,
                                                         T* losses, int64_t vocab, int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const T* x = logits + row * vocab;
    T max_value = -std::numeric_limits<T>::max();
    for (int64_t j = 0; j < vocab; ++j) max_value = std::max(max_value, x[j]);
    T sum = 0;
    for (int64_t j = 0; j < vocab; ++j) sum += std::exp(x[j] - max_value);
    const T lse = max_value + std::log(sum);
    logsumexp[row] = lse;
    losses[row] = lse - x[targets[row]];
  }
}

// Rows [begin, end): grad_logits = grad_i (exp(x - lse) - onehot(target)).
template <typename T>
inline __attribute__((always_inline)) void BackwardRowsOf(const T* logits, const int64_t* targets, const T* logsumexp,
                                                          const T* grad_losses, T* grad_logits, int64_t vocab,
                                                          int64_t begin, int64_t end) {
  for (int64_t row = begin; row < end; ++row) {
    const T* x = logits + row * vocab;
    T* g = grad_logits + row * vocab;
    const T lse = logsumexp[row], scale = grad_losses[row];
    for (int64_t j = 0; j < vocab; ++j) g[j] = scale * std::exp(x[j] - lse);
    g[targets[row]] -= scale;
  }
}

__attribute__((target_clones("avx2", "default"))) void ForwardRows(const float* logits, const int64_t* targets,
                                                                    float* logsumexp, float* losses, int64_t vocab,
                                                                    int64_t begin, int64_t end) {
  ForwardRowsOf(logits, targets, logsumexp, losses, vocab, begin, end);
}
void ForwardRows(const double* logits, const int64_t* targets, double* logsumexp, double* losses, int64_t vocab,
                 int64_t begin, int64_t end) {
  ForwardRowsOf(logits, targets, logsumexp, losses, vocab, begin, end);
}
__attribute__((target_clones("avx2", "default"))) void BackwardRows(const float* logits, const int64_t* targets,
                                                                     const float* logsumexp, const float* grad_losses,
                                                                     float* grad_logits, int64_t vocab, int64_t begin,
                                                                     int64_t end) {
  BackwardRowsOf(logits, targets, logsumexp, grad_losses, grad_logits, vocab, begin, end);
}
void BackwardRows(const double* logits, const int64_t* targets, const double* logsumexp, const double* grad_losses,
                  double* grad_logits, int64_t vocab, int64_t begin, int64_t end) {
  BackwardRowsOf(logits, targets, logsumexp, grad_losses, grad_logits, vocab, begin, end);
}

class FusedTokenCrossEntropy : public torch::autograd::Function<FusedTokenCrossEntropy> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& logits, const torch::Tensor& targets) {
    RECORD_FUNCTION("rung::TokenCrossEntropy", c10::ArrayRef<const c10::IValue>{});
    const int64_t rows = logits.size(0), vocab = logits.size(1);
    torch::Tensor logsumexp = torch::empty({rows}, logits.options());
    torch::Tensor losses = torch::empty({rows}, logits.options());
    AT_DISPATCH_FLOATING_TYPES(logits.scalar_type(), "TokenCrossEntropy", [&] {
      const scalar_t* x = logits.data_ptr<scalar_t>();
      const int64_t* t = targets.data_ptr<int64_t>();
      scalar_t* lse = logsumexp.data_ptr<scalar_t>();
      scalar_t* out = losses.data_ptr<scalar_t>();
      at::parallel_for(0, rows, RowGrain(vocab),
                       [&](int64_t begin, int64_t end) { ForwardRows(x, t, lse, out, vocab, begin, end); });
    });
    ctx->save_for_backward({logits, targets, logsumexp});
    return losses;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &logits = saved[0], &targets = saved[1], &logsumexp = saved[2];
    const torch::Tensor grad_losses = grad_outputs[0].contiguous();
    const int64_t rows = logits.size(0), vocab = logits.size(1);
    torch::Tensor grad_logits = torch::empty_like(logits);
    AT_DISPATCH_FLOATING_TYPES(logits.scalar_type(), "TokenCrossEntropyBackward", [&] {
      const scalar_t* x = logits.data_ptr<scalar_t>();
      const int64_t* t = targets.data_ptr<int64_t>();
      const scalar_t* lse = logsumexp.data_ptr<scalar_t>();
      const scalar_t* g = grad_losses.data_ptr<scalar_t>();
      scalar_t* out = grad_logits.data_ptr<scalar_t>();
      at::parallel_for(0, rows, RowGrain(vocab),
                       [&](int64_t begin, int64_t end) { BackwardRows(x, t, lse, g, out, vocab, begin, end); });
    });
    return {grad_logits, torch::Tensor()};
  }
};

bool FusedApplies(const torch::Tensor& logits, const torch::Tensor& targets) {
  const bool dtype = logits.scalar_type() == torch::kFloat || logits.scalar_type() == torch::kDouble;
  return logits.device().is_cpu() && dtype && logits.dim() == 2 && logits.size(1) > 0 && logits.is_contiguous() &&
         targets.device().is_cpu() && targets.scalar_type() == torch::kLong && targets.dim() == 1 &&
         targets.size(0) == logits.size(0) && targets.is_contiguous();
}

}  // namespace

torch::Tensor TokenCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                CrossEntropyImplementation implementation) {
  TORCH_CHECK(logits.dim() == 2 && targets.dim() == 1 && targets.size(0) == logits.size(0),
              "TokenCrossEntropy: logits must be [N, V] and targets [N]");
  const bool fused = implementation == CrossEntropyImplementation::kFusedCpu ||
                     (implementation == CrossEntropyImplementation::kAuto && FusedApplies(logits, targets));
  if (!fused) {
    return torch::nn::functional::cross_entropy(
        logits, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  }
  TORCH_CHECK(FusedApplies(logits, targets),
              "TokenCrossEntropy: the fused kernel needs contiguous fp32 or fp64 CPU logits [N, V] and int64 targets [N]");
  if (targets.numel() > 0) {
    const auto [low, high] = torch::aminmax(targets);
    const int64_t lowest = low.item<int64_t>(), highest = high.item<int64_t>();
    TORCH_CHECK(lowest >= 0 && highest < logits.size(1), "TokenCrossEntropy: target ",
                lowest < 0 ? lowest : highest, " is out of bounds for ", logits.size(1), " classes");
  }
  return FusedTokenCrossEntropy::apply(logits, targets);
}

}  // namespace rung

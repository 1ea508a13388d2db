// core/train/token_cross_entropy.h
//
// The cross-entropy of each row of logits [N, V] against its target token, as one autograd operation:
//
//   loss_i = logsumexp_j(logits[i, j]) - logits[i, target_i]                  (N losses)
//   d loss_i / d logits[i, j] = softmax(logits_i)_j - [j == target_i]
//
// Reductions (the mean a step back-propagates, a masked mean, a sum) are left to the caller, on N numbers.
// On contiguous fp32 (and fp64) CPU logits a fused kernel makes one pass forward (keeping one
// logsumexp per row) and one backward that writes the logits' gradient, where ATen's log_softmax and
// nll_loss write a second [N, V] tensor forward and zero-fill, scatter and rescale one backward.
// Everything else (CUDA, bf16 under autocast) takes torch::nn::functional::cross_entropy. No ignore
// index: every target must lie in [0, V) (a c10::Error names the first that does not).
// CrossEntropyImplementation selects one explicitly for tests.
#pragma once

#include <torch/torch.h>

namespace rung {

enum class CrossEntropyImplementation { kAuto, kFusedCpu, kComposite };

// logits [N, V]; targets [N] int64. Returns the N losses (fp32 for fp32 logits), differentiable in logits.
torch::Tensor TokenCrossEntropy(const torch::Tensor& logits, const torch::Tensor& targets,
                                CrossEntropyImplementation implementation = CrossEntropyImplementation::kAuto);

}  // namespace rung

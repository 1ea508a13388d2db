#include "core/model/greedy_decode.h"

#include <vector>

#include "core/model/kv_cache.h"

namespace rung {
namespace {

// Puts a module back in the training mode it had, however the decode ends.
class TrainingModeRestorer {
 public:
  explicit TrainingModeRestorer(torch::nn::Module& module) : module_(module), training_(module.is_training()) {}
  ~TrainingModeRestorer() { module_.train(training_); }
  TrainingModeRestorer(const TrainingModeRestorer&) = delete;
  TrainingModeRestorer& operator=(const TrainingModeRestorer&) = delete;

 private:
  torch::nn::Module& module_;
  bool training_;
};

// hidden [B, n, d_model] -> the argmax token [B, 1] of the logits at its last position.
torch::Tensor NextToken(TransformerImpl& model, const torch::Tensor& hidden) {
  return model.Logits(hidden.select(1, hidden.size(1) - 1)).argmax(-1, /*keepdim=*/true);
}

}  // namespace

torch::Tensor GreedyDecode(Transformer& model, const torch::Tensor& prompt, int64_t steps, DecodeMode mode) {
  TORCH_CHECK(prompt.dim() == 2 && prompt.size(1) >= 1 && prompt.scalar_type() == torch::kLong,
              "GreedyDecode: the prompt must be [B, L] int64 with L >= 1");
  TORCH_CHECK(steps >= 0, "GreedyDecode: steps must be >= 0");
  torch::NoGradGuard no_grad;
  TrainingModeRestorer restore(*model);
  model->eval();
  if (mode == DecodeMode::kCached && !model->positional()->TablesIndependentOfLength()) {
    mode = DecodeMode::kFullRecompute;
  }
  std::vector<torch::Tensor> tokens;  // [B, 1] each
  if (mode == DecodeMode::kCached) {
    KvCache cache;
    torch::Tensor next = prompt;
    for (int64_t step = 0; step < steps; ++step) {
      next = NextToken(*model, model->CachedHidden(next, &cache));
      tokens.push_back(next);
    }
  } else {
    torch::Tensor sequence = prompt;
    for (int64_t step = 0; step < steps; ++step) {
      tokens.push_back(NextToken(*model, model->Hidden(sequence)));
      sequence = torch::cat({sequence, tokens.back()}, 1);
    }
  }
  if (tokens.empty()) return torch::empty({prompt.size(0), 0}, prompt.options());
  return torch::cat(tokens, 1);
}

}  // namespace rung

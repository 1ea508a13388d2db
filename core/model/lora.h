// core/model/lora.h
//
// Low-rank adapters on the transformer's projections (train.lora, core/config/lora_config.h): for each
// layer and target, A [rank, in] and B [out, rank] with Delta(x) = (alpha / rank) dropout(x) A^T B^T,
// added to the target's rows of the projection's output. The transformer owns them as its submodule
// "lora" (parameters "lora.blocks_<layer>_<target>_a" and "_b") and adds each Delta where it projects;
// MergeInto folds them into the weights, W[rows] += (alpha / rank) B A, for whatever reads a checkpoint
// as a model. Dropout applies in training mode only (is_training()), drawn from the tensors' device's
// generator (the CPU's is in checkpoints, so a CPU run with dropout resumes exactly; a CUDA one does not).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/config/lora_config.h"
#include "core/config/model_config.h"

namespace rung {

// The transformer's projections a target adapts, in LoraTargetNames()'s order.
enum class LoraTarget { kQ, kK, kV, kO, kGate, kUp, kDown };
inline constexpr int kLoraTargets = 7;

// Where a target's rows lie: in the layer's weight "blocks_<layer>_<weight>" [rows..., in], rows
// [row, row + rows), its input width `in`.
struct LoraSlice {
  std::string weight;  // qkv | attn_out | mlp_up | mlp_down
  int64_t row = 0;
  int64_t rows = 0;
  int64_t in = 0;
};
LoraSlice LoraTargetSlice(const ModelConfig& model, LoraTarget target);

class LoraAdaptersImpl : public torch::nn::Module {
 public:
  // Adapters on lora.targets of every layer: A drawn as PEFT draws it (uniform in +-1/sqrt(in)) when
  // `draw`, else left uninitialised (a checkpoint reader overwrites them); B zero.
  // REQUIRES: lora validated for `model` (ValidateLoraConfig).
  LoraAdaptersImpl(const ModelConfig& model, const LoraConfig& lora, bool draw = true);

  // Whether `target` of each layer has an adapter.
  bool adapts(LoraTarget target) const { return adapted_[static_cast<int>(target)]; }

  // The adapter's addition to `target`'s rows of layer `layer`'s projection of x [..., in]: [..., rows]
  // in x's dtype. REQUIRES: adapts(target).
  torch::Tensor Delta(int64_t layer, LoraTarget target, const torch::Tensor& x) const;

  // out [..., total rows] of the projection holding `targets` (q, k, v of qkv; gate, up of mlp_up) plus
  // each adapted target's Delta of x, in place on its rows.
  void AddDeltas(int64_t layer, std::initializer_list<LoraTarget> targets, const torch::Tensor& x,
                 torch::Tensor& out) const;

  // W[rows] += (alpha / rank) B A for every adapter, into `model`'s parameters named
  // "blocks_<layer>_<weight>" (computed in fp32, stored in each weight's dtype), without gradient.
  // REQUIRES: `model` has those parameters, of the shapes `config` gives.
  void MergeInto(torch::nn::Module& model) const;

  const LoraConfig& config() const { return lora_; }

 private:
  ModelConfig model_;
  LoraConfig lora_;
  bool adapted_[kLoraTargets] = {};
  // a_[layer][target], b_[layer][target]; undefined where the target is not adapted.
  std::vector<std::vector<torch::Tensor>> a_, b_;
};
TORCH_MODULE(LoraAdapters);

}  // namespace rung

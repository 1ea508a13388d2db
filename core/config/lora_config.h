// core/config/lora_config.h
//
// Low-rank adapters (the `train.lora` block; Hu et al. 2021, "LoRA", as Hugging Face PEFT implements
// it): on each chosen projection W [out, in] of every layer, y = x W^T + (alpha / rank) *
// dropout(x) A^T B^T with A [rank, in] and B [out, rank] trained and W frozen. A starts uniform in
// +-1/sqrt(in) (PEFT's kaiming_uniform(a = sqrt(5))), B at zero, so the adapted model starts as the
// model. Only the adapters and the positional parameters train; a checkpoint holds the adapters, and
// whatever reads a checkpoint as a model (rung eval, rung export, train.init of another trial) sees
// W + (alpha / rank) B A, the adapters merged. Plain data, torch-free.
//
// Targets name the projections as Llama's modules do: q, k, v (the rows of the fused q/k/v
// projection), o (attention's output), gate, up (the two halves of a SwiGLU's fused gate/up
// projection; a GELU MLP has only up), down.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config_error.h"
#include "core/config/model_config.h"

namespace rung {

struct LoraConfig {
  int64_t rank = 0;                               // 0 = no adapters
  double alpha = 16.0;                            // the adapters' output scales by alpha / rank
  double dropout = 0.0;                           // on the adapter's input, while training
  std::vector<std::string> targets = {"q", "v"};  // PEFT's default for Llama

  bool enabled() const { return rank > 0; }
  double scaling() const { return alpha / static_cast<double>(rank); }
};

// The projection names `targets` may hold, in the order above.
const std::vector<std::string>& LoraTargetNames();

// Errors at train.lora.*: a rank beyond a target's smaller dimension, alpha <= 0, dropout outside
// [0, 1), no or repeated targets, gate on a GELU MLP. A disabled block (rank 0) is not checked.
void ValidateLoraConfig(const LoraConfig& lora, const ModelConfig& model, std::vector<ConfigError>* errors);

}  // namespace rung

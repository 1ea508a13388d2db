// core/model/positional_variant_model.h
//
// The model part of a positional variant (its torch-free part: core/config/positional_variant.h): its
// learned parameters and what attention reads of it. One subclass per file
// core/model/positional/<name>.cc, the same <name> as its torch-free file, ending with
// RUNG_POSITIONAL_VARIANT_MODEL(<name>, <Class>); the build lists them (cmake/registry_list.cmake).
// PositionalEncoding (positional_encoding.h) makes the one of a model's variant and does the rest:
// rotary tables from Frequencies(), their caching, length extensions, the band ablation.
//
// A variant registers its parameters and buffers on `owner` (the PositionalEncoding module) in its
// constructor: their names are the checkpoint's, so they never change once released.
//
// Contract: Frequencies() and QueryScale() are differentiable in the learned parameters; fp32.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/config/model_config.h"

namespace rung {

// What every rotary variant starts from, registered by PositionalEncoding before the variant's own.
struct RotaryBasis {
  torch::Tensor log_freq;  // [d/2] buffer "rope_log_freq": log b^(-2f/d)
  torch::Tensor mask;      // [d/2] buffer "rotate_mask": 1 for pairs that rotate (all, but for p-RoPE)

  // RoPE's frequencies on the pairs that rotate, 0 on the others: [1, d/2].
  torch::Tensor RopeFrequencies() const { return (log_freq.exp() * mask).view({1, log_freq.size(0)}); }
};

// One layer's tables for positions 0..T-1, as attention reads them.
struct LayerTables {
  torch::Tensor cos, sin;          // [T, G, d/2] fp32 ([B, T, G, d/2] per document), or undefined (no rotation)
  torch::Tensor key_cos, key_sin;  // the keys' tables where they differ from the queries', else undefined
  torch::Tensor query_scale;       // [..., T, heads] fp32 query multiplier (the shape of `keys`), or undefined (1)
};

class PositionalVariantModel {
 public:
  virtual ~PositionalVariantModel() = default;

  // How the frequencies vary: constant (nothing learned; the tables are cached), one learned
  // schedule for every layer, or one per layer (and KV group).
  enum class Schedule { kConstant, kShared, kPerLayer };
  virtual Schedule schedule() const { return Schedule::kConstant; }
  // Frequencies theta [G, d/2] of `layer` (G = 1 when shared), as trained; undefined: no rotation.
  virtual torch::Tensor Frequencies(int64_t layer) const;
  // Rewrites a layer's rotary tables after they are made (per-position scales of queries and keys,
  // e.g. key tables of their own); `positions` [T] fp32. Called for every layer, after any cache.
  virtual void AdjustTables(LayerTables* tables, const torch::Tensor& positions, int64_t layer) const;
  // The query multiplier [..., T, heads] of `layer` for queries seeing `keys` keys ([T] or [B, T])
  // in a sequence of `time`; undefined: 1.
  virtual torch::Tensor QueryScale(int64_t layer, int64_t time, const torch::Tensor& keys) const;
  // Whether the tables of a position (AdjustTables', QueryScale's) depend on the length T of the window
  // that holds it, not only on the position and its key count (xPos's centre floor(T/2), AdaScale's
  // L = T): keys cached from a shorter window then differ from a full pass's (kv_cache.h).
  virtual bool TablesDependOnLength() const { return false; }
  // ALiBi-style slopes [heads] fp32: head h's logits get -m_h (i - j); undefined: no bias.
  virtual torch::Tensor LinearBiasSlopes() const;

  // An input position table the transformer registers on itself, after the backbone's parameters
  // (so the backbone draws the same initial values under one seed), as an embedding parameter;
  // undefined: none. And the rows it adds to the token embedding for a sequence of `time`.
  virtual torch::Tensor MakeInputTable(torch::nn::Module& transformer) const;
  virtual torch::Tensor InputRows(const torch::Tensor& table, int64_t time) const;

  // The optimizer's positional groups: frequency parameters (rate x adarope.freq_lr_mult) and the rest.
  virtual std::vector<torch::Tensor> frequency_parameters() const { return {}; }
  virtual std::vector<torch::Tensor> scale_parameters() const { return {}; }

  // A context extension's start on trained parameters (AdaRoPE's, docs/science.md section 9): the
  // global schedule `schedule` (yarn, ntk_by_parts or pi) at factor `scale` from `source_length`
  // (YaRN's temperature coefficient yarn_c); false when the variant has none to start, or not that one.
  virtual bool StartContextExtension(const std::string& schedule, double scale, double source_length, double yarn_c);
};

class PositionalVariantModelFactory {
 public:
  virtual ~PositionalVariantModelFactory() = default;
  virtual const char* name() const = 0;  // its variant's name (position.variant)
  // `basis` is defined for rotary variants (its descriptor's rotary()).
  virtual std::unique_ptr<PositionalVariantModel> Make(const ModelConfig& config, torch::nn::Module& owner,
                                                       const RotaryBasis& basis) const = 0;
};

// The model part of config.position.variant. Throws (c10::Error) for a variant without one (a
// build without its file: every registered variant has both parts, tests/core/model check it).
std::unique_ptr<PositionalVariantModel> MakePositionalVariantModel(const ModelConfig& config,
                                                                   torch::nn::Module& owner,
                                                                   const RotaryBasis& basis);
// The names of the variants with a model part, for that check.
std::vector<std::string> PositionalVariantModelNames();

}  // namespace rung

#define RUNG_POSITIONAL_VARIANT_MODEL(NAME, CLASS)                                                          \
  const ::rung::PositionalVariantModelFactory& rung_positional_variant_model_##NAME() {                  \
    static const struct Factory final : ::rung::PositionalVariantModelFactory {                          \
      const char* name() const override { return #NAME; }                                               \
      std::unique_ptr<::rung::PositionalVariantModel> Make(const ::rung::ModelConfig& config,             \
                                                           torch::nn::Module& owner,                     \
                                                           const ::rung::RotaryBasis& basis) const override { \
        return std::make_unique<CLASS>(config, owner, basis);                                            \
      }                                                                                                   \
    } factory;                                                                                            \
    return factory;                                                                                       \
  }

// core/config/positional_variant.h
//
// A positional variant (docs/science.md section 2) as one descriptor: what rung knows of it without
// LibTorch. Each variant is a subclass in its own file, core/config/positional/<name>.cc, ending with
// RUNG_POSITIONAL_VARIANT(<name>, <Class>); the build generates the one list of them
// (cmake/registry_list.cmake), so nothing else names a variant. Its model part (rotation, logit
// bias, learned parameters) is the matching file of core/model/positional/ (positional_variant_model.h).
//
// The config, the parameter and FLOP arithmetic, spec checks, trial identities, `rung validate`, the
// diagnostics, `--help` and the dashboard ask the registry:
//
//   FindPositionalVariant("lerope")   the descriptor, or nullptr for a name no variant has
//   PositionalVariants()              every variant in listing order (errors, --help, the dashboard)
//   PositionalVariantNames()          their names in that order
//
// A variant's own settings are either typed fields of PositionConfig (the first seven variants:
// position.fraction, position.adarope, position.absolute) or, for variants added since, a block
// position.<block> of reals, words and flags held in PositionConfig::blocks (BlockSettings below).
//
// Contract: descriptors are immutable singletons; every method is a pure function of its arguments.
// Thread safety: the registry is built once, on first use, and read-only after.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/checked_arithmetic.h"
#include "core/config/config_error.h"
#include "core/config/model_config.h"

namespace rung {

class BlockSettings;
class JsonFieldReader;
class JsonFieldWriter;
struct TrainConfig;
struct TrialConfig;

// A learning-rate group of a variant's own beyond the positional one (AdaRoPE's frequencies): its
// key path, how its rate is formed, and the rate.
struct PositionalRateGroup {
  std::string path;  // "position.adarope.freq_lr_mult"
  std::string what;  // "train.lr x position.lr_mult x position.adarope.freq_lr_mult"
  double lr = 0.0;
};

class PositionalVariant {
 public:
  virtual ~PositionalVariant() = default;

  // ---- What it is.
  virtual const char* name() const = 0;     // position.variant's value, e.g. "lerope"
  virtual const char* label() const = 0;    // as papers write it, e.g. "LeRoPE"
  virtual const char* summary() const = 0;  // one line: what it does to attention, and its source
  virtual int listing_order() const = 0;    // ascending: where errors, --help and the dashboard list it
  // Rotates queries and keys by position: reads position.base, needs an even head dimension, and
  // the rotary length-extension methods apply.
  virtual bool rotary() const { return false; }

  // ---- Its keys under `position`.
  // The keys only it reads (a field or its block's name): dropped from the trial identity of a trial
  // of another variant.
  virtual std::vector<std::string> own_keys() const { return {}; }
  // Where those keys are when another variant is chosen. kNotWritten: absent from the config
  // (variants added since the registry); the first ones keep the forms stored trials have:
  // kWrittenNotInIdentity (written, not part of identities), kWrittenNotReconciled (written, removed
  // by ReconcileWithEarlierReleases, so from identities and checkpoints' resume identities too).
  enum class KeysElsewhere { kNotWritten, kWrittenNotInIdentity, kWrittenNotReconciled };
  virtual KeysElsewhere keys_elsewhere() const { return KeysElsewhere::kNotWritten; }
  // Binds its own keys in both directions (json_binding.h); `chosen` says whether it is the trial's
  // variant (a writer skips the keys of a kNotWritten variant that is not).
  virtual void Bind(JsonFieldReader& reader, PositionConfig& position) const;
  virtual void Bind(JsonFieldWriter& writer, PositionConfig& position, bool chosen) const;
  // Its settings block, for a variant that keeps them in PositionConfig::blocks (its model part reads
  // them through it); nullptr for the first seven, whose settings are typed fields.
  virtual const BlockSettings* block_settings() const { return nullptr; }
  // Checks of its settings with key paths; run for every variant, chosen or not, since the keys are
  // read either way.
  virtual void ValidateSettings(const PositionConfig& position, std::vector<ConfigError>* errors) const;
  // Checks against the whole trial, when it is the trial's variant.
  virtual void ValidateTrial(const TrialConfig& trial, std::vector<ConfigError>* errors) const;

  // ---- Arithmetic (model_arithmetic.h).
  // Its learned positional parameters (the positional optimizer groups).
  virtual CheckedInt64 PositionalParameters(const ModelConfig& model) const;
  // Parameters it adds to the input embedding (the absolute position table).
  virtual CheckedInt64 EmbeddingParameters(const ModelConfig& model) const;
  // A rate group of its own (config_limits.h holds its first step to float32).
  virtual std::optional<PositionalRateGroup> RateGroup(const TrainConfig& train, const PositionConfig& position) const;
  // Said after "has no learned parameters" when train.freeze_backbone would leave nothing to train.
  virtual std::string FrozenBackboneNote() const { return ""; }

  // ---- Starting from another model.
  // Its learned parameters, at their initial values, compute RoPE's function at position.base with
  // these settings: a trial of it may start from a RoPE model's backbone (train.init.checkpoint), its
  // own parameters left at their initial values (a positional variant changed at initialisation,
  // AdaRoPE section 5), and compute what the RoPE model computed until it trains.
  virtual bool StartsAsRope(const PositionConfig&) const { return false; }

  // ---- What the diagnostics and the evaluation ask.
  // One frequency schedule for every layer and head (else one per layer, or per layer and KV group).
  virtual bool OneFrequencySchedule(const PositionConfig& position) const;
  // Learned per-pair frequencies: LeRoPE's leave-one-out band ablation applies.
  virtual bool LearnsPairFrequencies(const PositionConfig& position) const;
  // Reads the count of keys a query sees (AdaScale's L in its query mode), as the inverse
  // temperature does.
  virtual bool ReadsKeyCount(const PositionConfig& position) const;
};

// The settings block of a variant added since the registry: reals, words and flags with their
// defaults, position.<block>.<key> in the config, held in PositionConfig::blocks[block].
class BlockSettings {
 public:
  BlockSettings(std::string block, VariantSettings defaults) : block_(std::move(block)), defaults_(std::move(defaults)) {}
  const std::string& block() const { return block_; }
  // The trial's settings: those read, or the defaults when the config has none (a config built in code).
  const VariantSettings& Of(const PositionConfig& position) const;
  void Bind(JsonFieldReader& reader, PositionConfig& position) const;
  void Bind(JsonFieldWriter& writer, PositionConfig& position) const;

 private:
  std::string block_;
  VariantSettings defaults_;
};

const PositionalVariant* FindPositionalVariant(std::string_view name);
const std::vector<const PositionalVariant*>& PositionalVariants();
const std::vector<std::string>& PositionalVariantNames();

// The variants for a --help text: a heading line, then one line each, "  NAME  LABEL: SUMMARY".
std::string PositionalVariantsHelp();

}  // namespace rung

// Defines the registry's accessor of a variant class; its file is core/config/positional/NAME.cc.
#define RUNG_POSITIONAL_VARIANT(NAME, CLASS)               \
  const ::rung::PositionalVariant& rung_positional_variant_##NAME() { \
    static const CLASS variant;                            \
    return variant;                                        \
  }

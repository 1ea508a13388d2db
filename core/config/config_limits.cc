#include "core/config/config_limits.h"

#include <cmath>
#include <optional>
#include <string>

#include "core/common/checked_arithmetic.h"
#include "core/config/config_number_range.h"
#include "core/config/model_arithmetic.h"
#include "core/config/positional_variant.h"

namespace rung {

bool CheckAtMost(const std::string& path, const std::string& what, int64_t value, int64_t limit,
                 std::vector<ConfigError>* errors) {
  if (value <= limit) return true;
  errors->push_back({path, what + " must be <= " + std::to_string(limit) +
                               " (a fixed limit, core/config/config_limits.h), got " + std::to_string(value)});
  return false;
}

void ValidateConfigLimits(const TrialConfig& trial, std::vector<ConfigError>* errors) {
  const DataConfig& data = trial.data;
  const ModelConfig& model = trial.model;
  const TrainConfig& train = trial.train;
  const ResourcesConfig& resources = trial.resources;
  auto error = [&](const std::string& path, const std::string& message) { errors->push_back({path, message}); };

  const bool length_ok =
      CheckAtMost("data.seq_len", "the training length", data.seq_len, kMaxSequenceLength, errors) && data.seq_len > 0;
  if (length_ok) {
    for (int64_t multiple : train.extrapolation_multiples) {
      if (multiple < 1) continue;
      const std::optional<int64_t> length = CheckedMul(multiple, data.seq_len);
      if (!length || *length > kMaxSequenceLength) {
        error("train.extrapolation_multiples",
              "multiple " + std::to_string(multiple) + " x data.seq_len " + std::to_string(data.seq_len) +
                  " is an evaluated length over the fixed limit of " + std::to_string(kMaxSequenceLength) +
                  " tokens (core/config/config_limits.h)");
      }
    }
    if (train.batch_size > 0) {
      const std::optional<int64_t> batch = CheckedMul(train.batch_size, data.seq_len);
      if (!batch || *batch > kMaxTokensPerBatch) {
        error("train.batch_size", "batch_size " + std::to_string(train.batch_size) + " x data.seq_len " +
                                      std::to_string(data.seq_len) + " is more than the fixed limit of " +
                                      std::to_string(kMaxTokensPerBatch) +
                                      " tokens in one micro-batch (for larger batches, raise train.grad_accum)");
      }
    }
    if (train.diagnostics_sequences > 0 && train.diagnostics_batches > 0) {
      const std::optional<int64_t> tokens =
          CheckedProduct({train.diagnostics_batches, train.diagnostics_sequences, data.seq_len});
      if (!tokens || *tokens > kMaxTokensPerBatch) {
        error("train.diagnostics_sequences", "diagnostics_batches x diagnostics_sequences x data.seq_len is more than "
                                             "the fixed limit of " +
                                                 std::to_string(kMaxTokensPerBatch) + " tokens measured at once");
      }
      for (int64_t multiple : train.diagnostics_multiples) {
        if (multiple < 1) continue;
        const std::optional<int64_t> length = CheckedMul(multiple, data.seq_len);
        const std::optional<int64_t> measured =
            CheckedProduct({train.diagnostics_batches, train.diagnostics_sequences, data.seq_len, multiple});
        if (!length || *length > kMaxSequenceLength || !measured || *measured > kMaxTokensPerBatch) {
          error("train.diagnostics_multiples",
                "multiple " + std::to_string(multiple) + " x data.seq_len " + std::to_string(data.seq_len) +
                    " is over the fixed limits of " + std::to_string(kMaxSequenceLength) + " tokens per sequence and " +
                    std::to_string(kMaxTokensPerBatch) +
                    " measured at once (diagnostics_batches x diagnostics_sequences x the length)");
          break;
        }
      }
    }
    if (train.batch_size > 0 && train.grad_accum > 0) {
      const std::optional<int64_t> per_step = CheckedProduct({train.batch_size, train.grad_accum, data.seq_len});
      if (!per_step) {
        error("train.grad_accum", "batch_size x grad_accum x data.seq_len (tokens per step) overflows int64");
      } else if (train.steps > 0 && !CheckedMul(train.steps, *per_step)) {
        error("train.steps", "steps " + std::to_string(train.steps) + " x " + std::to_string(*per_step) +
                                 " tokens per step overflows int64 (the training tokens)");
      }
    }
  }

  const bool shape_ok = CheckAtMost("model.layers", "layers", model.layers, kMaxLayers, errors) &
                        CheckAtMost("model.d_model", "d_model", model.d_model, kMaxModelWidth, errors) &
                        CheckAtMost("model.mlp_hidden", "mlp_hidden", model.mlp_hidden, kMaxMlpHidden, errors) &
                        CheckAtMost("model.vocab_size", "vocab_size", model.vocab_size, kMaxVocabSize, errors);
  CheckAtMost("data.vocab_size", "vocab_size", data.vocab_size, kMaxVocabSize, errors);
  if (shape_ok) {
    const ParameterCounts counts = CountParameters(model);
    if (counts.overflow || counts.total() > kMaxParameters) {
      error("model", (counts.overflow ? std::string("the parameter count overflows int64")
                                      : std::to_string(counts.total()) + " parameters") +
                         ": more than the fixed limit of " + std::to_string(kMaxParameters) +
                         " (core/config/config_limits.h)");
    }
  }

  // The optimiser's scalars (core/train/flat_adamw.h) reach LibTorch as float32: each group's peak
  // step scale lr_g / (1 - beta1) (the first step's bias correction) and lr x weight_decay.
  // The positional groups count only when the model has positional parameters (frequencies: AdaRoPE's).
  if (train.lr > 0.0 && train.beta1 >= 0.0 && train.beta1 < 1.0) {
    const PositionConfig& position = model.position;
    const bool positional = CountPositionalParameters(model) > 0;
    const PositionalVariant* variant = FindPositionalVariant(position.variant);
    const std::optional<PositionalRateGroup> own =
        variant != nullptr ? variant->RateGroup(train, position) : std::nullopt;
    const struct {
      bool present;
      std::string path;
      std::string what;
      double lr;
    } groups[] = {
        {true, "train.lr", "train.lr", train.lr},
        {positional, "position.lr_mult", "train.lr x position.lr_mult", train.lr * position.lr_mult},
        {positional && own.has_value(), own ? own->path : "", own ? own->what : "", own ? own->lr : 0.0},
    };
    for (const auto& group : groups) {
      if (!group.present) continue;
      const double scale = group.lr / (1.0 - train.beta1);
      if (std::fabs(scale) > kMaxConfigReal) {
        error(group.path, std::string("the first step's update scale ") + group.what + " / (1 - train.beta1) = " +
                              ConfigNumberText(scale) + " is outside float32's range, where the optimiser " +
                              "hands it to LibTorch");
        break;
      }
    }
    if (train.weight_decay_mode != "independent" && train.lr * train.weight_decay > kMaxConfigReal) {
      error("train.weight_decay", "train.lr x train.weight_decay = " + ConfigNumberText(train.lr * train.weight_decay) +
                                      " is outside float32's range, where the optimiser hands it to LibTorch");
    }
  }

  CheckAtMost("resources.cpus", "cpus", resources.cpus, kMaxResourceCount, errors);
  CheckAtMost("resources.gpus", "gpus", resources.gpus, kMaxResourceCount, errors);
  CheckAtMost("resources.world_size", "world_size", resources.world_size, kMaxResourceCount, errors);
}

}  // namespace rung

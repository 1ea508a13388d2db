// core/train/checkpoint_io.h
//
// What a rung-train checkpoint holds, written and read in this one place. The file is named and
// published atomically by core/train/checkpoint.h (the torch-free part, which rung-worker and the
// stand-in trainer share); it is a LibTorch archive with these keys:
//   meta                         JSON text: format (1), step, data_index, tokens (TrainingProgress),
//                                identity (the trial config less its cadence and resources: what
//                                must match to resume), records (the step records since the
//                                checkpoint before the previous one, each encoded by core/records)
//   model/<parameter name>       every parameter of the model (its adapters, train.lora, as
//                                model/lora.<name>)
//   optimizer/step_count         AdamW's step count
//   optimizer/<group>/exp_avg    AdamW's moments, per parameter group (flat_adamw.h)
//   optimizer/<group>/exp_avg_sq
//   rng/cpu                      the CPU generator's state
// A resume restores all of it, so the resumed run continues the same curve (on CPU with the same
// thread count, the same numbers); train.init copies only model parameters (all, the positional
// ones or the backbone) from another run's checkpoint. A checkpoint read as a model (LoadCheckpointModel,
// train.init) is its backbone with its adapters merged (core/model/lora.h); a trial's own adapters
// start as drawn.
#pragma once

#include <deque>
#include <string>

#include "core/common/status.h"
#include "core/config/trial_config.h"
#include "core/model/transformer.h"
#include "core/records/trainer_records.h"
#include "core/train/flat_adamw.h"
#include "core/train/training_progress.h"

namespace rung {

// Writes the checkpoint of `progress` into `dir` as CheckpointPath(dir, progress.step), keeping the
// newest train.keep_checkpoints; `remembered` are the step records it carries. Returns its path.
// Errors: INTERNAL (the directory or the file could not be written).
StatusOr<std::string> WriteCheckpoint(const std::string& dir, const TrialConfig& trial, Transformer& model,
                                      const FlatAdamW& optimizer, const TrainingProgress& progress,
                                      const std::deque<records::StepRecord>& remembered);

struct ResumedCheckpoint {
  TrainingProgress progress;
  std::deque<records::StepRecord> remembered;  // the step records it carries, oldest first
};

// Restores the model, the optimizer and the CPU generator from the checkpoint at `path`, written for
// `trial`. Errors: NOT_FOUND (no such file), FAILED_PRECONDITION (an unknown format, or a checkpoint
// of another trial config: the message names the first key that differs), DATA_LOSS (unreadable).
StatusOr<ResumedCheckpoint> ReadCheckpoint(const std::string& path, const TrialConfig& trial, Transformer& model,
                                           FlatAdamW& optimizer);

// train.init: copies the parameters `init.parameters` names (all | positional | backbone) from
// init.checkpoint, a checkpoint file or a folder of them (its newest); each must exist there with
// the same shape (a context extension changes the sequence length, not the shapes). init.checkpoint
// may also be a Hugging Face model folder (core/hf/hf_import.h): the trial's model options must then
// be the folder's (FAILED_PRECONDITION lists each that differs, with the folder's value); every
// parameter is copied (a RoPE model has no positional ones).
// A variant changed at initialisation: from a RoPE source (a folder, or a checkpoint of a RoPE trial)
// into a variant that starts as RoPE (PositionalVariant::StartsAsRope: LeRoPE, AdaRoPE), the backbone
// is copied and the variant's own parameters stay at their initial values, so the model computes what
// the source computed; `*converted_from` (where given) is then set to "rope".
// Errors: NOT_FOUND (no such file or no checkpoint in the folder), FAILED_PRECONDITION (a parameter
// missing there or of another shape, or none to copy), DATA_LOSS (unreadable).
// With init.adarope_start yarn, ntk_by_parts or pi, the copied AdaRoPE parameters then start the context
// extension from the source's training length (its data.seq_len, in the checkpoint) at factor
// init.adarope_scale, else the model's length over it (PositionalEncodingImpl::StartContextExtension,
// YaRN's c = yarn_c); FAILED_PRECONDITION where the model's position.adarope.l_ref is not that length or
// the model is shorter.
Status InitializeFromCheckpoint(const InitConfig& init, Transformer& model, double yarn_c = 0.1,
                                std::string* converted_from = nullptr);

// A trained model alone, from a checkpoint file or a folder of them (its newest): the trial config it
// was written for (its resume identity, read back with defaults for what identities leave out) and
// its parameters. `rung eval` and the Hugging Face export read checkpoints this way.
// Errors: NOT_FOUND (no such file, or a folder without checkpoints), FAILED_PRECONDITION (an unknown
// format, or an identity that is not a valid trial config), DATA_LOSS (unreadable).
struct CheckpointModel {
  std::string path;  // the checkpoint file read
  TrialConfig trial;
  Transformer model{nullptr};
  int64_t step = 0;
};
StatusOr<CheckpointModel> LoadCheckpointModel(const std::string& path);

}  // namespace rung

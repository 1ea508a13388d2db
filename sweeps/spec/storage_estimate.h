// sweeps/spec/storage_estimate.h
//
// The disk a sweep's trials will take, for the warning `rung submit` and `rung run` give before they
// start when there is less free space than that. An estimate from the trial configs alone (torch-free),
// sized to err high rather than low:
//
//   checkpoints  the final checkpoint every trial keeps (rung-worker --checkpoints-after-success
//                final, the default), plus, while a trial trains, train.keep_checkpoints more of the
//                largest trial's. One checkpoint is the model's parameters and two optimizer moments in
//                float32, 12 bytes a parameter, plus kCheckpointOverheadBytes of metadata.
//   database     per trial: every record the trainer logs (one each log_every steps and each
//                evaluation, with its metrics and its log line), kRecordBytes each, and the attention
//                diagnostics, kDiagnosticsBytesPerHead per layer and head, at each diagnostics
//                milestone.
//
// The constants are SQLite's and the checkpoint writer's bytes as `rung run` of
// sweeps/examples/quickstart.yaml stores them, rounded up (tests/sweeps/spec/storage_estimate_test.cc
// holds the estimate to the measured sizes).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/config/trial_config.h"
#include "sweeps/spec/expansion.h"

namespace rung {

inline constexpr uint64_t kCheckpointBytesPerParameter = 12;
inline constexpr uint64_t kCheckpointOverheadBytes = 64 * 1024;
inline constexpr uint64_t kRecordBytes = 4 * 1024;
inline constexpr uint64_t kDiagnosticsBytesPerHead = 16 * 1024;

struct StorageNeeds {
  uint64_t checkpoint_bytes = 0;  // under the artifact root
  uint64_t database_bytes = 0;    // in the coordinator's database (and its write-ahead log)
};

// One checkpoint of a trial. REQUIRES: a resolved, validated config.
uint64_t CheckpointBytes(const TrialConfig& config);

// The needs of `trials` (those that will run). REQUIRES: resolved, validated configs.
StorageNeeds EstimateStorageNeeds(const std::vector<const ExpandedTrial*>& trials);

}  // namespace rung

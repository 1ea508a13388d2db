#include "sweeps/spec/storage_estimate.h"

#include <algorithm>

#include "core/config/model_arithmetic.h"

namespace rung {

uint64_t CheckpointBytes(const TrialConfig& config) {
  const ParameterCounts parameters = CountParameters(config.model);
  return kCheckpointBytesPerParameter * static_cast<uint64_t>(std::max<int64_t>(0, parameters.total())) +
         kCheckpointOverheadBytes;
}

StorageNeeds EstimateStorageNeeds(const std::vector<const ExpandedTrial*>& trials) {
  StorageNeeds needs;
  uint64_t largest_running = 0;
  for (const ExpandedTrial* trial : trials) {
    const TrialConfig& config = trial->config;
    const uint64_t checkpoint = CheckpointBytes(config);
    needs.checkpoint_bytes += checkpoint;
    largest_running = std::max(largest_running, checkpoint * static_cast<uint64_t>(config.train.keep_checkpoints));

    const TrainConfig& train = config.train;
    const uint64_t steps = static_cast<uint64_t>(std::max<int64_t>(1, train.steps));
    const uint64_t logged = steps / static_cast<uint64_t>(std::max<int64_t>(1, train.log_every)) + 1;
    const uint64_t evaluations = train.eval_every > 0 ? steps / static_cast<uint64_t>(train.eval_every) + 1 : 1;
    uint64_t milestones = DiagnosticsMilestones(train).size();
    // The records beyond the training length: one per measured (multiple, method), each as large as
    // its length's per-position curves make it.
    for (const DiagnosedLength& point : DiagnosedLengthsBeyond(train)) milestones += static_cast<uint64_t>(point.multiple);
    const uint64_t heads = static_cast<uint64_t>(std::max<int64_t>(0, config.model.layers * config.model.heads));
    needs.database_bytes += (logged + evaluations) * kRecordBytes + milestones * heads * kDiagnosticsBytesPerHead;
  }
  needs.checkpoint_bytes += largest_running;
  return needs;
}

}  // namespace rung

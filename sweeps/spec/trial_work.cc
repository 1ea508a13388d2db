#include "sweeps/spec/trial_work.h"

#include <algorithm>
#include <string>

#include "core/config/model_arithmetic.h"

namespace rung {

double TrainingFlopsPerToken(const TrialConfig& config) {
  const FlopsPerToken per_token = CountFlopsPerToken(config.model);
  // A frozen or adapted backbone computes no weight gradients: a third of the matrix products less
  // (attention has no weights; its backward stays whole).
  const bool backbone_trains = !config.train.freeze_backbone && !config.train.lora.enabled();
  return backbone_trains ? per_token.total() : per_token.matrix * 2.0 / 3.0 + per_token.attention;
}

TrialWork CountTrialWork(const TrialConfig& config) {
  const TrainConfig& train = config.train;
  const FlopsPerToken per_token = CountFlopsPerToken(config.model);
  const double forward_matrix = per_token.matrix / 3.0, forward_attention = per_token.attention / 3.0;
  const double seq_len = static_cast<double>(config.data.seq_len);
  TrialWork work;
  work.training = TrainingFlopsPerToken(config) * static_cast<double>(train.steps) * static_cast<double>(TokensPerStep(train, config.data.seq_len));
  const int64_t evaluations = (train.eval_every > 0 ? (train.steps - 1) / train.eval_every : 0) + 1;
  work.evaluation = static_cast<double>(evaluations) * static_cast<double>(train.eval_batches) *
                    static_cast<double>(train.batch_size) * seq_len * (forward_matrix + forward_attention);
  for (int64_t multiple : train.extrapolation_multiples) {
    for (const std::string& method : train.extrapolation_methods) {
      if (multiple == 1 && method != "none") continue;
      const double rows = static_cast<double>(std::max<int64_t>(1, train.batch_size / multiple));
      const double m = static_cast<double>(multiple);
      work.extension += static_cast<double>(train.eval_batches) * rows * m * seq_len *
                        (forward_matrix + forward_attention * m);
    }
  }
  if (train.diagnostics_sequences > 0) {
    work.diagnostics = static_cast<double>(train.diagnostics_at.size()) * static_cast<double>(train.diagnostics_batches) *
                       static_cast<double>(train.diagnostics_sequences) * seq_len * (forward_matrix + forward_attention);
    // The end's diagnostics beyond the training length: a pass of multiple x seq_len per method.
    for (const DiagnosedLength& point : DiagnosedLengthsBeyond(train)) {
      const double m = static_cast<double>(point.multiple);
      work.diagnostics += static_cast<double>(train.diagnostics_batches) *
                          static_cast<double>(train.diagnostics_sequences) * m * seq_len *
                          (forward_matrix + forward_attention * m);
    }
  }
  if (train.diagnostics_sequences > 0 && config.model.position.rotary()) {
    // The end's band ablations (each pair zeroed and reverted) and AdaRoPE's head influence (at most
    // three resets a head: shared units are measured once), each a forward pass of
    // diagnostics_sequences x seq_len.
    const PositionConfig& position = config.model.position;
    double passes = 1 + 2 * static_cast<double>(config.model.rotary_pairs());
    if (position.variant == "adarope") passes += 1 + 3 * static_cast<double>(config.model.layers * config.model.heads);
    work.diagnostics += passes * static_cast<double>(train.diagnostics_sequences) * seq_len * (forward_matrix + forward_attention);
  }
  const ProbeConfig& probe = train.probe;
  for (const ProbeSetting& setting : ProbeSettings(probe, config.data.seq_len, train.extrapolation_methods)) {
    const double length = static_cast<double>(setting.length);
    work.probe += static_cast<double>(probe.depths.size()) * static_cast<double>(probe.instances) * length *
                  (forward_matrix + forward_attention * length / seq_len);
  }
  if (probe.kind == "indexing") {
    for (int64_t elements : IndexingElementCounts(probe)) {
      const int64_t tokens = EstimatedIndexingPromptTokens(elements);
      if (tokens > config.data.seq_len && probe.elements.empty()) break;  // the defaults stop where they leave the context
      const double length = static_cast<double>(tokens);
      work.probe += static_cast<double>(probe.instances) * static_cast<double>(probe.queries) * length *
                    (forward_matrix + forward_attention * length / seq_len);
    }
  }
  return work;
}

}  // namespace rung

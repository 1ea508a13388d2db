#include "sweeps/tune/early_stopping.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rung {
namespace {

std::string Number(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

// The first evaluation at or after `tokens`.
const Evaluation* ValueAtTokens(const std::vector<Evaluation>& series, double tokens) {
  for (const Evaluation& evaluation : series) {
    if (static_cast<double>(evaluation.tokens) >= tokens) return &evaluation;
  }
  return nullptr;
}

}  // namespace

std::optional<EarlyStopDecision> DivergenceDecision(const DivergenceStop& stop, const EvaluatedTrial& trial) {
  if (trial.val_loss.empty()) return std::nullopt;
  const double first = trial.val_loss.front().value;
  if (!std::isfinite(first)) {
    return EarlyStopDecision{"diverged", "val_loss", first, first, trial.val_loss.front().step,
                             "its first evaluation of val_loss is not finite"};
  }
  for (size_t i = 1; i < trial.val_loss.size(); ++i) {
    const Evaluation& evaluation = trial.val_loss[i];
    if (std::isfinite(evaluation.value) && evaluation.value <= stop.factor * first) continue;
    EarlyStopDecision decision{"diverged", "val_loss", evaluation.value, stop.factor * first, evaluation.step, ""};
    decision.detail = "val_loss " + Number(evaluation.value) + " at step " + std::to_string(evaluation.step) +
                      " exceeds " + Number(stop.factor) + " x its first evaluation " + Number(first);
    return decision;
  }
  return std::nullopt;
}

std::optional<EarlyStopDecision> AshaDecision(const AshaStop& stop, const std::vector<EvaluatedTrial>& cell,
                                              size_t which) {
  const EvaluatedTrial& trial = cell[which];
  for (double fraction : stop.at) {
    const double own_milestone = fraction * static_cast<double>(trial.total_tokens);
    const Evaluation* own = ValueAtTokens(trial.asha_metric, own_milestone);
    if (own == nullptr) break;  // not there yet: later milestones neither
    // (value, position) of every trial of the cell that reached this fraction of its own run.
    std::vector<std::pair<double, size_t>> reached;
    for (size_t position = 0; position < cell.size(); ++position) {
      const Evaluation* at = ValueAtTokens(cell[position].asha_metric, fraction * static_cast<double>(cell[position].total_tokens));
      if (at == nullptr) continue;
      reached.emplace_back(std::isfinite(at->value) ? at->value : HUGE_VAL, position);
    }
    if (static_cast<int64_t>(reached.size()) < stop.reduction) continue;
    std::sort(reached.begin(), reached.end());
    const size_t keep = std::max<size_t>(1, reached.size() / static_cast<size_t>(stop.reduction));
    size_t rank = 0;
    while (reached[rank].second != which) ++rank;
    if (rank < keep) continue;
    EarlyStopDecision decision{"asha", stop.metric, own->value, reached[keep - 1].first, own->step, ""};
    decision.detail = stop.metric + " " + Number(own->value) + " at " + Number(fraction) +
                      " of training ranks " + std::to_string(rank + 1) + " of " + std::to_string(reached.size()) +
                      " in its tuning cell; the best " + std::to_string(keep) + " go on (worst kept " +
                      Number(reached[keep - 1].first) + ")";
    return decision;
  }
  return std::nullopt;
}

}  // namespace rung

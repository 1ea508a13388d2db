#include "coordinator/domain/sweep_laws.h"

#include <algorithm>

#include "coordinator/domain/sweep_fits.h"

namespace rung {
namespace {

// Axes that set a trial's token count: a sweep over them is one variant's (N, D) grid.
bool SetsTokens(const std::string& key) { return key == "train.tokens" || key == "train.steps"; }

}  // namespace

StatusOr<SweepLaws> FitSweepLaws(Coordinator& coordinator, const LawsRequest& request) {
  if (request.sweep_id <= 0) return Status::InvalidArgument("GetLawsRequest.sweep_id is required (a positive id)");
  RUNG_RETURN_IF_ERROR(fit::CheckBootstrapReplicates(request.law.bootstrap));
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, coordinator.sweeps().Get(request.sweep_id));
  const std::string metric = request.metric.empty() ? sweep.metric.name : request.metric;
  std::vector<std::string> keys = request.variant_keys;
  RUNG_ASSIGN_OR_RETURN(SweepLadder ladder, BuildLadder(coordinator, sweep, metric, MetricSummary::kFinal, &keys));
  if (request.variant_keys.empty() && std::any_of(keys.begin(), keys.end(), SetsTokens)) {
    keys.erase(std::remove_if(keys.begin(), keys.end(), SetsTokens), keys.end());
    if (keys.empty()) keys.push_back("position.variant");
    RUNG_ASSIGN_OR_RETURN(ladder, BuildLadder(coordinator, sweep, metric, MetricSummary::kFinal, &keys));
  }
  const std::string unfinished = std::to_string(ladder.unfinished) + " trial(s) of the sweep are not finished or "
                                                                      "have no value";
  if (ladder.ladder.runs.empty()) {
    return Status::FailedPrecondition("no finished run of sweep " + sweep.name + " to fit: " + unfinished);
  }
  RUNG_ASSIGN_OR_RETURN(fit::LawRuns runs, fit::LawRunsOfLadder(ladder.ladder, metric));
  fit::LawOptions options = request.law;
  if (options.baseline.empty()) {
    if (ladder.baseline_variants.size() == 1) options.baseline = ladder.baseline;
  } else if (ladder.variants.count(options.baseline) == 0) {
    std::string variants;
    for (const std::string& variant : ladder.variants) variants += (variants.empty() ? "" : ", ") + variant;
    return Status::InvalidArgument("baseline: no trial of sweep " + sweep.name + " is the variant '" +
                                   options.baseline + "'; its variants: " + variants);
  }
  StatusOr<fit::LawReport> report = fit::FitLaws(runs, options);
  if (!report.ok()) {
    if (report.status().code() != StatusCode::kFailedPrecondition) return report.status();
    return Status::FailedPrecondition(report.status().message() + " (" + unfinished + ")");
  }
  SweepLaws laws{std::move(*report), ladder.unfinished};
  if (options.baseline.empty() && laws.report.variants.size() > 1) {
    laws.report.notes.push_back(
        "no multipliers predicted: the spec's baseline does not select one variant (name one: rung laws --baseline)");
  }
  if (ladder.unfinished > 0) laws.report.notes.push_back(unfinished + ", left out");
  return laws;
}

}  // namespace rung

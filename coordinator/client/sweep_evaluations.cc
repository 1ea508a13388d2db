#include "coordinator/client/sweep_evaluations.h"

#include <cmath>
#include <map>

#include "coordinator/client/trial_listing.h"

namespace rung::client {

namespace pb = rung::v1;

grpc::Status FetchSweepEvaluations(CoordinatorConnection& connection, int64_t sweep_id,
                                   std::vector<TrialEvaluations>* evaluated) {
  pb::ListTrialsRequest list;
  list.set_sweep_id(sweep_id);
  list.add_states(pb::TRIAL_STATE_SUCCEEDED);
  std::vector<pb::Trial> trials;
  grpc::Status status = ListAllTrials(connection, list, &trials);
  if (!status.ok() || trials.empty()) return status;

  // The final val_loss of every trial: one row per trial without a grouping. A sweep none of whose
  // trials reported val_loss answers INVALID_ARGUMENT (no such metric): no value at the training length.
  pb::QueryResultsRequest query;
  query.set_sweep_id(sweep_id);
  query.set_metric("val_loss");
  query.set_summary(pb::METRIC_SUMMARY_FINAL);
  query.add_aggregations(pb::AGGREGATION_MEAN);
  pb::QueryResultsResponse results;
  status = connection.user().QueryResults(connection.Context().get(), query, &results);
  if (!status.ok() && status.error_code() != grpc::StatusCode::INVALID_ARGUMENT) return status;
  std::map<int64_t, double> val_loss;
  for (const pb::ResultRow& row : results.rows()) {
    if (row.trial_ids_size() == 1 && row.values_size() == 1 && std::isfinite(row.values(0))) val_loss[row.trial_ids(0)] = row.values(0);
  }

  for (pb::Trial& trial : trials) {
    pb::GetDiagnosticsRequest request;
    request.set_trial_id(trial.trial_id());
    request.add_names("extrapolation");
    pb::GetDiagnosticsResponse response;
    status = connection.user().GetDiagnostics(connection.Context().get(), request, &response);
    if (!status.ok()) return status;
    const pb::ExtrapolationTable* table = nullptr;  // the newest readable one
    for (const pb::TrialDiagnostic& diagnostic : response.diagnostics()) {
      if (diagnostic.has_extrapolation()) table = &diagnostic.extrapolation();
    }
    if (table == nullptr || table->results().empty()) continue;
    TrialEvaluations& entry = evaluated->emplace_back();
    const auto found = val_loss.find(trial.trial_id());
    if (found != val_loss.end()) entry.val_loss = found->second;
    entry.table = *table;
    entry.trial = std::move(trial);
  }
  return grpc::Status::OK;
}

}  // namespace rung::client

#include "coordinator/cli/sweep_fetch.h"

#include <algorithm>
#include <utility>

#include "coordinator/client/trial_listing.h"

namespace rung::cli {

namespace pb = rung::v1;

grpc::Status FetchTrials(client::CoordinatorConnection& connection, int64_t sweep_id, std::vector<pb::Trial>* trials) {
  pb::ListTrialsRequest request;
  request.set_sweep_id(sweep_id);
  return FetchTrials(connection, std::move(request), trials);
}

grpc::Status FetchTrials(client::CoordinatorConnection& connection, pb::ListTrialsRequest request,
                         std::vector<pb::Trial>* trials) {
  return client::ListAllTrials(connection, std::move(request), trials);
}

grpc::Status FetchServerTime(client::CoordinatorConnection& connection, double* seconds,
                             std::string* storage_warning) {
  pb::ServerInfo info;
  grpc::Status status = connection.user().GetServerInfo(connection.Context().get(), pb::GetServerInfoRequest(), &info);
  if (status.ok()) *seconds = static_cast<double>(info.server_time().seconds()) + info.server_time().nanos() * 1e-9;
  if (status.ok() && storage_warning != nullptr) *storage_warning = info.storage_warning();
  return status;
}

double SearchFlopsToCome(client::CoordinatorConnection& connection, const pb::Sweep& sweep) {
  // A search whose sweep ended (CANCELLED, FAILED) adds nothing more.
  const bool ended = sweep.state() == pb::SWEEP_STATE_CANCELLED || sweep.state() == pb::SWEEP_STATE_FAILED;
  if (ended) return 0;
  if (sweep.precision() == "aiming" && sweep.tuning() != "searching") {
    // An open precision aim may plan up to its budget.
    pb::GetPrecisionRequest request;
    request.set_sweep_id(sweep.sweep_id());
    pb::GetPrecisionResponse precision;
    if (!connection.user().GetPrecision(connection.Context().get(), request, &precision).ok()) return 0;
    return std::max(0.0, precision.budget_flops() - sweep.total_flops());
  }
  if (sweep.tuning() != "searching") return 0;
  pb::GetTuningRequest request;
  request.set_sweep_id(sweep.sweep_id());
  pb::GetTuningResponse tuning;
  if (!connection.user().GetTuning(connection.Context().get(), request, &tuning).ok()) return 0;
  return std::max(0.0, tuning.worst_case_flops() - sweep.total_flops());
}

}  // namespace rung::cli

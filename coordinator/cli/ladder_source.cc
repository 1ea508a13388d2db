#include "coordinator/cli/ladder_source.h"

#include <nlohmann/json.hpp>

#include "coordinator/cli/sweep_commands.h"
#include "sweeps/fit/ladder_csv.h"

namespace rung::cli {

void AddLadderSourceOptions(CLI::App* command, LadderSource* source) {
  command->add_option("sweep", source->sweep_id, "A stored sweep on the coordinator (or give --from-csv)");
  command->add_option("--from-csv", source->csv_path,
                      "Ladder CSV: header variant,label,compute,loss[,seed][,seconds]; compute in FLOPs (6ND), "
                      "loss in nats, seconds of training")
      ->type_name("FILE");
  AddConnectionOptions(command, &source->connection);
}

StatusOr<fit::LadderResults> LoadLadder(const LadderSource& source, std::string* baseline) {
  const bool from_csv = !source.csv_path.empty(), from_sweep = source.sweep_id > 0;
  if (from_csv == from_sweep) return Status::InvalidArgument("give either a SWEEP id or --from-csv FILE");
  if (from_csv) {
    if (baseline->empty()) return Status::InvalidArgument("--baseline VARIANT is required with --from-csv");
    return fit::ReadLadderCsv(source.csv_path);
  }
  StatusOr<std::unique_ptr<CoordinatorConnection>> connection = CoordinatorConnection::Open(source.connection);
  if (!connection.ok()) return connection.status();
  CoordinatorConnection& client = *connection.value();
  rung::v1::GetSweepRequest get;
  get.set_sweep_id(source.sweep_id);
  rung::v1::Sweep sweep;
  grpc::Status status = client.user().GetSweep(client.Context().get(), get, &sweep);
  if (!status.ok()) return Status(StatusCode::kNotFound, "sweep " + std::to_string(source.sweep_id) + ": " + status.error_message());
  if (baseline->empty()) {
    nlohmann::json selector = nlohmann::json::parse(sweep.baseline_json().empty() ? "{}" : sweep.baseline_json(), nullptr, false);
    if (!selector.is_object() || !selector.contains("position.variant")) {
      return Status::InvalidArgument("sweep " + sweep.name() + " has no position.variant baseline; give --baseline VARIANT");
    }
    *baseline = selector["position.variant"].get<std::string>();
  }
  rung::v1::ListTrialsRequest list;
  list.set_sweep_id(source.sweep_id);
  list.set_view(rung::v1::TRIAL_VIEW_FULL);
  fit::LadderResults ladder;
  ladder.source = sweep.name();
  do {
    rung::v1::ListTrialsResponse response;
    status = client.user().ListTrials(client.Context().get(), list, &response);
    if (!status.ok()) return Status::Unavailable("listing trials: " + status.error_message());
    for (const rung::v1::Trial& trial : response.trials()) {
      if (trial.state() != rung::v1::TRIAL_STATE_SUCCEEDED || !trial.has_final_metric()) continue;
      nlohmann::json config = nlohmann::json::parse(trial.config_json(), nullptr, false);
      if (!config.is_object()) continue;
      fit::LadderRun run;
      run.variant = config["position"]["variant"].get<std::string>();
      run.label = trial.rung_label();
      run.compute = trial.flops();
      run.loss = trial.final_metric();
      run.seed = config.value("seed", int64_t{0});
      run.origin = "trial " + std::to_string(trial.trial_id());
      ladder.runs.push_back(run);
    }
    list.set_page_token(response.next_page_token());
  } while (!list.page_token().empty());
  if (ladder.runs.empty()) return Status::FailedPrecondition("sweep " + sweep.name() + " has no SUCCEEDED trial yet");
  return ladder;
}

}  // namespace rung::cli

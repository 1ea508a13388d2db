#include "coordinator/cli/ladder_source.h"

#include <algorithm>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "proto/grpc_status.h"
#include "proto/config_value.h"
#include "sweeps/fit/ladder_csv.h"

namespace rung::cli {

void AddLadderSourceOptions(CLI::App* command, LadderSource* source) {
  command->add_option("sweep", source->sweep_id, "A stored sweep on the coordinator (or give --from-csv)");
  command->add_option("--from-csv", source->csv_path,
                      "Ladder CSV: header variant,label,compute,loss[,seed][,seconds][,n,d]; compute in FLOPs (6ND), "
                      "loss in nats, seconds of training, n parameters and d tokens (with them, multipliers "
                      "predicted by fitted L(N, D) too)")
      ->type_name("FILE");
  AddConnectionOptions(command, &source->connection);
}

std::string BaselineVariant(const nlohmann::json& selector, const std::vector<std::string>& variants) {
  // A variant named by several axes reads "key=value,key=value" (the ladder export's names).
  for (const std::string& variant : variants) {
    const std::string parts = "," + variant + ",";
    bool all = variant.find('=') != std::string::npos;
    for (auto it = selector.begin(); all && it != selector.end(); ++it) {
      const std::string value = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
      all = parts.find("," + it.key() + "=" + value + ",") != std::string::npos;
    }
    if (all) return variant;
  }
  // A variant that is the value of an object axis, {"variant":"rope"} of `position: [{variant: rope},
  // ...]`: each selector entry "axis.key" must be its "key" (nested keys dotted); of the variants that
  // match, the one with the fewest entries (the plain rope, not an ablation of it).
  std::string best;
  size_t best_entries = SIZE_MAX;
  for (const std::string& variant : variants) {
    const nlohmann::json object = nlohmann::json::parse(variant, nullptr, false);
    if (!object.is_object() || selector.empty()) continue;
    const nlohmann::json flat = object.flatten();  // {"/variant": "rope", "/adarope/fixed_log": true}
    bool all = true;
    for (auto it = selector.begin(); all && it != selector.end(); ++it) {
      all = false;
      for (auto entry = flat.begin(); !all && entry != flat.end(); ++entry) {
        std::string dotted = entry.key().substr(1);
        std::replace(dotted.begin(), dotted.end(), '/', '.');
        const std::string& key = it.key();
        const bool named = key == dotted || (key.size() > dotted.size() && key.compare(key.size() - dotted.size(), dotted.size(), dotted) == 0 &&
                                             key[key.size() - dotted.size() - 1] == '.');
        all = named && entry.value() == it.value();
      }
    }
    if (all && flat.size() < best_entries) best = variant, best_entries = flat.size();
  }
  if (!best.empty()) return best;
  const auto variant = selector.find("position.variant");
  return variant != selector.end() && variant->is_string() ? variant->get<std::string>() : std::string();
}

StatusOr<fit::LadderResults> LoadLadder(const LadderSource& source, std::string* baseline, LadderMetric* metric) {
  const bool from_csv = !source.csv_path.empty(), from_sweep = source.sweep_id > 0;
  if (from_csv == from_sweep) return Status::InvalidArgument("give either a SWEEP id or --from-csv FILE");
  if (from_csv) {
    if (baseline->empty()) return Status::InvalidArgument("--baseline VARIANT is required with --from-csv");
    return fit::ReadLadderCsv(source.csv_path);
  }
  RUNG_ASSIGN_OR_RETURN(const std::unique_ptr<CoordinatorConnection> connection,
                        CoordinatorConnection::Open(source.connection));
  CoordinatorConnection& client = *connection;
  rung::v1::GetSweepRequest get;
  get.set_sweep_id(source.sweep_id);
  rung::v1::Sweep sweep;
  grpc::Status status = client.user().GetSweep(client.Context().get(), get, &sweep);
  if (!status.ok()) return FromGrpcStatus(status).WithContext("sweep " + std::to_string(source.sweep_id));
  if (metric != nullptr) *metric = LadderMetric{sweep.metric_name(), sweep.metric_goal() == "maximize"};
  const nlohmann::json selector = wire::FromConfigEntries(sweep.baseline());
  if (baseline->empty() && !selector.contains("position.variant")) {
    return Status::InvalidArgument("sweep " + sweep.name() + " has no position.variant baseline; give --baseline VARIANT");
  }
  // The coordinator builds the ladder as `rung fit SWEEP` sees it (UserService.Export, LADDER).
  rung::v1::ExportRequest request;
  request.set_sweep_id(source.sweep_id);
  request.set_table(rung::v1::EXPORT_TABLE_LADDER);
  request.set_format(rung::v1::EXPORT_FORMAT_CSV);
  std::unique_ptr<grpc::ClientContext> context = client.Context();
  std::unique_ptr<grpc::ClientReader<rung::v1::ExportChunk>> stream = client.user().Export(context.get(), request);
  std::string csv;
  rung::v1::ExportChunk chunk;
  while (stream->Read(&chunk)) csv += chunk.data();
  status = stream->Finish();
  if (!status.ok()) return Status::Unavailable("reading the ladder of sweep " + sweep.name() + ": " + status.error_message());
  if (csv.find('\n') + 1 >= csv.size()) {  // the header alone
    return Status::FailedPrecondition("sweep " + sweep.name() + " has no SUCCEEDED trial yet");
  }
  RUNG_ASSIGN_OR_RETURN(fit::LadderResults ladder, fit::ParseLadderCsv(csv, "sweep " + sweep.name()));
  if (baseline->empty()) *baseline = BaselineVariant(selector, ladder.Variants());
  return ladder;
}

}  // namespace rung::cli

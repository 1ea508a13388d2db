#include "coordinator/domain/sweep_export.h"

#include <cmath>
#include <map>
#include <set>

#include "coordinator/domain/sweep_fits.h"
#include "core/common/csv_field.h"
#include "sweeps/spec/json_path.h"

namespace rung {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr int64_t kTrialPage = 500;
constexpr size_t kChunkBytes = 64 * 1024;

// Dotted leaf paths of an object and their values; arrays and scalars are leaves.
void Flatten(const json& value, const std::string& prefix, std::map<std::string, json>* leaves) {
  if (value.is_object() && !value.empty()) {
    for (auto item = value.begin(); item != value.end(); ++item) {
      Flatten(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), leaves);
    }
    return;
  }
  if (!prefix.empty()) (*leaves)[prefix] = value;
}

std::string CsvValue(const json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return CsvField(value.get<std::string>());
  if (value.is_number_float() && !std::isfinite(value.get<double>())) return "";
  return CsvField(value.dump());
}

// The fixed columns of a trial row, in order.
ordered_json TrialColumns(const TrialResult& result, const nlohmann::json& baseline) {
  const TrialRecord& trial = result.trial;
  return {{"trial_id", trial.id},
          {"index", trial.trial_index},
          {"state", TrialStateName(trial.state)},
          {"rung", trial.cell.rung},
          {"rung_label", trial.cell.rung_label},
          {"baseline", MatchesBaseline(trial.cell.config, baseline)},
          {"identity", trial.cell.identity},
          {"attempt", trial.attempt},
          {"worker_id", result.worker_id},
          {"seed", trial.cell.seed},
          {"parameters_nonembedding", trial.cell.n_nonembedding},
          {"parameters_total", trial.cell.n_total},
          {"tokens", trial.cell.tokens},
          {"flops", trial.cell.flops}};
}

json Summaries(const TrialResult& result) {
  json summaries = json::object();
  for (const auto& [name, value] : result.summaries) summaries[name] = std::isfinite(value) ? json(value) : json();
  return summaries;
}

// The provenance as CSV columns show it: without its copy of the resolved config (the config.*
// columns already hold it).
json ProvenanceColumns(const json& provenance) {
  if (!provenance.is_object()) return provenance;
  json shown = provenance;
  shown.erase("config");
  return shown;
}

// Collects lines and hands them to `write` in chunks of about kChunkBytes.
class ChunkWriter {
 public:
  explicit ChunkWriter(const std::function<bool(const std::string&)>& write) : write_(write) {}
  bool Line(const std::string& line) {
    buffer_ += line;
    buffer_ += '\n';
    return buffer_.size() < kChunkBytes || Flush();
  }
  bool Flush() {
    if (buffer_.empty()) return true;
    const bool written = write_(buffer_);
    buffer_.clear();
    return written;
  }

 private:
  const std::function<bool(const std::string&)>& write_;
  std::string buffer_;
};

// Calls `each(trial)` for every trial of the sweep, a page at a time; stops at the first error.
Status ForEachTrial(Coordinator& coordinator, int64_t sweep_id, const std::function<Status(const TrialResult&)>& each) {
  int64_t after = -1;
  while (true) {
    RUNG_ASSIGN_OR_RETURN(std::vector<TrialResult> page, coordinator.results().Trials(sweep_id, after, kTrialPage));
    for (const TrialResult& trial : page) RUNG_RETURN_IF_ERROR(each(trial));
    if (static_cast<int64_t>(page.size()) < kTrialPage) return Status::Ok();
    after = page.back().trial.trial_index;
  }
}

Status ReaderLeft() { return Status::Cancelled("the export's reader went away"); }

Status ExportTrialsJsonl(Coordinator& coordinator, const SweepRecord& sweep, ChunkWriter& out) {
  return ForEachTrial(coordinator, sweep.id, [&](const TrialResult& trial) -> Status {
    ordered_json row = TrialColumns(trial, sweep.baseline);
    row["assignments"] = trial.trial.cell.assignments;
    row["config"] = trial.trial.cell.config;
    row["provenance"] = trial.provenance;
    row["summaries"] = Summaries(trial);
    return out.Line(row.dump()) ? Status::Ok() : ReaderLeft();
  });
}

Status ExportTrialsCsv(Coordinator& coordinator, const SweepRecord& sweep, ChunkWriter& out) {
  // First pass: the columns (the union over every trial); second pass: the rows.
  std::set<std::string> config_keys, provenance_keys, summary_names;
  RUNG_RETURN_IF_ERROR(ForEachTrial(coordinator, sweep.id, [&](const TrialResult& trial) {
    std::map<std::string, json> leaves;
    Flatten(trial.trial.cell.config, "", &leaves);
    for (const auto& [key, value] : leaves) config_keys.insert(key);
    leaves.clear();
    Flatten(ProvenanceColumns(trial.provenance), "", &leaves);
    for (const auto& [key, value] : leaves) provenance_keys.insert(key);
    for (const auto& [name, value] : trial.summaries) summary_names.insert(name);
    return Status::Ok();
  }));
  std::string header;
  const ordered_json columns = TrialColumns(TrialResult{}, json::object());
  for (const auto& item : columns.items()) {
    header += (header.empty() ? "" : ",") + CsvField(item.key());
  }
  for (const std::string& key : config_keys) header += "," + CsvField("config." + key);
  for (const std::string& key : provenance_keys) header += "," + CsvField("provenance." + key);
  for (const std::string& name : summary_names) header += "," + CsvField("summary." + name);
  if (!out.Line(header)) return ReaderLeft();
  return ForEachTrial(coordinator, sweep.id, [&](const TrialResult& trial) -> Status {
    std::string line;
    const ordered_json fixed = TrialColumns(trial, sweep.baseline);
    for (const auto& item : fixed.items()) {
      line += (line.empty() ? "" : ",") + CsvValue(item.value());
    }
    std::map<std::string, json> config, provenance;
    Flatten(trial.trial.cell.config, "", &config);
    Flatten(ProvenanceColumns(trial.provenance), "", &provenance);
    for (const std::string& key : config_keys) {
      auto found = config.find(key);
      line += "," + (found == config.end() ? std::string() : CsvValue(found->second));
    }
    for (const std::string& key : provenance_keys) {
      auto found = provenance.find(key);
      line += "," + (found == provenance.end() ? std::string() : CsvValue(found->second));
    }
    for (const std::string& name : summary_names) {
      auto found = trial.summaries.find(name);
      line += "," + (found == trial.summaries.end() ? std::string() : CsvValue(found->second));
    }
    return out.Line(line) ? Status::Ok() : ReaderLeft();
  });
}

}  // namespace

Status ExportSweep(Coordinator& coordinator, int64_t sweep_id, ExportTable table, ExportFormat format,
                   const std::function<bool(const std::string&)>& write) {
  if (sweep_id <= 0) return Status::InvalidArgument("ExportRequest.sweep_id is required (a positive id)");
  RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, coordinator.sweeps().Get(sweep_id));
  const bool jsonl = format == ExportFormat::kJsonLines;
  ChunkWriter out(write);
  switch (table) {
    case ExportTable::kTrials:
      RUNG_RETURN_IF_ERROR(jsonl ? ExportTrialsJsonl(coordinator, sweep, out)
                                 : ExportTrialsCsv(coordinator, sweep, out));
      break;
    case ExportTable::kLadder: {
      if (jsonl) {
        return Status::InvalidArgument("the LADDER table exports as CSV only (what rung fit --from-csv reads)");
      }
      RUNG_ASSIGN_OR_RETURN(std::string csv, LadderCsv(coordinator, sweep.id));
      if (!write(csv)) return ReaderLeft();
      break;
    }
  }
  return out.Flush() ? Status::Ok() : ReaderLeft();
}

}  // namespace rung

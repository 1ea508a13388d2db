#include "coordinator/cli/sweep_status.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <utility>

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_tables.h"
#include "coordinator/cli/text_table.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;
using nlohmann::json;

// The trials of one rung and variant, counted by state.
struct StatusRow {
  std::string rung, variant;
  std::map<std::string, int64_t> states;
};

// Rows in rung order, then variant; `seen_states` gets every state some trial is in.
std::vector<StatusRow> CountByRungAndVariant(const std::vector<pb::Trial>& trials, std::set<std::string>* seen_states) {
  std::map<std::pair<int64_t, std::string>, StatusRow> rows;
  for (const pb::Trial& trial : trials) {
    std::string variant;
    for (const pb::ConfigEntry& entry : trial.assignments()) {
      if (entry.key() == "position.variant" && entry.value().has_text()) variant = entry.value().text();
    }
    StatusRow& row = rows[{trial.rung(), variant}];
    row.rung = trial.rung_label();
    row.variant = variant;
    row.states[TrialStateName(trial.state())]++;
    seen_states->insert(TrialStateName(trial.state()));
  }
  std::vector<StatusRow> ordered;
  for (auto& [key, row] : rows) ordered.push_back(std::move(row));
  return ordered;
}

// The state columns: PREEMPTED, STALE (a trial between attempts) and EARLY_STOPPED only when some
// trial is in them.
std::vector<std::string> StateColumns(const std::set<std::string>& seen_states) {
  std::vector<std::string> states = {"PENDING", "LEASED", "RUNNING"};
  for (const char* state : {"PREEMPTED", "STALE"}) {
    if (seen_states.count(state) > 0) states.push_back(state);
  }
  for (const char* state : {"SUCCEEDED", "FAILED", "CANCELLED"}) states.push_back(state);
  if (seen_states.count("EARLY_STOPPED") > 0) states.push_back("EARLY_STOPPED");
  return states;
}

std::string CountsText(const pb::TrialCounts& counts) {
  return std::to_string(counts.succeeded()) + "/" + std::to_string(counts.total()) + " done, " +
         std::to_string(counts.running() + counts.leased()) + " running, " + std::to_string(counts.pending()) +
         " pending, " + std::to_string(counts.failed()) + " failed" +
         (counts.early_stopped() > 0 ? ", " + std::to_string(counts.early_stopped()) + " stopped early" : "");
}

json OptionalNumber(const std::optional<double>& value) { return value ? json(*value) : json(); }

void PrintStatusJson(const pb::Sweep& sweep, const SweepProgress& progress, const json& rows) {
  const pb::TrialCounts& c = sweep.counts();
  const json counts = {{"total", c.total()},         {"pending", c.pending()},     {"leased", c.leased()},
                       {"running", c.running()},     {"succeeded", c.succeeded()}, {"failed", c.failed()},
                       {"preempted", c.preempted()}, {"stale", c.stale()},         {"cancelled", c.cancelled()},
                       {"early_stopped", c.early_stopped()}};
  const json object = {{"sweep_id", sweep.sweep_id()},
                       {"name", sweep.name()},
                       {"state", SweepStateName(sweep.state())},
                       {"state_reason", sweep.state_reason()},
                       {"counts", counts},
                       {"total_flops", sweep.total_flops()},
                       {"finished_flops", sweep.finished_flops()},
                       {"remaining_flops", progress.remaining_flops},
                       {"elapsed_seconds", progress.elapsed_seconds},
                       {"flops_per_second", OptionalNumber(progress.flops_per_second)},
                       {"eta_seconds", OptionalNumber(progress.eta_seconds)},
                       {"rows", rows}};
  std::cout << object.dump(2) << "\n" << std::flush;
}

void PrintStatusText(const pb::Sweep& sweep, const SweepProgress& progress, const TextTable& table,
                     bool clear_screen, double search_flops) {
  if (clear_screen) std::cout << "\033[2J\033[H";
  std::cout << "sweep " << sweep.sweep_id() << " " << sweep.name() << ": " << SweepStateName(sweep.state())
            << (sweep.state_reason().empty() ? "" : " (" + sweep.state_reason() + ")") << "\n"
            << CountsText(sweep.counts()) << "\n\n";
  table.PrintText(std::cout);
  std::cout << "\ncompute " << Scientific(sweep.finished_flops()) << " of " << Scientific(sweep.total_flops())
            << " FLOPs (6ND) in " << HumanDuration(progress.elapsed_seconds);
  if (progress.flops_per_second) std::cout << "; " << Scientific(*progress.flops_per_second, 2) << " FLOP/s";
  if (progress.eta_seconds) std::cout << ", ETA " << HumanDuration(*progress.eta_seconds);
  if (search_flops > 0 && sweep.tuning() == "searching") {
    std::cout << "\nthe learning-rate search is open: up to " << Scientific(search_flops)
              << " FLOPs more (its worst case, in the ETA; `rung tune " << sweep.sweep_id() << "`)";
  } else if (search_flops > 0) {
    std::cout << "\nthe precision aim is open: up to " << Scientific(search_flops)
              << " FLOPs more (what is left of its budget, in the ETA; `rung precision " << sweep.sweep_id() << "`)";
  }
  std::cout << "\n" << std::flush;
}

}  // namespace

bool SweepFinished(const rung::v1::Sweep& sweep) {
  return sweep.state() == rung::v1::SWEEP_STATE_SUCCEEDED || sweep.state() == rung::v1::SWEEP_STATE_FAILED ||
         sweep.state() == rung::v1::SWEEP_STATE_CANCELLED;
}

SweepProgress MeasureProgress(const pb::Sweep& sweep, const std::vector<pb::Trial>& trials, double now_seconds,
                              double search_flops) {
  SweepProgress progress;
  progress.remaining_flops = search_flops;
  progress.finished = sweep.state() == pb::SWEEP_STATE_SUCCEEDED || sweep.state() == pb::SWEEP_STATE_FAILED ||
                      sweep.state() == pb::SWEEP_STATE_CANCELLED;
  const double end = progress.finished && sweep.has_finished_at() ? static_cast<double>(sweep.finished_at().seconds())
                                                                  : now_seconds;
  progress.elapsed_seconds = std::max(0.0, end - static_cast<double>(sweep.created_at().seconds()));
  for (const pb::Trial& trial : trials) {
    switch (trial.state()) {
      case pb::TRIAL_STATE_PENDING:
      case pb::TRIAL_STATE_LEASED:
      case pb::TRIAL_STATE_RUNNING:
      case pb::TRIAL_STATE_PREEMPTED:
      case pb::TRIAL_STATE_STALE:
        progress.remaining_flops += trial.flops();
        break;
      default:
        break;
    }
  }
  if (progress.elapsed_seconds > 0 && sweep.finished_flops() > 0) {
    progress.flops_per_second = sweep.finished_flops() / progress.elapsed_seconds;
    if (!progress.finished && progress.remaining_flops > 0) {
      progress.eta_seconds = progress.remaining_flops / *progress.flops_per_second;
    }
  }
  return progress;
}

void PrintSweepStatus(const pb::Sweep& sweep, const std::vector<pb::Trial>& trials, double now_seconds,
                      const std::string& format, bool clear_screen, double search_flops) {
  std::set<std::string> seen_states;
  const std::vector<StatusRow> rows = CountByRungAndVariant(trials, &seen_states);
  const std::vector<std::string> states = StateColumns(seen_states);
  const SweepProgress progress = MeasureProgress(sweep, trials, now_seconds, search_flops);
  const bool csv = format == "csv";
  std::vector<std::string> columns = {"rung", "variant"};
  columns.insert(columns.end(), states.begin(), states.end());
  if (csv) {  // the sweep's figures on every row, for a flat file
    for (const char* column : {"sweep", "sweep_state", "finished_flops", "remaining_flops", "elapsed_seconds",
                               "flops_per_second", "eta_seconds"}) {
      columns.push_back(column);
    }
  }
  TextTable table(columns);
  json json_rows = json::array();
  for (const StatusRow& row : rows) {
    std::vector<std::string> cells = {row.rung, row.variant};
    json json_row = {{"rung", row.rung}, {"variant", row.variant}};
    for (const std::string& state : states) {
      auto it = row.states.find(state);
      const int64_t count = it == row.states.end() ? 0 : it->second;
      cells.push_back(count ? std::to_string(count) : csv ? "0" : "");
      json_row[state] = count;
    }
    if (csv) {
      cells.insert(cells.end(), {std::to_string(sweep.sweep_id()), SweepStateName(sweep.state()),
                                 ExactNumber(sweep.finished_flops()), ExactNumber(progress.remaining_flops),
                                 ExactNumber(progress.elapsed_seconds),
                                 progress.flops_per_second ? ExactNumber(*progress.flops_per_second) : "",
                                 progress.eta_seconds ? ExactNumber(*progress.eta_seconds) : ""});
    }
    json_rows.push_back(json_row);
    table.AddRow(cells, json_row);
  }
  if (format == "json") {
    PrintStatusJson(sweep, progress, json_rows);
  } else if (csv) {
    table.PrintCsv(std::cout);
    std::cout << std::flush;
  } else {
    PrintStatusText(sweep, progress, table, clear_screen, search_flops);
  }
}

}  // namespace rung::cli

// coordinator/cli/ladder_source.h
//
// Where `rung fit --from-csv` and `rung plot` get their ladder: a CSV file (ladders trained
// anywhere) or a stored sweep on a coordinator (`rung plot SWEEP`): the ladder the coordinator
// exports (UserService.Export, table LADDER; the one `rung fit SWEEP` fits): every SUCCEEDED
// trial's final value of the sweep's metric, at its compute (6 N D), labelled by rung and keyed by
// variant and seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include "coordinator/cli/command_support.h"
#include "sweeps/fit/ladder_results.h"

namespace rung::cli {

struct LadderSource {
  std::string csv_path;
  int64_t sweep_id = 0;
  ConnectionOptions connection;
};

// Registers the optional positional SWEEP, --from-csv FILE and the connection options.
void AddLadderSourceOptions(CLI::App* command, LadderSource* source);

// The ladder variant a spec's baseline selector ({"position.variant": "rope", "inverse_temperature.xi": 0.0})
// names: the variant whose "key=value,..." name holds every entry of the selector (a sweep with several
// axes besides the seed), else the selector's position.variant; "" without one.
std::string BaselineVariant(const nlohmann::json& selector, const std::vector<std::string>& variants);

// The quantity a ladder's values are: a sweep's metric, or "" for a CSV's loss column.
struct LadderMetric {
  std::string name;       // e.g. "val_loss", "val_accuracy"; "" for a CSV (a loss in nats)
  bool maximize = false;  // the sweep's goal is "maximize"
};

// Loads the ladder; fills `baseline` from the sweep's spec when it is empty (BaselineVariant), and
// `metric` (when given) with what the ladder's values are.
// Errors: INVALID_ARGUMENT (neither or both sources, bad CSV, no baseline), CoordinatorConnection::Open's,
// the coordinator's own code for the sweep (NOT_FOUND: no such sweep; UNAVAILABLE: not reached),
// UNAVAILABLE when its ladder cannot be read, FAILED_PRECONDITION when it has no SUCCEEDED trial yet.
StatusOr<fit::LadderResults> LoadLadder(const LadderSource& source, std::string* baseline,
                                        LadderMetric* metric = nullptr);

}  // namespace rung::cli

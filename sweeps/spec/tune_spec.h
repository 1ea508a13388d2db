// sweeps/spec/tune_spec.h
//
// The `tune` block: which numeric key of the trial config (normally train.lr) is searched per
// tuning cell over a geometric grid, until its best value is bracketed (docs/science.md section 10,
// the LeRoPE paper's protocol). sweeps/tune/lr_search.h carries the search out.
//
//   tune:
//     train.lr:                          # the key tuned: one numeric dotted key of the trial config
//       grid: {ratio: 1.4142135623730951, anchor: 1.0}   # values anchor * ratio^i, i an integer
//       center: 3e-3                     # where a cell starts (snapped to the grid); or per rung label
//       start: 3                         # values first tried per cell (odd: the centre +- (start-1)/2)
//       until: bracketed                 # the only rule: add the neighbour beyond the best
//       max_points: 9                    # values per cell at most; a cell reaching it unbracketed is reported so
//       per: [rung, position.variant]    # a tuning cell = one combination of these (default: every axis but seed)
//       seeds: first                     # first: tune on the first seed, then the others at the best | all
//       predict: power_law               # centre a larger rung on the fit of best index against ln N_total | none
//       extrapolate_above: L4-d256       # rungs after this label run at the extrapolated index, unswept
//       from_sweep: null                 # or a sweep name: each cell's best value from there, no search
//
// A key tuned must not also be a sweep axis or set by a ladder rule (ladder.lr for train.lr): the
// search sets it. Every error names file:line:col. The anchor, each centre and the first values of
// each centre (centre x ratio^(+-(start-1)/2)) must be numbers float32 holds, as every real of a trial
// config must (core/config/config_number_range.h); later values are bounded by MinIndex and MaxIndex.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/yaml_document.h"
#include "sweeps/spec/spec_diagnostics.h"

namespace rung {

// Bounds that keep a search's arithmetic in small integers: values per cell, and how far (in grid
// steps) a centre may lie from the anchor.
inline constexpr int64_t kMaxTunePoints = 1000;
inline constexpr int64_t kMaxGridIndex = 1000000;

struct TuneSpec {
  bool set = false;             // the spec has a tune block
  std::string key;              // "train.lr"
  double ratio = 1.4142135623730951;  // > 1
  double anchor = 1.0;          // > 0
  std::optional<double> center;                   // one centre for every rung; > 0
  std::map<std::string, double> center_per_rung;  // or one per rung label
  int64_t start = 3;            // odd, 1 .. kMaxTunePoints
  int64_t max_points = 9;       // start .. kMaxTunePoints
  std::vector<std::string> per;  // "rung" and axis keys; empty: every axis but seed, and the rung
  bool per_given = false;
  bool tune_every_seed = false;  // seeds: all
  bool predict = true;           // predict: power_law
  std::string extrapolate_above;  // "" = every rung is swept
  std::string from_sweep;         // "" = search here
  std::string location;           // where the tuned key is written (for errors about its values)

  // The grid index nearest `value` (ties to the smaller index). REQUIRES: value > 0.
  int64_t NearestIndex(double value) const;
  // anchor * ratio^index.
  double ValueAt(int64_t index) const;
  // The smallest and largest grid index whose value float32 holds (core/config/config_number_range.h),
  // within kMaxGridIndex of the anchor: the search never tries a value outside [MinIndex, MaxIndex].
  int64_t MinIndex() const;
  int64_t MaxIndex() const;
  // The centre of the rung `label` (the per-rung one, else the common one). REQUIRES: set.
  double CenterOf(const std::string& label) const;
  // Whether tuning cells are per rung: `per` holds "rung", or is not given (its default does).
  bool PerRung() const;
};

// Parses the spec's `tune` block (key path "tune"); null: not set. Appends errors to `diagnostics`.
TuneSpec ParseTuneSpec(const nlohmann::json* block, const ConfigDocument& document, SpecDiagnostics* diagnostics);

}  // namespace rung

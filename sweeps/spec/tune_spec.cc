#include "sweeps/spec/tune_spec.h"

#include <algorithm>
#include <cmath>

#include "core/config/config_number_range.h"
#include "sweeps/spec/spec_blocks.h"

namespace rung {

int64_t TuneSpec::NearestIndex(double value) const {
  const double exact = std::log(value / anchor) / std::log(ratio);
  // Snapping compares values on the log scale; a value exactly between two grid values takes the
  // smaller index. The tolerance absorbs the rounding of a value written as anchor * ratio^i.
  const double below = std::floor(exact + 1e-9);
  return static_cast<int64_t>(exact - below > 0.5 + 1e-9 ? below + 1 : below);
}

double TuneSpec::ValueAt(int64_t index) const {
  // ratio^index as (ratio^2)^(index/2) x ratio^(index mod 2), with ratio^2 taken as the integer it is
  // within rounding (sqrt 2 squared is 2.0000000000000004): the paper's grid 2^(-i/2) then gives
  // exact powers of two at even indices (2^-10, not 0.0009765624999999987).
  double square = ratio * ratio;
  if (std::fabs(square - std::round(square)) < 1e-12 * square) square = std::round(square);
  const int64_t half = index >= 0 ? index / 2 : -((-index + 1) / 2);
  const int64_t odd = index - 2 * half;  // 0 or 1
  return anchor * std::pow(square, static_cast<double>(half)) * (odd ? ratio : 1.0);
}

int64_t TuneSpec::MinIndex() const {
  // The log estimate, then the exact edge by ValueAt (which rounds as the search's values do).
  const double estimate = std::ceil(std::log(kMinConfigRealMagnitude / anchor) / std::log(ratio));
  int64_t index = static_cast<int64_t>(std::clamp(estimate, -static_cast<double>(kMaxGridIndex),
                                                  static_cast<double>(kMaxGridIndex)));
  while (index < kMaxGridIndex && ValueAt(index) < kMinConfigRealMagnitude) ++index;
  while (index > -kMaxGridIndex && ValueAt(index - 1) >= kMinConfigRealMagnitude) --index;
  return index;
}

int64_t TuneSpec::MaxIndex() const {
  const double estimate = std::floor(std::log(kMaxConfigReal / anchor) / std::log(ratio));
  int64_t index = static_cast<int64_t>(std::clamp(estimate, -static_cast<double>(kMaxGridIndex),
                                                  static_cast<double>(kMaxGridIndex)));
  while (index > -kMaxGridIndex && ValueAt(index) > kMaxConfigReal) --index;
  while (index < kMaxGridIndex && ValueAt(index + 1) <= kMaxConfigReal) ++index;
  return index;
}

double TuneSpec::CenterOf(const std::string& label) const {
  auto it = center_per_rung.find(label);
  if (it != center_per_rung.end()) return it->second;
  return center.value_or(anchor);
}

bool TuneSpec::PerRung() const { return !per_given || std::find(per.begin(), per.end(), "rung") != per.end(); }

namespace {

// The search block of the key tuned, being read: its JSON, its key path ("tune.train.lr"), and where its
// errors go.
struct SearchBlock {
  const nlohmann::json& search;
  const std::string& path;
  const ConfigDocument& document;
  SpecDiagnostics* diagnostics;

  // An error about the key at `path` + `suffix`, located where that key is written.
  void Error(const std::string& suffix, const std::string& message) const {
    diagnostics->Error(document.Locate(path + suffix), path + suffix, message);
  }
};

// grid: {ratio > 1, anchor > 0}, each where given.
void ReadGrid(const SearchBlock& in, TuneSpec* spec) {
  if (!in.search.contains("grid")) return;
  const nlohmann::json& grid = in.search["grid"];
  if (!grid.is_object()) {
    in.Error(".grid", "expected {ratio: 1.414, anchor: 1.0}");
    return;
  }
  RejectUnknownKeys(grid, in.path + ".grid", {"ratio", "anchor"}, in.document, in.diagnostics);
  ReadSpecNumberAbove(grid, "ratio", in.path + ".grid.ratio", 1.0, &spec->ratio, in.document, in.diagnostics);
  ReadSpecNumberAbove(grid, "anchor", in.path + ".grid.anchor", 0.0, &spec->anchor, in.document, in.diagnostics);
}

// from_sweep: a sweep name; null, as absent, leaves the search here.
void ReadFromSweep(const SearchBlock& in, TuneSpec* spec) {
  if (in.search.contains("from_sweep") && !in.search["from_sweep"].is_null()) {
    ReadSpecString(in.search, "from_sweep", in.path + ".from_sweep", &spec->from_sweep, in.document, in.diagnostics);
  }
}

// center: one value > 0, or one per rung label; an error without one unless the values come from_sweep.
void ReadCenters(const SearchBlock& in, TuneSpec* spec) {
  if (in.search.contains("center")) {
    const nlohmann::json& center = in.search["center"];
    if (center.is_object()) {
      for (auto it = center.begin(); it != center.end(); ++it) {
        double value = 0;
        if (ReadSpecNumberAbove(center, it.key(), in.path + ".center." + it.key(), 0.0, &value, in.document,
                                in.diagnostics)) {
          spec->center_per_rung[it.key()] = value;
        }
      }
      if (center.empty()) in.Error(".center", "expected a value or one per rung label");
    } else {
      double value = 0;
      if (ReadSpecNumberAbove(in.search, "center", in.path + ".center", 0.0, &value, in.document, in.diagnostics)) {
        spec->center = value;
      }
    }
  } else if (spec->from_sweep.empty()) {
    in.diagnostics->Error(spec->location, in.path + ".center",
                          "a search needs a centre: `center: 3e-3` (or one per rung label), or `from_sweep: NAME`");
  }
}

// start (odd, 1 .. kMaxTunePoints; 1 when over) and max_points (start .. kMaxTunePoints; kMaxTunePoints
// when over).
void ReadPointCounts(const SearchBlock& in, TuneSpec* spec) {
  ReadSpecInteger(in.search, "start", in.path + ".start", 1, &spec->start, in.document, in.diagnostics);
  if (spec->start > kMaxTunePoints) {
    in.Error(".start", "at most " + std::to_string(kMaxTunePoints) + " values per cell");
    spec->start = 1;
  }
  if (spec->start % 2 == 0) in.Error(".start", "expected an odd count: the centre and as many values on each side");
  ReadSpecInteger(in.search, "max_points", in.path + ".max_points", 1, &spec->max_points, in.document,
                  in.diagnostics);
  if (spec->max_points > kMaxTunePoints) {
    in.Error(".max_points", "at most " + std::to_string(kMaxTunePoints) + " values per cell");
    spec->max_points = kMaxTunePoints;
  }
  if (spec->max_points < spec->start) {
    in.Error(".max_points", "must be at least `start` (" + std::to_string(spec->start) + ")");
  }
}

// The centre `value` (at `path` + `suffix`) must be a real float32 holds, within kMaxGridIndex grid steps
// of the anchor, and so must the first values around it; the first error found.
void CheckCenter(const SearchBlock& in, const TuneSpec& spec, double value, const std::string& suffix) {
  if (const std::string problem = ConfigRealRangeProblem(value); !problem.empty()) {
    in.Error(suffix, problem);
    return;
  }
  const double steps = std::log(value / spec.anchor) / std::log(spec.ratio);
  if (!(std::fabs(steps) < static_cast<double>(kMaxGridIndex))) {
    in.Error(suffix, "lies more than " + std::to_string(kMaxGridIndex) + " grid steps from the anchor");
    return;
  }
  const int64_t center = spec.NearestIndex(value);
  const int64_t half = (std::max<int64_t>(spec.start, 1) - 1) / 2;
  for (const int64_t index : {center - half, center + half}) {
    if (const std::string problem = ConfigRealRangeProblem(spec.ValueAt(index)); !problem.empty()) {
      in.Error(suffix, "the search starts at " + std::to_string(spec.start) + " values around " +
                           ConfigNumberText(value) + " (ratio " + ConfigNumberText(spec.ratio) + "), and " + problem);
      return;
    }
  }
}

// The anchor, each centre and its first values are reals of the trial config: float32 must hold them.
// A centre must lie within kMaxGridIndex steps of the anchor (grid indices stay small integers).
void CheckGridValues(const SearchBlock& in, const TuneSpec& spec) {
  if (const std::string problem = ConfigRealRangeProblem(spec.anchor); !problem.empty()) {
    in.Error(".grid.anchor", problem);
  }
  if (spec.center) CheckCenter(in, spec, *spec.center, ".center");
  for (const auto& [label, value] : spec.center_per_rung) CheckCenter(in, spec, value, ".center." + label);
}

// until (only bracketed), seeds (first or all), predict (power_law or none) and extrapolate_above, which
// needs predict: power_law.
void ReadSearchRules(const SearchBlock& in, TuneSpec* spec) {
  std::string until = "bracketed";
  if (ReadSpecString(in.search, "until", in.path + ".until", &until, in.document, in.diagnostics) &&
      until != "bracketed") {
    in.Error(".until",
             "the only rule is `bracketed` (add the neighbour beyond the best until a tried value lies on each side)");
  }
  std::string seeds = "first";
  if (ReadSpecString(in.search, "seeds", in.path + ".seeds", &seeds, in.document, in.diagnostics)) {
    if (seeds != "first" && seeds != "all") in.Error(".seeds", "must be first or all");
    spec->tune_every_seed = seeds == "all";
  }
  std::string predict = "power_law";
  if (ReadSpecString(in.search, "predict", in.path + ".predict", &predict, in.document, in.diagnostics)) {
    if (predict != "power_law" && predict != "none") in.Error(".predict", "must be power_law or none");
    spec->predict = predict == "power_law";
  }
  ReadSpecString(in.search, "extrapolate_above", in.path + ".extrapolate_above", &spec->extrapolate_above,
                 in.document, in.diagnostics);
  if (!spec->extrapolate_above.empty() && !spec->predict) {
    in.Error(".extrapolate_above",
             "extrapolating needs `predict: power_law` (the index comes from the fit over smaller rungs)");
  }
}

// per: a non-empty list of axis keys and `rung` (never seed), each string kept in order.
void ReadPer(const SearchBlock& in, TuneSpec* spec) {
  if (!in.search.contains("per")) return;
  const nlohmann::json& per = in.search["per"];
  spec->per_given = true;
  if (!per.is_array() || per.empty()) {
    in.Error(".per", "expected a list of axis keys and `rung`, e.g. [rung, position.variant]");
    return;
  }
  for (size_t i = 0; i < per.size(); ++i) {
    const std::string item = ".per[" + std::to_string(i) + "]";
    if (!per[i].is_string()) {
      in.Error(item, "expected an axis key or `rung`");
      continue;
    }
    const std::string key = per[i].get<std::string>();
    if (key == "seed") {
      in.Error(item, "seeds are not tuning cells: `seeds: all` tunes on every seed (ranked by their mean)");
    }
    spec->per.push_back(key);
  }
}

}  // namespace

TuneSpec ParseTuneSpec(const nlohmann::json* block, const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  TuneSpec spec;
  if (block == nullptr) return spec;
  if (!block->is_object() || block->size() != 1 || !block->begin().value().is_object()) {
    diagnostics->Error(document.Locate("tune"), "tune",
                       "expected one key to tune and its search, e.g. {train.lr: {grid: {ratio: 1.414, anchor: 1.0}, "
                       "center: 3e-3}}");
    return spec;
  }
  spec.set = true;
  spec.key = block->begin().key();
  const std::string path = "tune." + spec.key;
  spec.location = document.Locate(path);
  const nlohmann::json& search = block->begin().value();
  RejectUnknownKeys(search, path,
                    {"grid", "center", "start", "until", "max_points", "per", "seeds", "predict", "extrapolate_above",
                     "from_sweep"},
                    document, diagnostics);
  const SearchBlock in{search, path, document, diagnostics};
  ReadGrid(in, &spec);
  ReadFromSweep(in, &spec);
  ReadCenters(in, &spec);
  ReadPointCounts(in, &spec);
  CheckGridValues(in, spec);
  ReadSearchRules(in, &spec);
  ReadPer(in, &spec);
  return spec;
}

}  // namespace rung

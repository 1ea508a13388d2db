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

  if (search.contains("grid")) {
    const nlohmann::json& grid = search["grid"];
    if (!grid.is_object()) {
      diagnostics->Error(document.Locate(path + ".grid"), path + ".grid", "expected {ratio: 1.414, anchor: 1.0}");
    } else {
      RejectUnknownKeys(grid, path + ".grid", {"ratio", "anchor"}, document, diagnostics);
      ReadSpecNumberAbove(grid, "ratio", path + ".grid.ratio", 1.0, &spec.ratio, document, diagnostics);
      ReadSpecNumberAbove(grid, "anchor", path + ".grid.anchor", 0.0, &spec.anchor, document, diagnostics);
    }
  }

  if (search.contains("from_sweep") && !search["from_sweep"].is_null()) {
    ReadSpecString(search, "from_sweep", path + ".from_sweep", &spec.from_sweep, document, diagnostics);
  }

  if (search.contains("center")) {
    const nlohmann::json& center = search["center"];
    if (center.is_object()) {
      for (auto it = center.begin(); it != center.end(); ++it) {
        double value = 0;
        if (ReadSpecNumberAbove(center, it.key(), path + ".center." + it.key(), 0.0, &value, document, diagnostics)) {
          spec.center_per_rung[it.key()] = value;
        }
      }
      if (center.empty()) {
        diagnostics->Error(document.Locate(path + ".center"), path + ".center", "expected a value or one per rung label");
      }
    } else {
      double value = 0;
      if (ReadSpecNumberAbove(search, "center", path + ".center", 0.0, &value, document, diagnostics)) {
        spec.center = value;
      }
    }
  } else if (spec.from_sweep.empty()) {
    diagnostics->Error(spec.location, path + ".center",
                       "a search needs a centre: `center: 3e-3` (or one per rung label), or `from_sweep: NAME`");
  }

  ReadSpecInteger(search, "start", path + ".start", 1, &spec.start, document, diagnostics);
  if (spec.start > kMaxTunePoints) {
    diagnostics->Error(document.Locate(path + ".start"), path + ".start",
                       "at most " + std::to_string(kMaxTunePoints) + " values per cell");
    spec.start = 1;
  }
  if (spec.start % 2 == 0) {
    diagnostics->Error(document.Locate(path + ".start"), path + ".start",
                       "expected an odd count: the centre and as many values on each side");
  }
  ReadSpecInteger(search, "max_points", path + ".max_points", 1, &spec.max_points, document, diagnostics);
  if (spec.max_points > kMaxTunePoints) {
    diagnostics->Error(document.Locate(path + ".max_points"), path + ".max_points",
                       "at most " + std::to_string(kMaxTunePoints) + " values per cell");
    spec.max_points = kMaxTunePoints;
  }
  if (spec.max_points < spec.start) {
    diagnostics->Error(document.Locate(path + ".max_points"), path + ".max_points",
                       "must be at least `start` (" + std::to_string(spec.start) + ")");
  }

  // The anchor, each centre and its first values are reals of the trial config: float32 must hold
  // them. A centre must lie within kMaxGridIndex steps of the anchor (grid indices stay small integers).
  if (const std::string problem = ConfigRealRangeProblem(spec.anchor); !problem.empty()) {
    diagnostics->Error(document.Locate(path + ".grid.anchor"), path + ".grid.anchor", problem);
  }
  const auto check_center = [&](double value, const std::string& center_path) {
    if (const std::string problem = ConfigRealRangeProblem(value); !problem.empty()) {
      diagnostics->Error(document.Locate(center_path), center_path, problem);
      return;
    }
    const double steps = std::log(value / spec.anchor) / std::log(spec.ratio);
    if (!(std::fabs(steps) < static_cast<double>(kMaxGridIndex))) {
      diagnostics->Error(document.Locate(center_path), center_path,
                         "lies more than " + std::to_string(kMaxGridIndex) + " grid steps from the anchor");
      return;
    }
    const int64_t center = spec.NearestIndex(value);
    const int64_t half = (std::max<int64_t>(spec.start, 1) - 1) / 2;
    for (const int64_t index : {center - half, center + half}) {
      if (const std::string problem = ConfigRealRangeProblem(spec.ValueAt(index)); !problem.empty()) {
        diagnostics->Error(document.Locate(center_path), center_path,
                           "the search starts at " + std::to_string(spec.start) + " values around " +
                               ConfigNumberText(value) + " (ratio " + ConfigNumberText(spec.ratio) + "), and " +
                               problem);
        return;
      }
    }
  };
  if (spec.center) check_center(*spec.center, path + ".center");
  for (const auto& [label, value] : spec.center_per_rung) check_center(value, path + ".center." + label);

  std::string until = "bracketed";
  if (ReadSpecString(search, "until", path + ".until", &until, document, diagnostics) && until != "bracketed") {
    diagnostics->Error(document.Locate(path + ".until"), path + ".until",
                       "the only rule is `bracketed` (add the neighbour beyond the best until a tried value lies on "
                       "each side)");
  }
  std::string seeds = "first";
  if (ReadSpecString(search, "seeds", path + ".seeds", &seeds, document, diagnostics)) {
    if (seeds != "first" && seeds != "all") {
      diagnostics->Error(document.Locate(path + ".seeds"), path + ".seeds", "must be first or all");
    }
    spec.tune_every_seed = seeds == "all";
  }
  std::string predict = "power_law";
  if (ReadSpecString(search, "predict", path + ".predict", &predict, document, diagnostics)) {
    if (predict != "power_law" && predict != "none") {
      diagnostics->Error(document.Locate(path + ".predict"), path + ".predict", "must be power_law or none");
    }
    spec.predict = predict == "power_law";
  }
  ReadSpecString(search, "extrapolate_above", path + ".extrapolate_above", &spec.extrapolate_above, document,
                 diagnostics);
  if (!spec.extrapolate_above.empty() && !spec.predict) {
    diagnostics->Error(document.Locate(path + ".extrapolate_above"), path + ".extrapolate_above",
                       "extrapolating needs `predict: power_law` (the index comes from the fit over smaller rungs)");
  }

  if (search.contains("per")) {
    const nlohmann::json& per = search["per"];
    spec.per_given = true;
    if (!per.is_array() || per.empty()) {
      diagnostics->Error(document.Locate(path + ".per"), path + ".per",
                         "expected a list of axis keys and `rung`, e.g. [rung, position.variant]");
    } else {
      for (size_t i = 0; i < per.size(); ++i) {
        const std::string item_path = path + ".per[" + std::to_string(i) + "]";
        if (!per[i].is_string()) {
          diagnostics->Error(document.Locate(item_path), item_path, "expected an axis key or `rung`");
          continue;
        }
        const std::string key = per[i].get<std::string>();
        if (key == "seed") {
          diagnostics->Error(document.Locate(item_path), item_path,
                             "seeds are not tuning cells: `seeds: all` tunes on every seed (ranked by their mean)");
        }
        spec.per.push_back(key);
      }
    }
  }
  return spec;
}

}  // namespace rung

#include "sweeps/spec/precision_spec.h"

#include <algorithm>
#include <cmath>

#include "sweeps/spec/spec_blocks.h"

namespace rung {

const std::vector<std::string>& PrecisionEstimators() {
  static const std::vector<std::string> names = {"hermite", "power_law_shared_e", "power_law_free_e"};
  return names;
}

PrecisionSpec ParsePrecisionSpec(const nlohmann::json* block, const ConfigDocument& document,
                                 SpecDiagnostics* diagnostics) {
  PrecisionSpec spec;
  if (block == nullptr) return spec;
  spec.location = document.Locate("precision");
  if (!block->is_object()) {
    diagnostics->Error(spec.location, "precision",
                       "expected {estimator: hermite, target_half_width: 0.01, level: 0.95, at: all, "
                       "budget_flops: 1e15, add: [seed]}");
    return spec;
  }
  spec.set = true;
  RejectUnknownKeys(*block, "precision",
                    {"estimator", "target_half_width", "level", "at", "budget_flops", "add", "in_flight"}, document,
                    diagnostics);
  if (ReadSpecString(*block, "estimator", "precision.estimator", &spec.estimator, document, diagnostics)) {
    const std::vector<std::string>& known = PrecisionEstimators();
    if (std::find(known.begin(), known.end(), spec.estimator) == known.end()) {
      std::string list;
      for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
      diagnostics->Error(document.Locate("precision.estimator"), "precision.estimator",
                         "'" + spec.estimator + "' is not an estimator a precision block aims with; one of " + list +
                             (spec.estimator == "piecewise"
                                  ? " (piecewise's chord bias stays while its interval narrows with every seed added)"
                                  : ""));
    }
  }
  if (!block->contains("target_half_width")) {
    diagnostics->Error(spec.location, "precision.target_half_width",
                       "missing: the half width (high - low) / 2 each target interval should reach, e.g. 0.01");
  } else {
    ReadSpecNumberAbove(*block, "target_half_width", "precision.target_half_width", 0.0, &spec.target_half_width,
                        document, diagnostics);
  }
  if (ReadSpecNumberAbove(*block, "level", "precision.level", 0.0, &spec.level, document, diagnostics) &&
      spec.level >= 1) {
    diagnostics->Error(document.Locate("precision.level"), "precision.level",
                       "expected a level in (0, 1), e.g. 0.95");
  }
  if (!block->contains("budget_flops")) {
    diagnostics->Error(spec.location, "precision.budget_flops",
                       "missing: the most FLOPs (6 N D, the first design's trials included) the sweep may plan");
  } else {
    ReadSpecNumberAbove(*block, "budget_flops", "precision.budget_flops", 0.0, &spec.budget_flops, document,
                        diagnostics);
  }
  if (ReadSpecInteger(*block, "in_flight", "precision.in_flight", 1, &spec.in_flight, document, diagnostics) &&
      spec.in_flight > kMaxPrecisionInFlight) {
    diagnostics->Error(document.Locate("precision.in_flight"), "precision.in_flight",
                       "at most " + std::to_string(kMaxPrecisionInFlight) +
                           " trials in flight (a decision adds at most that many)");
  }
  if (block->contains("at")) {
    const nlohmann::json& at = (*block)["at"];
    bool ok = at.is_array() && !at.empty();
    for (size_t i = 0; ok && i < at.size(); ++i) {
      ok = at[i].is_string() && !at[i].get<std::string>().empty();
      if (ok) spec.at.push_back(at[i].get<std::string>());
    }
    if (at.is_string() && at.get<std::string>() == "all") ok = true;
    if (!ok) {
      spec.at.clear();
      diagnostics->Error(document.Locate("precision.at"), "precision.at",
                         "expected `all` or a list of rung labels, e.g. [L1-d16, L2-d32]");
    }
  }
  if (block->contains("add")) {
    const nlohmann::json& add = (*block)["add"];
    const bool ok = add.is_array() && add.size() == 1 && add[0].is_string() && add[0].get<std::string>() == "seed";
    if (!ok) {
      diagnostics->Error(document.Locate("precision.add"), "precision.add",
                         "expected [seed]: seeds are what a precision-aimed sweep adds");
    }
  }
  return spec;
}

}  // namespace rung

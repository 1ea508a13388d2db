// fuzz/sweep_spec_fuzzer.cc
//
// libFuzzer target: what `rung validate` and SubmitSweep do with a sweep spec
// (sweeps/spec/expansion.h): ParseConfigDocument, ParseSweepSpec (structure, ladder, axes), then
// ExpandSweepSpec (every cell parsed, resolved, validated, counted and hashed; baseline and metric
// checked), and for a spec with a tune block the first plan of its search (sweeps/tune/lr_search.h),
// whose every value must be a number float32 holds. Expansion costs one trial parse per cell, and a valid spec may ask for any number of
// cells, so the cells are counted first as the expansion counts them (ladder rungs x
// SweepAxes::CellsPerRung, fuzz/spec_cells.h) and a spec over the cap is parsed but not expanded: a big spec is not
// a finding, a crash or a blow-up while parsing it is. Findings in the YAML and spec parsing are
// handed over, not fixed here (docs/fuzzing.md).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/config/config_number_range.h"
#include "core/config/yaml_document.h"
#include "fuzz/spec_cells.h"
#include "sweeps/spec/expansion.h"
#include "sweeps/spec/spec_diagnostics.h"
#include "sweeps/spec/sweep_spec.h"
#include "sweeps/tune/lr_search.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rung::StatusOr<rung::ConfigDocument> document = rung::ParseConfigDocument(text, "spec.yaml");
  if (!document.ok()) return 0;
  rung::SpecDiagnostics diagnostics;
  const rung::SweepSpec spec = rung::ParseSweepSpec(*document, rung::ExpansionLimits{}, &diagnostics);
  (void)diagnostics.ToStatus();  // exercised for its own sake; the expansion below reports the errors
  if (rung::fuzz::CappedCells(spec) > rung::fuzz::kMaxExpandedCells) return 0;
  rung::StatusOr<rung::ExpandedSweep> sweep = rung::ExpandSweepSpec(*document);
  if (!sweep.ok()) {
    rung::ParseSpecDiagnostics(sweep.status().message(), "spec.yaml");  // as `rung submit` reads SubmitSweep's error
    return 0;
  }
  if (sweep->spec.tune.set) {
    // The search's first plan, as `rung validate` and SubmitSweep make it.
    rung::StatusOr<rung::TuningPlan> plan = rung::PlanTuning(*sweep, {});
    if (plan.ok()) {
      plan->complete();
      // The search never plans a value float32 lacks (core/config/config_number_range.h).
      for (const rung::PlannedTrial& trial : plan->trials) {
        const nlohmann::json& value = trial.trial.assignments[sweep->spec.tune.key];
        if (!value.is_number() || !rung::ConfigRealRangeProblem(value.get<double>()).empty()) __builtin_trap();
      }
    }
  }
  sweep->TotalFlops();
  sweep->TotalFlopsAll();
  sweep->TotalTokens();
  return 0;
}

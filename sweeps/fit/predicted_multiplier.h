// sweeps/fit/predicted_multiplier.h
//
// A compute multiplier read from fitted scaling laws rather than measured (law_report.h): each
// variant's L(N, D) against the baseline's at a compute C, with the interval's construction. Shared by
// `rung laws` (LawReport) and `rung fit` (MultiplierReport::predicted, beside the measured rows).
//
// Thread safety: values.
#pragma once

#include <optional>
#include <string>

namespace rung::fit {

// A percentile interval.
struct Range {
  double low = 0;
  double high = 0;
};

// How a set of intervals was made.
struct IntervalBasis {
  std::string construction;  // "percentile bootstrap", "residual bootstrap"; "" when none
  std::string unit;          // "runs", "seeds", "residuals"
  int units = 0;             // the fewest units behind any variant's interval
  int replicates = 0;        // requested
  int used = 0;              // converged and kept
  std::string why;           // why there are none
};

// CM(C) = C_base / C: the compute at which the baseline's law reaches the loss the variant's law
// gives at C, over C.
struct PredictedMultiplier {
  std::string variant;
  double compute = 0;      // C, FLOPs
  std::string allocation;  // "rule" (D = r N) or "optimal" (each method's compute-optimal N, D)
  double n = 0, d = 0;     // where the variant runs at C
  double loss = 0;         // the variant's law there
  std::optional<double> multiplier;
  std::optional<Range> interval;
  bool extrapolated = false;  // C above the largest compute of the variant's runs
  std::string why;            // why there is no multiplier (or no interval)
  std::string label;          // `rung fit`: the ladder label at this compute, "" beyond the ladder
};

}  // namespace rung::fit

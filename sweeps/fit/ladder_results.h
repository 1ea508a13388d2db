// sweeps/fit/ladder_results.h
//
// The input of every compute-multiplier fit: a ladder of finished runs, one row per (variant, ladder
// point, seed), from a CSV file (ladder_csv.h) or, later, from a sweep's stored results. And the
// curves the estimators work on: per variant, one point per ladder point with the loss averaged
// over seeds (the "seed-mean curve"), sorted by compute.
//
// Example:
//   LadderResults ladder;
//   ladder.source = "my-ladder";
//   ladder.runs.push_back({"rope", "r1", 1e15, 3.41, /*seed=*/0, /*seconds=*/120.0, "row 1"});
//   RUNG_RETURN_IF_ERROR(ValidateLadderResults(ladder));
//   std::vector<VariantCurve> curves = BuildCurves(ladder);
//
// Names: everything of the fit library lives in rung::fit; "LadderResults" (runs that finished), not
// "Ladder", which is the spec's list of model sizes (sweeps/spec/ladder.h).
//
// Units: compute in FLOPs (docs/science.md section 5: 6 * N_nonembedding * D), loss in nats, seconds of
// wall-clock training time. Thread safety: values, no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung::fit {

// One finished training run.
struct LadderRun {
  std::string variant;            // e.g. "rope"
  std::string label;              // the ladder point (rung), e.g. "r3" or "6L-512"
  double compute = 0;             // FLOPs, > 0
  double loss = 0;                // nats, > 0
  std::optional<int64_t> seed;    // set on every run or on none
  std::optional<double> seconds;  // wall-clock training seconds; set on every run or on none
  std::string origin;             // where the run came from, for messages ("ladder.csv:7"); may be empty
  // The model's parameters N and training tokens D (compute = 6 N D in the ladder's count), where the
  // source knows them: what the scaling-law fits need (law_report.h). Both or neither.
  std::optional<double> parameters;
  std::optional<double> tokens;
};

struct LadderResults {
  std::string source;  // file name or sweep name
  std::vector<LadderRun> runs;

  bool has_seeds() const { return !runs.empty() && runs.front().seed.has_value(); }
  bool has_seconds() const { return !runs.empty() && runs.front().seconds.has_value(); }
  // Variants in order of first appearance.
  std::vector<std::string> Variants() const;
};

// Checks what the estimators rely on; INVALID_ARGUMENT naming the run's origin otherwise:
// finite compute and loss > 0, seconds > 0 when present, seed and seconds on every run or on none,
// no two runs with the same (variant, label, seed), one compute per (variant, label) across seeds
// (relative difference <= 1e-6), and no two labels of a variant at the same compute.
Status ValidateLadderResults(const LadderResults& ladder);

// One run of a ladder point, by seed (seed 0 when the ladder has no seeds).
struct SeedRun {
  double loss = 0;
  std::optional<double> seconds;
};

// One ladder point of one variant: the seed-mean loss and the runs behind it.
struct LadderPoint {
  std::string label;
  double compute = 0;
  double loss = 0;                   // mean over seeds
  double loss_sd = 0;                // sample standard deviation over seeds; 0 with one seed
  std::optional<double> seconds;     // mean over seeds, when the ladder has seconds
  std::map<int64_t, SeedRun> seeds;  // by seed
};

struct VariantCurve {
  std::string variant;
  std::vector<LadderPoint> points;  // sorted by compute, ascending

  const LadderPoint* Find(const std::string& label) const;
};

// REQUIRES: ValidateLadderResults(ladder).ok(). One curve per variant, in LadderResults::Variants() order.
std::vector<VariantCurve> BuildCurves(const LadderResults& ladder);

// (x, loss) pairs the estimators take: x is compute (FLOPs) or, for the wall-clock multiplier,
// seconds. `label` names the ladder point in messages.
struct CurvePoint {
  double x = 0;
  double loss = 0;
  std::string label;
};

// The seed-mean curve of a variant as (compute, loss).
std::vector<CurvePoint> MeanCurve(const VariantCurve& curve);
// The same with seconds as x; empty when the ladder has no seconds.
std::vector<CurvePoint> MeanSecondsCurve(const VariantCurve& curve);
// The runs of one seed as (compute, loss); ladder points without that seed are left out.
std::vector<CurvePoint> SeedCurve(const VariantCurve& curve, int64_t seed);
// The seed-mean curve of every seed but `seed` (a jackknife replicate); ladder points with no other
// seed are left out.
std::vector<CurvePoint> MeanCurveWithout(const VariantCurve& curve, int64_t seed);
// The mean loss of `point`'s runs but `seed`'s; empty when it has no other.
std::optional<double> PointMeanWithout(const LadderPoint& point, int64_t seed);

}  // namespace rung::fit

// bench/precision/laws_bench.cc
//
// rung-bench-laws: how well rung::fit::FitLaws (sweeps/fit/law_report.h, as it is) recovers a known
// scaling law L(N, D) = E + A / N^alpha + B / D^beta, and whether its intervals cover at their stated
// level, over many synthetic studies drawn from that law; and (--time) what one fit of 1,000 points
// with 200 bootstrap replicates costs.
//
// A study: two variants on one design (a list of (N, D) points, one run of each variant at each),
//   baseline  L_b(N, D), the setting's truth
//   variant   L_v(N, D) = L_b(s N, s D): its compute multiplier against the baseline is s^2 = M exactly,
//             at every compute, along D = r N and at the compute-optimal allocation (chinchilla_law_test's
//             LawMultiplier.IsTheSquareOfAScaleOfBothNAndD); --multiplier M (default 1.5)
//   noise     each run's loss is L(N, D) * exp(sd z), z standard normal, independent across runs (a
//             multiplicative log-normal noise of sd `sd` in ln L)
// and one FitLaws call: sharing none, Huber delta 1e-3, L-BFGS from the best 64 of Hoffmann's grid
// (LawFitOptions' defaults), --bootstrap replicates (200), level 0.95, baseline "baseline", predicted
// multipliers at C_in and C_ext (below), rollout 1 (the largest size held out), IsoFLOP profiles on the
// IsoFLOP design. The prediction intervals at held-out points are LawPredictor::Build's on the report's
// laws with the same options, so the same replicates as the report's (its generator is seeded from the
// options and the laws only).
//
// Truths (--truths):
//   hoffmann  E 1.69, A 406.4, B 410.7, alpha 0.34, beta 0.28 (Hoffmann et al. 2022, approach 3)
//   cpu       E 2.0, A 100, B 100, alpha 0.4, beta 0.3: losses 3.2-6.1 nats on rung's CPU scale (N 1e4 to
//             2e5, D 1e5 to 1e8), with its compute-optimal sizes inside the IsoFLOP design's sizes
// Designs (--designs), each at its truth's scale:
//   isoflop   4 sizes x 3 budgets, D = C / (6 N): sweeps/examples/scaling-laws.yaml's grid. cpu: its
//             nonembedding sizes 24,576 / 55,296 / 82,944 / 147,456 and budgets 1e11, 3e11, 1e12 FLOPs;
//             hoffmann: the sizes x 1e4 and budgets 3e19, 1e20, 3e20 (Hoffmann's law puts its optima
//             there, 3.9e8 to 1.1e9 parameters; the example's budgets x 1e8 put the smallest optimum
//             below the smallest size). 12 runs per variant.
//   grid      6 sizes x 5 token counts, every pair, log-spaced: cpu N 1e4..2e5, D 1e6..1e8; hoffmann N
//             1e8..2e9, D 2e9..2e11. 30 runs per variant.
// Noise (--sd): 0.01 in ln L by default; the noise sweep adds 0.005 and 0.02 (--sd 0.005,0.01,0.02).
//
// Measured per setting (truth, design, sd) over --studies studies (default 400):
//   parameters  the baseline's E, ln A, ln B, alpha, beta and the allocation exponent
//               a = beta / (alpha + beta) (N_opt ~ C^a); on the IsoFLOP design also approach 2's
//               exponent (IsoflopVariant::a, whose truth is the same a): the mean error (estimate -
//               truth, ln A and ln B in ln) with its Monte Carlo standard error, the median error, the
//               median absolute error, and the coverage of the truth by the report's 95% interval
//               among the studies that have one (LawParameterIntervals; IsoflopVariant::a_low/a_high).
//   predictions the coverage of a fresh run's loss (a new draw of the noise at that point) by the 95%
//               prediction interval (LawPredictor::Interval), both variants, at
//                 inside  held-out points within the design: isoflop, each budget at the geometric
//                         midpoints of adjacent sizes (9 points); grid, the geometric midpoints of
//                         adjacent sizes x adjacent token counts (20 points). The study's coverage is
//                         its fraction of the 2 x points covered; the table gives the mean over
//                         studies with the standard error of that mean (the points of one study share
//                         its fit), and the worst point's coverage.
//                 x10, x100  one point each, 10 and 100 times the design's largest compute on the rule
//                         D = 20 N (N = sqrt(C / 120)).
//                 rollout the report's rollout: the largest size's runs (held out of its fit, so fresh
//                         runs to it) inside their intervals (RolloutPoint::inside).
//               and the median interval width in ln L over the noise's own 95% width 2 x 1.96 sd.
//   multipliers the variant's predicted multiplier against the baseline (LawReport::multipliers) at
//               C_in = sqrt(smallest x largest design compute) and C_ext = 10 x the largest, both
//               allocations (rule, D = 20 N; optimal): how many are defined, the bias
//               exp(mean ln(CM_hat / M)) - 1 with the standard error of the mean log, the median
//               |ln(CM_hat / M)|, the coverage of M by the interval, and the coverage of what the
//               interval is built for: the multiplier of a fresh variant run (the compute at which the
//               true baseline law reaches the variant's true loss times exp(sd z), over C). The
//               interval adds a resampled residual to each replicate, so it is wider than one for M
//               alone and covers M more often than its level.
//   fits        studies whose FitLaws returned an error (the first message printed); fits whose law
//               (either variant's, the report's or the rollout's) is not finite at a design point
//               (ChinchillaLaw::Predict: e.g. A overflowing to inf while N^-alpha underflows to 0);
//               the share of each bootstrap's replicates that converged, and the studies where fewer
//               than 2 did (no intervals); intervals with a NaN end (counted as not covering).
//
// Pass rule (--check; exit 1 and print each failure), per setting, the rules --judge names (default all):
//   fit       no more than 1% of the studies fail to fit;
//   coverage  the in-design prediction intervals cover a fresh run at least 0.85 of the time (stated
//             0.95);
//   bias      |mean alpha error| within 4 of its Monte Carlo standard errors (a bias the draws resolve,
//             about 1 in 16,000 by chance) plus 0.002 (about a tenth of alpha's spread at the smallest
//             noise here, so that rounding on a noise-free setting does not fail it);
//   finite    no fitted law that is not finite at a design point and no interval with a NaN end.
// What else the tables show (parameter-interval, extrapolated and rollout coverage, multiplier bias)
// is reported, not judged: bench/README.md, "Scaling laws", says where it falls short.
//
// Determinism: each study's generator (std::mt19937_64, std::normal_distribution<double>) is seeded
// from the setting's text and the study's index (sweeps/fit/synthetic_ladder.h's StudySeed); the draws
// are in a fixed order (baseline's runs, variant's runs, then the fresh runs). Results do not depend on
// --threads. FitLaws' bootstrap seed is derived from the study's.
//
// --quick (the ctest fit.ScalingLawFitsRecoverAKnownLaw, judged on fit, coverage and bias): truth cpu,
// designs isoflop and grid, sd 0.01, 100 studies each (about a minute on 2 cores). The grid is where the
// bias rule has power: alpha's spread over 100 studies of the 12-run IsoFLOP design is 0.2, so 4 standard
// errors of its mean are 0.08; over the 30-run grid they are about 0.01.
//
// --time: one FitLaws call on 1,000 points (2 variants x 500 runs: 25 sizes x 20 token counts of the cpu
// truth's grid, sd 0.01), single-threaded, --time-repeats times (default 5): the median and range of the
// wall time, and the median CPU time, of the fit alone (FitChinchilla: the grid and 64 L-BFGS runs per
// variant), of FitLaws with the bootstrap's 200 replicates (parameter intervals, prediction intervals,
// multipliers) without a rollout, and of FitLaws as `rung laws` calls it (the rollout too); the same for
// 1 variant x 1,000 runs (40 x 25). No BLAS routine is called: the fit is Ceres' L-BFGS on a problem of
// 5 parameters per variant (Eigen vectors), the objective scalar code (OpenBLAS is linked through
// Ceres' LAPACK and SuiteSparse, unused here).
//
// Run (build: ninja -C build rung-bench-laws):
//   build/bin/rung-bench-laws                       # 2 truths x 2 designs, sd 0.01, 400 studies each
//   build/bin/rung-bench-laws --sd 0.005,0.02       # the rest of the noise sweep
//   build/bin/rung-bench-laws --quick --check --judge fit,coverage,bias   # the ctest
//   build/bin/rung-bench-laws --truths cpu --designs isoflop --sd 0.01 --studies 100
//   build/bin/rung-bench-laws --time
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <time.h>

#include <CLI/CLI.hpp>

#include "core/common/command_line.h"
#include "core/diagnostics/score_statistics.h"
#include "sweeps/fit/chinchilla_law.h"
#include "sweeps/fit/law_report.h"
#include "sweeps/fit/law_runs.h"
#include "sweeps/fit/synthetic_ladder.h"

namespace rung {
namespace {

constexpr double kTokensPerParam = 20;
constexpr double kMinInsideCoverage = 0.85;
constexpr double kMaxErrorShare = 0.01;
constexpr double kAlphaBiasSe = 4;
constexpr double kAlphaBiasFloor = 0.002;

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string Opt(double value, const char* format) { return std::isfinite(value) ? Format(format, value) : "-"; }

struct Truth {
  std::string name;
  fit::ChinchillaLaw law;
};

std::optional<Truth> TruthNamed(const std::string& name) {
  if (name == "hoffmann") return Truth{name, {1.69, 406.4, 410.7, 0.34, 0.28}};
  if (name == "cpu") return Truth{name, {2.0, 100, 100, 0.4, 0.3}};
  return std::nullopt;
}

// The law of a variant whose loss at (N, D) is `law`'s at (s N, s D): multiplier s^2.
fit::ChinchillaLaw Scaled(const fit::ChinchillaLaw& law, double s) {
  fit::ChinchillaLaw scaled = law;
  scaled.a = law.a * std::pow(s, -law.alpha);
  scaled.b = law.b * std::pow(s, -law.beta);
  return scaled;
}

std::vector<double> LogSpaced(double low, double high, int count) {
  std::vector<double> values;
  for (int i = 0; i < count; ++i) values.push_back(low * std::pow(high / low, static_cast<double>(i) / (count - 1)));
  return values;
}

using Point = std::pair<double, double>;  // (N, D)

struct Design {
  std::string name;
  std::vector<Point> runs;    // one run of each variant at each
  std::vector<Point> inside;  // held-out points within the design
  bool isoflop = false;
  double c_min = 0, c_max = 0;

  double CIn() const { return std::sqrt(c_min * c_max); }
  double CExt() const { return 10 * c_max; }
};

// N and D along the rule D = 20 N at compute c.
Point RulePoint(double compute) {
  const double n = std::sqrt(compute / (6 * kTokensPerParam));
  return {n, kTokensPerParam * n};
}

std::optional<Design> DesignNamed(const std::string& name, const Truth& truth) {
  Design design;
  design.name = name;
  const bool hoffmann = truth.name == "hoffmann";
  if (name == "isoflop") {
    design.isoflop = true;
    std::vector<double> sizes = {24576, 55296, 82944, 147456};
    std::vector<double> budgets = {1e11, 3e11, 1e12};
    if (hoffmann) {
      for (double& n : sizes) n *= 1e4;
      budgets = {3e19, 1e20, 3e20};
    }
    for (double n : sizes)
      for (double c : budgets) design.runs.emplace_back(n, c / (6 * n));
    for (double c : budgets) {
      for (size_t i = 0; i + 1 < sizes.size(); ++i) {
        const double n = std::sqrt(sizes[i] * sizes[i + 1]);
        design.inside.emplace_back(n, c / (6 * n));
      }
    }
  } else if (name == "grid") {
    const std::vector<double> sizes = hoffmann ? LogSpaced(1e8, 2e9, 6) : LogSpaced(1e4, 2e5, 6);
    const std::vector<double> tokens = hoffmann ? LogSpaced(2e9, 2e11, 5) : LogSpaced(1e6, 1e8, 5);
    for (double n : sizes)
      for (double d : tokens) design.runs.emplace_back(n, d);
    for (size_t i = 0; i + 1 < sizes.size(); ++i)
      for (size_t j = 0; j + 1 < tokens.size(); ++j)
        design.inside.emplace_back(std::sqrt(sizes[i] * sizes[i + 1]), std::sqrt(tokens[j] * tokens[j + 1]));
  } else {
    return std::nullopt;
  }
  design.c_min = std::numeric_limits<double>::infinity();
  for (const auto& [n, d] : design.runs) {
    design.c_min = std::min(design.c_min, 6 * n * d);
    design.c_max = std::max(design.c_max, 6 * n * d);
  }
  return design;
}

struct Setting {
  Truth truth;
  Design design;
  double sd = 0;
  std::string Text(double multiplier) const {
    return "laws truth=" + truth.name + " design=" + design.name + " sd=" + Format("%.17g", sd) +
           " M=" + Format("%.17g", multiplier);
  }
  std::string Where() const { return truth.name + " " + design.name + " sd=" + Format("%g", sd); }
};

// The parameters measured, in the tables' order.
enum Param { kE, kLogA, kLogB, kAlpha, kBeta, kAllocation, kIsoflopA, kParams };
const char* kParamNames[kParams] = {"E", "ln A", "ln B", "alpha", "beta", "a = beta/(alpha+beta)", "a (approach 2)"};

double TrueParam(const fit::ChinchillaLaw& law, int param) {
  switch (param) {
    case kE: return law.e;
    case kLogA: return std::log(law.a);
    case kLogB: return std::log(law.b);
    case kAlpha: return law.alpha;
    case kBeta: return law.beta;
    default: return law.beta / (law.alpha + law.beta);
  }
}

struct ParamOutcome {
  std::optional<double> estimate;  // in the table's unit (ln for A and B)
  std::optional<fit::Range> interval;  // likewise
};

// Prediction classes.
enum Where { kInside, kX10, kX100, kRollout, kWheres };

struct PredictionOutcome {
  int points = 0;    // with an interval
  int covered = 0;
  int without = 0;   // points without an interval
  int nan_ends = 0;  // of `points`, intervals with a NaN end (counted as not covering)
  std::vector<double> widths;  // ln(high / low), finite ones
};

// Multiplier rows: (C_in, C_ext) x (rule, optimal).
constexpr int kMultiplierRows = 4;
const char* kMultiplierCompute[2] = {"C_in", "C_ext"};
const char* kAllocations[2] = {"rule", "optimal"};

struct MultiplierOutcome {
  std::optional<double> log_ratio;  // ln(CM_hat / M)
  bool has_interval = false;
  bool covers_m = false;
  bool covers_fresh = false;  // the fresh-run multiplier (when defined)
  bool fresh_defined = false;
  bool nan_end = false;
  double width = 0;  // (high - low) / M
};

struct StudyOutcome {
  std::string error;
  // A fitted law (either variant's) whose ChinchillaLaw::Predict is not finite at a design point (e.g.
  // A = inf with N^-alpha = 0): its residuals, and so its residual bootstrap, are NaN.
  bool degenerate = false;
  bool rollout_degenerate = false;  // the same of the rollout's laws (read from its predictions)
  // Replicates used / asked, per bootstrap: parameters, predictions, the rollout's predictions.
  int used[3] = {-1, -1, -1};  // -1: not asked (no bootstrap, no rollout)
  std::string no_interval_why;  // the first reason a bootstrap gave no intervals
  ParamOutcome params[kParams];
  PredictionOutcome predictions[kWheres];
  std::vector<int> inside_covered;  // per inside point (both variants): 0, 1, or -1 without an interval
  MultiplierOutcome multipliers[kMultiplierRows];
};

struct RunOptions {
  double multiplier = 1.5;
  int bootstrap = 200;
  double level = 0.95;
};

StudyOutcome RunStudy(const Setting& setting, const RunOptions& run, int study) {
  const uint64_t seed = fit::StudySeed(setting.Text(run.multiplier), study);
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const Design& design = setting.design;
  const fit::ChinchillaLaw truths[2] = {setting.truth.law, Scaled(setting.truth.law, std::sqrt(run.multiplier))};
  const std::string names[2] = {"baseline", "variant"};
  fit::LawRuns runs;
  runs.source = "synthetic";
  runs.metric = "val_loss";
  for (int v = 0; v < 2; ++v) {
    for (size_t i = 0; i < design.runs.size(); ++i) {
      const auto& [n, d] = design.runs[i];
      fit::LawRun law_run;
      law_run.variant = names[v];
      law_run.n = n;
      law_run.d = d;
      law_run.loss = truths[v].Predict(n, d) * std::exp(setting.sd * normal(generator));
      law_run.origin = names[v] + ":" + std::to_string(i);
      runs.runs.push_back(law_run);
    }
  }
  fit::LawOptions options;
  options.bootstrap = run.bootstrap;
  options.seed = fit::SplitMix64(seed ^ 0x243f6a8885a308d3ULL);
  options.level = run.level;
  options.baseline = "baseline";
  options.at = {design.CIn(), design.CExt()};
  options.tokens_per_param = kTokensPerParam;
  options.rollout = 1;
  options.isoflop = design.isoflop;

  StudyOutcome outcome;
  StatusOr<fit::LawReport> report = fit::FitLaws(runs, options);
  if (!report.ok()) {
    outcome.error = report.status().message();
    return outcome;
  }
  for (const fit::VariantLaw& variant : report->variants) {
    for (const auto& [n, d] : design.runs) outcome.degenerate |= !std::isfinite(variant.law.Predict(n, d));
  }
  if (run.bootstrap > 0) {
    outcome.used[0] = report->parameter_basis.used;
    outcome.used[1] = report->prediction_basis.used;
    for (const fit::IntervalBasis* basis : {&report->parameter_basis, &report->prediction_basis}) {
      if (outcome.no_interval_why.empty() && !basis->why.empty()) outcome.no_interval_why = basis->why;
    }
    if (report->rollout && report->rollout->why.empty()) {
      outcome.used[2] = report->rollout->basis.used;
      if (outcome.no_interval_why.empty() && !report->rollout->basis.why.empty()) {
        outcome.no_interval_why = "rollout: " + report->rollout->basis.why;
      }
    }
  }
  // Parameters of the baseline.
  const fit::VariantLaw& base = report->variants[0];
  const fit::LawParameterIntervals& intervals = base.intervals;
  auto logged = [](const std::optional<fit::Range>& range) -> std::optional<fit::Range> {
    if (!range || !(range->low > 0)) return std::nullopt;
    return fit::Range{std::log(range->low), std::log(range->high)};
  };
  outcome.params[kE] = {base.law.e, intervals.e};
  outcome.params[kLogA] = {std::log(base.law.a), logged(intervals.a)};
  outcome.params[kLogB] = {std::log(base.law.b), logged(intervals.b)};
  outcome.params[kAlpha] = {base.law.alpha, intervals.alpha};
  outcome.params[kBeta] = {base.law.beta, intervals.beta};
  outcome.params[kAllocation] = {base.n_exponent, intervals.n_exponent};
  if (report->isoflop) {
    for (const fit::IsoflopVariant& variant : report->isoflop->variants) {
      if (variant.variant != "baseline") continue;
      ParamOutcome& iso = outcome.params[kIsoflopA];
      iso.estimate = variant.a;
      if (variant.a_low && variant.a_high) iso.interval = fit::Range{*variant.a_low, *variant.a_high};
    }
  }

  // Prediction intervals at held-out points: the report's replicates, rebuilt.
  fit::LawFit law_fit;
  for (const fit::VariantLaw& variant : report->variants) {
    law_fit.variants.push_back(variant.variant);
    law_fit.laws.push_back(variant.law);
  }
  StatusOr<fit::LawPredictor> predictor = fit::LawPredictor::Build(runs.runs, law_fit, options);
  if (!predictor.ok()) {
    outcome.error = "LawPredictor::Build: " + predictor.status().message();
    return outcome;
  }
  auto predict = [&](int v, const Point& point, PredictionOutcome* out) -> int {
    const double fresh = truths[v].Predict(point.first, point.second) * std::exp(setting.sd * normal(generator));
    std::optional<fit::Range> interval = predictor->Interval(static_cast<size_t>(v), point.first, point.second, run.level);
    if (!interval) {
      ++out->without;
      return -1;
    }
    ++out->points;
    const bool covered = interval->low <= fresh && fresh <= interval->high;
    out->covered += covered ? 1 : 0;
    if (std::isnan(interval->low) || std::isnan(interval->high)) ++out->nan_ends;
    const double width = std::log(interval->high / interval->low);
    if (std::isfinite(width)) out->widths.push_back(width);
    return covered ? 1 : 0;
  };
  for (int v = 0; v < 2; ++v) {
    for (const Point& point : design.inside) outcome.inside_covered.push_back(predict(v, point, &outcome.predictions[kInside]));
    predict(v, RulePoint(10 * design.c_max), &outcome.predictions[kX10]);
    predict(v, RulePoint(100 * design.c_max), &outcome.predictions[kX100]);
  }
  if (report->rollout) {
    PredictionOutcome& out = outcome.predictions[kRollout];
    for (const fit::RolloutPoint& point : report->rollout->points) {
      outcome.rollout_degenerate |= !std::isfinite(point.predicted);
      if (!point.interval) {
        ++out.without;
        continue;
      }
      ++out.points;
      out.covered += point.inside ? 1 : 0;
      if (std::isnan(point.interval->low) || std::isnan(point.interval->high)) ++out.nan_ends;
      const double width = std::log(point.interval->high / point.interval->low);
      if (std::isfinite(width)) out.widths.push_back(width);
    }
  }

  // Multipliers.
  for (int c = 0; c < 2; ++c) {
    const double compute = c == 0 ? design.CIn() : design.CExt();
    for (int a = 0; a < 2; ++a) {
      MultiplierOutcome& out = outcome.multipliers[2 * c + a];
      // The fresh run's multiplier: drawn whether or not the row has an interval (a fixed draw order).
      const double shift = setting.sd * normal(generator);
      const std::optional<double> fresh =
          fit::LawMultiplier(truths[1], truths[0], compute, kAllocations[a], kTokensPerParam, shift);
      for (const fit::PredictedMultiplier& row : report->multipliers) {
        if (row.variant != "variant" || row.allocation != kAllocations[a] ||
            std::fabs(row.compute - compute) > 1e-9 * compute) {
          continue;
        }
        if (row.multiplier && *row.multiplier > 0 && std::isfinite(*row.multiplier)) {
          out.log_ratio = std::log(*row.multiplier / run.multiplier);
        }
        if (row.interval) {
          out.has_interval = true;
          out.covers_m = row.interval->low <= run.multiplier && run.multiplier <= row.interval->high;
          out.fresh_defined = fresh.has_value();
          out.covers_fresh = fresh && row.interval->low <= *fresh && *fresh <= row.interval->high;
          out.width = (row.interval->high - row.interval->low) / run.multiplier;
          out.nan_end = std::isnan(row.interval->low) || std::isnan(row.interval->high);
        }
      }
    }
  }
  return outcome;
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return NAN;
  double sum = 0;
  for (double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

double Sd(const std::vector<double>& values) {
  if (values.size() < 2) return NAN;
  const double mean = Mean(values);
  double squares = 0;
  for (double value : values) squares += (value - mean) * (value - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1));
}

double MeanSe(const std::vector<double>& values) { return Sd(values) / std::sqrt(static_cast<double>(values.size())); }

std::vector<double> Absolute(std::vector<double> values) {
  for (double& value : values) value = std::fabs(value);
  return values;
}

struct Proportion {
  int n = 0;
  int hits = 0;
  double Value() const { return n ? static_cast<double>(hits) / n : NAN; }
  double Se() const { return n ? std::sqrt(Value() * (1 - Value()) / n) : NAN; }
  std::string Text() const { return n ? Format("%.3f", Value()) + " (" + Format("%.3f", Se()) + ")" : "-"; }
};

struct ParamCell {
  int undefined = 0;           // no estimate (no allocation, no IsoFLOP exponent) or not finite (A = inf)
  std::vector<double> errors;  // estimate - truth, finite estimates
  Proportion coverage;
};

struct PredictionCell {
  std::vector<double> study_coverage;  // per study with intervals: its fraction covered
  int points = 0, covered = 0, without = 0, nan_ends = 0;
  std::vector<double> widths;
  std::vector<Proportion> per_point;  // inside only
  double Coverage() const { return Mean(study_coverage); }
  double CoverageSe() const { return MeanSe(study_coverage); }
};

struct MultiplierCell {
  int undefined = 0;
  std::vector<double> log_ratios;
  Proportion covers_m, covers_fresh;
  int nan_ends = 0;
  std::vector<double> widths;
};

struct SettingResult {
  Setting setting;
  int studies = 0;
  int errors = 0;
  std::string first_error;
  int degenerate = 0, rollout_degenerate = 0;
  std::vector<double> used[3];  // per study: replicates used / asked (parameters, predictions, rollout)
  int no_intervals[3] = {0, 0, 0};  // studies with fewer than 2 replicates used, per bootstrap
  std::string no_interval_why;
  ParamCell params[kParams];
  PredictionCell predictions[kWheres];
  MultiplierCell multipliers[kMultiplierRows];
};

SettingResult Summarize(const Setting& setting, const std::vector<StudyOutcome>& outcomes, int bootstrap) {
  SettingResult result;
  result.setting = setting;
  for (const StudyOutcome& outcome : outcomes) {
    ++result.studies;
    if (!outcome.error.empty()) {
      if (result.errors++ == 0) result.first_error = outcome.error;
      continue;
    }
    result.degenerate += outcome.degenerate ? 1 : 0;
    result.rollout_degenerate += outcome.rollout_degenerate ? 1 : 0;
    for (int b = 0; b < 3; ++b) {
      if (outcome.used[b] < 0 || bootstrap <= 0) continue;
      result.used[b].push_back(static_cast<double>(outcome.used[b]) / bootstrap);
      result.no_intervals[b] += outcome.used[b] < 2 ? 1 : 0;
    }
    if (result.no_interval_why.empty()) result.no_interval_why = outcome.no_interval_why;
    for (int p = 0; p < kParams; ++p) {
      if (p == kIsoflopA && !setting.design.isoflop) continue;
      const ParamOutcome& one = outcome.params[p];
      ParamCell& cell = result.params[p];
      if (!one.estimate || !std::isfinite(*one.estimate)) {
        ++cell.undefined;
        continue;
      }
      const double truth = TrueParam(setting.truth.law, p);
      cell.errors.push_back(*one.estimate - truth);
      if (one.interval) {
        ++cell.coverage.n;
        cell.coverage.hits += one.interval->low <= truth && truth <= one.interval->high ? 1 : 0;
      }
    }
    for (int w = 0; w < kWheres; ++w) {
      const PredictionOutcome& one = outcome.predictions[w];
      PredictionCell& cell = result.predictions[w];
      cell.points += one.points;
      cell.covered += one.covered;
      cell.without += one.without;
      cell.nan_ends += one.nan_ends;
      cell.widths.insert(cell.widths.end(), one.widths.begin(), one.widths.end());
      if (one.points > 0) cell.study_coverage.push_back(static_cast<double>(one.covered) / one.points);
    }
    PredictionCell& inside = result.predictions[kInside];
    inside.per_point.resize(outcome.inside_covered.size());
    for (size_t i = 0; i < outcome.inside_covered.size(); ++i) {
      if (outcome.inside_covered[i] < 0) continue;
      ++inside.per_point[i].n;
      inside.per_point[i].hits += outcome.inside_covered[i];
    }
    for (int m = 0; m < kMultiplierRows; ++m) {
      const MultiplierOutcome& one = outcome.multipliers[m];
      MultiplierCell& cell = result.multipliers[m];
      if (!one.log_ratio) {
        ++cell.undefined;
      } else {
        cell.log_ratios.push_back(*one.log_ratio);
      }
      if (one.has_interval) {
        ++cell.covers_m.n;
        cell.covers_m.hits += one.covers_m ? 1 : 0;
        if (std::isfinite(one.width)) cell.widths.push_back(one.width);
        cell.nan_ends += one.nan_end ? 1 : 0;
        if (one.fresh_defined) {
          ++cell.covers_fresh.n;
          cell.covers_fresh.hits += one.covers_fresh ? 1 : 0;
        }
      }
    }
  }
  return result;
}

// Which rules --check applies (--judge).
struct Judged {
  bool fit = true, coverage = true, bias = true, finite = true;
};

// The pass rule's failures of one setting.
std::vector<std::string> Failures(const SettingResult& result, const Judged& judged) {
  std::vector<std::string> failures;
  const std::string where = result.setting.Where();
  if (judged.fit && result.errors > kMaxErrorShare * result.studies) {
    failures.push_back(where + ": " + std::to_string(result.errors) + " of " + std::to_string(result.studies) +
                       " studies failed to fit (at most " + Format("%g", 100 * kMaxErrorShare) +
                       "%): " + result.first_error);
  }
  const PredictionCell& inside = result.predictions[kInside];
  if (!judged.coverage) {
  } else if (inside.study_coverage.empty()) {
    failures.push_back(where + ": no study had a prediction interval");
  } else if (!(inside.Coverage() >= kMinInsideCoverage)) {
    failures.push_back(where + ": in-design prediction intervals cover " + Format("%.3f", inside.Coverage()) +
                       " (se " + Format("%.3f", inside.CoverageSe()) + "), below " +
                       Format("%.2f", kMinInsideCoverage));
  }
  const ParamCell& alpha = result.params[kAlpha];
  if (!judged.bias) {
  } else if (alpha.errors.size() < 2) {
    failures.push_back(where + ": alpha was estimated in fewer than 2 studies");
  } else {
    const double bias = Mean(alpha.errors), se = MeanSe(alpha.errors);
    if (!(std::fabs(bias) <= kAlphaBiasSe * se + kAlphaBiasFloor)) {
      failures.push_back(where + ": alpha's mean error " + Format("%+.4f", bias) + " is beyond " +
                         Format("%g", kAlphaBiasSe) + " standard errors (" + Format("%.4f", se) + ") + " +
                         Format("%g", kAlphaBiasFloor));
    }
  }
  if (judged.finite) {
    int nan_ends = 0;
    for (const PredictionCell& cell : result.predictions) nan_ends += cell.nan_ends;
    for (const MultiplierCell& cell : result.multipliers) nan_ends += cell.nan_ends;
    if (result.degenerate + result.rollout_degenerate > 0 || nan_ends > 0) {
      failures.push_back(where + ": " + std::to_string(result.degenerate) + " fits and " +
                         std::to_string(result.rollout_degenerate) + " rollout fits with a law that is not finite at a "
                         "design point, " + std::to_string(nan_ends) + " intervals with a NaN end");
    }
  }
  return failures;
}

void PrintTables(const std::vector<SettingResult>& results, const RunOptions& run) {
  std::cout << "\n**Fits** (degenerate: a fitted law whose L(N, D) is not finite at a design point; replicates "
               "used: the mean share of the bootstrap's replicates that converged; no intervals: studies where "
               "fewer than 2 did; NaN ends: intervals with a NaN end, counted as not covering)\n\n";
  std::cout << "| truth | design | sd | studies | errors | degenerate fits | degenerate rollout fits | replicates "
               "used: parameters / predictions / rollout | no intervals: parameters / predictions / rollout | NaN "
               "ends: inside / x10 / x100 / rollout / multipliers |\n"
            << "|---|---|---:|---:|---:|---:|---:|---|---|---|\n";
  for (const SettingResult& result : results) {
    const Setting& s = result.setting;
    int multiplier_nan = 0;
    for (const MultiplierCell& cell : result.multipliers) multiplier_nan += cell.nan_ends;
    std::cout << "| " << s.truth.name << " | " << s.design.name << " | " << Format("%g", s.sd) << " | "
              << result.studies << " | " << result.errors << " | " << result.degenerate << " | "
              << result.rollout_degenerate << " | " << Opt(100 * Mean(result.used[0]), "%.1f%%") << " / "
              << Opt(100 * Mean(result.used[1]), "%.1f%%") << " / " << Opt(100 * Mean(result.used[2]), "%.1f%%")
              << " | " << result.no_intervals[0] << " / " << result.no_intervals[1] << " / " << result.no_intervals[2]
              << " | " << result.predictions[kInside].nan_ends << " / " << result.predictions[kX10].nan_ends << " / "
              << result.predictions[kX100].nan_ends << " / " << result.predictions[kRollout].nan_ends << " / "
              << multiplier_nan << " |\n";
  }
  std::cout << "\n**Parameters** (the baseline's; error = estimate - truth, ln A and ln B in ln; coverage of the "
               "truth by the "
            << Format("%g", run.level) << " interval, Monte Carlo se in brackets)\n\n";
  std::cout << "| truth | design | sd | parameter | true | defined | mean error (se) | median error | median "
               "abs error | coverage (se) | with interval |\n"
            << "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SettingResult& result : results) {
    const Setting& s = result.setting;
    for (int p = 0; p < kParams; ++p) {
      if (p == kIsoflopA && !s.design.isoflop) continue;
      const ParamCell& cell = result.params[p];
      const int ok = result.studies - result.errors;
      std::cout << "| " << s.truth.name << " | " << s.design.name << " | " << Format("%g", s.sd) << " | "
                << kParamNames[p] << " | " << Format("%.4g", TrueParam(s.truth.law, p)) << " | "
                << cell.errors.size() << "/" << ok << " | "
                << (cell.errors.empty() ? "-"
                                        : Format("%+.4f", Mean(cell.errors)) + " (" + Opt(MeanSe(cell.errors), "%.4f") +
                                              ")")
                << " | " << Opt(cell.errors.empty() ? NAN : Quantile(cell.errors, 0.5), "%+.4f") << " | "
                << Opt(cell.errors.empty() ? NAN : Quantile(Absolute(cell.errors), 0.5), "%.4f") << " | "
                << cell.coverage.Text() << " | " << cell.coverage.n << " |\n";
    }
  }

  std::cout << "\n**Prediction intervals** (" << Format("%g", run.level)
            << "; a fresh run's loss, both variants; coverage (se); width: median ln(high / low) over the noise's "
               "own 3.92 sd)\n\n";
  std::cout << "| truth | design | sd | inside: coverage (se) | worst inside point | width | x10: coverage (se) | "
               "width | x100: coverage (se) | width | rollout: coverage (se) | width | errors |\n"
            << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SettingResult& result : results) {
    const Setting& s = result.setting;
    std::cout << "| " << s.truth.name << " | " << s.design.name << " | " << Format("%g", s.sd);
    for (int w = 0; w < kWheres; ++w) {
      const PredictionCell& cell = result.predictions[w];
      const double width = cell.widths.empty() ? NAN : Quantile(cell.widths, 0.5) / (3.92 * s.sd);
      std::string coverage = cell.study_coverage.empty()
                                 ? "-"
                                 : Format("%.3f", cell.Coverage()) + " (" + Opt(cell.CoverageSe(), "%.3f") + ")";
      if (cell.without > 0) coverage += " [" + std::to_string(cell.without) + " without]";
      std::cout << " | " << coverage;
      if (w == kInside) {
        double worst = NAN;
        for (const Proportion& point : cell.per_point) {
          if (point.n > 0 && !(point.Value() >= worst)) worst = point.Value();
        }
        std::cout << " | " << Opt(worst, "%.3f");
      }
      std::cout << " | " << Opt(width, "%.2f");
    }
    std::cout << " | " << result.errors << " |\n";
  }

  std::cout << "\n**Predicted multipliers** (true M = " << Format("%g", run.multiplier)
            << "; bias exp(mean ln(CM_hat / M)) - 1, se of the mean log; coverage of M and of a fresh variant "
               "run's multiplier by the "
            << Format("%g", run.level) << " interval; width (high - low) / M, median)\n\n";
  std::cout << "| truth | design | sd | compute | allocation | defined | bias (se) | median abs ln error | with "
               "interval | covers M (se) | covers a fresh run's (se) | width |\n"
            << "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SettingResult& result : results) {
    const Setting& s = result.setting;
    for (int m = 0; m < kMultiplierRows; ++m) {
      const MultiplierCell& cell = result.multipliers[m];
      const double compute = m < 2 ? s.design.CIn() : s.design.CExt();
      const std::string bias = cell.log_ratios.empty()
                                   ? "-"
                                   : Format("%+.2f%%", 100 * std::expm1(Mean(cell.log_ratios))) + " (" +
                                         Opt(100 * MeanSe(cell.log_ratios), "%.2f%%") + ")";
      std::cout << "| " << s.truth.name << " | " << s.design.name << " | " << Format("%g", s.sd) << " | "
                << kMultiplierCompute[m / 2] << " " << Format("%.3g", compute) << " | " << kAllocations[m % 2]
                << " | " << cell.log_ratios.size() << "/" << result.studies - result.errors << " | " << bias << " | "
                << Opt(cell.log_ratios.empty() ? NAN : Quantile(Absolute(cell.log_ratios), 0.5), "%.4f") << " | "
                << cell.covers_m.n << " | " << cell.covers_m.Text() << " | " << cell.covers_fresh.Text() << " | "
                << Opt(cell.widths.empty() ? NAN : Quantile(cell.widths, 0.5), "%.3f") << " |\n";
    }
  }
  std::cout << "\n";
  for (const SettingResult& result : results) {
    if (result.errors > 0) {
      std::cout << "- " << result.setting.Where() << ": " << result.errors << " studies failed to fit; the first: "
                << result.first_error << "\n";
    }
    if (!result.no_interval_why.empty()) {
      std::cout << "- " << result.setting.Where() << ": the first bootstrap without intervals: "
                << result.no_interval_why << "\n";
    }
  }
}

// ---- --time ----

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// CPU seconds of this process (--time runs one thread: its CPU time, which other load on the machine
// inflates less than the wall time).
double CpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// The --time data: `variants` variants (a baseline and, with 2, a variant at M = 1.5) of the cpu truth on
// a sizes x tokens grid, sd 0.01.
fit::LawRuns TimeRuns(int variants, int sizes, int tokens) {
  const Truth truth = *TruthNamed("cpu");
  const fit::ChinchillaLaw laws[2] = {truth.law, Scaled(truth.law, std::sqrt(1.5))};
  fit::LawRuns runs;
  runs.source = "synthetic";
  runs.metric = "val_loss";
  std::mt19937_64 generator(fit::StudySeed("laws time", variants));
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int v = 0; v < variants; ++v)
    for (double n : LogSpaced(1e4, 2e5, sizes))
      for (double d : LogSpaced(1e6, 1e8, tokens))
        runs.runs.push_back({v == 0 ? "baseline" : "variant", n, d,
                             laws[v].Predict(n, d) * std::exp(0.01 * normal(generator)), std::nullopt, ""});
  return runs;
}

int RunTime(int repeats, int bootstrap) {
  struct Shape {
    std::string what;
    int variants, sizes, tokens;
  };
  const std::vector<Shape> shapes = {{"2 variants x 500 runs (25 sizes x 20 token counts)", 2, 25, 20},
                                     {"1 variant x 1,000 runs (40 sizes x 25 token counts)", 1, 40, 25}};
  struct Row {
    std::string shape, what;
    std::vector<double> seconds, cpu_seconds;
    std::string note;
  };
  std::vector<Row> rows;
  for (const Shape& shape : shapes) {
    const fit::LawRuns runs = TimeRuns(shape.variants, shape.sizes, shape.tokens);
    const std::vector<std::string> variants = runs.Variants();
    fit::LawOptions options;
    options.bootstrap = bootstrap;
    options.seed = 1;
    if (shape.variants > 1) {
      options.baseline = "baseline";
      options.at = {1e12, 1e14, 1e16};
    }
    options.isoflop = true;  // as `rung laws` calls it (this grid has no IsoFLOP budget: it says why, cheaply)
    const size_t first = rows.size();
    rows.push_back({shape.what, "FitChinchilla alone (the grid, 64 L-BFGS starts per variant)", {}, {}, ""});
    rows.push_back({shape.what, "FitLaws, " + std::to_string(bootstrap) + " replicates, no rollout", {}, {}, ""});
    rows.push_back({shape.what, "FitLaws, " + std::to_string(bootstrap) + " replicates, rollout 1 (`rung laws`' default)",
                    {}, {}, ""});
    for (int repeat = 0; repeat < repeats; ++repeat) {
      auto start = std::chrono::steady_clock::now();
      double cpu_start = CpuSeconds();
      StatusOr<fit::LawFit> fitted = fit::FitChinchilla(runs.runs, variants, options.fit);
      rows[first].seconds.push_back(Seconds(start));
      rows[first].cpu_seconds.push_back(CpuSeconds() - cpu_start);
      if (!fitted.ok()) {
        std::cerr << "rung-bench-laws: FitChinchilla: " << fitted.status().message() << "\n";
        return 1;
      }
      for (int rollout = 0; rollout < 2; ++rollout) {
        options.rollout = rollout;
        start = std::chrono::steady_clock::now();
        cpu_start = CpuSeconds();
        StatusOr<fit::LawReport> report = fit::FitLaws(runs, options);
        Row& row = rows[first + 1 + rollout];
        row.seconds.push_back(Seconds(start));
        row.cpu_seconds.push_back(CpuSeconds() - cpu_start);
        if (!report.ok()) {
          std::cerr << "rung-bench-laws: FitLaws: " << report.status().message() << "\n";
          return 1;
        }
        row.note = "replicates used: parameters " + std::to_string(report->parameter_basis.used) + ", predictions " +
                   std::to_string(report->prediction_basis.used) +
                   (report->rollout ? ", rollout " + std::to_string(report->rollout->basis.used) : "");
      }
      std::cerr << "rung-bench-laws: " << shape.what << ": repeat " << repeat + 1 << " of " << repeats << "\n";
    }
  }
  std::cout << "rung-bench-laws --time: one FitLaws call on 1,000 points of the cpu truth (sd 0.01), " << repeats
            << " repeats, one thread; BLAS: none called (Ceres' L-BFGS on Eigen vectors; the objective is scalar "
               "code)\n\n";
  std::cout << "| data | what | median s | min s | max s | median CPU s | note |\n|---|---|---:|---:|---:|---:|---|\n";
  for (const Row& row : rows) {
    std::cout << "| " << row.shape << " | " << row.what << " | " << Format("%.2f", Quantile(row.seconds, 0.5)) << " | "
              << Format("%.2f", *std::min_element(row.seconds.begin(), row.seconds.end())) << " | "
              << Format("%.2f", *std::max_element(row.seconds.begin(), row.seconds.end())) << " | "
              << Format("%.2f", Quantile(row.cpu_seconds, 0.5)) << " | " << row.note
              << " |\n";
  }
  return 0;
}

}  // namespace
}  // namespace rung

int main(int argc, char** argv) {
  using namespace rung;
  CLI::App app{"rung-bench-laws: parameter recovery, interval coverage and multiplier bias of the L(N, D) fits "
               "(rung::fit::FitLaws) on synthetic studies from a known law; --time: one fit of 1,000 points"};
  std::vector<std::string> truth_names = {"hoffmann", "cpu"};
  std::vector<std::string> design_names = {"isoflop", "grid"};
  std::vector<double> sds = {0.01};
  int studies = 400;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  RunOptions run;
  bool quick = false, check = false, time = false;
  int time_repeats = 5;
  CLI::Option* truths_option =
      app.add_option("--truths", truth_names, "Truths, comma-separated: hoffmann, cpu")->delimiter(',')->capture_default_str();
  CLI::Option* designs_option =
      app.add_option("--designs", design_names, "Designs, comma-separated: isoflop (4 sizes x 3 budgets), grid (6 x 5)")
          ->delimiter(',')
          ->capture_default_str();
  CLI::Option* sd_option = app.add_option("--sd", sds, "Noise sd in ln L, comma-separated")
                               ->delimiter(',')
                               ->check(PositiveNumberCheck())
                               ->capture_default_str();
  CLI::Option* studies_option =
      app.add_option("--studies", studies, "Studies per setting")->check(CLI::Range(1, 1000000))->capture_default_str();
  app.add_option("--multiplier", run.multiplier, "The variant's true compute multiplier M (its law is the baseline's at "
                                                 "(sqrt(M) N, sqrt(M) D))")
      ->check(PositiveNumberCheck())
      ->capture_default_str();
  app.add_option("--bootstrap", run.bootstrap, "Bootstrap replicates of every interval (LawOptions::bootstrap)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--level", run.level, "Level of every interval")->check(CLI::Range(0.5, 0.999))->capture_default_str();
  app.add_option("--threads", threads, "Worker threads over studies (default: the online cores)")->check(CLI::Range(1, 1024));
  app.add_flag("--quick", quick, "The ctest's settings: truth cpu, designs isoflop and grid, sd 0.01, 100 studies each");
  app.add_flag("--check", check, "Exit 1 if a setting fails the pass rule (see the source's header); print which");
  app.add_flag("--time", time, "Time one fit of 1,000 points with --bootstrap replicates, single-threaded");
  app.add_option("--time-repeats", time_repeats, "--time: repeats")->check(CLI::Range(1, 100))->capture_default_str();
  std::vector<std::string> judge = {"fit", "coverage", "bias", "finite"};
  app.add_option("--judge", judge, "The rules --check applies, comma-separated: fit, coverage, bias, finite")
      ->delimiter(',')
      ->check(CLI::IsMember({"fit", "coverage", "bias", "finite"}))
      ->capture_default_str();
  if (const std::optional<int> stop = ParseCommandLine(app, argc, argv)) return *stop;
  if (time) return RunTime(time_repeats, run.bootstrap);
  auto judging = [&](const char* rule) { return std::find(judge.begin(), judge.end(), rule) != judge.end(); };
  const Judged judged{judging("fit"), judging("coverage"), judging("bias"), judging("finite")};
  if (quick) {
    if (truths_option->count() == 0) truth_names = {"cpu"};
    if (designs_option->count() == 0) design_names = {"isoflop", "grid"};
    if (sd_option->count() == 0) sds = {0.01};
    if (studies_option->count() == 0) studies = 100;
  }
  std::vector<Setting> settings;
  for (const std::string& truth_name : truth_names) {
    std::optional<Truth> truth = TruthNamed(truth_name);
    if (!truth) {
      std::cerr << "rung-bench-laws: --truths: unknown truth '" << truth_name << "' (hoffmann, cpu)\n";
      return kExitBadUsage;
    }
    for (const std::string& design_name : design_names) {
      std::optional<Design> design = DesignNamed(design_name, *truth);
      if (!design) {
        std::cerr << "rung-bench-laws: --designs: unknown design '" << design_name << "' (isoflop, grid)\n";
        return kExitBadUsage;
      }
      for (double sd : sds) settings.push_back({*truth, *design, sd});
    }
  }

  const size_t jobs = settings.size() * static_cast<size_t>(studies);
  std::vector<StudyOutcome> outcomes(jobs);
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress_mutex;
  const auto start = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (size_t job = next++; job < jobs; job = next++) {
      outcomes[job] = RunStudy(settings[job / studies], run, static_cast<int>(job % studies));
      const size_t finished = ++done;
      const size_t step = std::max<size_t>(1, jobs / 10);
      if (finished % step == 0 && finished < jobs) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        std::cerr << "rung-bench-laws: " << finished << " of " << jobs << " studies, " << Format("%.0f", Seconds(start))
                  << " s\n";
      }
    }
  };
  std::vector<std::thread> pool;
  const int used_threads = static_cast<int>(std::min<size_t>(static_cast<size_t>(threads), std::max<size_t>(1, jobs)));
  for (int t = 0; t < used_threads; ++t) pool.emplace_back(worker);
  for (std::thread& thread : pool) thread.join();
  const double elapsed = Seconds(start);

  std::vector<SettingResult> results;
  std::vector<std::string> failures;
  for (size_t s = 0; s < settings.size(); ++s) {
    const std::vector<StudyOutcome> slice(outcomes.begin() + static_cast<long>(s * studies),
                                          outcomes.begin() + static_cast<long>((s + 1) * studies));
    results.push_back(Summarize(settings[s], slice, run.bootstrap));
    for (const std::string& failure : Failures(results.back(), judged)) failures.push_back(failure);
  }
  std::cout << "rung-bench-laws: " << studies << " studies per setting; M = " << Format("%g", run.multiplier)
            << "; bootstrap " << run.bootstrap << "; level " << Format("%g", run.level) << "; " << used_threads
            << " threads; " << Format("%.1f", elapsed) << " s\n";
  std::cout << "truths: hoffmann E=1.69 A=406.4 B=410.7 alpha=0.34 beta=0.28; cpu E=2 A=100 B=100 alpha=0.4 beta=0.3\n";
  std::cout << "pass rule (--check): fit, <= " << Format("%g", 100 * kMaxErrorShare)
            << "% studies failing to fit; coverage, in-design prediction coverage >= "
            << Format("%.2f", kMinInsideCoverage) << "; bias, |mean alpha error| <= " << Format("%g", kAlphaBiasSe)
            << " se + " << Format("%g", kAlphaBiasFloor)
            << "; finite, no fitted law that is not finite at a design point and no interval with a NaN end (judged "
               "here: ";
  std::string judged_text;
  for (const std::string& rule : judge) judged_text += (judged_text.empty() ? "" : ", ") + rule;
  std::cout << judged_text << ")\n";
  PrintTables(results, run);
  std::cerr << "rung-bench-laws: " << jobs << " studies in " << Format("%.1f", elapsed) << " s on " << used_threads
            << " threads\n";
  if (check) {
    for (const std::string& failure : failures) std::cerr << "FAIL " << failure << "\n";
    std::cerr << "rung-bench-laws: pass rule " << (failures.empty() ? "met" : "not met") << " (" << failures.size()
              << " failures)\n";
    return failures.empty() ? 0 : 1;
  }
  return 0;
}

// sweeps/fit/compute_multipliers.h
//
// Compute multipliers of every variant of a ladder against a baseline (docs/science.md section 6), by
// every estimator, with seeds, bootstrap intervals and the wall-clock multiplier: the report behind
// `rung fit` and `rung plot`, whatever the ladder came from (a CSV file, a sweep's stored results).
//
//   CM = C_base / C_var: C_var is the variant's compute at a ladder point, C_base the compute at which
//   the baseline reaches the variant's loss there. CM > 1: the variant needs less compute than the
//   baseline for that loss ("CM = 1.034: the baseline needs 3.4% more compute").
//
// Estimators (MultiplierRow::estimator):
//   piecewise           the baseline's points joined by chords in ln C, inverted (piecewise.h): the
//                       estimator as published; biased up where the loss is convex in ln C
//   hermite             the same points joined by a monotone cubic whose slopes follow the curvature
//                       (hermite.h): the piecewise estimator without its bias on power-law losses
//   power_law_shared_e  L = A C^-alpha + E, one E for all variants; the baseline's curve inverted at
//                       the variant's measured loss (power_law.h)
//   power_law_free_e    the same with E fitted per variant (only the baseline's fit enters CM)
//                       (the power laws fit ln L by least squares with 2+ seeds per point, under a
//                       Huber loss with one: SeedMeanFitsAreLeastSquares)
//   power_law_fixed_e   the same with E given (MultiplierOptions::fixed_e), and the E-sensitivity
//                       table: CM with the baseline fitted at each E of a grid (E is weakly
//                       identified on a few ladder points; this shows how much CM depends on it)
// The baseline gets rows too: 1 by construction for the piecewise and hermite estimators; for a power law its
// measured points against its own fit (how far the fit misses, in compute).
//
// Seeds: every row is the multiplier of the seed-mean curves. With several seeds, also the mean and
// spread of the paired multipliers (variant's seed s against the baseline's seed-s curve) and of the
// paired loss gap (variant minus baseline, same label and seed).
//
// Intervals (docs/science.md section 6.4), each saying its construction and the independent units it
// rests on:
//   two or more seeds  a stratified jackknife gap t over the seeds (the survey-sampling JKn estimator):
//                      the test of "CM is the multiplier" inverted. At theta = ln CM the loss gap is
//                      G(theta) = L - B(e^theta C) (the variant's seed-mean loss at the row's point
//                      minus the estimator's baseline curve at CM times its compute). Strata are the
//                      ladder's labels, units the seeds at each label (the union over the variants
//                      there): G_(l,s)(theta) is the same gap from the seed-mean curves with seed s left
//                      out at label l only (every variant's point at l that has it; power laws
//                      refitted), V_l(theta) = (m_l - 1) / m_l sum_s (G_(l,s) - mean_s G_(l,s))^2 over
//                      the m_l seeds of label l, se^2 = sum_l V_l. The degrees of freedom, decided
//                      once per row at the estimate (at CM = 1 for a row without a multiplier): the
//                      smallest m_l - 1 among the labels with at least kDfShare of se^2 there (a
//                      conservative Welch-Satterthwaite); with MultiplierOptions::satterthwaite_df,
//                      Welch-Satterthwaite's own, (sum_l V_l)^2 / sum_l (V_l^2 / (m_l - 1)) (labels
//                      with V_l = 0 drop out), real-valued, which covered too little with 3 seeds per
//                      label (0.885 in a quick-bench cell). The interval is the stretch around the
//                      estimate (where G = 0) on which |G / se| <= t, the Student quantile on those
//                      df; an end not found within e^20 of the estimate is open, and said so. The hull
//                      of every CM the test accepts instead for a row without a multiplier, where the
//                      label with the largest V_l at the estimate has 2 seeds, or below 2 df. Where
//                      labels ran different seed sets (an adaptive sweep adds seeds at its noisy rung)
//                      each label's variance is scaled by its own seed count. For the piecewise
//                      estimator V_l is the variance of the mean of label l's per-seed contributions
//                      to the gap exactly: at a row whose gap depends on one label, the paired t test
//                      of that label's per-seed gaps. It assumes a seed's runs at different labels are
//                      independent; the pairing is within a label (the variants' runs of one seed at
//                      one label share its data order and initialisation). A label with one seed (or
//                      fewer than two seeds that can be left out) cannot be measured: a row whose gap
//                      depends on it (it changes without that seed) gets no interval, and its note
//                      names the label. Interval::units: the seeds of the labels with V_l > 0;
//                      Interval::df: those df; MultiplierRow::gap_strata: each such
//                      label's V_l at the estimate (what a planner needs to predict how an added seed
//                      at a label narrows the interval). The baseline's own rows are 1 by
//                      construction for piecewise and hermite: no interval. Nor has a power law's
//                      row where its baseline fit pins E at the smallest loss (an upper bound of the
//                      fit: the fit is not smooth in the data there, and the jackknife does not
//                      measure its spread); the row says so.
//                      Also the two-sided p of CM = 1 (the same test at CM = 1) and its Holm
//                      adjustment over the estimator's rows of every variant but the baseline (does
//                      any differ from it?).
//   one seed           a percentile bootstrap resampling the runs (ladder points) of each curve, for
//                      the power laws only, and only when every curve has kMinBootstrapUnits points; a
//                      percentile bootstrap is never used on fewer units (too few distinct resamples).
// Bootstrap replicates are drawn from a generator seeded with MultiplierOptions::seed: reproducible.
// Seconds: the wall-clock multiplier T_base / T_var, piecewise in ln T over the seed-mean seconds,
// beside the piecewise FLOP multiplier.
//
// Where a multiplier is undefined (non-monotone baseline, flat or rising extrapolated segment, loss
// at or below E, too few points to fit) the row has no multiplier and says why.
//
// Example:
//   MultiplierOptions options;
//   options.baseline = "rope";
//   StatusOr<MultiplierReport> report = ComputeMultipliers(ladder.value(), options);
//   if (!report.ok()) ...;   // INVALID_ARGUMENT: unknown baseline, bad E grid; INTERNAL: fit failure
//
// Thread safety: a function of its arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/ladder_results.h"
#include "sweeps/fit/power_law.h"
#include "sweeps/fit/predicted_multiplier.h"

namespace rung::fit {

enum class Estimator { kPiecewise, kHermite, kPowerLawSharedE, kPowerLawFreeE, kPowerLawFixedE };
// "piecewise", "hermite", "power_law_shared_e", "power_law_free_e", "power_law_fixed_e".
const char* EstimatorName(Estimator estimator);
// True for the estimators that fit a power law (their rows carry fits, E and RMSE).
bool IsPowerLaw(Estimator estimator);


// The most bootstrap replicates a fit runs (each refits every power law): a fixed limit, far above
// what intervals need (the default is 1000), so that no request holds a fitter for days.
inline constexpr int64_t kMaxBootstrapReplicates = 100'000;

// INVALID_ARGUMENT when `replicates` is above kMaxBootstrapReplicates, naming the value and the limit.
Status CheckBootstrapReplicates(int64_t replicates);

struct MultiplierOptions {
  std::string baseline;           // a variant of the ladder
  bool shared_e = true;           // power_law_shared_e rows
  bool free_e = true;             // power_law_free_e rows
  std::optional<double> fixed_e;  // power_law_fixed_e rows at this E (nats)
  // The E-sensitivity grid (nats, each in [0, the baseline's smallest loss)); empty: 0, 0.1, ..., 0.9,
  // 0.95 times the smallest seed-mean loss of the ladder. No table when e_sensitivity is false.
  std::vector<double> e_grid;
  bool e_sensitivity = true;
  int bootstrap = 1000;          // one-seed ladders: replicates of the runs bootstrap; 0: none
  uint64_t seed = 0;             // of the bootstrap's generator
  double interval_level = 0.95;  // of every interval
  // The seed intervals' degrees of freedom: false (the default), the smallest m_l - 1 among the labels
  // with at least kDfShare of se^2 at the estimate; true, Welch-Satterthwaite's, which covered too
  // little with 3 seeds per label (bench/README.md, "Unbalanced seeds: the stratified jackknife").
  bool satterthwaite_df = false;
  PowerLawFitOptions fit;        // point-estimate fits (bootstrap refits use fewer starts)
  // Where every run has N and D (LadderRun::parameters, tokens): also the multipliers predicted by
  // L(N, D) fitted per variant (law_report.h, AddPredictedMultipliers), with at most
  // kPredictedReplicates residual-bootstrap replicates. What `rung fit` reports; off for the fits a
  // sweep runs for itself (the precision aim's).
  bool predict = false;
  // Asked before each bootstrap replicate and each E of the sensitivity table; a non-OK answer
  // (the caller went away, its deadline passed) stops the computation, which returns it. Unset: no
  // checks.
  std::function<Status()> keep_going;
};

// Mean and sample standard deviation of a per-seed quantity; sd is 0 with one value.
struct SeedStats {
  int n = 0;          // seeds with a value
  int undefined = 0;  // seeds where it was undefined
  double mean = 0;
  double sd = 0;
};

// The fewest independent units a percentile bootstrap resamples: with fewer, its distinct resamples
// are too few for its percentiles to cover.
inline constexpr int kMinBootstrapUnits = 8;

// The share of se^2 a label needs at the estimate to count for the seed intervals' conservative
// degrees of freedom (MultiplierOptions::satterthwaite_df).
inline constexpr double kDfShare = 0.1;

// An interval of a multiplier, with what it rests on.
struct Interval {
  double low = 0;
  double high = 0;
  double level = 0.95;
  std::string construction;  // "jackknife gap t" or "percentile bootstrap"
  std::string unit;          // what was counted as independent: "seeds" or "runs"
  int units = 0;             // how many of them it rests on (jackknife: the seeds of the labels its gap varies with)
  std::optional<double> df;  // t: degrees of freedom (jackknife: MultiplierOptions::satterthwaite_df says which)
  int replicates = 0;        // bootstrap: defined replicates behind it
  bool open = false;         // jackknife: an end not found within e^20 of the estimate (the note says which)
};

// A fitted curve as reported (the variant's own fit in the mode of the row).
struct FitSummary {
  std::string variant;
  EMode mode = EMode::kFree;
  std::optional<PowerLawFit> fit;  // empty when it could not be fitted
  std::string why;                 // why not
};

// The jackknife variance of a row's loss gap at its estimate, by ladder label (stratum).
struct GapStratum {
  std::string label;
  int seeds = 0;        // the stratum's seeds (units)
  double variance = 0;  // V_l at the row's estimate, nats^2 (se^2 is their sum)
};

struct MultiplierRow {
  std::string variant;
  std::string label;
  double compute = 0;             // C_var, FLOPs
  double loss = 0;                // seed-mean loss, nats
  double loss_sd = 0;             // over seeds
  int seeds = 1;                  // runs behind the point
  std::optional<double> seconds;  // seed-mean wall-clock seconds
  Estimator estimator = Estimator::kPiecewise;
  std::optional<double> e;  // power laws: the E of the baseline's fit behind the row

  std::optional<double> multiplier;        // CM of the seed-mean curves; empty when undefined
  std::optional<double> baseline_compute;  // C_base
  std::string how;                         // piecewise: where the baseline was read
  std::string why;                         // why the multiplier is undefined

  std::optional<double> fit_rmse;           // power laws: the variant's own fit, nats
  std::optional<double> baseline_fit_rmse;   // power laws: the baseline's fit, nats
  std::optional<double> baseline_fit_alpha;  // power laws: the baseline fit's exponent

  std::optional<SeedStats> paired_multiplier;  // with several seeds
  std::optional<SeedStats> loss_gap;           // variant - baseline at the same label (and seed), nats
  std::optional<Interval> interval;            // see "Intervals" above
  std::string interval_note;                   // why there is no interval
  std::vector<GapStratum> gap_strata;  // rows with a seed interval: every stratum with V_l > 0, by label order
  std::optional<double> p_value;               // t: two-sided p of CM = 1 (not for the baseline's rows)
  std::optional<double> p_holm;                // p_value adjusted by Holm over the estimator's rows

  std::optional<double> wallclock_multiplier;  // piecewise rows, with seconds
  std::string wallclock_why;                   // why the wall-clock multiplier is undefined
};

// A ladder point of a tuned sweep (the spec's tune block): the value of the tuned key its runs used.
struct TunedPoint {
  std::string variant;
  std::string label;
  double value = 0;    // e.g. the peak learning rate
  std::string status;  // "bracketed", "unbracketed" (the best on an edge), "extrapolated", "from_sweep", "fixed"
};

// Per variant, the best tuned value against the rung's parameter count: value = coefficient * N^exponent,
// least squares in log-log over the variant's searched points.
struct TunedLaw {
  std::string variant;
  double coefficient = 0;
  double exponent = 0;
  int points = 0;
};

struct MultiplierReport {
  std::string source;
  std::string baseline;
  std::vector<std::string> variants;  // baseline first, then the ladder's order
  int ladder_points = 0;              // distinct labels
  int max_seeds = 1;                  // most seeds behind one point
  bool has_seeds = false;
  bool has_seconds = false;
  double c_ref = 1;  // reference compute of the power-law parametrisation
  // How compute was counted, e.g. "6 N_nonembedding D" (compute_count.h); "" when the ladder's
  // source gave compute as it is (a CSV's compute column).
  std::string compute_count;
  // What the losses are: a sweep's metric ("val_bpb"); "" or "val_loss" for a validation loss in nats.
  // Named by the table's header only.
  std::string metric;

  std::vector<MultiplierRow> rows;  // by estimator, then variant, then compute
  std::vector<FitSummary> fits;     // shared E, free E, fixed E: one per variant each

  std::vector<double> e_grid;
  std::vector<MultiplierRow> e_sensitivity;                 // power_law_fixed_e rows, by E, then variant, then compute
  std::vector<std::optional<double>> e_grid_baseline_rmse;   // baseline fit's RMSE at each E
  std::vector<std::optional<double>> e_grid_baseline_alpha;  // and its exponent
  // The power laws' residuals (MultiplierOptions::fit.residuals).
  PowerLawResiduals power_law_residuals = PowerLawResiduals::kLogLoss;

  int bootstrap_replicates = 0;  // requested
  uint64_t bootstrap_seed = 0;
  std::string bootstrap_unit;      // "runs" when a bootstrap ran, else ""
  std::string intervals;           // how the rows' intervals were made, for the report's header; "" for none
  std::vector<std::string> notes;  // things a reader should know (non-monotone baseline, bounds)

  // Predicted by L(N, D) (law_report.h): at each of the baseline's ladder computes and at 10 and 100
  // times the largest, along D = predicted_tokens_per_param N and at each method's optimum. Empty with
  // predicted_why saying why (no N and D in the runs, a form they cannot identify, a fit that failed).
  std::vector<PredictedMultiplier> predicted;
  IntervalBasis predicted_basis;
  std::string predicted_why;
  double predicted_tokens_per_param = 20;
  double predicted_level = 0.95;
  std::vector<std::string> predicted_laws;  // each variant's fitted law, "rope: E 1.9, A 41, ..."

  // Tuned sweeps only (empty otherwise): the key tuned, each point's value, and the laws.
  std::string tuned_key;
  std::string tuned_policy;  // "best" or "value=X"
  std::vector<TunedPoint> tuned;
  std::vector<TunedLaw> tuned_laws;
  const TunedPoint* TunedAt(const std::string& variant, const std::string& label) const;
};

// Whether the report's power laws were fitted by plain least squares on ln L (ladders with 2+ seeds
// per point) rather than under MultiplierOptions::fit's Huber loss (one seed). Seed means carry
// measured, roughly normal noise; a Huber delta far below it (the default 1e-3 is below the noise of
// seed means at 0.01 nats and up) makes the fit close to an L1 fit through some of the points, whose
// estimate moves in jumps that the seed jackknife of its interval does not measure.
bool SeedMeanFitsAreLeastSquares(const MultiplierReport& report);

// The degrees of freedom of a seed interval whose variance is the sum of `strata`'s (see "Intervals"
// above): the smallest seeds - 1 among the strata with at least kDfShare of it, or with
// `satterthwaite` Welch-Satterthwaite's. 0 when no stratum has variance.
double GapDegreesOfFreedom(const std::vector<GapStratum>& strata, bool satterthwaite);

// Errors: INVALID_ARGUMENT for a bad ladder or options (CheckBootstrapReplicates among them).
StatusOr<MultiplierReport> ComputeMultipliers(const LadderResults& ladder, const MultiplierOptions& options);

}  // namespace rung::fit

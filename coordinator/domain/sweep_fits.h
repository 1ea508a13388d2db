// coordinator/domain/sweep_fits.h
//
// Compute multipliers (sweeps/fit/compute_multipliers.h) of a stored sweep's ladder, computed on
// the coordinator and stored with their inputs (FitStore); what UserService.Fit, ListFits and the
// LADDER export answer (the service converts).
//
// The ladder: every SUCCEEDED trial with a finite value of the metric (FitOptions::summary) is one
// run: its variant (named by the values of FitOptions::variant_keys; by default every sweep axis
// but seed: "rope" for one key, "position.variant=rope,train.lr=0.001" for several), its rung
// label, its compute (6 N_nonembedding D, or the count FitOptions::compute names), its loss, its seed, and its wall-clock seconds (summary wall_sec) when
// every run has them. The baseline is FitOptions::baseline, or the variant of the cells the spec's
// baseline selects (which must be one variant).
//
// Errors: NOT_FOUND (sweep, fit); INVALID_ARGUMENT (bad options, more than 100,000 bootstrap
// replicates (fit::kMaxBootstrapReplicates), a baseline that is not a variant,
// a spec baseline that selects several variants or none); FAILED_PRECONDITION when the baseline has
// fewer than 2 finished ladder points or no other variant has one, saying how many there are and
// how many trials are unfinished.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(SweepFit fit, FitSweep(coordinator, {.sweep_id = 3}, "user:alice"));
//
// Thread safety: reads and writes the store (thread-safe); no state of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordinator/domain/coordinator.h"
#include "coordinator/domain/results_query.h"
#include "coordinator/store/fit_store.h"
#include "sweeps/fit/compute_count.h"
#include "sweeps/fit/compute_multipliers.h"

namespace rung {

// Bootstrap replicates of a fit that asks for none in particular (FitOptions::bootstrap 0).
inline constexpr int kDefaultFitBootstrap = 1000;

struct FitOptions {
  int64_t sweep_id = 0;
  std::string metric;                      // "": the sweep's metric
  std::vector<std::string> variant_keys;   // empty: every sweep axis but seed
  MetricSummary summary = MetricSummary::kFinal;
  std::string baseline;                    // "": the variant the spec's baseline selects
  int bootstrap = 0;                       // replicates for intervals; 0: 1000; negative: none
  uint64_t seed = 0;                       // the bootstrap's seed
  std::optional<double> fixed_e;           // also fit with this irreducible loss E (nats)
  // Tuned sweeps: the runs at this value of the tuned key (nearest grid value); unset: each cell's
  // best tried value (the seed-mean metric), as the search found it.
  std::optional<double> tuned_value;
  std::vector<double> e_grid;              // E values of the sensitivity table; empty: the default
  // The count of training FLOPs on the compute axis (sweeps/fit/compute_count.h).
  fit::ComputeCount compute = fit::ComputeCount::kNonembedding;
  // What the power laws' fits minimise (sweeps/fit/power_law.h).
  fit::PowerLawResiduals power_law_residuals = fit::PowerLawResiduals::kLogLoss;
  // Asked as the fit goes (fit::MultiplierOptions::keep_going): a non-OK answer stops it and is
  // returned, e.g. CANCELLED when the caller went away. Unset: the fit runs to the end.
  std::function<Status()> keep_going;
  // Whether the fit is saved (the fits table, `rung fits`). A read-only caller's (the viewer token's)
  // is computed and returned only: a query must not grow the database.
  bool store = true;
};

struct SweepFit {
  FitRecord stored;                // as saved: id, time, inputs, report
  fit::MultiplierReport report;    // the rows, as computed
};

// A stored sweep's ladder as FitSweep fits it (see above): the runs, the trial behind each, the
// spec's baseline variant, and for a tuned sweep the value each point ran at.
struct SweepLadder {
  fit::LadderResults ladder;
  std::vector<FitPointRecord> points;  // one per run, in the same order
  std::string baseline;                // the spec's baseline variant ("" when it selects none)
  std::set<std::string> baseline_variants;
  std::set<std::string> variants;      // of every trial, finished or not
  int64_t unfinished = 0;              // trials not SUCCEEDED, or without a value
  // Tuned sweeps: what report fields of the same names say (compute_multipliers.h).
  std::string tuned_key;
  std::string tuned_policy;
  std::vector<fit::TunedPoint> tuned;
  std::vector<fit::TunedLaw> tuned_laws;
};


// The ladder of `sweep` by `metric` and `summary`; `variant_keys` empty: the default (set on return).
// Tuned sweeps: the runs at `tuned_value` (nearest grid value), else at each cell's best.
StatusOr<SweepLadder> BuildLadder(Coordinator& coordinator, const SweepRecord& sweep, const std::string& metric,
                                  MetricSummary summary, std::vector<std::string>* variant_keys,
                                  std::optional<double> tuned_value = std::nullopt,
                                  fit::ComputeCount count = fit::ComputeCount::kNonembedding);

// Computes, stores (unless options.store is false: then stored.id is 0) and returns the fit. `actor`
// is recorded with it ("user:<name>").
StatusOr<SweepFit> FitSweep(Coordinator& coordinator, const FitOptions& options, const std::string& actor);

// The stored fit `fit_id`, checked to belong to `sweep_id` when that is positive.
StatusOr<FitRecord> GetFit(Coordinator& coordinator, int64_t fit_id, int64_t sweep_id);

// The ladder CSV `rung fit --from-csv` reads (variant,label,compute,loss,seed[,seconds][,n,d]) of the
// sweep's finished trials, variants named by every sweep axis but seed; one line per run. n and d (the
// run's parameters N = compute / 6 D and training tokens D) where every run has them, so that
// `rung plot SWEEP` can predict multipliers from fitted L(N, D) as `rung fit` does.
StatusOr<std::string> LadderCsv(Coordinator& coordinator, int64_t sweep_id);

}  // namespace rung

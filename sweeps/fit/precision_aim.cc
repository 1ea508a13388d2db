#include "sweeps/fit/precision_aim.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "sweeps/fit/student_t.h"

namespace rung::fit {
namespace {

std::string Short(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g", value);
  return text;
}

using CellKey = std::pair<std::string, std::string>;  // (variant, label)

// The seeds a row's projection counts at each label: finished seeds and those still to come, of the
// cells the row reads there.
struct Pending {
  std::map<CellKey, std::set<int64_t>> seeds;      // every seed of the cell, planned ones included
  std::map<CellKey, std::set<int64_t>> finished;   // seeds with a finished run in the ladder
};

// Two-sided t quantile at `level` on `df` degrees of freedom.
double TQuantile(double level, double df) { return -StudentTQuantile(0.5 * (1 - level), df); }

// `strata` as they are expected to be when each stratum l has extra[l] more seeds: its variance
// scaled by m / (m + k) (a seed mean's), its seeds m + k.
std::vector<GapStratum> WithMoreSeeds(const std::vector<GapStratum>& strata, const std::map<std::string, int>& extra) {
  std::vector<GapStratum> then;
  for (const GapStratum& stratum : strata) {
    auto more = extra.find(stratum.label);
    const int k = more == extra.end() ? 0 : more->second;
    then.push_back({stratum.label, stratum.seeds + k, stratum.variance * stratum.seeds / (stratum.seeds + k)});
  }
  return then;
}

double TotalVariance(const std::vector<GapStratum>& strata) {
  double total = 0;
  for (const GapStratum& stratum : strata) total += stratum.variance;
  return total;
}

// The expected half width of `row` when each stratum l has extra[l] more seeds than its interval
// rests on; the row's own half width when nothing is added; empty without an interval.
std::optional<double> ExpectedHalfWidth(const AimRow& row, const std::vector<GapStratum>& strata,
                                        const std::map<std::string, int>& extra, double level) {
  if (!row.half_width || strata.empty()) return row.half_width;
  const std::vector<GapStratum> then = WithMoreSeeds(strata, extra);
  const double v_now = TotalVariance(strata), v_then = TotalVariance(then);
  // The degrees of freedom as the interval takes them (compute_multipliers.h).
  const double df_now = GapDegreesOfFreedom(strata, /*satterthwaite=*/false);
  const double df_then = GapDegreesOfFreedom(then, /*satterthwaite=*/false);
  if (!(v_now > 0) || !(df_now > 0) || !(df_then > 0)) return row.half_width;
  const double scale = std::sqrt(v_then / v_now) * TQuantile(level, df_then) / TQuantile(level, df_now);
  return *row.half_width * scale;
}

// The share of the gap's variance sum_l V_l left when each stratum l has extra[l] more seeds: what an
// open interval's candidates are scored by (its half width is not defined, its variance is). 1 without
// strata.
double ExpectedVarianceShare(const std::vector<GapStratum>& strata, const std::map<std::string, int>& extra) {
  const double v_now = TotalVariance(strata);
  return v_now > 0 ? TotalVariance(WithMoreSeeds(strata, extra)) / v_now : 1.0;
}

}  // namespace

const char* AimStatusName(AimStatus status) {
  switch (status) {
    case AimStatus::kWaiting: return "waiting";
    case AimStatus::kAiming: return "aiming";
    case AimStatus::kMet: return "met";
    case AimStatus::kBudget: return "budget";
    case AimStatus::kNoFit: return "no_fit";
  }
  return "waiting";
}

bool IsClosed(AimStatus status) {
  return status == AimStatus::kMet || status == AimStatus::kBudget || status == AimStatus::kNoFit;
}

StatusOr<AimDecision> AimPrecision(const AimState& state, const PrecisionTarget& target) {
  if (!(target.half_width > 0) || !std::isfinite(target.half_width)) {
    return Status::InvalidArgument("precision: target_half_width must be a number > 0");
  }
  if (!(target.level > 0 && target.level < 1)) return Status::InvalidArgument("precision: level must be in (0, 1)");
  if (!(target.budget_flops > 0)) return Status::InvalidArgument("precision: budget_flops must be > 0");
  if (target.in_flight < 1) return Status::InvalidArgument("precision: in_flight must be >= 1");
  if (target.estimator == Estimator::kPiecewise || target.estimator == Estimator::kPowerLawFixedE) {
    return Status::InvalidArgument(std::string("precision: cannot aim with the ") + EstimatorName(target.estimator) +
                                   " estimator");
  }
  std::map<CellKey, const AimCell*> cells;
  std::vector<std::string> variants, labels;  // in the cells' order
  for (const AimCell& cell : state.cells) {
    cells[{cell.variant, cell.label}] = &cell;
    if (std::find(variants.begin(), variants.end(), cell.variant) == variants.end()) variants.push_back(cell.variant);
    if (std::find(labels.begin(), labels.end(), cell.label) == labels.end()) labels.push_back(cell.label);
  }
  if (std::find(variants.begin(), variants.end(), state.baseline) == variants.end()) {
    return Status::InvalidArgument("precision: the baseline '" + state.baseline + "' is not a variant of the sweep");
  }

  AimDecision decision;
  decision.planned_flops = state.planned_flops;
  // A seed enters the fit at a label once every run of it there has ended: a variant's run without
  // its baseline pair would read the seed-to-seed spread that pairing removes.
  std::set<std::pair<std::string, int64_t>> coming;  // (label, seed) with a run unfinished or lost
  for (const AimCell& cell : state.cells) {
    for (int64_t seed : cell.unfinished) coming.insert({cell.label, seed});
    for (int64_t seed : cell.ended_without_run) coming.insert({cell.label, seed});
  }
  LadderResults ladder = state.ladder;
  ladder.runs.erase(std::remove_if(ladder.runs.begin(), ladder.runs.end(),
                                   [&](const LadderRun& run) {
                                     return run.seed && coming.count({run.label, *run.seed}) > 0;
                                   }),
                    ladder.runs.end());
  // The fit of the finished runs, by the target's estimator.
  MultiplierOptions options;
  options.baseline = state.baseline;
  options.shared_e = target.estimator == Estimator::kPowerLawSharedE;
  options.free_e = target.estimator == Estimator::kPowerLawFreeE;
  options.e_sensitivity = false;
  options.bootstrap = 0;
  options.interval_level = target.level;
  std::optional<MultiplierReport> report;
  std::string fit_error;
  const std::vector<std::string> ladder_variants = ladder.Variants();
  if (std::find(ladder_variants.begin(), ladder_variants.end(), state.baseline) == ladder_variants.end()) {
    fit_error = "the baseline has no finished run";
  } else {
    StatusOr<MultiplierReport> computed = ComputeMultipliers(ladder, options);
    if (computed.ok()) {
      report = std::move(*computed);
      decision.intervals = report->intervals;
    } else {
      fit_error = computed.status().message();
    }
  }

  // The rows, with their strata (for the projection).
  std::vector<std::vector<GapStratum>> strata;
  const std::set<std::string> at(target.at.begin(), target.at.end());
  for (const std::string& variant : variants) {
    if (variant == state.baseline) continue;
    for (const std::string& label : labels) {
      if (!at.empty() && at.count(label) == 0) continue;
      if (cells.count({variant, label}) == 0) continue;
      AimRow row;
      row.variant = variant;
      row.label = label;
      std::vector<GapStratum> row_strata;
      const MultiplierRow* found = nullptr;
      if (report) {
        for (const MultiplierRow& candidate : report->rows) {
          if (candidate.estimator == target.estimator && candidate.variant == variant && candidate.label == label) {
            found = &candidate;
          }
        }
      }
      if (found == nullptr) {
        row.note = report ? "no finished run" : "no fit yet: " + fit_error;
      } else {
        row.multiplier = found->multiplier;
        row.interval = found->interval;
        row.seeds = found->seeds;
        row.note = found->interval ? found->interval_note : (found->interval_note.empty() ? found->why : found->interval_note);
        if (found->interval && !found->interval->open) {
          row.half_width = (found->interval->high - found->interval->low) / 2;
        }
        row_strata = found->gap_strata;  // an open interval's too: where its variance lies
      }
      row.met = row.half_width && *row.half_width <= target.half_width;
      decision.rows.push_back(row);
      strata.push_back(row_strata);
    }
  }

  // The seeds each cell has and will have.
  Pending pending;
  for (const AimCell& cell : state.cells) pending.seeds[{cell.variant, cell.label}] = cell.seeds;
  for (const LadderRun& run : ladder.runs) {
    if (run.seed) pending.finished[{run.variant, run.label}].insert(*run.seed);
  }
  // Seeds still to come at each label, for row r: of the baseline there, and of r's variant at r's label.
  auto extra_for = [&](const AimRow& row) {
    std::map<std::string, int> extra;
    for (const std::string& label : labels) {
      std::set<int64_t> coming;
      std::vector<CellKey> read = {{state.baseline, label}};
      if (label == row.label) read.push_back({row.variant, label});
      for (const CellKey& key : read) {
        auto seeds = pending.seeds.find(key);
        if (seeds == pending.seeds.end()) continue;
        const std::set<int64_t>& done = pending.finished[key];
        const std::set<int64_t>& lost = cells.at(key)->ended_without_run;  // never coming
        for (int64_t seed : seeds->second) {
          if (done.count(seed) || lost.count(seed)) continue;
          coming.insert(seed);
        }
      }
      if (!coming.empty()) extra[label] = static_cast<int>(coming.size());
    }
    return extra;
  };
  auto project = [&]() {
    for (size_t r = 0; r < decision.rows.size(); ++r) {
      decision.rows[r].projected = ExpectedHalfWidth(decision.rows[r], strata[r], extra_for(decision.rows[r]), target.level);
    }
  };
  project();

  const bool all_met = !decision.rows.empty() && std::all_of(decision.rows.begin(), decision.rows.end(),
                                                             [](const AimRow& row) { return row.met; });
  if (all_met && state.unfinished == 0) {
    decision.status = AimStatus::kMet;
    decision.why = "every one of " + std::to_string(decision.rows.size()) + " target intervals has a half width at most " +
                   Short(target.half_width);
    return decision;
  }
  if (!report) {
    decision.status = state.unfinished > 0 ? AimStatus::kWaiting : AimStatus::kNoFit;
    decision.why = "no fit yet: " + fit_error;
    return decision;
  }
  if (decision.rows.empty()) {
    decision.status = state.unfinished > 0 ? AimStatus::kWaiting : AimStatus::kNoFit;
    decision.why = "no target interval: no variant but the baseline runs at the target rungs";
    return decision;
  }

  int64_t unfinished = state.unfinished;
  while (unfinished < target.in_flight) {
    // 1. The widest row not projected to meet the target (no interval: the widest).
    std::optional<size_t> widest;
    auto width_of = [&](size_t r) {
      return decision.rows[r].projected.value_or(std::numeric_limits<double>::infinity());
    };
    for (size_t r = 0; r < decision.rows.size(); ++r) {
      if (width_of(r) <= target.half_width) continue;
      // A row without an interval whose runs are still coming waits for them.
      if (!decision.rows[r].projected && extra_for(decision.rows[r]).count(decision.rows[r].label)) continue;
      if (!widest || width_of(r) > width_of(*widest)) widest = r;
    }
    if (!widest) break;  // every row is expected to meet the target once the running trials end
    const AimRow& row = decision.rows[*widest];

    // 2. Its candidates: a seed at its own label (the pair) or at a label its interval reads.
    struct Candidate {
      std::vector<AimAddition> trials;
      double flops = 0;
      double after = 0;   // expected half width
      double rate = 0;    // reduction per FLOP
      std::string label;
    };
    std::vector<std::string> candidate_labels = {row.label};
    for (const GapStratum& stratum : strata[*widest]) {
      if (stratum.label != row.label && stratum.variance > 0) candidate_labels.push_back(stratum.label);
    }
    std::vector<Candidate> candidates;
    for (const std::string& label : candidate_labels) {
      Candidate candidate;
      candidate.label = label;
      const CellKey base_key{state.baseline, label}, own_key{row.variant, label};
      if (!cells.count(base_key)) continue;
      int64_t seed = 0;
      if (label == row.label) {
        if (!cells.count(own_key)) continue;
        // A seed the baseline lost there would never pair: skip it.
        const std::set<int64_t>& base_lost = cells[base_key]->ended_without_run;
        while (pending.seeds[own_key].count(seed) || base_lost.count(seed)) ++seed;
        candidate.trials.push_back({row.variant, label, seed, cells[own_key]->trial_flops, ""});
        if (!pending.seeds[base_key].count(seed)) {
          candidate.trials.push_back({state.baseline, label, seed, cells[base_key]->trial_flops, ""});
        }
      } else {
        while (pending.seeds[base_key].count(seed)) ++seed;
        candidate.trials.push_back({state.baseline, label, seed, cells[base_key]->trial_flops, ""});
      }
      for (const AimAddition& trial : candidate.trials) candidate.flops += trial.flops;
      if (row.projected) {
        std::map<std::string, int> extra = extra_for(row);
        extra[label] += 1;
        candidate.after = ExpectedHalfWidth(row, strata[*widest], extra, target.level).value_or(*row.projected);
        candidate.rate = (*row.projected - candidate.after) / candidate.flops;
      } else {
        // No half width (an open interval): the share of the gap's variance the seed removes, per FLOP;
        // without strata (no interval), the cheapest seed at the row's own label.
        std::map<std::string, int> extra = extra_for(row);
        const double before = ExpectedVarianceShare(strata[*widest], extra);
        extra[label] += 1;
        const double removed = before - ExpectedVarianceShare(strata[*widest], extra);
        candidate.after = std::numeric_limits<double>::infinity();
        candidate.rate = (strata[*widest].empty() ? 1.0 : removed) / candidate.flops;
      }
      candidates.push_back(std::move(candidate));
    }
    const double left = target.budget_flops - decision.planned_flops;
    const Candidate* best = nullptr;
    double cheapest = std::numeric_limits<double>::infinity();
    for (const Candidate& candidate : candidates) {
      cheapest = std::min(cheapest, candidate.flops);
      if (candidate.flops > left) continue;
      if (best == nullptr || candidate.rate > best->rate) best = &candidate;
    }
    const std::string row_text = row.variant + " at " + row.label + " (half width " +
                                 (row.half_width ? Short(*row.half_width) : std::string("none: ") + row.note) +
                                 (row.projected && row.half_width && *row.projected != *row.half_width
                                      ? ", " + Short(*row.projected) + " expected with the trials running"
                                      : "") +
                                 ", target " + Short(target.half_width) + ")";
    if (best == nullptr) {
      if (unfinished == 0 && decision.additions.empty()) {
        decision.status = AimStatus::kBudget;
        decision.why = "the widest target interval, " + row_text + ", needs " +
                       (candidates.empty() ? std::string("a cell the sweep does not have")
                                           : Short(cheapest) + " FLOPs for one more seed and " + Short(std::max(0.0, left)) +
                                                 " of budget_flops " + Short(target.budget_flops) + " are left");
        return decision;
      }
      break;  // running trials may still narrow it; decide again when they end
    }
    // 3. Add it.
    const std::string why = row_text + ": a seed at " + best->label + " for " + Short(best->flops) + " FLOPs, half width " +
                            (std::isfinite(best->after) ? "expected " + Short(best->after) : std::string("to be measured"));
    for (AimAddition trial : best->trials) {
      trial.why = why;
      pending.seeds[{trial.variant, trial.label}].insert(trial.seed);
      decision.planned_flops += trial.flops;
      decision.additions.push_back(trial);
      ++unfinished;
    }
    project();
  }
  if (!decision.additions.empty()) {
    decision.status = AimStatus::kAiming;
    decision.why = "added " + std::to_string(decision.additions.size()) + " trial(s)";
  } else if (state.unfinished == 0) {
    // Nothing runs and nothing to add: waiting would wait for good.
    decision.status = AimStatus::kNoFit;
    decision.why = "nothing runs and no seed the aim can add is expected to narrow the rows not met";
  } else {
    decision.status = AimStatus::kWaiting;
    decision.why = std::to_string(unfinished) + " trial(s) running" +
                   (all_met ? ": every target interval is met so far" : " decide the next addition");
  }
  return decision;
}

}  // namespace rung::fit

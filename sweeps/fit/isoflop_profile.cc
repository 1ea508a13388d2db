#include "sweeps/fit/isoflop_profile.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "core/diagnostics/score_statistics.h"
#include "sweeps/fit/compute_multipliers.h"
#include "sweeps/fit/report_format.h"

namespace rung::fit {
namespace {

// c0 + c1 x + c2 x^2 - L at one run, x = ln N - centre.
struct ParabolaResidual {
  ParabolaResidual(double x, double loss) : x(x), loss(loss) {}
  template <typename T>
  bool operator()(const T* const c, T* residual) const {
    residual[0] = c[0] + c[1] * x + c[2] * x * x - loss;
    return true;
  }
  double x, loss;
};

struct Parabola {
  std::vector<double> coefficients;  // in ln N, uncentred
  bool ok = false;
};

// The Huber fit of loss against ln N over `runs` with multiplicities `weights`.
Parabola FitParabola(const std::vector<const LawRun*>& runs, const std::vector<double>& weights, double delta) {
  double centre = 0, total = 0;
  for (size_t index = 0; index < runs.size(); ++index) {
    centre += weights[index] * std::log(runs[index]->n);
    total += weights[index];
  }
  centre /= total;
  double mean_loss = 0;
  for (size_t index = 0; index < runs.size(); ++index) mean_loss += weights[index] * runs[index]->loss / total;
  double c[3] = {mean_loss, 0, 0};
  ceres::Problem::Options problem_options;
  problem_options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  ceres::Problem problem(problem_options);
  ceres::HuberLoss huber(delta);
  for (size_t index = 0; index < runs.size(); ++index) {
    if (weights[index] == 0) continue;
    auto* cost = new ceres::AutoDiffCostFunction<ParabolaResidual, 1, 3>(
        new ParabolaResidual(std::log(runs[index]->n) - centre, runs[index]->loss));
    // A weight w counts the run w times: Huber's rho scaled by w.
    problem.AddResidualBlock(cost, new ceres::ScaledLoss(&huber, weights[index], ceres::DO_NOT_TAKE_OWNERSHIP), c);
  }
  ceres::Solver::Options solver;
  solver.linear_solver_type = ceres::DENSE_QR;
  solver.max_num_iterations = 200;
  solver.function_tolerance = 1e-14;
  solver.gradient_tolerance = 1e-16;
  solver.parameter_tolerance = 1e-14;
  solver.logging_type = ceres::SILENT;
  ceres::Solver::Summary summary;
  ceres::Solve(solver, &problem, &summary);
  Parabola parabola;
  if (!summary.IsSolutionUsable() || !std::isfinite(c[0]) || !std::isfinite(c[1]) || !std::isfinite(c[2])) {
    return parabola;
  }
  // Uncentre: c0 + c1 (x - m) + c2 (x - m)^2.
  parabola.coefficients = {c[0] - c[1] * centre + c[2] * centre * centre, c[1] - 2 * c[2] * centre, c[2]};
  parabola.ok = true;
  return parabola;
}

struct BudgetGroup {
  double compute = 0;
  std::vector<size_t> runs;  // indices into LawRuns::runs
};

// Budgets: runs sorted by compute, a new budget where one's compute exceeds its budget's first by more
// than the tolerance.
std::vector<BudgetGroup> GroupBudgets(const std::vector<LawRun>& runs, double tolerance) {
  std::vector<size_t> order(runs.size());
  for (size_t index = 0; index < order.size(); ++index) order[index] = index;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return runs[x].compute() < runs[y].compute(); });
  std::vector<BudgetGroup> groups;
  double first = 0;
  for (size_t index : order) {
    const double compute = runs[index].compute();
    if (groups.empty() || compute > first * (1 + tolerance)) {
      groups.emplace_back();
      first = compute;
    }
    groups.back().runs.push_back(index);
  }
  for (BudgetGroup& group : groups) {
    double log_sum = 0;
    for (size_t index : group.runs) log_sum += std::log(runs[index].compute());
    group.compute = std::exp(log_sum / static_cast<double>(group.runs.size()));
  }
  return groups;
}

// One variant's profiles and laws with run multiplicities `weights` (by run index).
IsoflopVariant Profile(const std::string& variant, const std::vector<LawRun>& runs,
                       const std::vector<BudgetGroup>& groups, const std::vector<double>& weights, double delta) {
  IsoflopVariant out;
  out.variant = variant;
  std::vector<double> log_c, log_n;
  for (const BudgetGroup& group : groups) {
    std::vector<const LawRun*> members;
    std::vector<double> member_weights;
    std::set<double> sizes;
    for (size_t index : group.runs) {
      if (runs[index].variant != variant || weights[index] == 0) continue;
      members.push_back(&runs[index]);
      member_weights.push_back(weights[index]);
      sizes.insert(runs[index].n);
    }
    if (members.empty()) continue;
    IsoflopBudget budget;
    budget.compute = group.compute;
    budget.runs = static_cast<int>(members.size());
    budget.sizes = static_cast<int>(sizes.size());
    if (sizes.size() < 3) {
      budget.why = std::to_string(sizes.size()) + " distinct size(s); a parabola needs 3";
      out.budgets.push_back(budget);
      continue;
    }
    Parabola parabola = FitParabola(members, member_weights, delta);
    if (!parabola.ok) {
      budget.why = "the parabola's fit failed";
      out.budgets.push_back(budget);
      continue;
    }
    budget.parabola = parabola.coefficients;
    const double c1 = parabola.coefficients[1], c2 = parabola.coefficients[2];
    if (!(c2 > 0)) {
      budget.why = "the profile is not convex (no minimum)";
    } else {
      const double x = -c1 / (2 * c2);
      if (x < std::log(*sizes.begin()) || x > std::log(*sizes.rbegin())) {
        char where[64];
        std::snprintf(where, sizeof(where), "%.4g", std::exp(x));
        budget.why = std::string("the minimum (N = ") + where + ") lies outside the sizes run";
      } else {
        budget.n_opt = std::exp(x);
        budget.d_opt = budget.compute / (6.0 * *budget.n_opt);
        budget.loss_opt = parabola.coefficients[0] + c1 * x + c2 * x * x;
        log_c.push_back(std::log(budget.compute));
        log_n.push_back(x);
      }
    }
    out.budgets.push_back(budget);
  }
  if (log_c.size() < 2) {
    out.why = std::to_string(log_c.size()) + " budget(s) with a minimum; N* = G C^a needs 2";
    return out;
  }
  // Least squares of ln N* on ln C.
  const double count = static_cast<double>(log_c.size());
  double mc = 0, mn = 0;
  for (size_t index = 0; index < log_c.size(); ++index) {
    mc += log_c[index] / count;
    mn += log_n[index] / count;
  }
  double sxy = 0, sxx = 0;
  for (size_t index = 0; index < log_c.size(); ++index) {
    sxy += (log_c[index] - mc) * (log_n[index] - mn);
    sxx += (log_c[index] - mc) * (log_c[index] - mc);
  }
  out.a = sxy / sxx;
  out.g = std::exp(mn - *out.a * mc);
  out.b = 1 - *out.a;
  out.g_d = 1 / (6 * *out.g);
  return out;
}

std::string Percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g%%", 100 * fraction);
  return text;
}

// The share of replicates an interval needs usable.
constexpr double kMinUsableShare = 0.8;

}  // namespace

StatusOr<IsoflopReport> FitIsoflopProfiles(const LawRuns& runs, const IsoflopOptions& options) {
  RUNG_RETURN_IF_ERROR(ValidateLawRuns(runs));
  IsoflopReport report;
  report.tolerance = options.tolerance;
  const std::vector<BudgetGroup> groups = GroupBudgets(runs.runs, options.tolerance);
  const std::vector<double> ones(runs.runs.size(), 1.0);
  bool any = false;
  for (const std::string& variant : runs.Variants()) {
    report.variants.push_back(Profile(variant, runs.runs, groups, ones, options.huber_delta));
    for (const IsoflopBudget& budget : report.variants.back().budgets) any = any || !budget.parabola.empty();
  }
  if (!any) {
    return Status::FailedPrecondition(
        "no IsoFLOP profile: no variant ran 3 distinct sizes at one compute budget (runs within " +
        Percent(options.tolerance) + " of each other's 6 N D share a budget); an IsoFLOP grid " +
        "(ladder.isoflop_budgets) runs them");
  }
  // Units: seeds when there are several, else runs resampled within each budget.
  const LawUnits units = LawUnitsOf(runs.runs, runs.Variants());
  const bool by_seed = units.by_seed;
  report.unit = by_seed ? "seeds" : "runs";
  const int fewest = units.fewest;
  report.units = fewest;
  report.replicates = options.bootstrap;
  if (options.bootstrap <= 0) {
    report.intervals_why = "no bootstrap replicates were asked for";
    return report;
  }
  if (fewest < kMinBootstrapUnits) {
    report.intervals_why = std::to_string(fewest) + " " + report.unit + " (a percentile bootstrap needs " +
                           std::to_string(kMinBootstrapUnits) + ")";
    return report;
  }
  report.construction = "percentile bootstrap";
  std::mt19937_64 generator(options.seed);
  // Per variant: replicate exponents, and per budget replicate N*.
  std::vector<std::vector<double>> exponents(report.variants.size());
  std::vector<std::vector<std::vector<double>>> n_opts(report.variants.size());
  for (size_t variant = 0; variant < report.variants.size(); ++variant) {
    n_opts[variant].resize(report.variants[variant].budgets.size());
  }
  for (int replicate = 0; replicate < options.bootstrap; ++replicate) {
    if (options.keep_going) RUNG_RETURN_IF_ERROR(options.keep_going());
    std::vector<double> weights(runs.runs.size(), 0.0);
    if (by_seed) {
      const std::map<int64_t, double> drawn = DrawSeeds(units.seeds, generator);
      for (size_t index = 0; index < runs.runs.size(); ++index) {
        auto it = drawn.find(*runs.runs[index].seed);
        if (it != drawn.end()) weights[index] = it->second;
      }
    } else {
      for (const BudgetGroup& group : groups) {
        std::map<std::string, std::vector<size_t>> by_variant;
        for (size_t index : group.runs) by_variant[runs.runs[index].variant].push_back(index);
        for (const auto& [name, members] : by_variant) {
          std::uniform_int_distribution<size_t> pick(0, members.size() - 1);
          for (size_t draw = 0; draw < members.size(); ++draw) weights[members[pick(generator)]] += 1;
        }
      }
    }
    bool usable = true;
    std::vector<IsoflopVariant> fits;
    for (const IsoflopVariant& variant : report.variants) {
      fits.push_back(Profile(variant.variant, runs.runs, groups, weights, options.huber_delta));
      usable = usable && (fits.back().a.has_value() || !variant.a.has_value());
    }
    if (!usable) continue;
    ++report.used;
    for (size_t variant = 0; variant < fits.size(); ++variant) {
      if (fits[variant].a) exponents[variant].push_back(*fits[variant].a);
      for (const IsoflopBudget& budget : fits[variant].budgets) {
        if (!budget.n_opt) continue;
        for (size_t index = 0; index < report.variants[variant].budgets.size(); ++index) {
          if (report.variants[variant].budgets[index].compute == budget.compute) {
            n_opts[variant][index].push_back(*budget.n_opt);
          }
        }
      }
    }
  }
  // Replicates that lose a budget's minimum (too few distinct sizes drawn, a profile no longer convex)
  // are left out; when they are many, the percentiles of the rest are of a selection: no interval.
  if (report.used < kMinUsableShare * options.bootstrap) {
    report.construction.clear();
    report.intervals_why = "only " + std::to_string(report.used) + " of " + std::to_string(options.bootstrap) +
                           " replicates kept every budget's minimum (resampled runs lose a budget's sizes): too few "
                           "for an interval of them all";
    return report;
  }
  const double tail = (1 - options.level) / 2;
  for (size_t variant = 0; variant < report.variants.size(); ++variant) {
    IsoflopVariant& out = report.variants[variant];
    if (out.a && exponents[variant].size() >= 2) {
      out.a_low = Quantile(exponents[variant], tail);
      out.a_high = Quantile(exponents[variant], 1 - tail);
    }
    for (size_t index = 0; index < out.budgets.size(); ++index) {
      // A budget whose minimum some replicates lose has no interval: its percentiles would be of the rest.
      if (out.budgets[index].n_opt && static_cast<int>(n_opts[variant][index].size()) == report.used &&
          report.used >= 2) {
        out.budgets[index].n_opt_low = Quantile(n_opts[variant][index], tail);
        out.budgets[index].n_opt_high = Quantile(n_opts[variant][index], 1 - tail);
      }
    }
  }
  return report;
}

LadderResults IsoflopFrontier(const LadderResults& ladder, double tolerance) {
  // Budgets over every run (all variants together), as the profiles group them.
  std::vector<LawRun> runs;
  for (const LadderRun& run : ladder.runs) runs.push_back({run.variant, run.compute / 6.0, 1.0, run.loss});
  const std::vector<BudgetGroup> groups = GroupBudgets(runs, tolerance);
  LadderResults frontier;
  frontier.source = ladder.source;
  for (const BudgetGroup& group : groups) {
    const std::string label = "C" + FormatCompute(group.compute);
    // variant -> size label -> (loss sum, runs)
    std::map<std::string, std::map<std::string, std::pair<double, int>>> means;
    for (size_t index : group.runs) {
      auto& mean = means[ladder.runs[index].variant][ladder.runs[index].label];
      mean.first += ladder.runs[index].loss;
      mean.second += 1;
    }
    for (const auto& [variant, sizes] : means) {
      std::string best;
      double best_mean = std::numeric_limits<double>::infinity();
      for (const auto& [size, mean] : sizes) {
        if (mean.first / mean.second < best_mean) {
          best_mean = mean.first / mean.second;
          best = size;
        }
      }
      for (size_t index : group.runs) {
        const LadderRun& run = ladder.runs[index];
        if (run.variant != variant || run.label != best) continue;
        LadderRun kept = run;
        kept.label = label;
        frontier.runs.push_back(kept);
      }
    }
  }
  return frontier;
}

}  // namespace rung::fit

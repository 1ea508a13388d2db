#include "sweeps/fit/chinchilla_law.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <utility>

namespace rung::fit {
namespace {

// A law's parameters as the fit sees them: ln A, ln B, ln E and the exponents.
enum Slot { kLogA = 0, kLogB = 1, kLogE = 2, kAlpha = 3, kBeta = 4 };
constexpr int kSlots = 5;
// A search whose objective moved by less than kPlateauChange of itself over its last kPlateauIterations
// iterations has converged (to a minimum at infinity in some parameter, E -> 0 above all).
constexpr int kPlateauIterations = 50;
constexpr double kPlateauChange = 1e-9;
using Params = std::array<double, kSlots>;

Params ToParams(const ChinchillaLaw& law) {
  return {std::log(law.a), std::log(law.b), std::log(law.e), law.alpha, law.beta};
}

ChinchillaLaw ToLaw(const Params& params) {
  return {std::exp(params[kLogE]), std::exp(params[kLogA]), std::exp(params[kLogB]), params[kAlpha], params[kBeta]};
}

// Where each variant's slots live in the parameter vector: the shared slots first, then each variant's own.
struct Layout {
  int variants = 1;
  std::array<bool, kSlots> shared = {false, false, false, false, false};

  int SharedCount() const { return static_cast<int>(std::count(shared.begin(), shared.end(), true)); }
  int OwnCount() const { return kSlots - SharedCount(); }
  int Size() const { return SharedCount() + variants * OwnCount(); }
  int Index(int variant, int slot) const {
    int shared_before = 0, own_before = 0;
    for (int other = 0; other < slot; ++other) (shared[other] ? shared_before : own_before) += 1;
    return shared[slot] ? shared_before : SharedCount() + variant * OwnCount() + own_before;
  }
  Params Of(const double* theta, int variant) const {
    Params params;
    for (int slot = 0; slot < kSlots; ++slot) params[slot] = theta[Index(variant, slot)];
    return params;
  }
  void Set(int variant, const Params& params, double* theta) const {
    for (int slot = 0; slot < kSlots; ++slot) theta[Index(variant, slot)] = params[slot];
  }
};

Layout LayoutFor(LawSharing sharing, int variants) {
  Layout layout;
  layout.variants = variants;
  // One variant: every slot "shared", so that the grid runs over all five and yields one start each.
  if (variants == 1) layout.shared = {true, true, true, true, true};
  if (variants > 1 && sharing == LawSharing::kExponents) layout.shared[kAlpha] = layout.shared[kBeta] = true;
  if (variants > 1 && sharing == LawSharing::kE) layout.shared[kLogE] = true;
  return layout;
}

// ln L_pred at a point, and (optionally) the softmax weights of its three terms.
double LogPredict(const Params& p, double log_n, double log_d, std::array<double, 3>* softmax) {
  const double u0 = p[kLogA] - p[kAlpha] * log_n;
  const double u1 = p[kLogB] - p[kBeta] * log_d;
  const double u2 = p[kLogE];
  const double top = std::max({u0, u1, u2});
  const double w0 = std::exp(u0 - top), w1 = std::exp(u1 - top), w2 = std::exp(u2 - top);
  const double sum = w0 + w1 + w2;
  if (softmax != nullptr) *softmax = {w0 / sum, w1 / sum, w2 / sum};
  return top + std::log(sum);
}

double Huber(double residual, double delta) {
  const double size = std::fabs(residual);
  return size <= delta ? 0.5 * residual * residual : delta * (size - 0.5 * delta);
}

double HuberSlope(double residual, double delta) { return std::clamp(residual, -delta, delta); }

// The objective and its gradient for Ceres' L-BFGS.
class LawObjectiveFunction : public ceres::FirstOrderFunction {
 public:
  LawObjectiveFunction(const std::vector<LawPoint>* points, Layout layout, double delta)
      : points_(points), layout_(layout), delta_(delta) {}

  bool Evaluate(const double* theta, double* cost, double* gradient) const override {
    *cost = 0;
    if (gradient != nullptr) std::fill(gradient, gradient + layout_.Size(), 0.0);
    std::array<double, 3> softmax;
    for (const LawPoint& point : *points_) {
      if (point.weight == 0) continue;
      const Params p = layout_.Of(theta, point.variant);
      const double residual = LogPredict(p, point.log_n, point.log_d, &softmax) - point.log_loss;
      if (!std::isfinite(residual)) return false;
      *cost += point.weight * Huber(residual, delta_);
      if (gradient != nullptr) {
        const double slope = point.weight * HuberSlope(residual, delta_);
        gradient[layout_.Index(point.variant, kLogA)] += slope * softmax[0];
        gradient[layout_.Index(point.variant, kAlpha)] -= slope * softmax[0] * point.log_n;
        gradient[layout_.Index(point.variant, kLogB)] += slope * softmax[1];
        gradient[layout_.Index(point.variant, kBeta)] -= slope * softmax[1] * point.log_d;
        gradient[layout_.Index(point.variant, kLogE)] += slope * softmax[2];
      }
    }
    return std::isfinite(*cost);
  }
  int NumParameters() const override { return layout_.Size(); }

 private:
  const std::vector<LawPoint>* points_;
  Layout layout_;
  double delta_;
};

struct Minimum {
  std::vector<double> theta;
  double objective = std::numeric_limits<double>::infinity();
  bool converged = false;
};

Minimum RunLbfgs(const std::vector<LawPoint>& points, const Layout& layout, std::vector<double> theta,
                 const LawFitOptions& options) {
  ceres::GradientProblem problem(new LawObjectiveFunction(&points, layout, options.huber_delta));
  ceres::GradientProblemSolver::Options solver;
  solver.line_search_direction_type = ceres::LBFGS;
  // Bisection, not Ceres' polynomial interpolation, which warns on stderr (through glog) when its
  // interpolant is constant, as it is at a flat minimum.
  solver.line_search_interpolation_type = ceres::BISECTION;
  solver.max_num_iterations = options.max_iterations;
  solver.function_tolerance = 1e-13;
  solver.gradient_tolerance = 1e-13;
  solver.parameter_tolerance = 1e-12;
  solver.logging_type = ceres::SILENT;
  solver.minimizer_progress_to_stdout = false;
  ceres::GradientProblemSolver::Summary summary;
  ceres::Solve(solver, problem, theta.data(), &summary);
  Minimum minimum;
  double cost = 0;
  std::vector<double> gradient(theta.size());
  LawObjectiveFunction check(&points, layout, options.huber_delta);
  if (!check.Evaluate(theta.data(), &cost, gradient.data())) return minimum;
  minimum.theta = std::move(theta);
  minimum.objective = cost;
  double largest = 0;
  for (double g : gradient) largest = std::max(largest, std::fabs(g));
  double weight = 0;
  for (const LawPoint& point : points) weight += point.weight;
  // A line search that cannot improve at a point whose gradient is at rounding level has converged too;
  // so has a search whose objective stopped falling (the last kPlateauIterations changed it by less than
  // kPlateauChange of itself): a minimum at a boundary the log-sum-exp form reaches only at infinity,
  // E -> 0 (ln E -> -infinity), which L-BFGS walks towards without end.
  bool plateau = false;
  if (summary.iterations.size() > static_cast<size_t>(kPlateauIterations)) {
    const double before = summary.iterations[summary.iterations.size() - 1 - kPlateauIterations].cost;
    plateau = std::fabs(before - summary.final_cost) <= kPlateauChange * std::fabs(summary.final_cost);
  }
  minimum.converged = summary.termination_type == ceres::CONVERGENCE ||
                      largest <= 1e-9 * std::max(1.0, weight) * options.huber_delta || plateau;
  return minimum;
}

// The objective of one variant's points at `params`.
double VariantObjective(const std::vector<LawPoint>& points, int variant, const Params& params, double delta) {
  double cost = 0;
  for (const LawPoint& point : points) {
    if (point.variant != variant || point.weight == 0) continue;
    cost += point.weight * Huber(LogPredict(params, point.log_n, point.log_d, nullptr) - point.log_loss, delta);
  }
  return cost;
}

const std::vector<double>& GridOf(const LawFitOptions& options, int slot) {
  switch (slot) {
    case kLogA: return options.a_grid;
    case kLogB: return options.b_grid;
    case kLogE: return options.e_grid;
    case kAlpha: return options.alpha_grid;
    default: return options.beta_grid;
  }
}

// Every combination of the grid values of `slots` (slots not listed stay as they are in `base`).
std::vector<Params> GridCombinations(const LawFitOptions& options, const std::vector<int>& slots, const Params& base) {
  std::vector<Params> combinations = {base};
  for (int slot : slots) {
    std::vector<Params> next;
    for (const Params& partial : combinations) {
      for (double value : GridOf(options, slot)) {
        Params params = partial;
        params[slot] = value;
        next.push_back(params);
      }
    }
    combinations = std::move(next);
  }
  return combinations;
}

// The grid's starting points, best objective first: one per combination of the shared slots, each
// variant's own slots at their best grid values given those.
std::vector<std::pair<double, std::vector<double>>> GridStarts(const std::vector<LawPoint>& points,
                                                               const Layout& layout, const LawFitOptions& options) {
  std::vector<int> shared_slots, own_slots;
  for (int slot = 0; slot < kSlots; ++slot) (layout.shared[slot] ? shared_slots : own_slots).push_back(slot);
  std::vector<std::pair<double, std::vector<double>>> starts;
  for (const Params& shared : GridCombinations(options, shared_slots, Params{})) {
    std::vector<double> theta(static_cast<size_t>(layout.Size()), 0.0);
    double total = 0;
    for (int variant = 0; variant < layout.variants; ++variant) {
      double best = std::numeric_limits<double>::infinity();
      Params best_params = shared;
      for (const Params& params : GridCombinations(options, own_slots, shared)) {
        const double cost = VariantObjective(points, variant, params, options.huber_delta);
        if (cost < best) {
          best = cost;
          best_params = params;
        }
      }
      total += best;
      layout.Set(variant, best_params, theta.data());
    }
    if (std::isfinite(total)) starts.emplace_back(total, std::move(theta));
  }
  std::stable_sort(starts.begin(), starts.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return starts;
}

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

std::string Describe(const ChinchillaLaw& law) {
  return "E " + Num(law.e) + ", A " + Num(law.a) + ", B " + Num(law.b) + ", alpha " + Num(law.alpha) + ", beta " +
         Num(law.beta);
}

// The fit of the best minimum; FAILED_PRECONDITION when it did not converge.
StatusOr<LawFit> Finish(const std::vector<LawPoint>& points, const std::vector<std::string>& variants,
                        const Layout& layout, const std::vector<Minimum>& minima, LawSharing sharing) {
  const Minimum* best = nullptr;
  int converged = 0;
  int runaway = 0;
  for (const Minimum& minimum : minima) {
    if (minimum.theta.empty()) continue;
    // A minimum whose A, B or E overflows (ln A past ~709, its exponent large too) is a term run off to
    // infinity: its law cannot be evaluated (A N^-alpha is inf * 0), so it is no answer.
    bool finite = true;
    for (int variant = 0; variant < layout.variants; ++variant) {
      const ChinchillaLaw law = ToLaw(layout.Of(minimum.theta.data(), variant));
      finite = finite && std::isfinite(law.a) && std::isfinite(law.b) && std::isfinite(law.e);
    }
    if (!finite) {
      ++runaway;
      continue;
    }
    converged += minimum.converged ? 1 : 0;
    if (best == nullptr || minimum.objective < best->objective) best = &minimum;
  }
  if (best == nullptr) {
    return Status::FailedPrecondition(
        "the L(N, D) fit failed from every one of its " + std::to_string(minima.size()) + " starting points (" +
        (runaway > 0 ? std::to_string(runaway) + " ran A, B or E off to infinity: the runs do not pin a term down"
                     : std::string("the objective was not finite")) +
        ")");
  }
  LawFit fit;
  fit.variants = variants;
  fit.sharing = sharing;
  fit.objective = best->objective;
  fit.starts = static_cast<int>(minima.size());
  fit.converged_starts = converged;
  for (int variant = 0; variant < layout.variants; ++variant) {
    fit.laws.push_back(ToLaw(layout.Of(best->theta.data(), variant)));
  }
  if (!best->converged) {
    std::string laws;
    for (size_t index = 0; index < fit.laws.size(); ++index) {
      laws += (index ? "; " : "") + variants[index] + ": " + Describe(fit.laws[index]);
    }
    return Status::FailedPrecondition("the L(N, D) fit did not converge: its best attempt (of " +
                                      std::to_string(minima.size()) + " starts, " + std::to_string(converged) +
                                      " converged elsewhere) stopped at Huber loss " + Num(best->objective) + " with " +
                                      laws);
  }
  fit.rmse.assign(variants.size(), 0.0);
  fit.points.assign(variants.size(), 0);
  std::vector<double> weights(variants.size(), 0.0);
  for (const LawPoint& point : points) {
    if (point.weight == 0) continue;
    const ChinchillaLaw& law = fit.laws[static_cast<size_t>(point.variant)];
    const double diff = law.Predict(std::exp(point.log_n), std::exp(point.log_d)) - std::exp(point.log_loss);
    fit.rmse[static_cast<size_t>(point.variant)] += point.weight * diff * diff;
    weights[static_cast<size_t>(point.variant)] += point.weight;
    fit.points[static_cast<size_t>(point.variant)] += 1;
  }
  for (size_t index = 0; index < variants.size(); ++index) {
    fit.rmse[index] = weights[index] > 0 ? std::sqrt(fit.rmse[index] / weights[index]) : 0.0;
  }
  return fit;
}

}  // namespace

double ChinchillaLaw::Predict(double n, double d) const { return e + a * std::pow(n, -alpha) + b * std::pow(d, -beta); }

double ChinchillaLaw::OptimalN(double compute) const {
  const double g = std::pow(alpha * a / (beta * b), 1.0 / (alpha + beta));
  return g * std::pow(compute / 6.0, beta / (alpha + beta));
}

const char* LawSharingName(LawSharing sharing) {
  switch (sharing) {
    case LawSharing::kExponents: return "exponents";
    case LawSharing::kE: return "E";
    default: return "none";
  }
}

StatusOr<LawSharing> ParseLawSharing(const std::string& name) {
  if (name.empty() || name == "none") return LawSharing::kNone;
  if (name == "exponents") return LawSharing::kExponents;
  if (name == "E" || name == "e") return LawSharing::kE;
  return Status::InvalidArgument("unknown sharing '" + name +
                                 "' (none: one fit per variant; exponents: one alpha and beta for all; E: one E)");
}

std::vector<LawPoint> PrepareLawPoints(const std::vector<LawRun>& runs, const std::vector<std::string>& variants) {
  std::vector<LawPoint> points;
  for (const LawRun& run : runs) {
    auto it = std::find(variants.begin(), variants.end(), run.variant);
    if (it == variants.end()) continue;
    points.push_back({static_cast<int>(it - variants.begin()), std::log(run.n), std::log(run.d), std::log(run.loss), 1.0});
  }
  return points;
}

Status CheckLawIdentifiable(const std::vector<LawRun>& runs, const std::vector<std::string>& variants,
                            LawSharing sharing) {
  const Layout layout = LayoutFor(sharing, static_cast<int>(variants.size()));
  const int needed = variants.size() == 1 ? kSlots : layout.OwnCount() + (layout.SharedCount() > 0 ? 1 : 0);
  for (const std::string& variant : variants) {
    std::set<std::pair<double, double>> points;
    std::set<double> ns, ds;
    for (const LawRun& run : runs) {
      if (run.variant != variant) continue;
      points.insert({run.n, run.d});
      ns.insert(run.n);
      ds.insert(run.d);
    }
    const std::string who = "variant '" + variant + "'";
    if (static_cast<int>(points.size()) < needed) {
      return Status::FailedPrecondition(who + " has " + std::to_string(points.size()) +
                                        " distinct (N, D) point(s); L(N, D) = E + A/N^alpha + B/D^beta with sharing " +
                                        LawSharingName(sharing) + " needs at least " + std::to_string(needed));
    }
    if (ns.size() < 2 || ds.size() < 2) {
      return Status::FailedPrecondition(who + " ran " + std::to_string(ns.size()) + " distinct N and " +
                                        std::to_string(ds.size()) +
                                        " distinct D; L(N, D) needs at least 2 of each");
    }
    // D a monotone function of N: the runs lie on one allocation rule (a ladder's tokens_per_param,
    // whatever parameters it counts), where A / N^alpha cannot be told from B / D^beta.
    std::map<double, std::set<double>> d_of_n;
    for (const auto& [n, d] : points) d_of_n[n].insert(d);
    bool function = true;
    std::vector<double> by_n;  // each N's D, by N
    for (const auto& [n, d] : d_of_n) {
      function = function && d.size() == 1;
      by_n.push_back(*d.begin());
    }
    const bool rises = std::is_sorted(by_n.begin(), by_n.end());
    if (function && (rises || std::is_sorted(by_n.rbegin(), by_n.rend()))) {
      return Status::FailedPrecondition(
          who + " ran on one allocation rule (its D " + (rises ? "rises" : "falls") +
          " with N, one D per N), so L(N, D) is not identified (A / N^alpha cannot be told from B / D^beta along "
          "one rule): train each size on several token budgets, e.g. an IsoFLOP grid (ladder.isoflop_budgets)");
    }
  }
  return Status::Ok();
}

double LawObjective(const std::vector<LawPoint>& points, const std::vector<ChinchillaLaw>& laws, double huber_delta) {
  double cost = 0;
  for (const LawPoint& point : points) {
    cost += point.weight * Huber(LogPredict(ToParams(laws[static_cast<size_t>(point.variant)]), point.log_n,
                                            point.log_d, nullptr) -
                                     point.log_loss,
                                 huber_delta);
  }
  return cost;
}

StatusOr<LawFit> FitChinchilla(const std::vector<LawRun>& runs, const std::vector<std::string>& variants,
                               const LawFitOptions& options) {
  RUNG_RETURN_IF_ERROR(CheckLawIdentifiable(runs, variants, options.sharing));
  const std::vector<LawPoint> all = PrepareLawPoints(runs, variants);
  const int count = static_cast<int>(variants.size());
  auto fit_group = [&](const std::vector<LawPoint>& points, const Layout& layout, int* grid_points,
                       std::vector<Minimum>* minima) {
    auto starts = GridStarts(points, layout, options);
    *grid_points += static_cast<int>(starts.size());
    const size_t runs_from =
        options.lbfgs_starts <= 0 ? starts.size() : std::min(starts.size(), static_cast<size_t>(options.lbfgs_starts));
    for (size_t index = 0; index < runs_from; ++index) {
      minima->push_back(RunLbfgs(points, layout, starts[index].second, options));
    }
  };
  if (options.sharing == LawSharing::kNone || count == 1) {
    // Independent problems, one per variant, assembled into one fit.
    LawFit fit;
    fit.variants = variants;
    fit.sharing = options.sharing;
    for (int variant = 0; variant < count; ++variant) {
      std::vector<LawPoint> points;
      for (LawPoint point : all) {
        if (point.variant != variant) continue;
        point.variant = 0;
        points.push_back(point);
      }
      const Layout layout = LayoutFor(LawSharing::kNone, 1);
      std::vector<Minimum> minima;
      fit_group(points, layout, &fit.grid_points, &minima);
      StatusOr<LawFit> one = Finish(points, {variants[static_cast<size_t>(variant)]}, layout, minima, options.sharing);
      if (!one.ok()) {
        return Status(one.status().code(), "variant '" + variants[static_cast<size_t>(variant)] + "': " +
                                               one.status().message());
      }
      fit.laws.push_back(one->laws[0]);
      fit.rmse.push_back(one->rmse[0]);
      fit.points.push_back(one->points[0]);
      fit.objective += one->objective;
      fit.starts += one->starts;
      fit.converged_starts += one->converged_starts;
    }
    return fit;
  }
  const Layout layout = LayoutFor(options.sharing, count);
  std::vector<Minimum> minima;
  int grid_points = 0;
  fit_group(all, layout, &grid_points, &minima);
  RUNG_ASSIGN_OR_RETURN(LawFit fit, Finish(all, variants, layout, minima, options.sharing));
  fit.grid_points = grid_points;
  return fit;
}

StatusOr<LawFit> RefitChinchilla(const std::vector<LawPoint>& points, const std::vector<std::string>& variants,
                                 const std::vector<std::vector<ChinchillaLaw>>& starts, const LawFitOptions& options) {
  const Layout layout = LayoutFor(options.sharing, static_cast<int>(variants.size()));
  auto refit = [&](const std::vector<LawPoint>& group, const Layout& group_layout,
                   const std::vector<std::vector<ChinchillaLaw>>& group_starts) {
    std::vector<Minimum> minima;
    for (const std::vector<ChinchillaLaw>& start : group_starts) {
      std::vector<double> theta(static_cast<size_t>(group_layout.Size()), 0.0);
      // Shared slots take the first variant's value (every variant has the same where it was shared).
      for (int variant = static_cast<int>(start.size()); variant-- > 0;) {
        group_layout.Set(variant, ToParams(start[static_cast<size_t>(variant)]), theta.data());
      }
      minima.push_back(RunLbfgs(group, group_layout, std::move(theta), options));
    }
    return minima;
  };
  if (options.sharing == LawSharing::kNone || variants.size() == 1) {
    LawFit fit;
    fit.variants = variants;
    fit.sharing = options.sharing;
    for (int variant = 0; variant < static_cast<int>(variants.size()); ++variant) {
      std::vector<LawPoint> group;
      for (LawPoint point : points) {
        if (point.variant != variant) continue;
        point.variant = 0;
        group.push_back(point);
      }
      std::vector<std::vector<ChinchillaLaw>> group_starts;
      for (const auto& start : starts) group_starts.push_back({start[static_cast<size_t>(variant)]});
      const Layout one_layout = LayoutFor(LawSharing::kNone, 1);
      RUNG_ASSIGN_OR_RETURN(LawFit one, Finish(group, {variants[static_cast<size_t>(variant)]}, one_layout,
                                               refit(group, one_layout, group_starts), options.sharing));
      fit.laws.push_back(one.laws[0]);
      fit.rmse.push_back(one.rmse[0]);
      fit.points.push_back(one.points[0]);
      fit.objective += one.objective;
      fit.starts += one.starts;
      fit.converged_starts += one.converged_starts;
    }
    return fit;
  }
  return Finish(points, variants, layout, refit(points, layout, starts), options.sharing);
}

}  // namespace rung::fit

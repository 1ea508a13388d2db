#include "sweeps/fit/power_law.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>

namespace rung::fit {
namespace {

// ln L_pred - ln L for one ladder point; lc = ln(C / c_ref). Parameters: {log_a, alpha}, {E}.
struct LogResidual {
  LogResidual(double lc, double log_loss) : lc(lc), log_loss(log_loss) {}
  template <typename T>
  bool operator()(const T* const a_alpha, const T* const e, T* residual) const {
    residual[0] = log(exp(a_alpha[0] - a_alpha[1] * lc) + e[0]) - log_loss;
    // A step that overflows is rejected quietly (Ceres would log a warning for a non-finite value).
    using std::isfinite;
    return isfinite(residual[0]);
  }
  double lc;
  double log_loss;
};

// L_pred - L in nats for one ladder point (PowerLawResiduals::kNats).
struct NatsResidual {
  NatsResidual(double lc, double loss) : lc(lc), loss(loss) {}
  template <typename T>
  bool operator()(const T* const a_alpha, const T* const e, T* residual) const {
    residual[0] = exp(a_alpha[0] - a_alpha[1] * lc) + e[0] - loss;
    using std::isfinite;
    return isfinite(residual[0]);
  }
  double lc;
  double loss;
};

struct Curve {
  std::vector<double> lc;  // ln(C / c_ref)
  std::vector<double> loss;
  double min_loss = 0;
};

Curve Prepare(const std::vector<CurvePoint>& points, double c_ref) {
  Curve curve;
  curve.min_loss = std::numeric_limits<double>::infinity();
  for (const CurvePoint& point : points) {
    curve.lc.push_back(std::log(point.x / c_ref));
    curve.loss.push_back(point.loss);
    curve.min_loss = std::min(curve.min_loss, point.loss);
  }
  return curve;
}

int DistinctX(const std::vector<CurvePoint>& points) {
  std::vector<double> xs;
  for (const CurvePoint& point : points) xs.push_back(point.x);
  std::sort(xs.begin(), xs.end());
  return static_cast<int>(std::unique(xs.begin(), xs.end()) - xs.begin());
}

// log_a that makes the curve pass through the points on average in log space, given alpha and E.
double ClosedFormLogA(const Curve& curve, double alpha, double e) {
  double sum = 0;
  for (size_t index = 0; index < curve.lc.size(); ++index) {
    sum += std::log(std::max(curve.loss[index] - e, 1e-300)) + alpha * curve.lc[index];
  }
  return sum / static_cast<double>(curve.lc.size());
}

// A warm start expressed at another c_ref: a' = a - alpha ln(c_ref' / c_ref).
double LogAAt(const PowerLaw& law, double c_ref) { return law.log_a - law.alpha * std::log(c_ref / law.c_ref); }

double Rmse(const PowerLaw& law, const std::vector<CurvePoint>& points) {
  double squares = 0;
  for (const CurvePoint& point : points) {
    double diff = law.Predict(point.x) - point.loss;
    squares += diff * diff;
  }
  return std::sqrt(squares / static_cast<double>(points.size()));
}

std::string Num(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

// Whether a fitted E sits at its upper bound, the smallest loss `e_upper`.
bool EAtUpperBound(const PowerLaw& law, bool e_fitted, double e_upper) {
  return e_fitted && law.e >= e_upper * (1 - 1e-4);
}

std::vector<std::string> BoundNotes(const PowerLaw& law, bool e_fitted, double e_upper,
                                    const PowerLawFitOptions& options) {
  std::vector<std::string> notes;
  if (e_fitted && law.e <= 1e-6 * e_upper) notes.push_back("E at its lower bound 0");
  if (EAtUpperBound(law, e_fitted, e_upper))
    notes.push_back("E at its upper bound (the smallest loss " + Num(e_upper) + ")");
  if (law.alpha <= options.alpha_min * (1 + 1e-6))
    notes.push_back("alpha at its lower bound " + Num(options.alpha_min));
  if (law.alpha >= options.alpha_max * (1 - 1e-6))
    notes.push_back("alpha at its upper bound " + Num(options.alpha_max));
  return notes;
}

ceres::Solver::Options SolverOptions(const PowerLawFitOptions& options) {
  ceres::Solver::Options solver;
  solver.linear_solver_type = ceres::DENSE_QR;
  solver.max_num_iterations = options.max_iterations;
  solver.function_tolerance = 1e-12;
  solver.gradient_tolerance = 1e-14;
  solver.parameter_tolerance = 1e-12;
  solver.logging_type = ceres::SILENT;
  solver.minimizer_progress_to_stdout = false;
  solver.num_threads = 1;
  return solver;
}

// The exclusive upper bound E < min L as a closed bound Ceres can hold.
double EUpper(double min_loss) { return min_loss * (1 - 1e-9); }

// One joint problem: curves share `e`; each has its own {log_a, alpha}. Returns the final cost, or
// NaN when Ceres gave no usable solution.
double SolveJoint(const std::vector<Curve>& curves, std::vector<std::array<double, 2>>* a_alpha, double* e,
                  bool e_fixed, double e_upper, const PowerLawFitOptions& options) {
  ceres::Problem::Options problem_options;
  problem_options.loss_function_ownership = ceres::DO_NOT_TAKE_OWNERSHIP;
  ceres::Problem problem(problem_options);
  std::optional<ceres::HuberLoss> huber;
  if (options.huber_delta) huber.emplace(*options.huber_delta);
  ceres::LossFunction* loss = huber ? &*huber : nullptr;
  problem.AddParameterBlock(e, 1);
  for (size_t index = 0; index < curves.size(); ++index) {
    double* block = (*a_alpha)[index].data();
    problem.AddParameterBlock(block, 2);
    for (size_t point = 0; point < curves[index].lc.size(); ++point) {
      ceres::CostFunction* cost =
          options.residuals == PowerLawResiduals::kNats
              ? static_cast<ceres::CostFunction*>(new ceres::AutoDiffCostFunction<NatsResidual, 1, 2, 1>(
                    new NatsResidual(curves[index].lc[point], curves[index].loss[point])))
              : new ceres::AutoDiffCostFunction<LogResidual, 1, 2, 1>(
                    new LogResidual(curves[index].lc[point], std::log(curves[index].loss[point])));
      problem.AddResidualBlock(cost, loss, block, e);
    }
    problem.SetParameterLowerBound(block, 1, options.alpha_min);
    problem.SetParameterUpperBound(block, 1, options.alpha_max);
  }
  if (e_fixed) {
    problem.SetParameterBlockConstant(e);
  } else {
    problem.SetParameterLowerBound(e, 0, 0.0);
    problem.SetParameterUpperBound(e, 0, e_upper);
  }
  ceres::Solver::Summary summary;
  ceres::Solve(SolverOptions(options), &problem, &summary);
  if (!summary.IsSolutionUsable() || !std::isfinite(summary.final_cost)) return std::nan("");
  for (const auto& block : *a_alpha) {
    if (!std::isfinite(block[0]) || !std::isfinite(block[1])) return std::nan("");
  }
  if (!std::isfinite(*e)) return std::nan("");
  return summary.final_cost;
}

}  // namespace

double PowerLaw::Predict(double compute) const { return std::exp(log_a) * std::pow(compute / c_ref, -alpha) + e; }

std::optional<double> PowerLaw::ComputeAt(double loss) const {
  if (!(loss > e)) return std::nullopt;
  // (loss - E) = exp(log_a) c^-alpha  =>  ln c = (log_a - ln(loss - E)) / alpha.
  double value = c_ref * std::exp((log_a - std::log(loss - e)) / alpha);
  if (!std::isfinite(value) || value <= 0) return std::nullopt;
  return value;
}

double PowerLaw::A() const { return std::exp(log_a) * std::pow(c_ref, alpha); }

const char* PowerLawResidualsName(PowerLawResiduals residuals) {
  return residuals == PowerLawResiduals::kNats ? "nats" : "ln";
}

StatusOr<PowerLawResiduals> ParsePowerLawResiduals(const std::string& name) {
  if (name.empty() || name == "ln") return PowerLawResiduals::kLogLoss;
  if (name == "nats") return PowerLawResiduals::kNats;
  return Status::InvalidArgument("unknown power-law residuals '" + name +
                                 "' (ln: ln L_pred - ln L, the default; nats: L_pred - L, least squares)");
}

const char* EModeName(EMode mode) {
  switch (mode) {
    case EMode::kFree:
      return "free";
    case EMode::kFixed:
      return "fixed";
    case EMode::kShared:
      return "shared";
  }
  return "?";
}

StatusOr<PowerLawFit> FitPowerLaw(const std::vector<CurvePoint>& points, std::optional<double> fixed_e, double c_ref,
                                  const PowerLawFitOptions& options) {
  const int needed = fixed_e ? 2 : 3;
  const int distinct = DistinctX(points);
  if (distinct < needed) {
    return Status::FailedPrecondition(std::string("a power-law fit with E ") + (fixed_e ? "fixed" : "free") +
                                      " needs " + std::to_string(needed) + " ladder points at distinct compute, got " +
                                      std::to_string(distinct));
  }
  Curve curve = Prepare(points, c_ref);
  const double e_upper = EUpper(curve.min_loss);
  if (fixed_e && !(*fixed_e >= 0 && *fixed_e < curve.min_loss)) {
    return Status::FailedPrecondition("fixed E " + Num(*fixed_e) + " is outside [0, " + Num(curve.min_loss) +
                                      "), the range below the curve's smallest loss");
  }

  struct Start {
    double log_a, alpha, e;
  };
  std::vector<Start> starts;
  std::vector<double> e_fractions = fixed_e ? std::vector<double>{-1} : options.e_start_fractions;
  for (double alpha : options.alpha_starts) {
    for (double fraction : e_fractions) {
      double e = fixed_e ? *fixed_e : std::min(fraction * curve.min_loss, e_upper);
      starts.push_back({ClosedFormLogA(curve, alpha, e), alpha, e});
    }
  }
  for (const PowerLaw& warm : options.warm_starts) {
    double alpha = std::clamp(warm.alpha, options.alpha_min, options.alpha_max);
    double e = fixed_e ? *fixed_e : std::clamp(warm.e, 0.0, e_upper);
    starts.push_back({LogAAt(warm, c_ref), alpha, e});
  }

  PowerLawFit best;
  best.mode = fixed_e ? EMode::kFixed : EMode::kFree;
  best.points = static_cast<int>(points.size());
  double best_cost = std::numeric_limits<double>::infinity();
  std::vector<Curve> curves = {curve};
  for (const Start& start : starts) {
    std::vector<std::array<double, 2>> a_alpha = {{start.log_a, start.alpha}};
    double e = start.e;
    double cost = SolveJoint(curves, &a_alpha, &e, fixed_e.has_value(), e_upper, options);
    ++best.starts;
    if (std::isnan(cost)) continue;
    ++best.usable_starts;
    if (cost < best_cost) {
      best_cost = cost;
      best.law = PowerLaw{a_alpha[0][0], a_alpha[0][1], e, c_ref};
    }
  }
  if (best.usable_starts == 0) {
    return Status::Internal("the power-law fit did not converge from any of " + std::to_string(best.starts) +
                            " starts");
  }
  best.robust_cost = best_cost;
  best.rmse = Rmse(best.law, points);
  best.notes = BoundNotes(best.law, !fixed_e, curve.min_loss, options);
  best.e_at_upper_bound = EAtUpperBound(best.law, !fixed_e, curve.min_loss);
  return best;
}

StatusOr<std::vector<PowerLawFit>> FitPowerLawSharedE(const std::vector<std::vector<CurvePoint>>& curve_points,
                                                      double c_ref, const PowerLawFitOptions& options) {
  if (curve_points.empty()) return Status::FailedPrecondition("a shared-E fit needs at least one curve");
  std::vector<Curve> curves;
  int total = 0;
  double min_loss = std::numeric_limits<double>::infinity();
  for (size_t index = 0; index < curve_points.size(); ++index) {
    int distinct = DistinctX(curve_points[index]);
    if (distinct < 2) {
      return Status::FailedPrecondition("a shared-E fit needs 2 ladder points at distinct compute per curve; curve " +
                                        std::to_string(index + 1) + " has " + std::to_string(distinct));
    }
    total += distinct;
    curves.push_back(Prepare(curve_points[index], c_ref));
    min_loss = std::min(min_loss, curves.back().min_loss);
  }
  const int parameters = 2 * static_cast<int>(curves.size()) + 1;
  if (total < parameters) {
    return Status::FailedPrecondition("a shared-E fit of " + std::to_string(curves.size()) + " curves has " +
                                      std::to_string(parameters) + " parameters but " + std::to_string(total) +
                                      " ladder points");
  }
  const double e_upper = EUpper(min_loss);

  struct Start {
    std::vector<std::array<double, 2>> a_alpha;
    double e = 0;
  };
  std::vector<Start> starts;
  for (double alpha : options.alpha_starts) {
    for (double fraction : options.e_start_fractions) {
      Start start;
      start.e = std::min(fraction * min_loss, e_upper);
      for (const Curve& curve : curves) start.a_alpha.push_back({ClosedFormLogA(curve, alpha, start.e), alpha});
      starts.push_back(std::move(start));
    }
  }
  if (options.warm_starts.size() == curves.size()) {
    Start start;
    start.e = std::clamp(options.warm_starts.front().e, 0.0, e_upper);
    for (const PowerLaw& warm : options.warm_starts) {
      start.a_alpha.push_back({LogAAt(warm, c_ref), std::clamp(warm.alpha, options.alpha_min, options.alpha_max)});
    }
    starts.push_back(std::move(start));
  }

  double best_cost = std::numeric_limits<double>::infinity();
  Start best;
  int usable = 0;
  for (Start& start : starts) {
    double cost = SolveJoint(curves, &start.a_alpha, &start.e, false, e_upper, options);
    if (std::isnan(cost)) continue;
    ++usable;
    if (cost < best_cost) {
      best_cost = cost;
      best = start;
    }
  }
  if (usable == 0) {
    return Status::Internal("the shared-E power-law fit did not converge from any of " + std::to_string(starts.size()) +
                            " starts");
  }
  std::vector<PowerLawFit> fits;
  for (size_t index = 0; index < curves.size(); ++index) {
    PowerLawFit fit;
    fit.mode = EMode::kShared;
    fit.law = PowerLaw{best.a_alpha[index][0], best.a_alpha[index][1], best.e, c_ref};
    fit.rmse = Rmse(fit.law, curve_points[index]);
    fit.robust_cost = best_cost;
    fit.points = static_cast<int>(curve_points[index].size());
    fit.starts = static_cast<int>(starts.size());
    fit.usable_starts = usable;
    fit.notes = BoundNotes(fit.law, true, min_loss, options);
    fit.e_at_upper_bound = EAtUpperBound(fit.law, true, min_loss);
    fits.push_back(std::move(fit));
  }
  return fits;
}

}  // namespace rung::fit

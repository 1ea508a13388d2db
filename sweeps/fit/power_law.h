// sweeps/fit/power_law.h
//
// The parametric estimator (docs/science.md section 6.2): fit L = A * C^(-alpha) + E to a ladder and
// invert the baseline's curve at a variant's measured loss.
//
// Parametrisation: C is scaled by a reference compute c_ref (the orchestrator uses the geometric
// mean of the ladder's compute), L = exp(log_a) * (C / c_ref)^(-alpha) + E, so that log_a is of order
// one at any scale. A in FLOP units is exp(log_a) * c_ref^alpha (PowerLaw::A()).
//
// Fitting: Ceres, residuals ln L_pred - ln L under a Huber loss (delta 1e-3; or least squares,
// PowerLawFitOptions::huber_delta), or residuals L_pred - L in nats (PowerLawResiduals::kNats: the
// LeRoPE paper's fit, which its Tables 5 and 6 follow from), bounds
// 0 <= E < min L (of the fitted points; of all curves for a shared E) and 0.01 <= alpha <= 2, from
// many starting points (a grid of alpha and E / min L, log_a solved in closed form for each); the
// fit with the smallest robust cost wins. RMSE is reported in nats, on L.
//
//   E free:    FitPowerLaw(points, std::nullopt, ...)     3 parameters, needs 3 ladder points
//   E fixed:   FitPowerLaw(points, e, ...)                2 parameters, needs 2
//   E shared:  FitPowerLawSharedE(curves, ...)            one E, (A, alpha) per curve, jointly;
//                                                          each curve needs 2, all of them 2V + 1
//
// Example:
//   StatusOr<PowerLawFit> fit = FitPowerLaw(MeanCurve(rope), std::nullopt, 1e14, PowerLawFitOptions());
//   if (!fit.ok()) ...;                                    // FAILED_PRECONDITION: too few points
//   std::optional<double> c_base = fit->law.ComputeAt(variant_loss);   // empty at or below E
//
// Thread safety: functions of their arguments only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/ladder_results.h"

namespace rung::fit {

struct PowerLaw {
  double log_a = 0;
  double alpha = 0;
  double e = 0;      // nats
  double c_ref = 1;  // FLOPs

  // L at compute C (FLOPs).
  double Predict(double compute) const;
  // The compute at which the curve reaches `loss`; empty when loss <= E (never reached).
  std::optional<double> ComputeAt(double loss) const;
  // A in L = A * C^(-alpha) + E, with C in FLOPs.
  double A() const;
};

enum class EMode { kFree, kFixed, kShared };
const char* EModeName(EMode mode);  // "free", "fixed", "shared"

// What a fit's residuals measure: ln L_pred - ln L (the default; Hoffmann et al.'s space) or
// L_pred - L in nats.
enum class PowerLawResiduals { kLogLoss, kNats };
const char* PowerLawResidualsName(PowerLawResiduals residuals);  // "ln", "nats"
// "" or "ln", "nats"; INVALID_ARGUMENT naming both otherwise.
StatusOr<PowerLawResiduals> ParsePowerLawResiduals(const std::string& name);

struct PowerLawFitOptions {
  PowerLawResiduals residuals = PowerLawResiduals::kLogLoss;
  // The Huber loss on the residuals; empty: plain least squares.
  std::optional<double> huber_delta = 1e-3;
  double alpha_min = 0.01;
  double alpha_max = 2.0;
  // Starting points: every alpha with every E = fraction * min L (E free or shared).
  std::vector<double> alpha_starts = {0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5};
  std::vector<double> e_start_fractions = {0.0, 0.3, 0.6, 0.8, 0.9, 0.97};
  // Extra starting points: each one for FitPowerLaw; one per curve (one joint start) for the shared fit.
  std::vector<PowerLaw> warm_starts;
  int max_iterations = 200;
};

struct PowerLawFit {
  PowerLaw law;
  EMode mode = EMode::kFree;
  double rmse = 0;         // sqrt(mean (L_pred - L)^2) over the fitted points, nats
  double robust_cost = 0;  // the minimised cost, Huber or least squares (of all curves for a shared fit)
  int points = 0;
  int starts = 0;                  // starting points tried
  int usable_starts = 0;           // of which Ceres returned a usable solution
  std::vector<std::string> notes;  // parameters at a bound ("E at its lower bound 0", ...)
  bool e_at_upper_bound = false;   // E fitted and pinned at the smallest loss (one of the notes)
};

// One curve, E free (fixed_e empty) or fixed. FAILED_PRECONDITION with too few points or fixed_e
// outside [0, min L); INTERNAL when no start converged. `points` x is compute in FLOPs.
StatusOr<PowerLawFit> FitPowerLaw(const std::vector<CurvePoint>& points, std::optional<double> fixed_e, double c_ref,
                                  const PowerLawFitOptions& options);

// One E shared by all curves, (log_a, alpha) per curve; one fit per curve, in order, each with the
// shared E and its own RMSE (robust_cost is the joint one).
StatusOr<std::vector<PowerLawFit>> FitPowerLawSharedE(const std::vector<std::vector<CurvePoint>>& curves, double c_ref,
                                                      const PowerLawFitOptions& options);

}  // namespace rung::fit

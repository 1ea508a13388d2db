// sweeps/fit/chinchilla_law.h
//
// Chinchilla's approach 3 (Hoffmann et al. 2022, section 3.3 and appendix D.2; docs/science.md
// section 6.7): the loss of a model of N parameters trained on D tokens,
//
//   L(N, D) = E + A / N^alpha + B / D^beta,
//
// fitted per variant as Hoffmann et al. and the replications fit it (Besiroglu et al. 2024): in the
// log-sum-exp form ln L = LSE(a - alpha ln N, b - beta ln D, e) with A = e^a, B = e^b, E = e^e, the
// sum over runs of the Huber loss (delta 1e-3) of the residual LSE(...) - ln L minimised by L-BFGS
// (Ceres' GradientProblemSolver) from a grid of starting points: alpha, beta in {0, 0.5, ..., 2},
// e in {-1, -0.5, ..., 1.5}, a, b in {0, 5, ..., 25} (Hoffmann's grid). Every grid point's objective is
// evaluated and L-BFGS runs from the best LawFitOptions::lbfgs_starts of them (0: from every one, as
// Hoffmann et al. did); the smallest minimum wins.
//
// Sharing across variants (LawSharing): none (one fit per variant); exponents (one alpha and one beta
// for all variants, E, A, B each their own); E (one E, the rest each their own). A shared fit
// minimises the sum of the variants' objectives jointly; its grid runs over the shared parameters,
// each variant's own parameters taking their best grid values given them.
//
// Needs, per variant, at least as many distinct (N, D) points as its own parameters plus one where
// it shares any, at least 2 distinct N and 2 distinct D, and D not a monotone function of N (runs on
// one allocation rule, as a ladder's tokens_per_param makes them, cannot tell A / N^alpha from
// B / D^beta): FAILED_PRECONDITION saying which.
// A fit whose best start does not converge is FAILED_PRECONDITION with that start's objective and
// parameters: never a silent NaN. A minimum whose A, B or E overflows (a term run off to infinity, its
// exponent with it) cannot be evaluated and is passed over; a bootstrap replicate with only such
// minima is left out and counted.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(LawFit fit, FitChinchilla(runs.runs, runs.Variants(), LawFitOptions()));
//   double loss = fit.laws[0].Predict(1e8, 2e9);
//
// Thread safety: functions of their arguments.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/law_runs.h"

namespace rung::fit {

struct ChinchillaLaw {
  double e = 0;      // E, the loss's unit
  double a = 0;      // A
  double b = 0;      // B
  double alpha = 0;  // N's exponent
  double beta = 0;   // D's exponent

  double Predict(double n, double d) const;
  // The compute-optimal allocation of C = 6 N D FLOPs (Hoffmann et al. eq. 4), for alpha, beta > 0:
  // N_opt(C) = G (C / 6)^(beta / (alpha + beta)), G = (alpha A / (beta B))^(1 / (alpha + beta)).
  double OptimalN(double compute) const;
  double OptimalD(double compute) const { return compute / (6.0 * OptimalN(compute)); }
  double OptimalLoss(double compute) const { return Predict(OptimalN(compute), OptimalD(compute)); }
  bool Decreasing() const { return alpha > 0 && beta > 0; }
};

enum class LawSharing { kNone, kExponents, kE };
const char* LawSharingName(LawSharing sharing);  // "none", "exponents", "E"
// "none", "exponents", "e" or "E"; INVALID_ARGUMENT naming the choices otherwise.
StatusOr<LawSharing> ParseLawSharing(const std::string& name);

struct LawFitOptions {
  LawSharing sharing = LawSharing::kNone;
  double huber_delta = 1e-3;
  // The starting grid: ln-space a, b, e and the exponents.
  std::vector<double> a_grid = {0, 5, 10, 15, 20, 25};
  std::vector<double> b_grid = {0, 5, 10, 15, 20, 25};
  std::vector<double> e_grid = {-1, -0.5, 0, 0.5, 1, 1.5};
  std::vector<double> alpha_grid = {0, 0.5, 1, 1.5, 2};
  std::vector<double> beta_grid = {0, 0.5, 1, 1.5, 2};
  int lbfgs_starts = 64;  // L-BFGS from this many of the best grid points; 0: every grid point
  int max_iterations = 2000;
};

// One run as the fit sees it (prepared once, reused by every bootstrap replicate).
struct LawPoint {
  int variant = 0;  // index into the fit's variants
  double log_n = 0;
  double log_d = 0;
  double log_loss = 0;
  double weight = 1;  // multiplicity (a bootstrap replicate's count; 0 leaves the point out)
};

struct LawFit {
  std::vector<std::string> variants;
  std::vector<ChinchillaLaw> laws;  // one per variant, in order
  std::vector<double> rmse;         // per variant: sqrt(mean (L_pred - L)^2) over its points, the loss's unit
  std::vector<int> points;          // per variant: runs fitted
  double objective = 0;             // the minimised sum of Huber losses
  int grid_points = 0;              // starting points evaluated
  int starts = 0;                   // L-BFGS runs
  int converged_starts = 0;         // of which converged
  LawSharing sharing = LawSharing::kNone;
};

// The fit's data: one LawPoint per run of `variants` (runs of other variants are left out).
std::vector<LawPoint> PrepareLawPoints(const std::vector<LawRun>& runs, const std::vector<std::string>& variants);

// FAILED_PRECONDITION when `runs` cannot identify the form (see the header comment); `sharing`
// decides how many parameters each variant has of its own.
Status CheckLawIdentifiable(const std::vector<LawRun>& runs, const std::vector<std::string>& variants,
                            LawSharing sharing);

// The fit from the grid (see above).
StatusOr<LawFit> FitChinchilla(const std::vector<LawRun>& runs, const std::vector<std::string>& variants,
                               const LawFitOptions& options);

// A refit of prepared points from given starts only (no grid): what bootstrap replicates use, warm
// started from the full fit. FAILED_PRECONDITION when no start converges.
StatusOr<LawFit> RefitChinchilla(const std::vector<LawPoint>& points, const std::vector<std::string>& variants,
                                 const std::vector<std::vector<ChinchillaLaw>>& starts, const LawFitOptions& options);

// The objective of `laws` on `points` (the sum of Huber losses of ln L residuals).
double LawObjective(const std::vector<LawPoint>& points, const std::vector<ChinchillaLaw>& laws, double huber_delta);

}  // namespace rung::fit

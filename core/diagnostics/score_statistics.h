// core/diagnostics/score_statistics.h
//
// Statistics of attention score rows and weights (docs/science.md section 7), torch-free so that they
// can be tested exactly and reused on rows exported from any model.
//
//   Effective attention length  E_r(a) = (sum_i a_i^r)^(1/(1-r)), r > 1; E_2 = 1 / sum a_i^2.
//   Gap counting on an unscaled score row z[0..n): gaps g_j = max z - z_j, N(t) = #{g_j <= t},
//     Lambda = max over positive gaps u of ln N(u) / u, contact gap Delta = the largest u attaining
//     (1 - 1e-6) Lambda, alpha = ln N(Delta) / ln n. A row with N(0) >= 2 is a tie (excluded).
//     Identity: Lambda * Delta = alpha * ln n (up to the contact tolerance).
//   The exponents over a grid of n (xi_Lambda, xi_alpha, xi_Delta): contact_aggregation.h.
//   Softmax regime at beta = c * Lambda: normalised entropy H / ln n, max weight, top-two gap.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace rung {

// REQUIRES: weights non-negative, summing to 1; order > 1.
double EffectiveLength(const std::vector<double>& weights, double order = 2.0);

struct GapCount {
  bool tie = false;     // N(0) >= 2: Lambda infinite, the row is excluded
  double lambda = 0.0;  // upper-tail accumulation scale
  double delta = 0.0;   // contact gap
  double alpha = 0.0;   // ln N(Delta) / ln n
  int64_t n = 0;
};

// REQUIRES: row.size() >= 2.
GapCount CountGaps(const std::vector<double>& row, double contact_tolerance = 1e-6);

// Ordinary least squares y = slope x + intercept; returns {slope, intercept}.
std::pair<double, double> LeastSquaresLine(const std::vector<double>& x, const std::vector<double>& y);

// The `fraction` quantile of `values` with linear interpolation between order statistics; NaN when empty.
double Quantile(std::vector<double> values, double fraction);

struct SoftmaxRegime {
  double normalised_entropy = 0.0;  // H / ln n
  double max_weight = 0.0;          // p*
  double top_two_gap = 0.0;         // p(1) - p(2)
};

// softmax(beta z) with beta = c * Lambda of the row.
SoftmaxRegime SoftmaxRegimeAt(const std::vector<double>& row, double beta);

}  // namespace rung

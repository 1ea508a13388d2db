#include "core/diagnostics/score_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace rung {

double EffectiveLength(const std::vector<double>& weights, double order) {
  double sum = 0.0;
  for (double weight : weights) sum += std::pow(weight, order);
  return std::pow(sum, 1.0 / (1.0 - order));
}

GapCount CountGaps(const std::vector<double>& row, double contact_tolerance) {
  GapCount result;
  result.n = static_cast<int64_t>(row.size());
  const double top = *std::max_element(row.begin(), row.end());
  std::vector<double> gaps(row.size());
  for (size_t j = 0; j < row.size(); ++j) gaps[j] = top - row[j];
  std::sort(gaps.begin(), gaps.end());
  if (gaps.size() >= 2 && gaps[1] <= 0.0) {
    result.tie = true;
    result.lambda = std::numeric_limits<double>::infinity();
    return result;
  }
  // N(u) at each distinct positive gap u is the index past its last occurrence.
  std::vector<std::pair<double, double>> candidates;  // (u, ln N(u) / u)
  for (size_t index = 1; index < gaps.size(); ++index) {
    if (index + 1 < gaps.size() && gaps[index + 1] == gaps[index]) continue;
    const double u = gaps[index];
    candidates.emplace_back(u, std::log(static_cast<double>(index + 1)) / u);
  }
  for (const auto& [u, value] : candidates) result.lambda = std::max(result.lambda, value);
  for (const auto& [u, value] : candidates) {
    if (value >= (1.0 - contact_tolerance) * result.lambda) result.delta = std::max(result.delta, u);
  }
  const double count_at_delta = static_cast<double>(
      std::upper_bound(gaps.begin(), gaps.end(), result.delta) - gaps.begin());
  result.alpha = std::log(count_at_delta) / std::log(static_cast<double>(result.n));
  return result;
}

std::pair<double, double> LeastSquaresLine(const std::vector<double>& x, const std::vector<double>& y) {
  const double mean_x = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
  const double mean_y = std::accumulate(y.begin(), y.end(), 0.0) / static_cast<double>(y.size());
  double sxx = 0.0, sxy = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mean_x) * (x[i] - mean_x);
    sxy += (x[i] - mean_x) * (y[i] - mean_y);
  }
  const double slope = sxx > 0 ? sxy / sxx : 0.0;
  return {slope, mean_y - slope * mean_x};
}

double Quantile(std::vector<double> values, double fraction) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const double position = fraction * static_cast<double>(values.size() - 1);
  const size_t low = static_cast<size_t>(std::floor(position));
  const size_t high = std::min(values.size() - 1, low + 1);
  return values[low] + (position - static_cast<double>(low)) * (values[high] - values[low]);
}

SoftmaxRegime SoftmaxRegimeAt(const std::vector<double>& row, double beta) {
  SoftmaxRegime regime;
  const double top = *std::max_element(row.begin(), row.end());
  std::vector<double> weights(row.size());
  double sum = 0.0;
  for (size_t j = 0; j < row.size(); ++j) sum += weights[j] = std::exp(beta * (row[j] - top));
  double entropy = 0.0;
  for (double& weight : weights) {
    weight /= sum;
    if (weight > 0) entropy -= weight * std::log(weight);
  }
  std::vector<double> sorted = weights;
  std::partial_sort(sorted.begin(), sorted.begin() + std::min<size_t>(2, sorted.size()), sorted.end(),
                    std::greater<double>());
  regime.normalised_entropy = entropy / std::log(static_cast<double>(row.size()));
  regime.max_weight = sorted[0];
  regime.top_two_gap = sorted.size() > 1 ? sorted[0] - sorted[1] : sorted[0];
  return regime;
}

}  // namespace rung

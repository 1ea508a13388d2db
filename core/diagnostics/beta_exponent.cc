#include "core/diagnostics/beta_exponent.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/diagnostics/score_statistics.h"

namespace rung {
namespace {

BetaExponentFit FitAt(const std::vector<double>& beta, std::vector<int64_t> lengths) {
  BetaExponentFit fit;
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
  std::vector<double> x, y;
  for (int64_t n : lengths) {
    const double value = beta[static_cast<size_t>(n - 1)];
    if (!(value > 0.0) || !std::isfinite(value)) {
      ++fit.skipped;
      continue;
    }
    fit.lengths.push_back(n);
    x.push_back(std::log(std::log(static_cast<double>(n))));
    y.push_back(std::log(value));
  }
  if (x.size() < 2) return fit;
  fit.fitted = true;
  std::tie(fit.xi, fit.log_a1) = LeastSquaresLine(x, y);
  if (x.size() >= 3) {
    double mean_x = 0.0, sxx = 0.0, residuals = 0.0;
    for (double value : x) mean_x += value / static_cast<double>(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      sxx += (x[i] - mean_x) * (x[i] - mean_x);
      const double residual = y[i] - (fit.log_a1 + fit.xi * x[i]);
      residuals += residual * residual;
    }
    if (sxx > 0.0) fit.standard_error = std::sqrt(residuals / static_cast<double>(x.size() - 2) / sxx);
  }
  return fit;
}

}  // namespace

BetaExponentFit FitBetaExponentOnGrid(const std::vector<double>& beta, const std::vector<int64_t>& grid) {
  std::vector<int64_t> lengths;
  for (int64_t n : grid) {
    if (n >= kBetaExponentMinLength && n <= static_cast<int64_t>(beta.size())) lengths.push_back(n);
  }
  return FitAt(beta, lengths);
}

BetaExponentFit FitBetaExponentFromTrim(const std::vector<double>& beta, int64_t trim) {
  std::vector<int64_t> lengths;
  for (int64_t n = std::max<int64_t>(trim, 2); n <= static_cast<int64_t>(beta.size()); ++n) lengths.push_back(n);
  return FitAt(beta, lengths);
}

}  // namespace rung

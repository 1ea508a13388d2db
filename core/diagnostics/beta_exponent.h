// core/diagnostics/beta_exponent.h
//
// The training-time reading xi_beta of paper 004, appendix B.1 (docs/science.md section 7), torch-free.
// From a learned inverse-temperature table beta_n (the `learned` form; beta[n - 1] is beta_n), fit the
// bias-free model beta_n = a1 (log n)^xi_beta, i.e. ordinary least squares of log beta_n on log log n:
//   - on the grid: the lengths of `grid` that are >= 64 and within the table (the paper's body value
//     uses {64, 128, 256, 512, 768, 1024});
//   - from a trim: every n >= max(trim, 2) within the table (the paper's table 4 varies the trim 10..200).
// Lengths where beta_n is not positive and finite cannot enter a log-log fit; they are skipped and
// counted. The fit's uncertainty is the ordinary-least-squares standard error of the slope (none with
// fewer than three points), as paper 004 reports it for xi_beta (appendix B.2, "Bootstrap intervals").
#pragma once

#include <cstdint>
#include <vector>

namespace rung {

struct BetaExponentFit {
  bool fitted = false;            // at least two usable lengths
  double xi = 0.0;
  double log_a1 = 0.0;            // intercept
  double standard_error = 0.0;   // of the slope; 0 below three points
  std::vector<int64_t> lengths;   // the lengths used
  int64_t skipped = 0;            // lengths left out for a beta_n that is not positive and finite
};

inline constexpr int64_t kBetaExponentMinLength = 64;

BetaExponentFit FitBetaExponentOnGrid(const std::vector<double>& beta, const std::vector<int64_t>& grid);

// REQUIRES: trim >= 1.
BetaExponentFit FitBetaExponentFromTrim(const std::vector<double>& beta, int64_t trim);

}  // namespace rung

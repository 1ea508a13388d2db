// sweeps/fit/student_t.h
//
// The small statistics behind the intervals of the compute-multiplier report: Student's t
// distribution (its cdf, quantiles and two-sided p-values), the regularized incomplete beta function
// it rests on, the Holm-Bonferroni adjustment of a family of p-values.
//
// The results agree with SciPy's (scipy.special.betainc, scipy.stats.t.cdf and the quantiles that
// invert it) to twelve significant digits or better, in both tails: tail probabilities are computed
// from the incomplete beta function directly, never as one minus a probability near one, so
// P(T < -40) with 3 degrees of freedom is as accurate as P(T < 0.5). tests/sweeps/fit/student_t_test.cc
// holds that agreement against a table SciPy generated (tests/sweeps/fit/student_t_reference.py).
// (scipy.stats.t.ppf itself, cdflib's stdtrit up to at least SciPy 1.10, stops at about 1e-9.)
//
// Degrees of freedom are real: df = 2.5 is as valid as df = 3. df = +infinity is the standard normal
// distribution.
//
// Errors: no exceptions and no aborts. Every function returns NaN for an argument outside its domain
// (NaN, df <= 0, a probability outside (0, 1), ...); each function's comment says which.
//
// Example:
//   // The 95% t quantile on 4 degrees of freedom, and the p-value of a mean over 5 seeds being 0.
//   double t = -StudentTQuantile(0.025, 4.0);                   // 2.7764
//   double p = StudentTTwoSidedPValue(mean / (sd / std::sqrt(5.0)), 4.0);
//   // Three comparisons, adjusted together.
//   std::vector<double> adjusted = HolmAdjust({0.01, 0.04, 0.03});   // {0.03, 0.06, 0.06}
//
// Thread safety: every function is a function of its arguments only (no state, no locale).
#pragma once

#include <vector>

namespace rung::fit {

// I_x(a, b), the regularized incomplete beta function: the cdf at x of the Beta(a, b) distribution,
// integral_0^x s^(a-1) (1-s)^(b-1) ds / B(a, b).
//
// Requires a > 0, b > 0 (both finite) and 0 <= x <= 1; otherwise returns NaN. I_0 = 0, I_1 = 1.
// Accuracy, relative to the exact I at the given doubles, for values above ~1e-300 (below, the
// result underflows towards 0): about 1e-13; up to 3e-13 far in a tail (values below ~1e-30, where
// the rounding of the exponent a ln x + b ln(1 - x) shows); parameters far apart with the smaller
// below ~0.01 (a = 1e4, b = 1e-4) lose digits near the mean, to ~1e-10. Evaluated by DiDonato and
// Morris' continued fraction (modified Lentz's method) on the side of the mean a / (a + b) where it
// converges fast: below it I_x(a, b) directly, above it 1 - I_{1-x}(b, a) (the symmetry switch).
double RegularizedIncompleteBeta(double a, double b, double x);

// P(T <= t) for T with Student's t distribution on df degrees of freedom.
//
// Requires df > 0 (real; +infinity gives the standard normal) and t not NaN; otherwise returns NaN.
// t = -infinity gives 0, t = +infinity 1. Accuracy: about 1e-13 relative in the lower tail (t < 0)
// and a few 1e-16 absolute elsewhere; for the upper tail's small probabilities use
// StudentTCdf(-t, df), which is P(T >= t) computed directly.
double StudentTCdf(double t, double df);

// The p-quantile of Student's t distribution on df degrees of freedom: the t with StudentTCdf(t, df)
// = p.
//
// Requires 0 < p < 1 and df > 0 (real; +infinity gives the standard normal); otherwise returns NaN
// (p = 0 and p = 1 too: their quantiles are infinite). Symmetric: StudentTQuantile(1 - p, df) is
// -StudentTQuantile(p, df) whenever 1 - p is exact. Returns -infinity or +infinity where the
// quantile is beyond the largest double (df = 1/2 at p = 1e-300; df = 1e-3 already at p = 0.2).
// Accuracy: about 1e-13 relative to the exact quantile of the given double p for df >= 0.01 (the
// smaller tail min(p, 1 - p) is what is solved for, so p = 1e-300 is as accurate as p = 0.3); below
// df = 0.01 digits are lost near p = 1/2 (1e-11 at df = 1e-4). Closed forms for df = 1 (Cauchy,
// -1 / tan(pi p) in the lower tail) and df = 2; otherwise Newton steps on the cdf in ln t, from a
// Cornish-Fisher or a tail-power start, safeguarded by bisection.
double StudentTQuantile(double p, double df);

// The two-sided p-value of a t statistic: P(|T| >= |t|) = 2 * min(cdf, 1 - cdf), computed from the
// smaller tail directly (accurate to about 1e-13 relative when it is small).
//
// Requires df > 0 (real; +infinity gives the standard normal) and t not NaN; otherwise returns NaN.
// t = 0 gives 1; t = +-infinity gives 0.
double StudentTTwoSidedPValue(double t, double df);

// Holm-Bonferroni step-down adjusted p-values, in the input's order. With the m p-values sorted
// ascending, p_(1) <= ... <= p_(m), adjusted_(i) = max over j <= i of min(1, (m - j + 1) * p_(j)):
// the same values as statsmodels' multipletests(p, method="holm")[1] (and R's
// p.adjust(p, "holm")). Rejecting every hypothesis with adjusted <= alpha controls the
// family-wise error rate at alpha.
//
// NaN entries stay NaN and are not counted in m (a missing comparison is not a test). An entry
// outside [0, 1] (infinities included) makes every output NaN: the family is not a family of
// p-values. An empty input gives an empty output.
std::vector<double> HolmAdjust(const std::vector<double>& p_values);

}  // namespace rung::fit

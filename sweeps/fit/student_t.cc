#include "sweeps/fit/student_t.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace rung::fit {
namespace {

constexpr double kStudentTNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kStudentTInf = std::numeric_limits<double>::infinity();
constexpr double kStudentTEpsilon = std::numeric_limits<double>::epsilon();
constexpr double kStudentTPi = 3.14159265358979323846264338327950288;
constexpr double kStudentTLogTwoPi = 1.83787706640934548356065947281123527;
constexpr double kStudentTSqrtHalf = 0.707106781186547524400844362104849039;

// log(1 + u) - u, without the cancellation of the two for small |u|. Through s = u / (2 + u),
// log(1 + u) = 2 atanh(s) and 2 s - u = -s u, so log(1 + u) - u = -s u + 2 (s^3/3 + s^5/5 + ...);
// |s| <= 1/3 on |u| <= 1/2, where 16 terms reach double precision.
double BetaLog1pMinusX(double u) {
  if (std::fabs(u) > 0.5) return std::log1p(u) - u;
  double s = u / (2 + u);
  double s2 = s * s;
  double term = s * s2;
  double sum = 0;
  for (int k = 3; k < 40; k += 2) {
    double next = term / k;
    sum += next;
    if (std::fabs(next) <= std::fabs(sum) * kStudentTEpsilon * 0.25) break;
    term *= s2;
  }
  return -s * u + 2 * sum;
}

// Binet's function: mu(z) = ln Gamma(z) - ((z - 1/2) ln z - z + ln(2 pi) / 2), so that
// Gamma(z) = sqrt(2 pi) z^(z - 1/2) e^(-z) e^mu(z). The Stirling series from z = 10 on (cut after
// z^-13: the rest is below 3e-17 there), std::lgamma below (mu is of order one there, so its
// absolute error stays a few ulp).
double BetaStirlingCorrection(double z) {
  if (z >= 10) {
    double r = 1 / z;
    double r2 = r * r;
    // 1/(12z) - 1/(360z^3) + 1/(1260z^5) - 1/(1680z^7) + 1/(1188z^9) - 691/(360360z^11) + 1/(156z^13)
    double series = 1.0 / 156;
    series = series * r2 - 691.0 / 360360;
    series = series * r2 + 1.0 / 1188;
    series = series * r2 - 1.0 / 1680;
    series = series * r2 + 1.0 / 1260;
    series = series * r2 - 1.0 / 360;
    series = series * r2 + 1.0 / 12;
    return series * r;
  }
  return std::lgamma(z) - ((z - 0.5) * std::log(z) - z + 0.5 * kStudentTLogTwoPi);
}

// ln(x^a y^b / B(a, b)), y = 1 - x given separately, lambda = a y - b x. With c = a + b, Gamma
// through Binet's function gives
//   x^a y^b / B(a, b) = sqrt(a b / (2 pi c)) (x c / a)^a (y c / b)^b e^(mu(c) - mu(a) - mu(b)),
// where x c / a = 1 - lambda / a and y c / b = 1 + lambda / b. Near the mean (|lambda| small
// against a, or b) a factor is taken as a ln(1 + u) = a log1pmx(u) + a u, u = -lambda / a: the
// first-order terms -lambda and +lambda of the two factors then cancel exactly, and no large terms
// cancel even for a, b ~ 1e6 or more, where ln Gamma(a) + ... - ln B(a, b) would lose ten digits.
// Away from it, from x (or y) itself: a (ln x + ln(1 + b / a)), which keeps the digits of a tiny x
// that 1 - lambda / a would lose. log_x, when not NaN, is ln x given by the caller (for an x that
// underflows).
double BetaLogPowerTerms(double a, double b, double x, double y, double log_x, double lambda) {
  double c = a + b;
  if (std::isnan(log_x)) log_x = x < 0.5 ? std::log(x) : std::log1p(-y);
  double log_y = y < 0.5 ? std::log(y) : std::log1p(-x);
  double linear = 0;  // the first-order terms, -lambda from a's factor and +lambda from b's
  double exponent = 0;
  double u_a = -lambda / a;
  if (std::fabs(u_a) <= 0.5) {
    exponent += a * BetaLog1pMinusX(u_a);
    linear -= lambda;
  } else {
    exponent += a * (log_x + std::log1p(b / a));
  }
  double u_b = lambda / b;
  if (std::fabs(u_b) <= 0.5) {
    exponent += b * BetaLog1pMinusX(u_b);
    linear += lambda;
  } else {
    exponent += b * (log_y + std::log1p(a / b));
  }
  double small = std::min(a, b);
  double large = std::max(a, b);
  double log_scale = 0.5 * (std::log(small) + std::log(large / c) - kStudentTLogTwoPi);
  double correction = BetaStirlingCorrection(c) - BetaStirlingCorrection(a) - BetaStirlingCorrection(b);
  return log_scale + (exponent + linear) + correction;
}

// The continued fraction of DiDonato and Morris (ACM TOMS 708, "bfrac"):
//   I_x(a, b) = x^a y^b / B(a, b) * 1 / (beta_1 + alpha_2 / (beta_2 + alpha_3 / (beta_3 + ...)))
//   beta_1      = a (lambda + 1) / (a + 1)
//   alpha_(n+1) = (a + n - 1)(a + b + n - 1) n (b - n) x^2 / (a + 2n - 1)^2
//   beta_(n+1)  = n + n (b - n) x / (a + 2n - 1) + (a + n) / (a + 2n + 1) (lambda + 1 + n (1 + y))
// with lambda = a y - b x. Unlike the textbook fraction in x alone, whose terms are 1 - (a+b) x / (a+1)
// and the like, it takes 1 - x from y and lambda: for a large and x near 1 (Student's t with many
// degrees of freedom) it keeps its digits. Converges fast for lambda >= 0 (x at or below the mean
// a / (a + b)). Returns the denominator g = beta_1 + alpha_2 / (beta_2 + ...), so that
// I_x(a, b) = x^a y^b / B(a, b) / g, by the modified Lentz method; NaN when it does not converge.
// (The denominator rather than the fraction: beta_1 ~ a is tiny for a tiny a, and 1 / beta_1 could
// overflow where x^a y^b / B(a, b) / beta_1 does not.)
double BetaContinuedFractionDenominator(double a, double b, double x, double y, double lambda) {
  constexpr double kTiny = 1e-300;  // stands for an exact 0 (Lentz's guard)
  double g = a * (lambda + 1) / (a + 1);
  if (g == 0) g = kTiny;
  double c_term = g;
  double d_term = 0;
  const long max_terms = 100000 + static_cast<long>(20 * std::sqrt(std::min(a, b)));
  for (long term = 1; term <= max_terms; ++term) {
    double n = static_cast<double>(term);
    double s = a + 2 * n - 1;
    // alpha_(n+1) and beta_(n+1), grouped so that no product overflows: (a + b) x and b x stay
    // moderate where the fraction is used, even for b ~ 1e300.
    double alpha = ((a + b + n - 1) * x / s) * ((b - n) * x) * (n * ((a + n - 1) / s));
    double beta = n + n * ((b - n) * x) / s + (a + n) / (s + 2) * (lambda + 1 + n * (1 + y));
    d_term = beta + alpha * d_term;
    if (std::fabs(d_term) < kTiny) d_term = kTiny;
    c_term = beta + alpha / c_term;
    if (std::fabs(c_term) < kTiny) c_term = kTiny;
    d_term = 1 / d_term;
    double delta = c_term * d_term;
    g *= delta;
    if (std::fabs(delta - 1) <= kStudentTEpsilon) return g;
  }
  return kStudentTNaN;
}

// I_x(a, b) by the fraction, on the side given: lambda = a y - b x computed from whichever of x and
// y leaves the smaller constant to subtract. NaN when the fraction did not converge. log_x as for
// BetaLogPowerTerms.
double BetaDirect(double a, double b, double x, double y, double log_x) {
  double lambda = a > b ? (a + b) * y - b : a - (a + b) * x;
  double denominator = BetaContinuedFractionDenominator(a, b, x, y, lambda);
  if (!(denominator > 0)) return kStudentTNaN;
  return std::exp(BetaLogPowerTerms(a, b, x, y, log_x, lambda) - std::log(denominator));
}

// I_x(a, b) and 1 - I_x(a, b): below the mean a / (a + b) the first by its fraction and the second
// as 1 minus it, above the mean the other way round (the one computed directly is the smaller of the
// two but for very skewed parameters). x and y = 1 - x are both given, so that a y near 0 (x
// rounding to 1) keeps its digits; log_x, when not NaN, is ln x, so that an x below the smallest
// double keeps its digits too (x is then 0).
struct BetaPair {
  double value;       // I_x(a, b)
  double complement;  // 1 - I_x(a, b) = I_y(b, a)
};

BetaPair IncompleteBetaPair(double a, double b, double x, double y, double log_x) {
  if (x <= 0 && std::isnan(log_x)) return {0, 1};
  if (y <= 0) return {1, 0};
  // Below the mean a / (a + b) the fraction for I_x(a, b) converges fast; above it, the one for
  // I_y(b, a).
  bool below_mean = a > b ? (a + b) * y - b >= 0 : a - (a + b) * x >= 0;
  if (below_mean) {
    double value = BetaDirect(a, b, x, y, log_x);
    return {value, 1 - value};
  }
  double complement = BetaDirect(b, a, y, x, kStudentTNaN);
  return {1 - complement, complement};
}

// Student's t on df degrees of freedom at |t|: the tail P(T > |t|) and the central P(|T| < |t|),
// each with its own relative accuracy.
struct TProbabilities {
  double tail;
  double central;
};

TProbabilities StudentTProbabilities(double t, double df) {
  double magnitude = std::fabs(t);
  if (std::isinf(df)) {
    return {0.5 * std::erfc(magnitude * kStudentTSqrtHalf), std::erf(magnitude * kStudentTSqrtHalf)};
  }
  if (std::isinf(magnitude)) return {0, 1};
  // df so small that df / 2 underflows (df ~ 5e-324): the limit df -> 0, all mass at +-infinity.
  if (0.5 * df == 0) return {0.5, 0};
  // P(T > |t|) = I_x(df/2, 1/2) / 2 with x = df / (df + t^2); y = t^2 / (df + t^2) computed on its
  // own, never as 1 - x. t^2 and df / t^2 kept from overflowing.
  double x;
  double y;
  double log_x = kStudentTNaN;
  if (magnitude * magnitude > df) {
    double r = (df / magnitude) / magnitude;  // df / t^2 < 1
    x = r / (1 + r);
    y = 1 / (1 + r);
    // ln x = ln df - 2 ln |t| - ln(1 + df/t^2), kept where x itself underflows (|t| > 1e150 or so).
    if (x < 1e-250) log_x = std::log(df) - 2 * std::log(magnitude) - std::log1p(r);
  } else {
    double r = (magnitude / df) * magnitude;  // t^2 / df <= 1
    x = 1 / (1 + r);
    y = r / (1 + r);
  }
  BetaPair pair = IncompleteBetaPair(0.5 * df, 0.5, x, y, log_x);
  return {0.5 * pair.value, pair.complement};
}

// The density of Student's t: Gamma((df+1)/2) / (sqrt(df pi) Gamma(df/2)) (1 + t^2/df)^(-(df+1)/2),
// the Gamma ratio through Binet's function (Gamma(h + 1/2) / Gamma(h) = sqrt(h) e^(h log1pmx(1/(2h))
// + mu(h + 1/2) - mu(h)), h = df/2), so that it keeps its digits for large df.
double StudentTDensity(double t, double df) {
  if (std::isinf(df)) return std::exp(-0.5 * t * t - 0.5 * kStudentTLogTwoPi);
  double h = 0.5 * df;
  double log_normaliser = -0.5 * kStudentTLogTwoPi + h * BetaLog1pMinusX(0.5 / h) + BetaStirlingCorrection(h + 0.5) -
                          BetaStirlingCorrection(h);
  double magnitude = std::fabs(t);
  double log_kernel;
  if (magnitude * magnitude > df) {
    // (1 + t^2/df) = t^2/df (1 + df/t^2)
    double r = (df / magnitude) / magnitude;
    log_kernel = -(h + 0.5) * (2 * std::log(magnitude) - std::log(df) + std::log1p(r));
  } else {
    log_kernel = -(h + 0.5) * std::log1p((magnitude / df) * magnitude);
  }
  return std::exp(log_normaliser + log_kernel);
}

// The standard normal's upper quantile z with P(Z > z) = q, 0 < q <= 1/2, to about 1e-9 relative
// (Acklam's rational approximations): a starting point only.
double NormalUpperQuantileStart(double q) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  double z;
  if (q < 0.02425) {
    double r = std::sqrt(-2 * std::log(q));
    z = (((((c[0] * r + c[1]) * r + c[2]) * r + c[3]) * r + c[4]) * r + c[5]) /
        ((((d[0] * r + d[1]) * r + d[2]) * r + d[3]) * r + 1);
  } else {
    double u = q - 0.5;
    double r = u * u;
    z = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * u /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  return -z;  // the formulas give the lower quantile, negative for q < 1/2
}

// ln B(df/2, 1/2), for starting points only.
double StudentTLogBeta(double df) {
  return std::lgamma(0.5 * df) + std::lgamma(0.5) - std::lgamma(0.5 * df + 0.5);
}

// What the quantile solver matches: the tail P(T > t) = q (q < 1/4) or the central P(|T| < t) = c
// (c = 1 - 2q <= 1/2, exact in double), in logs: h(t) = ln(F(t) / target), with
// dh / d ln t = -t f(t) / F(t) for the tail and 2 t f(t) / F(t) for the central probability.
struct TQuantileTarget {
  bool tail;
  double target;
  double df;

  // ln(F(t) / target) and its derivative in ln t. h > 0: t is below the root for the tail (F falls
  // with t), above it for the central probability (F rises).
  void Evaluate(double t, double* h, double* slope) const {
    TProbabilities probabilities = StudentTProbabilities(t, df);
    double value = tail ? probabilities.tail : probabilities.central;
    *h = value > 0 ? std::log1p((value - target) / target) : -kStudentTInf;
    double density = StudentTDensity(t, df);
    *slope = (tail ? -1.0 : 2.0) * t * density / value;
  }
  // Whether the root lies above t, given h(t).
  bool RootAbove(double h) const { return tail ? h > 0 : h < 0; }
};

// The t > 0 with F(t) = target: Newton steps in ln t, kept inside a bracket [low, high] of the root
// once one is known (bisection in ln t when a step leaves it), and stepping out by growing factors
// until one is. Two starting points seed the bracket; the better one starts the steps.
double SolveTQuantile(const TQuantileTarget& target, double start_a, double start_b) {
  double low = 0;      // the root is above low
  double high = kStudentTInf;  // and below high
  double best_t = kStudentTNaN;
  double best_h = kStudentTInf;
  double best_slope = 0;
  for (double start : {start_a, start_b}) {
    if (!(start > 0) || !std::isfinite(start)) continue;
    double h;
    double slope;
    target.Evaluate(start, &h, &slope);
    if (h == 0) return start;
    if (target.RootAbove(h)) {
      low = std::max(low, start);
    } else {
      high = std::min(high, start);
    }
    if (std::isnan(best_t) || std::fabs(h) < std::fabs(best_h)) {
      best_t = start;
      best_h = h;
      best_slope = slope;
    }
  }
  if (std::isnan(best_t)) return kStudentTNaN;

  double t = best_t;
  double h = best_h;
  double slope = best_slope;
  double grow = 1;  // ln-factor of the next step out while the bracket is open on one side
  for (int iteration = 0; iteration < 400; ++iteration) {
    double step = (std::isfinite(h) && std::isfinite(slope) && slope != 0) ? -h / slope : kStudentTNaN;
    // A Newton step this small leaves an error of order step^2 (and the function's rounding): done.
    if (std::fabs(step) < 1e-14) return t * std::exp(step);
    double next = std::isfinite(step) ? t * std::exp(step) : kStudentTNaN;
    bool inside = next > low && next < high;
    if (!inside) {
      if (low > 0 && std::isfinite(high)) {
        next = std::sqrt(low) * std::sqrt(high);  // bisection in ln t
        step = std::log(next / t);
      } else {
        grow *= 2;
        next = target.RootAbove(h) ? t * std::exp(grow) : t * std::exp(-grow);
        if (high < kStudentTInf && next >= high) next = std::sqrt(t) * std::sqrt(high);
        if (next <= low) next = std::sqrt(t) * std::sqrt(low);
        step = std::log(next / t);
        if (std::isinf(next)) return kStudentTInf;  // the quantile is beyond the largest double
        if (next == 0) return 0;
      }
    }
    if (next == t) return t;
    t = next;
    target.Evaluate(t, &h, &slope);
    if (h == 0) return t;
    if (target.RootAbove(h)) {
      low = std::max(low, t);
    } else {
      high = std::min(high, t);
    }
    // The bracket is as narrow as doubles allow: the root is t to within rounding.
    if (low > 0 && high < kStudentTInf && high - low <= 4 * kStudentTEpsilon * low) return t;
  }
  return t;
}

// The Cornish-Fisher expansion of the t quantile in the normal one z (Abramowitz and Stegun 26.7.5):
// t = z + g1(z)/df + g2(z)/df^2 + g3(z)/df^3 + g4(z)/df^4.
double CornishFisherStart(double z, double df) {
  double z2 = z * z;
  double g1 = (z2 + 1) * z / 4;
  double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
  double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
  double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
  return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df;
}

// The upper quantile t > 0 with P(T > t) = q, 0 < q < 1/2; central = 1 - 2q, exact.
double StudentTUpperQuantile(double q, double central, double df) {
  if (df == 1) {
    // Cauchy: t = tan(pi (1/2 - q)) = 1 / tan(pi q); the first form where 1/2 - q is exact and the
    // argument is away from pi/2.
    return q < 0.25 ? 1 / std::tan(kStudentTPi * q) : std::tan(kStudentTPi * (0.5 - q));
  }
  if (df == 2) {
    // P(T > t) = (1 - t / sqrt(2 + t^2)) / 2, so t = (1 - 2q) / sqrt(2 q (1 - q)).
    return central / std::sqrt(2 * q * (1 - q));
  }
  if (0.5 * df == 0) return kStudentTInf;  // df ~ 5e-324: every quantile but the median is infinite
  double z = NormalUpperQuantileStart(q);
  bool tail = q < 0.25;
  TQuantileTarget target{tail, tail ? q : central, df};
  if (std::isinf(df)) return SolveTQuantile(target, z, z * (1 + 1e-6));
  // Start 1: Cornish-Fisher, good where z^2 is small against df. Start 2: the tail's power law,
  // P(T > t) ~ df^(df/2 - 1) t^(-df) / B(df/2, 1/2), good where t^2 is large against df; near 0
  // the central probability's slope, P(|T| < t) ~ 2 f(0) t, instead.
  double cornish_fisher = CornishFisherStart(z, df);
  double second;
  if (tail) {
    double log_t = 0.5 * std::log(df) - (std::log(df) + StudentTLogBeta(df) + std::log(q)) / df;
    second = log_t > 700 ? std::numeric_limits<double>::max() : std::exp(log_t);
  } else {
    second = central / (2 * StudentTDensity(0, df));
  }
  return SolveTQuantile(target, cornish_fisher, second);
}

}  // namespace

double RegularizedIncompleteBeta(double a, double b, double x) {
  if (!(a > 0) || !(b > 0) || std::isinf(a) || std::isinf(b) || !(x >= 0 && x <= 1)) return kStudentTNaN;
  return IncompleteBetaPair(a, b, x, 1 - x, kStudentTNaN).value;  // 1 - x is exact for x >= 1/2
}

double StudentTCdf(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kStudentTNaN;
  TProbabilities probabilities = StudentTProbabilities(t, df);
  return t < 0 ? probabilities.tail : 1 - probabilities.tail;
}

double StudentTQuantile(double p, double df) {
  if (!(p > 0 && p < 1) || !(df > 0)) return kStudentTNaN;
  if (p == 0.5) return 0;
  // The smaller tail q and the central probability 1 - 2q, both exact: 1 - p is exact for p >= 1/2,
  // 1 - 2q for q >= 1/4 (and only used there).
  double q = p < 0.5 ? p : 1 - p;
  double central = 1 - 2 * q;
  double upper = StudentTUpperQuantile(q, central, df);
  return p < 0.5 ? -upper : upper;
}

double StudentTTwoSidedPValue(double t, double df) {
  if (std::isnan(t) || !(df > 0)) return kStudentTNaN;
  TProbabilities probabilities = StudentTProbabilities(t, df);
  // The smaller of 2 * tail and 1 - central, whichever is computed directly, is the more accurate.
  return probabilities.tail < 0.25 ? 2 * probabilities.tail : 1 - probabilities.central;
}

std::vector<double> HolmAdjust(const std::vector<double>& p_values) {
  std::vector<double> adjusted(p_values.size(), kStudentTNaN);
  std::vector<std::size_t> order;
  for (std::size_t index = 0; index < p_values.size(); ++index) {
    double p = p_values[index];
    if (std::isnan(p)) continue;
    if (!(p >= 0 && p <= 1)) return std::vector<double>(p_values.size(), kStudentTNaN);
    order.push_back(index);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t left, std::size_t right) { return p_values[left] < p_values[right]; });
  const std::size_t m = order.size();
  double running = 0;
  for (std::size_t j = 0; j < m; ++j) {
    double scaled = std::min(1.0, static_cast<double>(m - j) * p_values[order[j]]);
    running = std::max(running, scaled);
    adjusted[order[j]] = running;
  }
  return adjusted;
}

}  // namespace rung::fit

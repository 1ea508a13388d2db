#include "core/diagnostics/failure_mode_closed_forms.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rung {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }
double NormalPdf(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * kPi); }

// Eq. 5 at a real ln M (> ln 2 / 2).
double InversionBoundAtLog(double log_length, int64_t pairs, double base) {
  const double h = static_cast<double>(pairs);
  return NormalCdf(-std::log(2.0) * std::sqrt(h / (std::log(base) * (log_length - 0.5 * std::log(2.0)))));
}

}  // namespace

double FastPairBoundary(int64_t length, int64_t pairs, double base) {
  return static_cast<double>(pairs) * std::log(static_cast<double>(length)) / std::log(base);
}

int64_t FastPairCount(int64_t length, int64_t pairs, double base, bool cap) {
  const double boundary = std::ceil(FastPairBoundary(length, pairs, base));
  // Past 2^62 (a base within a hair of 1) the count saturates rather than overflow.
  const int64_t count = boundary >= 4.611686018427388e18 ? (int64_t{1} << 62)
                                                          : std::max<int64_t>(0, static_cast<int64_t>(boundary));
  return cap ? std::min(count, pairs) : count;
}

RopeProductNormal RopeProductNormalAt(int64_t length, int64_t pairs, double base, bool cap) {
  RopeProductNormal normal;
  normal.fast_pairs = FastPairCount(length, pairs, base, cap);
  normal.mean_bound = static_cast<double>(pairs - normal.fast_pairs);
  normal.sd = std::sqrt(static_cast<double>(normal.fast_pairs) / 2.0);
  return normal;
}

double PositionInversionLowerBound(int64_t length, int64_t pairs, double base) {
  if (length < 2) return kNan;
  return InversionBoundAtLog(std::log(static_cast<double>(length)), pairs, base);
}

double PositionInversionNormal(int64_t length, int64_t pairs, double base, bool cap) {
  if (length < 2) return kNan;
  const double whole = static_cast<double>(FastPairCount(length, pairs, base, cap));
  const double half = static_cast<double>(FastPairCount(length / 2, pairs, base, cap));
  if (whole == 0) return kNan;
  return NormalCdf(-(whole - half) / std::sqrt((whole + half) / 2.0));
}

double SmallestInversionLength(int64_t pairs, double base, double threshold) {
  if (!(threshold > 0.0 && threshold < 0.5)) return kNan;
  if (PositionInversionLowerBound(2, pairs, base) >= threshold) return 2.0;
  // Eq. 5 rises with ln M: bisect for its real root, then step to the integer on the right side.
  double low = std::log(2.0);
  double high = low;
  while (InversionBoundAtLog(high, pairs, base) < threshold) {
    high = 2.0 * high + 1.0;
    if (high > std::log(std::numeric_limits<double>::max())) return std::numeric_limits<double>::infinity();
  }
  for (int i = 0; i < 200 && high - low > 1e-15 * high; ++i) {
    const double middle = 0.5 * (low + high);
    (InversionBoundAtLog(middle, pairs, base) < threshold ? low : high) = middle;
  }
  const double root = std::exp(high);
  if (root > 9007199254740992.0) return root;  // 2^53: no longer an integer count
  double length = std::ceil(root);
  while (length > 2 && PositionInversionLowerBound(static_cast<int64_t>(length) - 1, pairs, base) >= threshold) {
    length -= 1;
  }
  while (PositionInversionLowerBound(static_cast<int64_t>(length), pairs, base) < threshold) length += 1;
  return length;
}

double AliasingResolution(int64_t pairs, int fraction_bits) {
  const double h = static_cast<double>(pairs);
  return std::ldexp(std::max(std::sqrt(2.0 * h), h), -fraction_bits);
}

SinglePairAliasing SinglePairAliasingAt(int64_t length, int64_t pairs, double base, int fraction_bits, bool cap) {
  SinglePairAliasing aliasing;
  if (length < 2) return {kNan, kNan, kNan, kNan};
  const double fast = static_cast<double>(FastPairCount(length, pairs, base, cap));
  // D = S(m1) - S(m2) ~ N(0, 2 sigma^2) with sigma^2 = lambda / 2; no fast pair: D = 0.
  const double p = fast > 0 ? std::erf(AliasingResolution(pairs, fraction_bits) / std::sqrt(2.0 * fast)) : 1.0;
  const double m = static_cast<double>(length);
  const double distance_pairs = m * (m - 1.0) / 2.0;
  aliasing.probability = p;
  aliasing.expected_pairs = distance_pairs * p;
  aliasing.expected_pairs_sd = std::sqrt(distance_pairs * p * (1.0 - p));
  aliasing.distance_has_alias = -std::expm1((m - 1.0) * std::log1p(-p));
  return aliasing;
}

double TokenAliasingApproximation(int64_t length, int64_t pairs, double base, int fraction_bits, bool cap) {
  if (length < 2) return kNan;
  const double fast = static_cast<double>(FastPairCount(length, pairs, base, cap));
  if (fast == 0) return kNan;
  const double sigma = std::sqrt(fast);
  const double ratio = (static_cast<double>(pairs) - fast) / sigma;
  return 2.0 * AliasingResolution(pairs, fraction_bits) / sigma * NormalPdf(ratio);
}

double TokenAliasingLimit(int64_t pairs, int fraction_bits) {
  return 2.0 * AliasingResolution(pairs, fraction_bits) / std::sqrt(static_cast<double>(pairs)) * NormalPdf(0.0);
}

}  // namespace rung

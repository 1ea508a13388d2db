// core/diagnostics/failure_mode_closed_forms.h
//
// Paper 003's closed forms for RoPE's failure modes (its appendices B and C; docs/science.md section
// 12): pure functions of the RoPE base B, the number of rotary pairs h = d / 2, the context length M
// and the working precision's explicit fraction bits f (7 bf16, 10 fp16, 23 fp32). No sampling: these
// are the paper's formulas, for unit amplitudes a_n = 1 where a formula needs amplitudes (as its
// Table 4 and Theorems 5 and 8 assume), so that rung prints the paper's Tables 3 and 4 as printed
// (tests/core/diagnostics/failure_mode_closed_forms_test.cc holds every cell).
//
//   lambda(M)      the number of fast pairs: n >= 0 with n < h log_B M, i.e. ceil(h ln M / ln B),
//                  those that turn at least one radian over [0, M). As the paper's Table 4 computes
//                  it, lambda is not capped at h (past M = B it exceeds h); `cap` caps it.
//   normal         over m uniform in [0, M), S(m) = sum_n a_n cos(m theta_n + phi_n) is about
//                  N(mu, sigma^2) with mu <= sum_{n >= lambda} a_n = h - lambda and
//                  sigma^2 = sum_{n < lambda} a_n^2 / 2 = lambda / 2 (Eqs. 2-4).
//   Eq. 5          position inversion (Theorem 5), m1 in [0, M/2), m2 in [M/2, M):
//                  Pr(S(m1) < S(m2)) >= Phi(-ln 2 sqrt(h / (ln B (ln M - ln 2 / 2)))).
//                  It is C.1's normal approximation Phi(-(mu1 - mu2) / sqrt(sigma1^2 + sigma2^2)) with
//                  lambda continuous; with lambda an integer it is PositionInversionNormal.
//   Table 3        the smallest integer M at which Eq. 5 reaches a threshold (0.3 in the paper).
//   epsilon        the aliasing resolution 2^-f max(sqrt(d), sum_n a_n) = 2^-f max(sqrt(2h), h): a
//                  score difference below it cannot change the softmax at that precision (C.2). Not
//                  "equal after rounding one score".
//   Table 4        position aliasing of a single pair of distances: Pr(|S(m1) - S(m2)| < epsilon) =
//                  2 Phi(epsilon / (sqrt 2 sigma)) - 1 = erf(epsilon / sqrt(2 lambda)); the
//                  expectations column: the number of aliasing pairs among the M (M - 1) / 2 pairs of
//                  distances, N p, with its binomial sd sqrt(N p (1 - p)).
//   Theorem 6      the chance that a random distance has an aliasing partner: 1 - (1 - p)^(M - 1).
//   Theorem 8      token aliasing: Pr(|S1(m) - S2(m)| < epsilon) ~ 2 (epsilon / sigma) pdf(mu / sigma)
//                  with sigma = sqrt(lambda), mu / sigma = (h - lambda) / sqrt(lambda), i.e.
//                  2 2^-f (h / sqrt(lambda)) pdf(h / sqrt(lambda) - sqrt(lambda)) for h >= 2; at
//                  lambda = h its limit 2^(1-f) sqrt(h / (2 pi)).
//
// Lengths are integers M >= 2 and bases B > 1; outside their domain the functions return NaN (each
// comment says where).
//
// Thread safety: functions of their arguments only.
#pragma once

#include <cstdint>

namespace rung {

// h log_B M = h ln M / ln B. REQUIRES: length >= 1, pairs >= 1, base > 1.
double FastPairBoundary(int64_t length, int64_t pairs, double base);

// lambda(M) = ceil(h log_B M) (0 at M = 1; saturating at 2^62), at most h when `cap`. REQUIRES as
// FastPairBoundary.
int64_t FastPairCount(int64_t length, int64_t pairs, double base, bool cap);

// The normal approximation of S over [0, M) with unit amplitudes (Eqs. 2-4).
struct RopeProductNormal {
  int64_t fast_pairs = 0;  // lambda(M)
  double mean_bound = 0;   // mu <= h - lambda (the slow pairs' amplitudes; negative when lambda > h)
  double sd = 0;           // sigma = sqrt(lambda / 2)
};
RopeProductNormal RopeProductNormalAt(int64_t length, int64_t pairs, double base, bool cap);

// Eq. 5; NaN for M < 2.
double PositionInversionLowerBound(int64_t length, int64_t pairs, double base);

// C.1's Phi(-(lambda(M) - lambda(M/2)) / sqrt((lambda(M) + lambda(M/2)) / 2)), unit amplitudes, zero
// phases, integer lambda (M/2 rounded down); NaN for M < 2 or lambda(M) = 0.
double PositionInversionNormal(int64_t length, int64_t pairs, double base, bool cap);

// Table 3: the smallest integer M >= 2 with Eq. 5 >= threshold. Where that M is above 2^53 (a
// threshold close to 1/2) it is the real root of Eq. 5 = threshold, not an integer; +infinity past
// the largest double. NaN unless 0 < threshold < 1/2 (Eq. 5 stays below 1/2 at every M).
double SmallestInversionLength(int64_t pairs, double base, double threshold);

// epsilon = 2^-f max(sqrt(2h), h) (unit amplitudes). REQUIRES: pairs >= 1, fraction_bits >= 1.
double AliasingResolution(int64_t pairs, int fraction_bits);

// Table 4's row at (M, B) for one precision, and Theorem 6's chance.
struct SinglePairAliasing {
  double probability = 0;         // Pr(|D| < epsilon) for one pair of distances
  double expected_pairs = 0;      // N p, N = M (M - 1) / 2
  double expected_pairs_sd = 0;   // sqrt(N p (1 - p))
  double distance_has_alias = 0;  // 1 - (1 - p)^(M - 1)
};
// Every field NaN for M < 2.
SinglePairAliasing SinglePairAliasingAt(int64_t length, int64_t pairs, double base, int fraction_bits, bool cap);

// Theorem 8's approximation; NaN for M < 2.
double TokenAliasingApproximation(int64_t length, int64_t pairs, double base, int fraction_bits, bool cap);

// Theorem 8's limit at lambda = h: 2 2^-f max(sqrt(2h), h) / sqrt(h) pdf(0) = 2^(1-f) sqrt(h / (2 pi)) for h >= 2.
double TokenAliasingLimit(int64_t pairs, int fraction_bits);

}  // namespace rung

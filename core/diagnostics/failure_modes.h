// core/diagnostics/failure_modes.h
//
// RoPE's four failure modes (paper 003, docs/science.md section 12), torch-free so that they can be
// computed exactly and on vectors exported from any model.
//
// Scores. For one head with query q and key k (head dimension d, even) and frequencies theta_f
// (f < d/2), the score at relative distance m >= 0 is the model's unscaled logit for a query at
// position t and a key at position t - m:
//   S(m) = < R_t q, R_{t-m} k > / sqrt(d) = sum_f [ a_f cos(m theta_f) + b_f sin(m theta_f) ] / sqrt(d),
//   a_f = q_2f k_2f + q_2f+1 k_2f+1,  b_f = q_2f k_2f+1 - q_2f+1 k_2f,
// with R_p rotating pair f = (2f, 2f+1) by p theta_f exactly as core/model/rotary.cc does. The 1/sqrt(d)
// is the model's (core/diagnostics/attention_diagnostics.cc divides by it too); "unscaled" means no
// query multiplier or temperature. For d = 2: S(m) = |q||k| / sqrt(2) cos(m theta + arg q - arg k).
// Scores are computed in double; a working precision rounds them afterwards.
//
// Statistics over a context of length M, on score vectors S[0..M):
//   Position inversion   #{(m1, m2): m1 < M/2 <= m2, S(m1) < S(m2)} / (#near * #far): every pair of
//                        a near distance [0, ceil(M/2)) and a far one [ceil(M/2), M), counted
//                        exactly in O(M log M) (sorting both halves, one merge). On double scores.
//   Position aliasing    at a working precision, distances m1 != m2 in [0, M) whose rounded scores are
//                        equal: the share of distances with at least one partner, and the number of
//                        unordered aliasing pairs (grouping equal values, O(M log M)). The heat map
//                        bins (m1, m2) into B x B cells, bin(m) = floor(m B / M).
//   Token inversion      two keys' scores S1, S2, ordered so that S1(0) > S2(0): the share of m in
//                        [0, M) with S1(m) < S2(m). On double scores; NaN when S1(0) == S2(0).
//   Token aliasing       #{m in [0, M): round(S1(m)) == round(S2(m))} at the working precision.
// Rounded scores compare as the hardware would: +0 == -0, and scores past the type's range round to
// +-inf, which equal each other. Every statistic REQUIRES scores without NaN.
//
// Rounding (round to nearest, ties to even, from double in one step, by bit manipulation):
//   bf16: 7 fraction bits, fp32's exponent range (normal 2^-126..2^127, subnormals down to 2^-133);
//   fp16: 10 fraction bits, IEEE half's range (normal 2^-14..2^15, subnormals down to 2^-24, values
//         that round past 65504 become inf); fp32: the float cast.
//
// The Gaussian reference draws q, k, k1, k2 i.i.d. standard normal in R^d from a std::mt19937_64
// seeded with `seed` (the same draws for every base and length; the same library gives the same
// draws), orients k so that S(0) >= 0 (the key the query prefers where it stands: without this,
// k -> -k makes the expected position inversion exactly 1/2 at every M), orders k1, k2 so that
// S1(0) > S2(0), and averages each statistic over the draws (token inversion over the draws
// without a tie at 0). It also averages |position inversion - 1/2|, which k -> -k leaves unchanged
// (barring ties): the paper's "inversion approaches 1/2 as M grows" read draw by draw.
//
// Thread safety: pure functions, no shared state.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace rung {

enum class Precision { kBf16, kFp16, kFp32 };

// "bf16", "fp16", "fp32".
const char* PrecisionName(Precision precision);
// The explicit fraction bits: 7, 10, 23.
int FractionBits(Precision precision);

// x rounded to nearest-even in the binary format with `fraction_bits` explicit fraction bits, normal
// exponents [min_exponent, max_exponent] and subnormals below 2^min_exponent; magnitudes that round
// past the largest finite value give +-inf; NaN and +-inf are returned unchanged; the sign of zero is
// kept. REQUIRES: 1 <= fraction_bits <= 51, min_exponent < max_exponent < 1024,
// min_exponent - fraction_bits > -1022.
double RoundToBinaryFormat(double x, int fraction_bits, int min_exponent, int max_exponent);
double RoundToBf16(double x);
double RoundToFp16(double x);
double RoundToFp32(double x);
double RoundToPrecision(double x, Precision precision);
std::vector<double> RoundScores(const std::vector<double>& scores, Precision precision);

// RoPE's schedule theta_f = base^(-2f / head_dim), f < head_dim / 2.
// REQUIRES: base > 0, head_dim even and >= 2.
std::vector<double> RopeFrequencySchedule(double base, int64_t head_dim);

// S(0), ..., S(length - 1) as defined above. REQUIRES: query.size() == key.size() == 2 * theta.size() > 0,
// length >= 0.
std::vector<double> RopeScores(const std::vector<double>& query, const std::vector<double>& key,
                               const std::vector<double>& theta, int64_t length);

// REQUIRES: scores.size() >= 2.
double PositionInversion(const std::vector<double>& scores);

struct PositionAliasing {
  double fraction = 0.0;  // share of distances with at least one partner
  int64_t pairs = 0;      // unordered pairs m1 < m2 with equal rounded scores
};
// REQUIRES: !scores.empty().
PositionAliasing MeasurePositionAliasing(const std::vector<double>& scores, Precision precision);

struct AliasingHeatMap {
  int64_t bins = 0;    // min(requested bins, M)
  int64_t length = 0;  // M
  // Row-major [bins * bins]: counts[i * bins + j] = the ordered pairs (m1, m2), m1 != m2, of equal
  // rounded scores with bin(m1) = i, bin(m2) = j. Symmetric; sums to 2 * MeasurePositionAliasing().pairs.
  std::vector<int64_t> counts;
};
// REQUIRES: !scores.empty(), bins >= 1. O(M log M + M * min(bins, M)) at worst.
AliasingHeatMap PositionAliasingHeatMap(const std::vector<double>& scores, Precision precision,
                                        int64_t bins = 200);

// REQUIRES: scores1.size() == scores2.size() >= 1. Either order of the two keys gives the same share.
double TokenInversion(const std::vector<double>& scores1, const std::vector<double>& scores2);
// REQUIRES: scores1.size() == scores2.size().
int64_t TokenAliasing(const std::vector<double>& scores1, const std::vector<double>& scores2,
                      Precision precision);

// (a) One head of a trained model: its query, the key for the position modes, the two keys for the
// token modes (each of length d), and its frequencies (d/2, e.g. learned ones).
struct RopeHeadVectors {
  std::vector<double> query;
  std::vector<double> key;
  std::vector<double> key1, key2;
  std::vector<double> theta;
};

struct FailureModeStats {
  double position_inversion = 0.0;
  double position_aliasing_fraction = 0.0;
  int64_t position_aliasing_pairs = 0;
  double token_inversion = 0.0;  // NaN when S1(0) == S2(0)
  int64_t token_aliasing = 0;
};

// All four on the head's vectors as given (no orientation). INVALID_ARGUMENT for mismatched or odd
// sizes, non-finite entries, or length < 2.
StatusOr<FailureModeStats> MeasureFailureModes(const RopeHeadVectors& head, int64_t length,
                                               Precision precision);

// (b) The Gaussian reference over a grid.
struct FailureModeGrid {
  std::vector<int64_t> lengths;  // M, each >= 2
  std::vector<double> bases;     // b, each > 0, with RopeFrequencySchedule(b, head_dim)
  std::vector<Precision> precisions = {Precision::kBf16, Precision::kFp16, Precision::kFp32};
  int64_t head_dim = 64;         // even, >= 2
  int draws = 16;                // >= 1
  uint64_t seed = 0;
  int64_t heat_map_bins = 0;     // > 0: each row carries the heat map summed over the draws
};

struct FailureModeRow {
  int64_t length = 0;
  double base = 0.0;
  Precision precision = Precision::kFp32;
  int64_t head_dim = 0;
  int draws = 0;
  // Means over the draws.
  double position_inversion = 0.0;            // with k oriented so that S(0) >= 0
  double position_inversion_deviation = 0.0;  // |position inversion - 1/2|, either orientation
  double position_aliasing_fraction = 0.0;
  double position_aliasing_pairs = 0.0;
  double token_inversion = 0.0;  // over the draws without a tie at 0; NaN if every draw tied
  double token_aliasing = 0.0;
  AliasingHeatMap heat_map;      // empty unless heat_map_bins > 0
};

// One row per (length, base, precision), lengths outermost, then bases, then precisions, in the
// grid's orders. INVALID_ARGUMENT for an empty axis or an entry outside its contract above.
StatusOr<std::vector<FailureModeRow>> MeasureGaussianFailureModes(const FailureModeGrid& grid);

// One object per row, in order, with the row's fields by name: "length", "base", "precision"
// ("bf16", ...), "head_dim", "draws", "position_inversion", "position_inversion_deviation",
// "position_aliasing_fraction", "position_aliasing_pairs", "token_inversion" (null for NaN),
// "token_aliasing", and with a heat map "heat_map": {"bins", "counts": [[row 0's bins], ...]}.
nlohmann::json FailureModeRowsToJson(const std::vector<FailureModeRow>& rows);

}  // namespace rung

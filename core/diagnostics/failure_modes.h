// core/diagnostics/failure_modes.h
//
// The pieces of RoPE's failure modes (paper 003, docs/science.md section 12) that every measurement of
// them shares, torch-free: the working precisions, RoPE's schedule, the scores of one query and key at
// every distance, and the two inversions. Aliasing, attention invariance and the measurement as the
// paper's appendix D.1 takes it: core/diagnostics/resolved_aliasing.h, appendix_d1_statistics.h.
//
// Scores. For one head with query q and key k (head dimension d, even) and frequencies theta_f
// (f < d/2), the score at relative distance m >= 0 is the model's unscaled logit for a query at
// position t and a key at position t - m:
//   S(m) = < R_t q, R_{t-m} k > / sqrt(d) = sum_f [ a_f cos(m theta_f) + b_f sin(m theta_f) ] / sqrt(d),
//   a_f = q_2f k_2f + q_2f+1 k_2f+1,  b_f = q_2f k_2f+1 - q_2f+1 k_2f,
// with R_p rotating pair f = (2f, 2f+1) by p theta_f exactly as core/model/rotary.cc does. For d = 2:
// S(m) = |q||k| / sqrt(2) cos(m theta + arg q - arg k). Scores are computed in double.
//
// Statistics over a context of length M, on score vectors S[0..M):
//   Position inversion   #{(m1, m2): m1 < M/2 <= m2, S(m1) < S(m2)} / (#near * #far): every pair of
//                        a near distance [0, ceil(M/2)) and a far one [ceil(M/2), M), counted
//                        exactly in O(M log M) (sorting both halves, one merge).
//   Token inversion      two keys' scores S1, S2, ordered so that S1(0) > S2(0): the share of m in
//                        [0, M) with S1(m) < S2(m); NaN when S1(0) == S2(0).
// Every statistic REQUIRES scores without NaN.
//
// Thread safety: pure functions, no shared state.
#pragma once

#include <cstdint>
#include <vector>

namespace rung {

enum class Precision { kBf16, kFp16, kFp32 };

// "bf16", "fp16", "fp32".
const char* PrecisionName(Precision precision);
// The explicit fraction bits: 7, 10, 23.
int FractionBits(Precision precision);


// RoPE's schedule theta_f = base^(-2f / head_dim), f < head_dim / 2.
// REQUIRES: base > 0, head_dim even and >= 2.
std::vector<double> RopeFrequencySchedule(double base, int64_t head_dim);

// S(0), ..., S(length - 1) as defined above. REQUIRES: query.size() == key.size() == 2 * theta.size() > 0,
// length >= 0.
std::vector<double> RopeScores(const std::vector<double>& query, const std::vector<double>& key,
                               const std::vector<double>& theta, int64_t length);

// REQUIRES: scores.size() >= 2.
double PositionInversion(const std::vector<double>& scores);

// A heat map of pairs of distances: (m1, m2) binned into B x B cells, bin(m) = floor(m B / M).
struct AliasingHeatMap {
  int64_t bins = 0;    // min(requested bins, M)
  int64_t length = 0;  // M
  // Row-major [bins * bins]: counts[i * bins + j] = the ordered pairs (m1, m2), m1 != m2, with
  // bin(m1) = i, bin(m2) = j. Symmetric.
  std::vector<int64_t> counts;
};

// REQUIRES: scores1.size() == scores2.size() >= 1. Either order of the two keys gives the same share.
double TokenInversion(const std::vector<double>& scores1, const std::vector<double>& scores2);

// A grid of the Gaussian reference (appendix_d1_statistics.h's GaussianAppendixD1Reference at each
// length and base): `rung diag --synthetic failure_modes` and the reference beside a trial.
struct FailureModeGrid {
  std::vector<int64_t> lengths;  // M, each >= 2
  std::vector<double> bases;     // b, each > 0, with RopeFrequencySchedule(b, head_dim)
  std::vector<Precision> precisions = {Precision::kBf16, Precision::kFp16, Precision::kFp32};
  int64_t head_dim = 64;         // even, >= 2
  int draws = 16;                // >= 1
  uint64_t seed = 0;
};

}  // namespace rung

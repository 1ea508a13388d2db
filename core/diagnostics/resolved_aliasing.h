// core/diagnostics/resolved_aliasing.h
//
// Aliasing as paper 003 measures it (appendix C.2, C.4; section 3.2's attention invariance): two scores
// are indistinguishable at a working precision when they differ by less than that precision's resolution
// of an unnormalized RoPE product,
//   epsilon = 2^-f max(sqrt(d), sum_n a_n),   a_n = |q_n| |k_n| (pair n = dimensions 2n, 2n + 1),
// f the type's explicit fraction bits (bf16 7, fp16 10, fp32 23): below sqrt(d) 2^-f the softmax output
// cannot change at that precision (C.2's derivation), and the dot product itself, of magnitude up to
// sum_n a_n, is no finer. (core/diagnostics/failure_modes.h counts instead rounded scores that are equal,
// a far stricter rule: about 0.0012 of the pairs at M = 1024, B = 1e4, d = 128, bf16 on Gaussian
// vectors, where this rule gives about 0.05 and Table 4, with unit amplitudes, 0.057.)
//
// On score vectors S[0..M) (the scores of one key at M distances; appendix D.1's S(1..M)):
//   position aliasing     unordered pairs i < j with |S[i] - S[j]| < epsilon, and the share of indices
//                         with at least one partner; the 200 x 200 heat map of Fig. 5(a, b) bins (i, j)
//                         as failure_modes.h's does (both orders counted)
//   attention invariance  for two keys' scores S1, S2 (each with its own epsilon): the pairs i < j that
//                         alias for both keys, where swapping the two keys between the distances i and j
//                         leaves the query's attention output unchanged (Fig. 5(c), 16 x 16 bins)
//   token aliasing        #{i : |S1[i] - S2[i]| < epsilon} (C.4, Fig. 7)
// Counts take O(M log M) (sorting, two pointers, a Fenwick tree), however many pairs there are; a heat
// map enumerates its pairs, so it is left empty (bins 0) where more than kMaxHeatMapPairs alias (a head
// whose scores barely move). Every statistic REQUIRES finite scores.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "core/diagnostics/failure_modes.h"

namespace rung {

// The most aliasing pairs a heat map is drawn from.
inline constexpr int64_t kMaxHeatMapPairs = 50'000'000;

// sum_n |q_n| |k_n| over the rotation pairs. REQUIRES: query.size() == key.size(), even.
double PairAmplitudeSum(const std::vector<double>& query, const std::vector<double>& key);

// 2^-f max(sqrt(head_dim), amplitude_sum). REQUIRES: head_dim >= 1.
double ResolutionEpsilon(Precision precision, int64_t head_dim, double amplitude_sum);

struct ResolvedPositionAliasing {
  double fraction = 0.0;   // share of indices with at least one partner
  int64_t pairs = 0;       // unordered pairs
  AliasingHeatMap heat_map;  // empty when bins is 0
};
// REQUIRES: !scores.empty(), epsilon >= 0, bins >= 0.
ResolvedPositionAliasing PositionAliasingWithin(const std::vector<double>& scores, double epsilon, int64_t bins = 200);

struct AttentionInvariance {
  int64_t pairs = 0;
  AliasingHeatMap heat_map;  // empty when bins is 0
};
// REQUIRES: scores1.size() == scores2.size() >= 1, epsilons >= 0, bins >= 0.
AttentionInvariance AttentionInvariancePairs(const std::vector<double>& scores1, const std::vector<double>& scores2,
                                             double epsilon1, double epsilon2, int64_t bins = 16);

// REQUIRES: scores1.size() == scores2.size(), epsilon >= 0.
int64_t TokenAliasingWithin(const std::vector<double>& scores1, const std::vector<double>& scores2, double epsilon);

}  // namespace rung

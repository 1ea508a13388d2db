// core/diagnostics/appendix_d1_statistics.h
//
// The statistics of paper 003's appendix D.1 measurement (core/diagnostics/appendix_d1.h measures the
// scores on a model), torch-free: appendix C's four failure modes and attention invariance on one head's
// scores S(1..M) against each key, aliasing at each precision's resolution
// (core/diagnostics/resolved_aliasing.h); and the Monte Carlo reference in the same convention.
//   position inversion and aliasing     the first key (the related one, "cat")
//   attention invariance                the first two keys ("cat", "dog")
//   token inversion                     the first key against the last ("number")
//   token aliasing                      the first two keys, at the larger of their epsilons
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/diagnostics/resolved_aliasing.h"

namespace rung {

struct AppendixD1Key {
  int64_t token = 0;
  std::vector<double> scores;   // S(1), ..., S(M) at scores[0..M)
  double amplitude_sum = 0.0;   // sum_n |q_n| |k_n| with the key at distance 1
};

struct AppendixD1Scores {
  int64_t head_dim = 0;
  std::vector<AppendixD1Key> keys;
};

struct AppendixD1Precision {
  Precision precision = Precision::kBf16;
  std::vector<double> epsilons;                 // per key
  ResolvedPositionAliasing position_aliasing;   // of the first key (heat map 200 x 200)
  std::vector<int64_t> aliasing_pairs;          // per key
  AttentionInvariance attention_invariance;     // of the first two keys (16 x 16); none with one key
  int64_t token_aliasing = 0;                   // of the first two keys, at the larger epsilon
};

struct AppendixD1FailureModes {
  int64_t length = 0;
  std::vector<int64_t> key_tokens;   // in the roles' order (KeyOrder)
  double position_inversion = 0.0;   // the first key's, exact
  double token_inversion = 0.0;      // the first key against the last, exact; NaN with one key or a tie at m = 1
  std::vector<AppendixD1Precision> precisions;
};

// Every score and amplitude sum finite (a diverged model's are not; the statistics REQUIRE finite ones).
bool AllFinite(const AppendixD1Scores& scores);

// How the keys take their roles: as given (the paper's tokens: related, related, unrelated), or ordered
// by their score at m = 1, highest first (the key the query prefers where it stands takes the position
// modes; the Gaussian reference orients its draws so).
enum class KeyOrder { kGiven, kByNearestScore };

// REQUIRES: scores from MeasureAppendixD1Scores (at least one key, M >= 2).
AppendixD1FailureModes MeasureAppendixD1FailureModes(const AppendixD1Scores& scores,
                                                     const std::vector<Precision>& precisions,
                                                     KeyOrder order = KeyOrder::kGiven, int64_t heat_map_bins = 200,
                                                     int64_t invariance_bins = 16);

// The Monte Carlo reference in the same convention: `draws` draws of q and three keys i.i.d. standard
// normal in R^d (std::mt19937_64 seeded with `seed`), S(m) = q . R_m k unnormalized for m = 1..M with
// the frequencies `theta` (d/2), the keys ordered by their score at m = 1, each statistic averaged
// over the draws (token inversion over those without a tie). Heat maps are left out.
// REQUIRES: theta not empty, length >= 2, draws >= 1.
struct AppendixD1MeanPrecision {
  Precision precision = Precision::kBf16;
  double epsilon = 0.0;              // the first key's
  double aliasing_pairs = 0.0;       // the first key's
  double with_pair = 0.0;            // share of distances of the first key with a partner
  double invariance_pairs = 0.0;
  double token_aliasing = 0.0;
};
struct AppendixD1Means {
  int64_t length = 0;
  int draws = 0;
  double position_inversion = 0.0;
  double position_inversion_deviation = 0.0;  // the mean of |position inversion - 1/2| over the draws
  double token_inversion = 0.0;
  std::vector<AppendixD1MeanPrecision> precisions;
};
AppendixD1Means GaussianAppendixD1Reference(const std::vector<double>& theta, int64_t length, int draws, uint64_t seed,
                                            const std::vector<Precision>& precisions);

// {"length", "head_dim", "key_order" (tokens in the roles' order), "position_inversion", "token_inversion" (null for NaN), "keys": [{"token",
// "amplitude_sum"}], "precisions": [{"precision", "epsilons", "position_aliasing_pairs" (per key),
// "position_aliasing_fraction", "attention_invariance_pairs", "token_aliasing", "heat_map": {"bins",
// "counts"}, "invariance_heat_map": {...}}]}, and with `with_scores` each key's "scores".
nlohmann::json AppendixD1ToJson(const AppendixD1Scores& scores, const AppendixD1FailureModes& modes, bool with_scores);

}  // namespace rung

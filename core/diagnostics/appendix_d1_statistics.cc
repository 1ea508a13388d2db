#include "core/diagnostics/appendix_d1_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace rung {
namespace {

nlohmann::json HeatMapJson(const AliasingHeatMap& map) {
  nlohmann::json rows = nlohmann::json::array();
  for (int64_t i = 0; i < map.bins; ++i) {
    rows.push_back(std::vector<int64_t>(map.counts.begin() + i * map.bins, map.counts.begin() + (i + 1) * map.bins));
  }
  return {{"bins", map.bins}, {"length", map.length}, {"counts", rows}};
}

}  // namespace

bool AllFinite(const AppendixD1Scores& scores) {
  for (const AppendixD1Key& key : scores.keys) {
    if (!std::isfinite(key.amplitude_sum)) return false;
    for (double score : key.scores) {
      if (!std::isfinite(score)) return false;
    }
  }
  return true;
}

AppendixD1FailureModes MeasureAppendixD1FailureModes(const AppendixD1Scores& scores,
                                                     const std::vector<Precision>& precisions, KeyOrder order,
                                                     int64_t heat_map_bins, int64_t invariance_bins) {
  std::vector<AppendixD1Key> keys = scores.keys;
  if (order == KeyOrder::kByNearestScore) {
    std::stable_sort(keys.begin(), keys.end(),
                     [](const AppendixD1Key& a, const AppendixD1Key& b) { return a.scores.front() > b.scores.front(); });
  }
  AppendixD1FailureModes modes;
  modes.length = static_cast<int64_t>(keys.front().scores.size());
  for (const AppendixD1Key& key : keys) modes.key_tokens.push_back(key.token);
  modes.position_inversion = PositionInversion(keys.front().scores);
  modes.token_inversion = keys.size() > 1 ? TokenInversion(keys.front().scores, keys.back().scores)
                                          : std::numeric_limits<double>::quiet_NaN();
  for (Precision precision : precisions) {
    AppendixD1Precision entry;
    entry.precision = precision;
    for (const AppendixD1Key& key : keys) {
      entry.epsilons.push_back(ResolutionEpsilon(precision, scores.head_dim, key.amplitude_sum));
    }
    // The first key's aliasing with its heat map; the others' counts alone.
    entry.position_aliasing = PositionAliasingWithin(keys.front().scores, entry.epsilons.front(), heat_map_bins);
    entry.aliasing_pairs.push_back(entry.position_aliasing.pairs);
    for (size_t k = 1; k < keys.size(); ++k) {
      entry.aliasing_pairs.push_back(PositionAliasingWithin(keys[k].scores, entry.epsilons[k], 0).pairs);
    }
    if (keys.size() > 1) {
      entry.attention_invariance = AttentionInvariancePairs(keys[0].scores, keys[1].scores, entry.epsilons[0],
                                                            entry.epsilons[1], invariance_bins);
      entry.token_aliasing =
          TokenAliasingWithin(keys[0].scores, keys[1].scores, std::max(entry.epsilons[0], entry.epsilons[1]));
    }
    modes.precisions.push_back(std::move(entry));
  }
  return modes;
}

AppendixD1Means GaussianAppendixD1Reference(const std::vector<double>& theta, int64_t length, int draws, uint64_t seed,
                                            const std::vector<Precision>& precisions) {
  const int64_t head_dim = 2 * static_cast<int64_t>(theta.size());
  const double unnormalize = std::sqrt(static_cast<double>(head_dim));  // RopeScores divides by sqrt(d)
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto draw = [&] {
    std::vector<double> v(static_cast<size_t>(head_dim));
    for (double& x : v) x = normal(generator);
    return v;
  };
  AppendixD1Means mean;
  mean.length = length;
  mean.draws = draws;
  mean.precisions.resize(precisions.size());
  int64_t token_counted = 0;
  for (int d = 0; d < draws; ++d) {
    const std::vector<double> query = draw();
    AppendixD1Scores sample;
    sample.head_dim = head_dim;
    for (int k = 0; k < 3; ++k) {
      const std::vector<double> key = draw();
      const std::vector<double> scores = RopeScores(query, key, theta, length + 1);
      AppendixD1Key entry;
      for (int64_t m = 1; m <= length; ++m) entry.scores.push_back(scores[static_cast<size_t>(m)] * unnormalize);
      entry.amplitude_sum = PairAmplitudeSum(query, key);
      sample.keys.push_back(std::move(entry));
    }
    const AppendixD1FailureModes one =
        MeasureAppendixD1FailureModes(sample, precisions, KeyOrder::kByNearestScore, /*heat_map_bins=*/0, /*invariance_bins=*/0);
    mean.position_inversion += one.position_inversion / draws;
    mean.position_inversion_deviation += std::fabs(one.position_inversion - 0.5) / draws;
    if (std::isfinite(one.token_inversion)) {
      mean.token_inversion += one.token_inversion;
      ++token_counted;
    }
    for (size_t p = 0; p < precisions.size(); ++p) {
      AppendixD1MeanPrecision& into = mean.precisions[p];
      const AppendixD1Precision& from = one.precisions[p];
      into.precision = from.precision;
      into.epsilon += from.epsilons.front() / draws;
      into.aliasing_pairs += static_cast<double>(from.aliasing_pairs.front()) / draws;
      into.with_pair += from.position_aliasing.fraction / draws;
      into.invariance_pairs += static_cast<double>(from.attention_invariance.pairs) / draws;
      into.token_aliasing += static_cast<double>(from.token_aliasing) / draws;
    }
  }
  mean.token_inversion = token_counted > 0 ? mean.token_inversion / static_cast<double>(token_counted)
                                           : std::numeric_limits<double>::quiet_NaN();
  return mean;
}

nlohmann::json AppendixD1ToJson(const AppendixD1Scores& scores, const AppendixD1FailureModes& modes, bool with_scores) {
  nlohmann::json out = {{"length", modes.length},
                        {"head_dim", scores.head_dim},
                        {"key_order", modes.key_tokens},
                        {"position_inversion", modes.position_inversion},
                        {"token_inversion", std::isfinite(modes.token_inversion) ? nlohmann::json(modes.token_inversion)
                                                                                 : nlohmann::json(nullptr)}};
  // The keys in the roles' order, as the precisions' per-key entries.
  std::vector<AppendixD1Key> ordered;
  std::vector<bool> used(scores.keys.size(), false);
  for (int64_t token : modes.key_tokens) {
    for (size_t k = 0; k < scores.keys.size(); ++k) {
      if (used[k] || scores.keys[k].token != token) continue;
      used[k] = true;
      ordered.push_back(scores.keys[k]);
      break;
    }
  }
  if (ordered.size() != scores.keys.size()) ordered = scores.keys;
  nlohmann::json keys = nlohmann::json::array();
  for (const AppendixD1Key& key : ordered) {
    nlohmann::json entry = {{"token", key.token}, {"amplitude_sum", key.amplitude_sum}};
    if (with_scores) entry["scores"] = key.scores;
    keys.push_back(std::move(entry));
  }
  out["keys"] = std::move(keys);
  nlohmann::json rows = nlohmann::json::array();
  for (const AppendixD1Precision& entry : modes.precisions) {
    nlohmann::json row = {{"precision", PrecisionName(entry.precision)},
                          {"epsilons", entry.epsilons},
                          {"position_aliasing_pairs", entry.aliasing_pairs},
                          {"position_aliasing_fraction", entry.position_aliasing.fraction},
                          {"attention_invariance_pairs", entry.attention_invariance.pairs},
                          {"token_aliasing", entry.token_aliasing}};
    if (entry.position_aliasing.heat_map.bins > 0) row["heat_map"] = HeatMapJson(entry.position_aliasing.heat_map);
    if (entry.attention_invariance.heat_map.bins > 0) {
      row["invariance_heat_map"] = HeatMapJson(entry.attention_invariance.heat_map);
    }
    rows.push_back(std::move(row));
  }
  out["precisions"] = std::move(rows);
  return out;
}

}  // namespace rung

#include "core/diagnostics/resolved_aliasing.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace rung {
namespace {

// The indices of `scores` in ascending order of score.
std::vector<int64_t> AscendingOrder(const std::vector<double>& scores) {
  std::vector<int64_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] < scores[b]; });
  return order;
}

// Calls visit(i, j) for every unordered pair of indices whose scores differ by less than epsilon.
template <typename Visit>
void ForEachPairWithin(const std::vector<double>& scores, double epsilon, const std::vector<int64_t>& order,
                       Visit&& visit) {
  for (size_t a = 0; a < order.size(); ++a) {
    for (size_t b = a + 1; b < order.size() && scores[order[b]] - scores[order[a]] < epsilon; ++b) {
      visit(order[a], order[b]);
    }
  }
}

AliasingHeatMap EmptyHeatMap(int64_t bins, int64_t length) {
  AliasingHeatMap map;
  map.bins = std::min(bins, length);
  map.length = length;
  map.counts.assign(static_cast<size_t>(map.bins * map.bins), 0);
  return map;
}

// Both orders of (i, j) into the heat map, bin(m) = floor(m B / M).
void AddToHeatMap(AliasingHeatMap& map, int64_t i, int64_t j) {
  if (map.bins == 0) return;
  const int64_t bi = i * map.bins / map.length, bj = j * map.bins / map.length;
  ++map.counts[static_cast<size_t>(bi * map.bins + bj)];
  ++map.counts[static_cast<size_t>(bj * map.bins + bi)];
}

}  // namespace

double PairAmplitudeSum(const std::vector<double>& query, const std::vector<double>& key) {
  assert(query.size() == key.size() && query.size() % 2 == 0);
  double sum = 0.0;
  for (size_t n = 0; n + 1 < query.size(); n += 2) {
    sum += std::hypot(query[n], query[n + 1]) * std::hypot(key[n], key[n + 1]);
  }
  return sum;
}

double ResolutionEpsilon(Precision precision, int64_t head_dim, double amplitude_sum) {
  assert(head_dim >= 1);
  return std::ldexp(std::max(std::sqrt(static_cast<double>(head_dim)), amplitude_sum), -FractionBits(precision));
}

ResolvedPositionAliasing PositionAliasingWithin(const std::vector<double>& scores, double epsilon, int64_t bins) {
  assert(!scores.empty() && epsilon >= 0 && bins >= 0);
  const int64_t length = static_cast<int64_t>(scores.size());
  const std::vector<int64_t> order = AscendingOrder(scores);
  ResolvedPositionAliasing result;
  // Pairs by two pointers over the sorted scores; a distance has a partner when a sorted neighbour is
  // within epsilon.
  int64_t with_partner = 0;
  for (size_t a = 0, b = 0; a < order.size(); ++a) {
    b = std::max(b, a + 1);  // pairs are with later entries (an epsilon of 0 admits none)
    while (b < order.size() && scores[order[b]] - scores[order[a]] < epsilon) ++b;
    result.pairs += static_cast<int64_t>(b - a - 1);
    const bool above = a + 1 < order.size() && scores[order[a + 1]] - scores[order[a]] < epsilon;
    const bool below = a > 0 && scores[order[a]] - scores[order[a - 1]] < epsilon;
    with_partner += (above || below) ? 1 : 0;
  }
  result.fraction = static_cast<double>(with_partner) / static_cast<double>(length);
  if (bins > 0 && result.pairs <= kMaxHeatMapPairs) {
    result.heat_map = EmptyHeatMap(bins, length);
    ForEachPairWithin(scores, epsilon, order,
                      [&](int64_t i, int64_t j) { AddToHeatMap(result.heat_map, std::min(i, j), std::max(i, j)); });
  }
  return result;
}

AttentionInvariance AttentionInvariancePairs(const std::vector<double>& scores1, const std::vector<double>& scores2,
                                             double epsilon1, double epsilon2, int64_t bins) {
  assert(scores1.size() == scores2.size() && !scores1.empty() && bins >= 0);
  const int64_t length = static_cast<int64_t>(scores1.size());
  AttentionInvariance result;
  // A sweep in ascending S1 keeps the window of indices within epsilon1 below the current one in a
  // Fenwick tree over the ranks of S2, and counts those within epsilon2 of the current S2: O(M log M).
  const std::vector<int64_t> order1 = AscendingOrder(scores1);
  std::vector<double> sorted2 = scores2;
  std::sort(sorted2.begin(), sorted2.end());
  auto rank = [&](int64_t i) {
    return static_cast<int64_t>(std::lower_bound(sorted2.begin(), sorted2.end(), scores2[static_cast<size_t>(i)]) -
                                sorted2.begin());
  };
  std::vector<int64_t> tree(static_cast<size_t>(length + 1), 0);
  auto add = [&](int64_t position, int64_t delta) {
    for (int64_t k = position + 1; k <= length; k += k & -k) tree[static_cast<size_t>(k)] += delta;
  };
  auto prefix = [&](int64_t end) {  // entries with rank < end
    int64_t total = 0;
    for (int64_t k = end; k > 0; k -= k & -k) total += tree[static_cast<size_t>(k)];
    return total;
  };
  size_t low = 0;
  for (size_t a = 0; a < order1.size(); ++a) {
    const int64_t i = order1[a];
    while (scores1[static_cast<size_t>(i)] - scores1[static_cast<size_t>(order1[low])] >= epsilon1) add(rank(order1[low++]), -1);
    const double s2 = scores2[static_cast<size_t>(i)];
    // Ranks of the S2 values in (s2 - epsilon2, s2 + epsilon2).
    const int64_t from = std::upper_bound(sorted2.begin(), sorted2.end(), s2 - epsilon2) - sorted2.begin();
    const int64_t to = std::lower_bound(sorted2.begin(), sorted2.end(), s2 + epsilon2) - sorted2.begin();
    if (to > from) result.pairs += prefix(to) - prefix(from);
    add(rank(i), 1);
  }
  if (bins > 0 && result.pairs <= kMaxHeatMapPairs && PositionAliasingWithin(scores1, epsilon1, 0).pairs <= kMaxHeatMapPairs) {
    result.heat_map = EmptyHeatMap(bins, length);
    ForEachPairWithin(scores1, epsilon1, order1, [&](int64_t i, int64_t j) {
      if (std::fabs(scores2[static_cast<size_t>(i)] - scores2[static_cast<size_t>(j)]) < epsilon2) {
        AddToHeatMap(result.heat_map, std::min(i, j), std::max(i, j));
      }
    });
  }
  return result;
}

int64_t TokenAliasingWithin(const std::vector<double>& scores1, const std::vector<double>& scores2, double epsilon) {
  assert(scores1.size() == scores2.size() && epsilon >= 0);
  int64_t count = 0;
  for (size_t i = 0; i < scores1.size(); ++i) count += std::fabs(scores1[i] - scores2[i]) < epsilon ? 1 : 0;
  return count;
}

}  // namespace rung

#include "core/diagnostics/distance_bins.h"

#include <algorithm>
#include <cmath>

namespace rung {

std::vector<int64_t> DistanceBinEdges(int64_t time, int64_t bins) {
  time = std::max<int64_t>(time, 1);
  bins = std::max<int64_t>(bins, 1);
  std::vector<int64_t> edges = {0};
  if (time == 1 || bins == 1) {
    edges.push_back(time);
    return edges;
  }
  // Distance 0 is its own bin; the other bins - 1 split [1, T] geometrically.
  const int64_t geometric = bins - 1;
  for (int64_t b = 0; b < geometric; ++b) {
    const double edge = std::pow(static_cast<double>(time), static_cast<double>(b) / static_cast<double>(geometric));
    const int64_t rounded = std::clamp<int64_t>(std::llround(edge), 1, time);
    if (rounded > edges.back()) edges.push_back(rounded);
  }
  if (edges.back() < time) edges.push_back(time);
  return edges;
}

std::vector<int64_t> DistanceBinOf(const std::vector<int64_t>& edges) {
  std::vector<int64_t> bin_of;
  if (edges.size() < 2) return bin_of;
  bin_of.reserve(static_cast<size_t>(edges.back()));
  for (size_t b = 0; b + 1 < edges.size(); ++b) {
    for (int64_t distance = edges[b]; distance < edges[b + 1]; ++distance) bin_of.push_back(static_cast<int64_t>(b));
  }
  return bin_of;
}

}  // namespace rung

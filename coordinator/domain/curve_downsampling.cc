// coordinator/domain/curve_downsampling.cc
#include "coordinator/domain/curve_downsampling.h"

#include <algorithm>
#include <cmath>

namespace rung {

std::vector<size_t> MinMaxBucketIndices(const std::vector<double>& values, size_t max_points) {
  const size_t count = values.size();
  std::vector<size_t> kept;
  max_points = std::max(max_points, kMinDownsampledPoints);
  if (count <= max_points) {
    kept.resize(count);
    for (size_t i = 0; i < count; ++i) kept[i] = i;
    return kept;
  }
  const size_t interior = count - 2;           // indices 1 .. count - 2
  const size_t buckets = (max_points - 2) / 2;  // interior > buckets: count > max_points >= 2 buckets + 2
  kept.reserve(2 * buckets + 2);
  kept.push_back(0);
  for (size_t bucket = 0; bucket < buckets; ++bucket) {
    const size_t begin = 1 + bucket * interior / buckets;
    const size_t end = 1 + (bucket + 1) * interior / buckets;
    size_t lowest = end;
    size_t highest = end;
    for (size_t i = begin; i < end; ++i) {
      if (std::isnan(values[i])) continue;
      if (lowest == end || values[i] < values[lowest]) lowest = i;
      if (highest == end || values[i] > values[highest]) highest = i;
    }
    if (lowest == end) {  // NaN only
      kept.push_back(begin);
      continue;
    }
    kept.push_back(std::min(lowest, highest));
    if (lowest != highest) kept.push_back(std::max(lowest, highest));
  }
  kept.push_back(count - 1);
  return kept;
}

}  // namespace rung

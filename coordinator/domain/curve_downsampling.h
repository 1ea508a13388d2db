// coordinator/domain/curve_downsampling.h
//
// Which points of a curve a chart gets when the curve has more than it can show: min/max per
// bucket. The first and the last point are always kept; the points between them are split into
// (max_points - 2) / 2 buckets of consecutive points (sizes differ by at most one, in order), and
// each bucket keeps its lowest and its highest value, in the order they come (one point when both
// are the same). So a spike or a dip anywhere in the curve survives, unlike thinning to every k-th
// point, and the result never has more than max_points points.
//
// NaN values (non-finite losses) are neither lowest nor highest; a bucket of NaN only keeps its
// first point, so a divergence still shows.
//
// Example:
//   std::vector<size_t> kept = MinMaxBucketIndices(values, 1000);  // indices into values, increasing
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <vector>

namespace rung {

// The fewest points MinMaxBucketIndices draws a curve with: the ends and one bucket's two extremes.
inline constexpr size_t kMinDownsampledPoints = 4;

// The indices of `values` kept (increasing): all when values.size() <= max_points; else as above.
// A max_points under kMinDownsampledPoints is taken as kMinDownsampledPoints.
std::vector<size_t> MinMaxBucketIndices(const std::vector<double>& values, size_t max_points);

}  // namespace rung

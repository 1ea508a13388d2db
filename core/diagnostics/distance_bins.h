// core/diagnostics/distance_bins.h
//
// Bins of relative distance delta = i - j for a by-distance profile over a training length T (the
// pair-by-distance contribution heatmap of AdaRoPE figures 1 and 5): distance 0 alone, then bins whose
// edges grow geometrically from 1 to T, so short distances keep their detail at every T. Edges are
// integers, strictly increasing: bin b holds the distances [edges[b], edges[b + 1]); edges.front() is 0
// and edges.back() is T. Where T leaves fewer distinct integer edges than asked, there are fewer bins
// (at most T: one distance each).
//
// Example: DistanceBinEdges(64, 4) -> {0, 1, 4, 16, 64}.
//
// Torch-free; pure functions.
#pragma once

#include <cstdint>
#include <vector>

namespace rung {

// REQUIRES: time >= 1, bins >= 1. Returns edges.size() - 1 <= min(bins, time) bins.
std::vector<int64_t> DistanceBinEdges(int64_t time, int64_t bins);

// The bin of every distance 0..time-1 under `edges` (from DistanceBinEdges).
std::vector<int64_t> DistanceBinOf(const std::vector<int64_t>& edges);

}  // namespace rung

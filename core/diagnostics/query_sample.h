// core/diagnostics/query_sample.h
//
// The query positions a diagnostic reads when it may estimate its statistic from a sample of rows
// instead of every row of a T x T score matrix (docs/science.md section 7 says which statistics do):
// every position 0..T-1 when T <= `most`, so that short sequences are measured exactly as before;
// otherwise `most` positions spread evenly over the window, p_k = floor((k + 1) T / most) - 1 for
// k = 0..most-1, which includes the last position T - 1 and never repeats one. Deterministic: the same
// T and bound give the same positions, so two runs (or two models) are compared on the same rows.
// Torch-free.
#pragma once

#include <cstdint>
#include <vector>

namespace rung {

// The default bound on the query rows a sampled statistic reads per sequence and length.
inline constexpr int64_t kDiagnosticQueryRows = 256;

// Ascending positions in [0, time). REQUIRES: time >= 0, most >= 1.
std::vector<int64_t> DiagnosticQueryPositions(int64_t time, int64_t most = kDiagnosticQueryRows);

}  // namespace rung

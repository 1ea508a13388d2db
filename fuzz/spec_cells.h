// fuzz/spec_cells.h
//
// For the fuzz targets that expand sweep specs (sweep_spec_fuzzer.cc, rpc_fuzzer.cc' SubmitSweep):
// the number of cells ExpandSweepSpec would visit, counted as it counts them (ladder rungs x the
// product of the axes' points, SweepAxes::CellsPerRung), saturating just above a cap. A valid spec
// may ask for any number of cells; expanding a billion of them is slow, not a finding, so the
// targets expand only specs at or under the cap.
#pragma once

#include <cstdint>

#include "sweeps/spec/sweep_spec.h"

namespace rung::fuzz {

inline constexpr uint64_t kMaxExpandedCells = 64;

// Cells of `spec`, or kMaxExpandedCells + 1 for anything over the cap.
inline uint64_t CappedCells(const SweepSpec& spec) {
  uint64_t cells = spec.ladder.rungs.size();
  if (cells > kMaxExpandedCells) return kMaxExpandedCells + 1;
  for (const SweepAxis& axis : spec.axes.axes) {
    const uint64_t points = axis.points.size();
    if (points > kMaxExpandedCells) return cells == 0 ? 0 : kMaxExpandedCells + 1;
    cells *= points;
    if (cells > kMaxExpandedCells) return kMaxExpandedCells + 1;
  }
  return cells;
}

}  // namespace rung::fuzz

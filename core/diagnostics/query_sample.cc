#include "core/diagnostics/query_sample.h"

#include <cstddef>

namespace rung {

std::vector<int64_t> DiagnosticQueryPositions(int64_t time, int64_t most) {
  std::vector<int64_t> positions;
  const int64_t count = time <= most ? time : most;
  positions.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    // (k + 1) T / most - 1 grows by at least T / most >= 1 per step: ascending and distinct.
    positions.push_back(time <= most ? k : (k + 1) * time / most - 1);
  }
  return positions;
}

}  // namespace rung

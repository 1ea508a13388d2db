#include "core/diagnostics/synthetic_score_rows.h"

#include <random>

namespace rung {

std::vector<ContactRow> SyntheticContactRows(const std::string& kind, const std::vector<int64_t>& lengths,
                                             int64_t rows_per_length, double gap, uint64_t seed) {
  std::vector<ContactRow> rows;
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal;
  int64_t unit = 0;
  for (int64_t n : lengths) {
    // A simplex row is the same at every draw: one row per length says all there is.
    const int64_t count = kind == "simplex" ? 1 : rows_per_length;
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t draw = 0; draw < count; ++draw) {
      if (kind == "simplex") {
        std::fill(row.begin(), row.end(), -gap);
        row[0] = 0.0;
      } else {
        for (double& value : row) value = normal(random);
      }
      rows.push_back({unit++, CountGaps(row)});
    }
  }
  return rows;
}

}  // namespace rung

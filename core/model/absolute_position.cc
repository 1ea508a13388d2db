#include "core/model/absolute_position.h"

namespace rung {

torch::Tensor AbsolutePositionRows(const torch::Tensor& table, int64_t time, const std::string& beyond) {
  const int64_t rows = table.size(0);
  if (time <= rows) return table.narrow(0, 0, time);
  TORCH_CHECK(beyond == "clamp", "position.variant absolute: a sequence of ", time,
              " positions is longer than the position table (", rows,
              " rows, the training length) and position.absolute.beyond is ", beyond,
              " (clamp uses the last row beyond it)");
  torch::Tensor positions =
      torch::arange(time, torch::TensorOptions().dtype(torch::kLong).device(table.device())).clamp_max(rows - 1);
  return table.index_select(0, positions);
}

}  // namespace rung

#include "core/hf/rotary_permutation.h"

namespace rung::hf {

torch::Tensor HfToRungRotaryRows(int64_t head_dim, int64_t rotary_dims) {
  const int64_t rotated = rotary_dims > 0 ? rotary_dims : head_dim;
  const int64_t half = rotated / 2;
  torch::Tensor order = torch::empty({head_dim}, torch::kLong);
  auto rows = order.accessor<int64_t, 1>();
  for (int64_t f = 0; f < half; ++f) {
    rows[2 * f] = f;
    rows[2 * f + 1] = f + half;
  }
  for (int64_t j = rotated; j < head_dim; ++j) rows[j] = j;  // passed through, in order
  return order;
}

torch::Tensor RungToHfRotaryRows(int64_t head_dim, int64_t rotary_dims) {
  return torch::argsort(HfToRungRotaryRows(head_dim, rotary_dims));
}

torch::Tensor PermuteHeadRows(const torch::Tensor& rows_of_heads, int64_t heads, const torch::Tensor& order) {
  const int64_t head_dim = order.size(0);
  std::vector<int64_t> shape = rows_of_heads.sizes().vec();
  std::vector<int64_t> split = {heads, head_dim};
  split.insert(split.end(), shape.begin() + 1, shape.end());
  return rows_of_heads.reshape(split).index_select(1, order).reshape(shape);
}

}  // namespace rung::hf

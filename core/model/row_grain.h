// core/model/row_grain.h
//
// How many rows of `width` elements one task of at::parallel_for takes in the fused row kernels
// (residual_rms_norm.cc, mlp_activation.cc, core/train/token_cross_entropy.cc): enough rows to make
// ATen's grain in elements, and at least one.
#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>

namespace rung {

inline int64_t RowGrain(int64_t width) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(1, width));
}

}  // namespace rung

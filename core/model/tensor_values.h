// core/model/tensor_values.h
//
// A tensor's values as doubles, flattened in row-major order and copied to the host: what records and
// the torch-free diagnostics take from a model.
#pragma once

#include <vector>

#include <torch/torch.h>

namespace rung {

inline std::vector<double> TensorValues(const torch::Tensor& tensor) {
  torch::Tensor flat = tensor.detach().to(torch::kCPU, torch::kDouble).contiguous().view({-1});
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

}  // namespace rung

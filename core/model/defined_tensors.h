// core/model/defined_tensors.h
//
// The defined ones of a module's optional parameters, in order: what a module's parameter groups
// (frequencies, scales, inverse temperatures) return, since a variant registers only the
// parameters it uses and leaves the others undefined.
#pragma once

#include <initializer_list>
#include <vector>

#include <torch/torch.h>

namespace rung {

inline std::vector<torch::Tensor> DefinedTensors(std::initializer_list<torch::Tensor> tensors) {
  std::vector<torch::Tensor> defined;
  for (const torch::Tensor& tensor : tensors) {
    if (tensor.defined()) defined.push_back(tensor);
  }
  return defined;
}

}  // namespace rung

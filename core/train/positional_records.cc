#include "core/train/positional_records.h"

#include <torch/torch.h>

#include "core/model/tensor_values.h"

namespace rung {
namespace {

records::Tensor TensorRecord(const std::string& name, const torch::Tensor& tensor) {
  return {name, tensor.sizes().vec(), TensorValues(tensor)};
}

}  // namespace

bool IsPositionalParameter(const std::string& name) {
  return name.rfind("positional.", 0) == 0 || name.rfind("inverse_temperature.", 0) == 0;
}

std::vector<records::Tensor> PositionalParameters(Transformer& model) {
  std::vector<records::Tensor> params;
  for (const auto& item : model->named_parameters(/*recurse=*/true)) {
    if (IsPositionalParameter(item.key())) params.push_back(TensorRecord(item.key(), item.value()));
  }
  return params;
}

std::vector<records::Tensor> Frequencies(Transformer& model) {
  torch::NoGradGuard no_grad;
  std::vector<records::Tensor> layers;
  if (!model->config().position.rotary()) return layers;
  for (int64_t layer = 0; layer < model->config().layers; ++layer) {
    layers.push_back(TensorRecord("layer_" + std::to_string(layer), model->positional()->Frequencies(layer)));
  }
  return layers;
}

}  // namespace rung

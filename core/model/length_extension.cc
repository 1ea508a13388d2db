#include "core/model/length_extension.h"

#include "core/model/frequency_extension.h"

namespace rung {

torch::Tensor ExtendFrequencies(const torch::Tensor& theta, const LengthExtension& extension, int64_t layer) {
  if (!extension.active()) return theta;
  return ExtendFrequenciesAt(theta, torch::full({}, extension.scale, theta.options()), extension, layer);
}

torch::Tensor ExtendFrequenciesAt(const torch::Tensor& theta, const torch::Tensor& scales,
                                  const LengthExtension& extension, int64_t layer) {
  // s broadcast over theta's dimensions: [S..., 1, ..., 1].
  std::vector<int64_t> shape = scales.sizes().vec();
  for (int64_t d = 0; d < theta.dim(); ++d) shape.push_back(1);
  const torch::Tensor s = scales.to(theta.options()).reshape(shape);
  return FrequencyExtensionFor(extension.method).Extend(theta, s, extension, layer);
}

double ExtensionLogitFactor(const LengthExtension& extension) {
  if (!extension.active()) return 1.0;
  return FrequencyExtensionFor(extension.method).LogitFactor(extension.scale, extension);
}

torch::Tensor ExtensionLogitFactorAt(const torch::Tensor& scales, const LengthExtension& extension) {
  return FrequencyExtensionFor(extension.method).LogitFactorAt(scales, extension);
}

bool HasLogitFactor(const LengthExtension& extension) {
  return FrequencyExtensionFor(extension.method).has_logit_factor();
}

torch::Tensor DocumentScales(const torch::Tensor& doc_start, double train_length) {
  // Positions of one document share its start: the count of a start in the row is that document's span.
  const torch::Tensor starts = doc_start.to(torch::kLong);
  const torch::Tensor counts =
      torch::zeros(starts.sizes(), torch::TensorOptions().dtype(torch::kFloat).device(starts.device()))
          .scatter_add_(1, starts, torch::ones(starts.sizes(), torch::TensorOptions().dtype(torch::kFloat).device(starts.device())));
  return (counts.gather(1, starts) / static_cast<float>(train_length)).clamp_min(1.0);
}

}  // namespace rung

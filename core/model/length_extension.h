// core/model/length_extension.h
//
// Inference-time length extension of rotary frequencies (docs/science.md section 9), for evaluating a
// model at `scale` times its training length:
//   none          theta unchanged
//   pi            position interpolation: theta / s
//   ntk_by_parts  per pair, by r = L_train / wavelength (wavelength = 2 pi / theta): pairs that turn
//                 more than beta times over the training length keep theta, pairs that turn less than
//                 alpha times are interpolated (theta / s), a linear ramp in between (alpha 1, beta 32)
//   yarn          ntk_by_parts, plus the logit factor (0.1 ln s + 1)^2
// Learned frequencies (LeRoPE, AdaRoPE) are transformed the same way.
#pragma once

#include <string>

#include <torch/torch.h>

namespace rung {

struct LengthExtension {
  std::string method = "none";  // none | pi | ntk_by_parts | yarn
  double scale = 1.0;           // evaluation length / training length
  double train_length = 0.0;
  double alpha = 1.0, beta = 32.0;

  bool active() const { return method != "none" && scale > 1.0; }
};

// theta: frequencies (any shape, last dim the pairs). Returns the transformed frequencies.
torch::Tensor ExtendFrequencies(const torch::Tensor& theta, const LengthExtension& extension);

// The factor on the logits: (0.1 ln s + 1)^2 for yarn, else 1.
double ExtensionLogitFactor(const LengthExtension& extension);

}  // namespace rung

// core/model/frequency_extension.h
//
// The model part of a length-extension method (its descriptor: core/config/length_extension_method.h):
// the frequencies it makes from trained ones at a scale s, and its logit factor. One subclass per file
// core/model/extension/<name>.cc, the same <name> as its descriptor, ending with
// RUNG_FREQUENCY_EXTENSION(<name>, <Class>); the build lists them. length_extension.h dispatches to
// them by LengthExtension::method.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/model/length_extension.h"

namespace rung {

class FrequencyExtension {
 public:
  virtual ~FrequencyExtension() = default;
  virtual const char* name() const = 0;
  // theta [..., d/2] (G rows of `layer`'s frequencies) at scales `s`, shaped to broadcast over theta
  // ([S..., 1, ..., 1]): the extended frequencies, shape S + theta's.
  virtual torch::Tensor Extend(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension,
                               int64_t layer) const = 0;
  // Whether it multiplies the logits (then LogitFactor and LogitFactorAt say by what).
  virtual bool has_logit_factor() const { return false; }
  // The factor at one scale s > 1 (double precision), and per entry of `scales` (each >= 1).
  virtual double LogitFactor(double scale, const LengthExtension& extension) const;
  virtual torch::Tensor LogitFactorAt(const torch::Tensor& scales, const LengthExtension& extension) const;
};

// The model part of `method`. Throws (c10::Error) for a method without one.
const FrequencyExtension& FrequencyExtensionFor(const std::string& method);
// The names of the methods with a model part (every registered method has one: tested).
std::vector<std::string> FrequencyExtensionNames();

// NTK-by-parts' frequencies (also YaRN's): per pair, by r = L_train / wavelength, theta kept for
// r >= beta, theta / s for r <= alpha, a linear ramp between.
torch::Tensor NtkByPartsFrequencies(const torch::Tensor& theta, const torch::Tensor& s, const LengthExtension& extension);

}  // namespace rung

#define RUNG_FREQUENCY_EXTENSION(NAME, CLASS)                                  \
  const ::rung::FrequencyExtension& rung_frequency_extension_##NAME() {       \
    static const CLASS extension;                                             \
    return extension;                                                         \
  }

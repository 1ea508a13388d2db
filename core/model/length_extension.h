// core/model/length_extension.h
//
// Inference-time length extension of rotary frequencies (docs/science.md section 9), for evaluating a
// model at `scale` times its training length. Each method is a descriptor
// (core/config/extension/<name>.cc) and a model part (core/model/extension/<name>.cc,
// frequency_extension.h) that the functions below dispatch to by `method`:
//   none           theta unchanged
//   pi             position interpolation: theta / s
//   ntk_by_parts   per pair, by r = L_train / wavelength (wavelength = 2 pi / theta): pairs that turn
//                  more than beta times over the training length keep theta, pairs that turn less than
//                  alpha times are interpolated (theta / s), a linear ramp in between (alpha 1, beta 32)
//   yarn           ntk_by_parts, plus the logit factor (c ln s + 1)^2 (c = yarn_c, 0.1 by default)
//   dynamic_ntk    the base rescaled for the evaluated length: b' = b s^(d/(d-2)), i.e. the theta of
//                  pair index f times s^(-2f/(d-2)) (pair 0 kept, pair d/2 - 1 divided by s; for RoPE's
//                  schedule the fastest and the slowest); "dynamic"
//                  because s is the length of the sequence evaluated over the training length
//   yarn_hf        YaRN as its reference code and Hugging Face transformers compute it: the ramp between
//                  interpolated and kept pairs linear in the pair index (not in r), between the
//                  correction dimensions of beta (beta_fast, 32) and alpha (beta_slow, 1) turns over
//                  train_length, floored and ceiled when `truncate`; q and k each multiplied by the
//                  attention factor (0.1 ln s + 1 unless `attention_factor` is set), so the logits by
//                  its square
//   llama3         Llama 3.1's rope_scaling: ntk_by_parts with alpha = low_freq_factor (1) and beta =
//                  high_freq_factor (4)
//   dominant_band  position interpolation of the dominant pair only (theta / s), every other pair kept:
//                  the pair of each frequency row given by `dominant_pairs`
// Learned frequencies (LeRoPE, AdaRoPE) are transformed the same way.
//
// Per document (LeRoPE appendix D.2; `per_document`): under cross-document masking each document of an
// evaluated window gets its own factor, scale = max(1, L_doc / L_train) with L_doc the length of its
// span in the window (DocumentScales), so a document no longer than the training length is evaluated
// as trained and a longer one is extended for its own length, whatever else the window holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace rung {

struct LengthExtension {
  std::string method = "none";  // a registered method (core/config/length_extension_method.h)
  double scale = 1.0;           // evaluation length / training length
  double train_length = 0.0;
  double alpha = 1.0, beta = 32.0;
  double yarn_c = 0.1;          // YaRN's temperature coefficient c
  double rope_base = 10000.0;   // yarn_hf: the base b its correction dimensions are computed with
  double attention_factor = 0;  // yarn_hf: q's and k's factor; 0 = 0.1 ln s + 1
  bool truncate = true;         // yarn_hf: correction dimensions floored and ceiled
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  // dominant_band: the interpolated pair of each layer's frequency rows, [layer][row]; a shared schedule
  // has one layer of one row, and a layer or row beyond the table uses the last one given.
  std::vector<std::vector<int64_t>> dominant_pairs = {};
  // The factor per document (DocumentScales) where a forward pass has document starts; else `scale`
  // for every position.
  bool per_document = false;

  bool active() const { return method != "none" && scale > 1.0; }
};

// theta: frequencies [G, d/2] of `layer` (G rows: 1 when shared, else per KV group). Returns the
// transformed frequencies.
torch::Tensor ExtendFrequencies(const torch::Tensor& theta, const LengthExtension& extension, int64_t layer = 0);

// The factor on the logits: (c ln s + 1)^2 for yarn, else 1.
double ExtensionLogitFactor(const LengthExtension& extension);

// Whether the method multiplies the logits (YaRN's does).
bool HasLogitFactor(const LengthExtension& extension);

// The extension at a factor per entry: `scales` (any shape S, float, each >= 1) replaces
// extension.scale; returns the frequencies of shape S + theta.shape, entry i extended as
// ExtendFrequencies would at scales[i] (an entry at 1 keeps theta). Method "none" keeps theta.
torch::Tensor ExtendFrequenciesAt(const torch::Tensor& theta, const torch::Tensor& scales,
                                  const LengthExtension& extension, int64_t layer = 0);

// The logit factor per entry of `scales`: (c ln s + 1)^2 for yarn, else 1 (same shape as scales).
torch::Tensor ExtensionLogitFactorAt(const torch::Tensor& scales, const LengthExtension& extension);

// doc_start: [B, T] the first position of each position's document in its window (long). Returns [B, T]
// float: max(1, (positions of that document in the window) / train_length).
torch::Tensor DocumentScales(const torch::Tensor& doc_start, double train_length);

}  // namespace rung

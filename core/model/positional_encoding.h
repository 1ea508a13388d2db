// core/model/positional_encoding.h
//
// The positional encoding of a model (docs/science.md section 2): the model part of its variant
// (positional_variant_model.h, one file each in core/model/positional/), and what all variants share:
// for a sequence of T positions, per layer the rotary tables made from the variant's frequencies
// (cached while nothing learned changes them), its query multiplier and its logit-bias slopes; the
// inference-time length extensions (length_extension.h) and LeRoPE's leave-one-out band ablation.
// Every learned positional parameter (fp32) is registered on this module by the variant.
//
// Contract: Tables(T) is differentiable in the learned parameters; angles and cos/sin are fp32.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/config/model_config.h"
#include "core/model/length_extension.h"
#include "core/model/positional_variant_model.h"

namespace rung {

// ALiBi slopes for `heads` heads: 2^(-8h/H) for a power of two H; otherwise the standard rule
// (the slopes of the next lower power of two, then every other slope of twice that count).
std::vector<double> AlibiSlopes(int64_t heads);

// RoPE's frequencies b^(-2f/d) for f = 0..d/2-1.
std::vector<double> RopeFrequencies(double base, int64_t head_dim);

class PositionalEncodingImpl : public torch::nn::Module {
 public:
  explicit PositionalEncodingImpl(const ModelConfig& config);

  // Per-layer tables for positions 0..T-1 on the device of `keys`: the keys each query sees ([T] or
  // [B, T], float), AdaScale's L in its `query` mode. With a per-document length extension and
  // `doc_start` ([B, T], cross-document masking) the rotary tables are [B, T, G, d/2], each position's
  // frequencies extended for its document's length (length_extension.h).
  std::vector<LayerTables> Tables(int64_t time, const torch::Tensor& keys, const torch::Tensor& doc_start = {});
  // The same with query i seeing i + 1 keys.
  std::vector<LayerTables> Tables(int64_t time, const torch::Device& device);

  // Rows start..T-1 of Tables(T, device) (query i seeing i + 1 keys): a cached forward's new positions
  // (kv_cache.h) with the tables one pass over all T positions gives them. REQUIRES: 0 <= start < T.
  std::vector<LayerTables> TableRows(int64_t time, int64_t start, const torch::Device& device);

  // Frequencies theta [G, d/2] of `layer` (G = 1 when shared), as trained; undefined for nope/alibi.
  torch::Tensor Frequencies(int64_t layer);

  // Applies an inference-time length extension to the frequencies Tables() uses (evaluation beyond
  // the training length); LengthExtension{} switches it off.
  void set_length_extension(const LengthExtension& extension);
  const LengthExtension& length_extension() const { return extension_; }
  // Whether a forward pass with these document starts extends per document (the extension is
  // per_document and active, and doc_start is defined).
  bool PerDocument(const torch::Tensor& doc_start) const;
  // Whether, without document starts, a position's tables are the same in every window that holds it
  // (rows 0..T-1 of Tables(T') for any T' > T are Tables(T)'s), so that a cached forward (kv_cache.h)
  // computes what one pass over the whole sequence does. False where the variant's tables depend on the
  // window's length (PositionalVariantModel::TablesDependOnLength: xPos, AdaScale with adarope.length
  // sequence). A length extension keeps it: every method extends at its set scale whatever the window's
  // length (dynamic NTK's s is chosen by whoever sets the extension, e.g. for the longest window it will
  // evaluate); only a per-document factor follows the window, and that needs document starts.
  bool TablesIndependentOfLength() const { return !variant_->TablesDependOnLength(); }
  // [B, T] each position's logit factor from its document's length (YaRN's), or undefined where the
  // factor is not per document or not YaRN's (then ExtensionLogitFactor applies to every position).
  torch::Tensor DocumentLogitFactors(const torch::Tensor& doc_start) const;

  // A context extension's start on trained parameters (AdaRoPE's: docs/science.md section 9, AdaRoPE
  // section 3.4; core/model/positional/adarope.cc). Throws (c10::Error) for a variant without one.
  // REQUIRES: scale >= 1.
  void StartContextExtension(const std::string& schedule, double scale, double source_length, double yarn_c);

  // The leave-one-out band ablations: while `pair` >= 0, Tables() changes that pair in every layer and
  // row; -1 switches it off.
  //   kRevertToRope  the pair turns at RoPE's frequency b^(-2 pair/d) instead of the learned one
  //   kZero          the pair's cos and sin are 0, so its query and key components, and with them its
  //                  contribution to every logit, are zero (LeRoPE appendix D.1: "we zero one learned
  //                  frequency band at a time")
  enum class BandAblation { kRevertToRope, kZero };
  void set_band_ablation(int64_t pair, BandAblation mode);

  // ALiBi slopes [heads] (fp32), or undefined.
  const torch::Tensor& alibi_slopes() const { return alibi_slopes_; }

  // Learned parameters whose learning rate is scaled by adarope.freq_lr_mult (AdaFreq x, log b).
  std::vector<torch::Tensor> frequency_parameters() const { return variant_->frequency_parameters(); }
  // The other learned positional parameters (LeRoPE a, AdaScale tau/rho and gamma).
  std::vector<torch::Tensor> scale_parameters() const { return variant_->scale_parameters(); }

  // The variant's model part (the transformer asks it for an input position table).
  const PositionalVariantModel& variant() const { return *variant_; }

 private:
  ModelConfig config_;
  LengthExtension extension_;
  int64_t ablated_pair_ = -1;
  BandAblation ablation_ = BandAblation::kRevertToRope;
  torch::Tensor rope_log_freq_;  // buffer [d/2]: log b^(-2f/d), for rotary variants
  torch::Tensor rotate_mask_;    // buffer [d/2]: 1 for rotating pairs (all but p-RoPE's tail)
  std::unique_ptr<PositionalVariantModel> variant_;
  torch::Tensor alibi_slopes_;
  // Cache of constant tables (Schedule::kConstant): valid for cached_time_ positions on cached_device_.
  int64_t cached_time_ = -1;
  torch::Device cached_device_ = torch::kCPU;
  torch::Tensor cached_cos_, cached_sin_;
};
TORCH_MODULE(PositionalEncoding);

}  // namespace rung

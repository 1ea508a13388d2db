// core/model/positional_encoding.h
//
// The positional variants of docs/science.md section 2 as one module: it owns every learned positional
// parameter (fp32) and, for a sequence of T positions, produces per layer the rotary tables and
// the AdaScale query multiplier, plus the ALiBi slopes.
//
//   nope     no tables
//   rope     theta_f = b^(-2f/d), one table for all layers and heads (cached)
//   prope    rope on the fastest floor(p*d/2) pairs, theta = 0 on the rest (cached)
//   lerope   theta_f = exp(a_f) b^(-2f/d), a [d/2] shared by every layer and head, init 0
//   adarope  theta = exp(x) with x [layers, kv_heads, d/2] (share_freq: [layers, 1, d/2] or
//            [1, 1, d/2]) init log of RoPE's; or learned_base: log b per schedule;
//            AdaScale lambda_h(L) = (1/tau_h) [ln(1 + max(L, L_ref)/L_ref)]^gamma_h per layer and
//            query head (tau = 1, gamma = 0 at init; tau optionally exp(rho)); fixed_log replaces
//            it by ln(1 + max(L, L_ref)/L_ref) / ln 2 with nothing learned
//   alibi    slopes m_h of the standard geometric set (any head count)
//   absolute no tables: its learned position table is an embedding parameter of the transformer
//            (absolute_position.h), not a positional parameter of this module
//
// Contract: Tables(T) is differentiable in the learned parameters; angles and cos/sin are fp32.
#pragma once

#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/config/model_config.h"
#include "core/model/length_extension.h"

namespace rung {

struct LayerTables {
  torch::Tensor cos, sin;     // [T, G, d/2] fp32, or undefined (no rotation)
  torch::Tensor query_scale;  // [..., T, heads] fp32 AdaScale multiplier (the shape of `keys`), or undefined (1)
};

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

  // Frequencies theta [G, d/2] of `layer` (G = 1 when shared), as trained; undefined for nope/alibi.
  torch::Tensor Frequencies(int64_t layer);

  // Applies an inference-time length extension to the frequencies Tables() uses (evaluation beyond
  // the training length); LengthExtension{} switches it off.
  void set_length_extension(const LengthExtension& extension);
  const LengthExtension& length_extension() const { return extension_; }
  // Whether a forward pass with these document starts extends per document (the extension is
  // per_document and active, and doc_start is defined).
  bool PerDocument(const torch::Tensor& doc_start) const;
  // [B, T] each position's logit factor from its document's length (YaRN's), or undefined where the
  // factor is not per document or not YaRN's (then ExtensionLogitFactor applies to every position).
  torch::Tensor DocumentLogitFactors(const torch::Tensor& doc_start) const;

  // AdaRoPE context extension's start (docs/science.md section 9, AdaRoPE section 3.4), applied to
  // trained parameters: the frequencies NTK-by-parts-interpolated for `scale` times `source_length`
  // (a learned base instead rescaled as NTK: log b + (d/(d-2)) ln scale), gamma = 0, and tau set so that
  // AdaScale (lambda = 1 / tau once gamma = 0) starts at YaRN's logit factor (yarn_c ln scale + 1)^2.
  // REQUIRES: variant adarope, scale >= 1.
  void StartContextExtension(double scale, double source_length, double yarn_c);

  // The leave-one-out band ablation (LeRoPE appendix D.1): while `pair` >= 0, Tables() gives that pair
  // RoPE's frequency b^(-2 pair/d) in every layer and row instead of the learned one; -1 switches it off.
  void set_reverted_pair(int64_t pair);

  // ALiBi slopes [heads] (fp32), or undefined.
  const torch::Tensor& alibi_slopes() const { return alibi_slopes_; }

  // Learned parameters whose learning rate is scaled by adarope.freq_lr_mult (AdaFreq x, log b).
  std::vector<torch::Tensor> frequency_parameters() const;
  // The other learned positional parameters (LeRoPE a, AdaScale tau/rho and gamma).
  std::vector<torch::Tensor> scale_parameters() const;

 private:
  torch::Tensor AdaScale(int64_t layer, int64_t time, const torch::Tensor& keys);

  ModelConfig config_;
  LengthExtension extension_;
  int64_t reverted_pair_ = -1;
  torch::Tensor rope_log_freq_;    // buffer [d/2]: log b^(-2f/d) (or -inf-free mask for prope)
  torch::Tensor rotate_mask_;      // buffer [d/2]: 1 for rotating pairs (prope), else all ones
  torch::Tensor lerope_log_scale_; // [d/2]
  torch::Tensor adarope_log_freq_; // [S, G, d/2]
  torch::Tensor adarope_log_base_; // [S, G]
  torch::Tensor adascale_tau_;     // [layers, heads] (tau, or rho when tau_param = exp)
  torch::Tensor adascale_gamma_;   // [layers, heads]
  torch::Tensor alibi_slopes_;
  // Cache of constant tables (rope, prope): valid for cached_time_ positions on cached_device_.
  int64_t cached_time_ = -1;
  torch::Device cached_device_ = torch::kCPU;
  torch::Tensor cached_cos_, cached_sin_;
};
TORCH_MODULE(PositionalEncoding);

}  // namespace rung

// core/config/model_config.h
//
// The resolved description of one model: backbone shape, positional variant (docs/science.md
// sections 2 and 13) and inverse-temperature schedule (section 3). Torch-free: sweeps/, the
// coordinator and the CLI use it, with model_arithmetic.h, without linking LibTorch.
//
// Contract: a ModelConfig is plain data. Resolve() fills derived defaults (kv_heads, head_dim,
// mlp_hidden, n_ref); Validate() reports every impossible value at once, each with its key path.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/config/config_error.h"

namespace rung {

// AdaRoPE settings (docs/science.md section 2).
struct AdaRopeConfig {
  double l_ref = 64.0;                 // AdaScale reference length L_ref
  std::string length = "query";        // "query": L = n (keys visible); "sequence": L = T
  std::string share_freq = "none";     // "none" (per layer and KV group), "layer", "global"
  // AdaScale's tau and gamma: "none" (per layer and query head, the paper's), "layer" (one pair per
  // layer), "global" (one pair in all: with share_freq global, the tuned global schedule of the
  // head-wise claim's control)
  std::string share_scale = "none";
  bool adascale = true;                // false = the `no_adascale` ablation
  bool fixed_log = false;              // AdaScale replaced by ln(1+max(L,L_ref)/L_ref)/ln 2, nothing learned
  bool learned_base = false;           // learn log b (per layer and KV group, or shared) instead of x
  std::string tau_param = "direct";    // "direct": tau learned; "exp": tau = exp(rho), rho learned
  double freq_lr_mult = 10.0;          // frequency parameters' LR relative to the positional LR
};

// Learned absolute position embedding settings (docs/science.md section 13): the table has a row for
// each of the n_train = seq_len training positions and none beyond.
struct AbsolutePositionConfig {
  std::string beyond = "refuse";       // positions >= n_train: "refuse" the sequence, or "clamp" to the last row
};

// The settings of a positional variant added since the registry (positional_variant.h,
// BlockSettings): position.<block>.<key>, by kind.
struct VariantSettings {
  std::map<std::string, double> reals;
  std::map<std::string, std::string> words;
  std::map<std::string, bool> flags;
};

struct PositionConfig {
  std::string variant = "rope";        // a registered variant (positional_variant.h)
  double base = 10000.0;               // b
  double fraction = 0.75;              // prope: p, the share of pairs that rotate
  double lr_mult = 1.0;                // positional parameter group LR = train.lr * lr_mult
  double clip = 1.0;                   // global-norm clip of the positional group (0 = none)
  bool freeze = false;                 // learned positional parameters not trained
  AdaRopeConfig adarope;
  AbsolutePositionConfig absolute;
  std::map<std::string, VariantSettings> blocks;  // by block name: the variants' BlockSettings read

  // The variant rotates queries and keys (its descriptor's rotary(); false for an unknown name).
  bool rotary() const;
};

struct InverseTemperatureConfig {
  std::string form = "none";           // none | log_power | qwen | ssmax | learned
  double xi = 1.0;                     // exponent (log_power, qwen)
  double n_ref = 0.0;                  // reference length; 0 = the training length
  double s = 1.0;                      // log_power scale
  bool learn_s = false;                // log_power: s learned per (layer, head)
  std::string extend = "hold";         // learned: beyond n_train "hold" the last value or "power_law"
};

struct ModelConfig {
  int64_t vocab_size = 0;              // 0 = from the data source
  int64_t layers = 2;
  int64_t d_model = 64;
  int64_t heads = 4;
  int64_t kv_heads = 0;                // 0 = heads (MHA); a divisor of heads for GQA
  int64_t head_dim = 0;                // 0 = d_model / heads; heads x head_dim may differ from d_model (Qwen3)
  std::string mlp = "gelu";            // gelu | swiglu
  int64_t mlp_hidden = 0;              // 0 = 4 * d_model
  bool qk_norm = false;
  double norm_eps = 1e-5;
  bool qkv_bias = false;               // the fused q/k/v projection carries a bias (Qwen2's)
  bool tie_embeddings = false;         // the output head is the token embedding (SmolLM's, Qwen's small models)
  std::string attention = "auto";      // auto | exact | fused (fused needs LibTorch >= 2 and no dense bias)
  int64_t seq_len = 0;                 // training length T (resolved from data.seq_len)
  // Resolved from data.cross_doc_mask and data.cross_doc_keys: beta(n) and AdaScale's L count the keys
  // inside the query's document (forward's doc_start) rather than its position in the window.
  bool document_key_counts = false;
  PositionConfig position;
  InverseTemperatureConfig inverse_temperature;

  int64_t groups() const { return heads / kv_heads; }  // query heads per KV head
  int64_t rotary_pairs() const { return head_dim / 2; }
};

// Fills derived defaults. Idempotent.
void ResolveModelConfig(ModelConfig* config);

// Appends one ConfigError per impossible value (paths relative to the trial config, e.g.
// "model.heads", "position.fraction"). Call after ResolveModelConfig.
void ValidateModelConfig(const ModelConfig& config, std::vector<ConfigError>* errors);

}  // namespace rung

// core/model/transformer.h
//
// The decoder-only transformer of docs/science.md section 4 with every positional variant and
// inverse-temperature schedule: token embedding (plus, for position.variant absolute, row p of the
// learned position table "position_embedding" [seq_len, d_model] at position p: absolute_position.h);
// `layers` pre-norm blocks of
//   x += W_o Attention(Rotate(Q), Rotate(K), V)    (Q, K, V from one fused projection of RMSNorm(x))
//   x += W_down MLP(W_up RMSNorm(x))               (GELU, or SwiGLU with a fused gate/up projection)
// final RMSNorm and an output head, untied unless model.tie_embeddings (then the head is the token
// embedding). No biases unless model.qkv_bias (one on the fused q/k/v projection). Optional QK-norm
// (RMSNorm over the head dimension, before rotation). Initialisation: std 1/sqrt(fan_in), output projections of attention
// and MLP scaled by 1/sqrt(2 layers), embeddings std 1/sqrt(d_model), the absolute position table
// std 0.02 (GPT-2's), norm gains 1.
//
// Query multipliers (AdaScale lambda, inverse temperature beta) multiply q after rotation, inside
// the rotation kernel, so the attention kernel stays unchanged; a multiplier per sequence (document key
// counts) multiplies q before the rotation instead, in fp32 (the two commute).
//
// Cross-document masking (data.cross_doc_mask): given doc_start (DocumentStarts, attention.h), every
// layer's attention keeps each query inside its own document of the packed window. Positions are not
// reset per document: rotary angles and ALiBi distances use the position in the window (relative
// distances inside a document are the same either way). The key count n of beta(n) and of AdaScale's L
// is the keys the query sees inside its document under ModelConfig::document_key_counts (the default
// with data.cross_doc_mask; data.cross_doc_keys: window counts the position in the window + 1).
//
// On fp32 CPU the residual add and the RMSNorm after it are one operation (AddRmsNorm,
// residual_rms_norm.h: the block hands its MLP output to the next layer's norm, or the final one), q, k
// and v come from the fused projection in one (RotateQkvAndTranspose, rotary.h), and SwiGLU is one
// (mlp_activation.h); each has a composite of ATen ops with the same contract for other devices and dtypes.
//
// Parameters are grouped for the optimizer (ParameterGroups); the positional and inverse-
// temperature parameters are fp32 and live in their own modules. The backbone's parameters are fp32
// as built; an importer may replace them with bf16 or fp16 ones (core/hf/hf_import.h): forward then
// computes in the compute dtype (fp32 unless set), each weight converted where it is used, so the
// weights stay in memory as stored.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/config/model_config.h"
#include "core/model/attention.h"
#include "core/model/inverse_temperature.h"
#include "core/model/kv_cache.h"
#include "core/model/lora.h"
#include "core/model/positional_encoding.h"

namespace rung {

// What a layer's attention sees, for diagnostics (docs/science.md section 7): queries and keys after
// rotation but before any multiplier or bias, and the multiplier and bias attention applies.
struct AttentionProbe {
  int64_t layer = 0;
  torch::Tensor q;                 // [B, heads, T, d] rotated, unscaled (no beta, lambda, 1/sqrt(d))
  torch::Tensor k;                 // [B, kv_heads, T, d] rotated
  // [T, heads], or [B, T, heads] under document key counts (beta * lambda * length-extension factor), or
  // undefined
  torch::Tensor query_multiplier;
  torch::Tensor alibi_slopes;      // [heads] or undefined
  torch::Tensor doc_start;         // [B, T] or undefined
};

struct ParameterGroups {
  std::vector<torch::Tensor> decay;             // matrices of the blocks and the output head
  std::vector<torch::Tensor> no_decay;          // embedding (and the absolute position table), norm gains
  std::vector<torch::Tensor> positional;        // LeRoPE a, AdaScale, inverse-temperature params
  std::vector<torch::Tensor> positional_freq;   // AdaFreq x, learned log b (freq_lr_mult)
  std::vector<torch::Tensor> lora;              // the adapters' A and B (AddLora), else none
};

enum class Initialization {
  kRandom,  // the initialisation above
  kEmpty,   // uninitialised parameters (an importer overwrites every one of them)
};

class TransformerImpl : public torch::nn::Module {
 public:
  explicit TransformerImpl(const ModelConfig& config, Initialization initialization = Initialization::kRandom);

  // tokens [B, T] (int64) -> logits [B, T, vocab]. doc_start: [B, T] int64 on the tokens' device
  // (DocumentStarts) to mask attention across documents, or undefined for plain causal attention.
  // Throws (c10::Error) for T > seq_len under position.variant absolute with beyond: refuse.
  torch::Tensor forward(const torch::Tensor& tokens, const torch::Tensor& doc_start = {});

  // forward in two parts: the final RMSNorm's output [B, T, d_model] (in the compute dtype), and the
  // output head applied to any of its rows ([..., d_model] -> [..., vocab]), so that a long window's
  // loss can be taken a slice of positions at a time.
  torch::Tensor Hidden(const torch::Tensor& tokens, const torch::Tensor& doc_start = {});
  torch::Tensor Logits(const torch::Tensor& hidden) const;

  // Hidden for the next tokens of a sequence whose first P = cache->positions positions `cache` holds
  // (kv_cache.h; an empty KvCache{} for the first call): tokens [B, n] (int64) at positions P..P+n-1
  // -> the final RMSNorm's output [B, n, d_model] there (compute dtype), each new query attending to
  // the cached keys and causally to the new ones; appends the new keys and values to `cache`. Computes
  // what Hidden of all P + n tokens computes at those rows: the positional tables, inverse temperature
  // (key count position + 1) and learned input rows of the whole length, narrowed to the new rows;
  // the length extension's logit factor; ALiBi's -m_h (i - j) over every key. The first call (nothing
  // cached) attends with the model's own kernel, as Hidden does (its memory, linear in T for the tiled
  // kernel); later calls with kComposite's exact softmax (so equal up to rounding); no document mask (nor
  // document key counts, nor a per-document extension), and no attention probe.
  // Throws (c10::Error) where a position's tables depend on the window's length
  // (!positional()->TablesIndependentOfLength()): there only Hidden of the whole sequence is exact.
  torch::Tensor CachedHidden(const torch::Tensor& tokens, KvCache* cache);

  // Adds low-rank adapters (core/model/lora.h) on lora.targets of every layer, drawn from the CPU
  // generator: forward then adds each adapter's Delta to its projection. Call once, before the
  // optimizer is made. REQUIRES: lora enabled and validated for this model.
  void AddLora(const LoraConfig& lora);
  // The adapters, or null without them.
  const LoraAdapters& lora() const { return lora_; }

  ParameterGroups parameter_groups() const;
  const ModelConfig& config() const { return config_; }
  PositionalEncoding& positional() { return positional_; }
  InverseTemperature& inverse_temperature() { return inverse_temperature_; }

  // Called once per layer during forward with that layer's AttentionProbe (diagnostics; costs one
  // extra rotation per layer). An empty function switches it off. With `through_layer` >= 0, Hidden
  // stops once that layer's probe has been called and returns an undefined tensor (what a measurement
  // of one layer needs, without the layers after it); forward must not be asked for logits then.
  void set_attention_probe(std::function<void(const AttentionProbe&)> probe, int64_t through_layer = -1) {
    probe_ = std::move(probe);
    probe_through_layer_ = probe_ ? through_layer : -1;
  }

  // Overrides model.attention: which kernel computes attention (tests compare them).
  void set_attention_kernel(int kernel) { attention_kernel_ = kernel; }

  // The dtype forward computes in when the weights are bf16 or fp16 (fp32 by default; bf16 where the
  // CPU supports it). Weights already in fp32 compute as they are (autocast decides there).
  void set_compute_dtype(torch::Dtype dtype) { compute_dtype_ = dtype; }

 private:
  struct Block {
    torch::Tensor attn_norm, qkv, qkv_bias, out, q_norm, k_norm, mlp_norm, up, down;
    int64_t layer = 0;
  };
  // One layer's attention inputs, heads ahead of time: q as projected (after QK-norm), its multiplier
  // (tables.query_scale times beta, times the document factors [B, n] where defined), the rotated and
  // scaled queries, the rotated keys and the values.
  struct AttentionInputs {
    torch::Tensor q, query_scale, q_heads, k_heads, v_heads;
  };
  // The attention kernel for tensors of this device and compute dtype (model.attention, or the
  // kernel set_attention_kernel overrides it with).
  AttentionKernel ChooseAttentionKernel(const torch::Device& device, torch::Dtype compute) const;
  // The dtype forward computes in: compute_dtype_ for weights stored in bf16 or fp16, else theirs.
  torch::Dtype ComputeDtype() const;
  // The token embedding of tokens [B, n] at positions start..start+n-1 in `compute`, plus the variant's
  // input rows there (those of a sequence of start + n).
  torch::Tensor Embed(const torch::Tensor& tokens, int64_t start, torch::Dtype compute) const;
  // The block's normed input [B, n, d_model] -> `block`'s attention inputs at n positions with `tables`
  // of those positions.
  AttentionInputs ProjectAttention(const Block& block, const torch::Tensor& normed, const LayerTables& tables,
                                   const torch::Tensor& beta, const torch::Tensor& document_factors,
                                   double query_constant) const;
  // The rest of `block` after attention: residual = x + W_o attended, and the MLP's output on
  // RMSNorm(residual), which the next norm adds to the residual (AddRmsNorm, residual_rms_norm.h).
  struct BlockOutput {
    torch::Tensor residual, mlp;
  };
  BlockOutput FinishBlock(const Block& block, const torch::Tensor& x, const torch::Tensor& attended) const;
  // `weight` in x's dtype (a no-op unless the weights are stored in another one).
  static torch::Tensor As(const torch::Tensor& weight, const torch::Tensor& x);

  ModelConfig config_;
  torch::Tensor embedding_, final_norm_, head_;
  torch::Tensor position_embedding_;  // [seq_len, d_model] for position.variant absolute, else undefined
  std::vector<Block> blocks_;
  PositionalEncoding positional_{nullptr};
  InverseTemperature inverse_temperature_{nullptr};
  LoraAdapters lora_{nullptr};
  std::function<void(const AttentionProbe&)> probe_;
  int64_t probe_through_layer_ = -1;
  int attention_kernel_ = -1;  // an AttentionKernel (attention.h) overriding model.attention, or -1
  torch::Dtype compute_dtype_ = torch::kFloat;
};
TORCH_MODULE(Transformer);

}  // namespace rung

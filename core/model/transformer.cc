#include "core/model/transformer.h"

#include <cmath>

#include "core/model/attention.h"
#include "core/model/mlp_activation.h"
#include "core/model/residual_rms_norm.h"
#include "core/model/rotary.h"

namespace rung {

TransformerImpl::TransformerImpl(const ModelConfig& config, Initialization initialization) : config_(config) {
  const int64_t d = config.d_model, hd = config.head_dim, heads = config.heads, kv = config.kv_heads;
  const double output_scale = 1.0 / std::sqrt(2.0 * static_cast<double>(config.layers));
  const bool random = initialization == Initialization::kRandom;
  auto normal = [random](std::vector<int64_t> shape, double std) {
    return random ? torch::randn(shape) * std : torch::empty(shape);
  };
  auto fan_in_std = [](int64_t fan_in) { return 1.0 / std::sqrt(static_cast<double>(fan_in)); };

  embedding_ = register_parameter("embedding", normal({config.vocab_size, d}, fan_in_std(d)));
  const int64_t up_width = config.mlp == "swiglu" ? 2 * config.mlp_hidden : config.mlp_hidden;
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    std::string prefix = "blocks_" + std::to_string(layer) + "_";
    Block block;
    block.layer = layer;
    block.attn_norm = register_parameter(prefix + "attn_norm", torch::ones({d}));
    block.qkv = register_parameter(prefix + "qkv", normal({(heads + 2 * kv) * hd, d}, fan_in_std(d)));
    if (config.qkv_bias) block.qkv_bias = register_parameter(prefix + "qkv_bias", torch::zeros({(heads + 2 * kv) * hd}));
    block.out = register_parameter(prefix + "attn_out", normal({d, heads * hd}, fan_in_std(heads * hd) * output_scale));
    if (config.qk_norm) {
      block.q_norm = register_parameter(prefix + "q_norm", torch::ones({hd}));
      block.k_norm = register_parameter(prefix + "k_norm", torch::ones({hd}));
    }
    block.mlp_norm = register_parameter(prefix + "mlp_norm", torch::ones({d}));
    block.up = register_parameter(prefix + "mlp_up", normal({up_width, d}, fan_in_std(d)));
    block.down = register_parameter(prefix + "mlp_down",
                                    normal({d, config.mlp_hidden}, fan_in_std(config.mlp_hidden) * output_scale));
    blocks_.push_back(block);
  }
  final_norm_ = register_parameter("final_norm", torch::ones({d}));
  if (!config.tie_embeddings) head_ = register_parameter("head", normal({config.vocab_size, d}, fan_in_std(d)));
  // A variant's input position table after every backbone parameter, so that the backbone draws the
  // same initial values as the other variants' under one seed (the positional module draws none).
  PositionalEncoding positional(config);
  position_embedding_ = positional->variant().MakeInputTable(*this);
  positional_ = register_module("positional", positional);
  inverse_temperature_ = register_module("inverse_temperature", InverseTemperature(config));
}

torch::Tensor TransformerImpl::As(const torch::Tensor& weight, const torch::Tensor& x) {
  return weight.scalar_type() == x.scalar_type() ? weight : weight.to(x.scalar_type());
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& tokens, const torch::Tensor& doc_start) {
  return Logits(Hidden(tokens, doc_start));
}

torch::Tensor TransformerImpl::Logits(const torch::Tensor& hidden) const {
  const torch::Tensor& head = head_.defined() ? head_ : embedding_;
  if (head.scalar_type() == hidden.scalar_type()) return torch::linear(hidden, head);
  // Weights stored in another dtype: converted a block of vocabulary rows at a time, so that the
  // conversion never holds a whole [vocab, d_model] matrix in the compute dtype.
  constexpr int64_t kRows = 8192;
  std::vector<torch::Tensor> blocks;
  for (int64_t row = 0; row < head.size(0); row += kRows) {
    blocks.push_back(torch::linear(hidden, head.narrow(0, row, std::min(kRows, head.size(0) - row)).to(hidden.scalar_type())));
  }
  return torch::cat(blocks, -1);
}

torch::Dtype TransformerImpl::ComputeDtype() const {
  const bool stored_narrow = embedding_.scalar_type() == torch::kBFloat16 || embedding_.scalar_type() == torch::kHalf;
  return stored_narrow ? compute_dtype_ : embedding_.scalar_type();
}

torch::Tensor TransformerImpl::Embed(const torch::Tensor& tokens, int64_t start, torch::Dtype compute) const {
  const int64_t time = tokens.size(1);
  torch::Tensor x = torch::embedding(embedding_, tokens);
  if (x.scalar_type() != compute) x = x.to(compute);
  if (position_embedding_.defined()) {  // [n, d] over the batch
    x = x + positional_->variant().InputRows(position_embedding_, start + time).narrow(0, start, time);
  }
  return x;
}

TransformerImpl::AttentionInputs TransformerImpl::ProjectAttention(const Block& block, const torch::Tensor& normed,
                                                                   const LayerTables& tables, const torch::Tensor& beta,
                                                                   const torch::Tensor& document_factors,
                                                                   double query_constant) const {
  const int64_t batch = normed.size(0), time = normed.size(1);
  const int64_t hd = config_.head_dim, heads = config_.heads, kv = config_.kv_heads;
  auto qkv = torch::linear(normed, As(block.qkv, normed), block.qkv_bias.defined() ? As(block.qkv_bias, normed) : torch::Tensor());
  if (lora_) lora_->AddDeltas(block.layer, {LoraTarget::kQ, LoraTarget::kK, LoraTarget::kV}, normed, qkv);
  qkv = qkv.view({batch, time, heads + 2 * kv, hd});
  AttentionInputs in;
  in.q = qkv.narrow(2, 0, heads);
  auto k = qkv.narrow(2, heads, kv);
  auto v = qkv.narrow(2, heads + kv, kv);
  if (config_.qk_norm) {
    in.q = RmsNorm(in.q, block.q_norm, config_.norm_eps);
    k = RmsNorm(k, block.k_norm, config_.norm_eps);
  }
  torch::Tensor& query_scale = in.query_scale;
  query_scale = tables.query_scale;
  if (beta.defined()) query_scale = query_scale.defined() ? query_scale * beta : beta;
  if (document_factors.defined()) {
    const torch::Tensor factors = document_factors.unsqueeze(-1);  // [B, T, 1]
    query_scale = query_scale.defined() ? query_scale * factors : factors.expand({batch, time, heads});
  }
  const bool own_key_tables = tables.key_cos.defined();
  if (!config_.qk_norm && (!query_scale.defined() || query_scale.dim() == 2)) {
    // q, k and v straight from the projection: one operation, one gradient for the projection.
    RotatedHeads rotated = RotateQkvAndTranspose(qkv, heads, tables.cos, tables.sin, tables.key_cos, tables.key_sin,
                                                 query_scale, query_constant);
    in.q_heads = std::move(rotated.q);
    in.k_heads = std::move(rotated.k);
    in.v_heads = std::move(rotated.v);
    return in;
  }
  // A multiplier per sequence ([B, T, heads], document key counts) scales q before the rotation (the
  // two commute); the rotary kernels take one per position.
  in.q_heads = query_scale.defined() && query_scale.dim() == 3
                   ? RotateAndTranspose((in.q.to(torch::kFloat) * query_scale.unsqueeze(-1)).to(in.q.scalar_type()),
                                        tables.cos, tables.sin, torch::Tensor(), query_constant)
                   : RotateAndTranspose(in.q, tables.cos, tables.sin, query_scale, query_constant);
  in.k_heads = RotateAndTranspose(k, own_key_tables ? tables.key_cos : tables.cos,
                                  own_key_tables ? tables.key_sin : tables.sin, torch::Tensor());
  in.v_heads = RotateAndTranspose(v, torch::Tensor(), torch::Tensor(), torch::Tensor());  // transpose only
  return in;
}

TransformerImpl::BlockOutput TransformerImpl::FinishBlock(const Block& block, const torch::Tensor& x,
                                                          const torch::Tensor& attended) const {
  auto projected = torch::linear(attended, As(block.out, attended));
  if (lora_ && lora_->adapts(LoraTarget::kO)) projected = projected + lora_->Delta(block.layer, LoraTarget::kO, attended);
  auto [residual, mlp_in] = AddRmsNorm(x, projected, block.mlp_norm, config_.norm_eps);
  auto hidden = torch::linear(mlp_in, As(block.up, mlp_in));
  if (lora_) lora_->AddDeltas(block.layer, {LoraTarget::kGate, LoraTarget::kUp}, mlp_in, hidden);
  hidden = MlpActivation(hidden, config_.mlp == "swiglu" ? MlpActivationKind::kSwiGlu : MlpActivationKind::kGelu);
  auto down = torch::linear(hidden, As(block.down, hidden));
  if (lora_ && lora_->adapts(LoraTarget::kDown)) down = down + lora_->Delta(block.layer, LoraTarget::kDown, hidden);
  return {residual, down};
}

AttentionKernel TransformerImpl::ChooseAttentionKernel(const torch::Device& device, torch::Dtype compute) const {
  AttentionKernel kernel = attention_kernel_ >= 0                ? static_cast<AttentionKernel>(attention_kernel_)
                           : config_.attention == "fused" ? AttentionKernel::kFused
                                                          : AttentionKernel::kAuto;
  kernel = ResolveAttentionKernel(kernel, device, compute);
  // "exact": never the fused kernel (the CPU slab kernel computes the same exact softmax).
  if (attention_kernel_ < 0 && config_.attention == "exact" && kernel == AttentionKernel::kFused) {
    kernel = AttentionKernel::kComposite;
  }
  return kernel;
}

torch::Tensor TransformerImpl::Hidden(const torch::Tensor& tokens, const torch::Tensor& doc_start) {
  const int64_t time = tokens.size(1);
  const int64_t hd = config_.head_dim, heads = config_.heads;
  const torch::Device device = tokens.device();
  // Weights stored in bf16 or fp16 (an import) compute in compute_dtype_; fp32 weights as they are.
  const torch::Dtype compute = ComputeDtype();
  const AttentionKernel kernel = ChooseAttentionKernel(device, compute);

  // The keys each query sees: i + 1, or under document key counts i + 1 - (its document's start).
  torch::Tensor keys = torch::arange(1, time + 1, torch::TensorOptions().dtype(torch::kFloat).device(device));
  if (config_.document_key_counts && doc_start.defined()) keys = keys.view({1, time}) - doc_start.to(torch::kFloat);
  std::vector<LayerTables> tables = positional_->Tables(time, keys, doc_start);
  std::vector<torch::Tensor> betas = inverse_temperature_->Multipliers(keys);
  // The length extension's logit factor: one for every position, or one per document ([B, T]) folded
  // into the query multiplier below.
  const bool per_document = positional_->PerDocument(doc_start);
  const double logit_factor = per_document ? 1.0 : ExtensionLogitFactor(positional_->length_extension());
  const torch::Tensor document_factors = positional_->DocumentLogitFactors(doc_start);
  const double query_constant = AttentionQueryScale(kernel, hd) * logit_factor;

  torch::Tensor x = Embed(tokens, 0, compute), delta;  // the residual stream, and what the next norm adds to it
  for (int64_t layer = 0; layer < config_.layers; ++layer) {
    const Block& block = blocks_[layer];
    ResidualNorm attention_in = AddRmsNorm(x, delta, block.attn_norm, config_.norm_eps);
    x = attention_in.residual;
    const AttentionInputs in =
        ProjectAttention(block, attention_in.normed, tables[layer], betas[layer], document_factors, query_constant);
    if (probe_) {
      AttentionProbe probe{layer, RotateAndTranspose(in.q, tables[layer].cos, tables[layer].sin, torch::Tensor()),
                           in.k_heads, in.query_scale, positional_->alibi_slopes(), doc_start};
      const double factor = logit_factor;  // a factor per document is in query_scale already
      if (factor != 1.0) {
        probe.query_multiplier = probe.query_multiplier.defined() ? probe.query_multiplier * factor
                                                                  : torch::full({time, heads}, factor, in.q.options());
      }
      probe_(probe);
      if (layer == probe_through_layer_) return torch::Tensor();
    }
    auto attended = CausalAttention(in.q_heads, in.k_heads, in.v_heads, positional_->alibi_slopes(), doc_start, kernel);
    BlockOutput out = FinishBlock(block, x, attended);
    x = std::move(out.residual);
    delta = std::move(out.mlp);
  }
  return AddRmsNorm(x, delta, final_norm_, config_.norm_eps).normed;
}

torch::Tensor TransformerImpl::CachedHidden(const torch::Tensor& tokens, KvCache* cache) {
  TORCH_CHECK(cache != nullptr, "CachedHidden: no cache");
  TORCH_CHECK(tokens.dim() == 2 && tokens.size(1) >= 1, "CachedHidden: tokens must be [B, n] with n >= 1");
  TORCH_CHECK(positional_->TablesIndependentOfLength(), "CachedHidden: position.variant ", config_.position.variant,
              " as configured makes a position's tables depend on the window's length, so cached keys would "
              "differ from a full pass's; use Hidden on the whole sequence");
  const int64_t start = cache->positions, time = start + tokens.size(1);
  const torch::Device device = tokens.device();
  const torch::Dtype compute = ComputeDtype();
  // The tables and multipliers of the whole sequence (query i seeing i + 1 keys), at the new rows.
  std::vector<LayerTables> tables = positional_->TableRows(time, start, device);
  std::vector<torch::Tensor> betas = inverse_temperature_->Multipliers(
      torch::arange(1, time + 1, torch::TensorOptions().dtype(torch::kFloat).device(device)));
  // The first pass (nothing cached) is a whole causal window: the model's own kernel, whose memory
  // grows with T where the kernel's does (the tiled one's linearly); later passes attend from a few
  // new queries to every cached key with the exact composite softmax.
  const AttentionKernel kernel = start == 0 ? ChooseAttentionKernel(device, compute) : AttentionKernel::kComposite;
  const double query_constant =
      AttentionQueryScale(kernel, config_.head_dim) * ExtensionLogitFactor(positional_->length_extension());

  torch::Tensor x = Embed(tokens, start, compute), delta;
  for (int64_t layer = 0; layer < config_.layers; ++layer) {
    const Block& block = blocks_[layer];
    const torch::Tensor beta = betas[layer].defined() ? betas[layer].narrow(0, start, time - start) : torch::Tensor();
    ResidualNorm attention_in = AddRmsNorm(x, delta, block.attn_norm, config_.norm_eps);
    x = attention_in.residual;
    const AttentionInputs in = ProjectAttention(block, attention_in.normed, tables[layer], beta, torch::Tensor(), query_constant);
    const auto [k, v] = cache->Append(layer, in.k_heads, in.v_heads);
    BlockOutput out =
        FinishBlock(block, x,
                    start == 0 ? CausalAttention(in.q_heads, k, v, positional_->alibi_slopes(), torch::Tensor(), kernel)
                               : TrailingCausalAttention(in.q_heads, k, v, positional_->alibi_slopes()));
    x = std::move(out.residual);
    delta = std::move(out.mlp);
  }
  cache->positions = time;
  return AddRmsNorm(x, delta, final_norm_, config_.norm_eps).normed;
}

void TransformerImpl::AddLora(const LoraConfig& lora) {
  TORCH_CHECK(!lora_, "AddLora: the model has adapters already");
  lora_ = register_module("lora", LoraAdapters(config_, lora));
  lora_->to(embedding_.device());
}

ParameterGroups TransformerImpl::parameter_groups() const {
  ParameterGroups groups;
  groups.no_decay.push_back(embedding_);
  if (position_embedding_.defined()) groups.no_decay.push_back(position_embedding_);
  for (const Block& block : blocks_) {
    groups.no_decay.push_back(block.attn_norm);
    groups.no_decay.push_back(block.mlp_norm);
    if (block.q_norm.defined()) {
      groups.no_decay.push_back(block.q_norm);
      groups.no_decay.push_back(block.k_norm);
    }
    for (const auto& matrix : {block.qkv, block.out, block.up, block.down}) groups.decay.push_back(matrix);
    if (block.qkv_bias.defined()) groups.no_decay.push_back(block.qkv_bias);
  }
  groups.no_decay.push_back(final_norm_);
  if (head_.defined()) groups.decay.push_back(head_);
  groups.positional = positional_->scale_parameters();
  for (const auto& param : inverse_temperature_->learned_parameters()) groups.positional.push_back(param);
  groups.positional_freq = positional_->frequency_parameters();
  if (lora_) groups.lora = lora_->parameters();
  return groups;
}

}  // namespace rung

#include "core/model/positional_encoding.h"

#include <cmath>

#include "core/model/defined_tensors.h"

namespace rung {

std::vector<double> RopeFrequencies(double base, int64_t head_dim) {
  std::vector<double> freqs(head_dim / 2);
  for (int64_t f = 0; f < head_dim / 2; ++f) freqs[f] = std::pow(base, -2.0 * f / static_cast<double>(head_dim));
  return freqs;
}

std::vector<double> AlibiSlopes(int64_t heads) {
  auto power_of_two_slopes = [](int64_t n) {
    std::vector<double> slopes(n);
    double start = std::pow(2.0, -8.0 / static_cast<double>(n));
    for (int64_t h = 0; h < n; ++h) slopes[h] = std::pow(start, static_cast<double>(h + 1));
    return slopes;
  };
  int64_t lower = 1;
  while (lower * 2 <= heads) lower *= 2;
  std::vector<double> slopes = power_of_two_slopes(lower);
  if (lower == heads) return slopes;
  std::vector<double> extra = power_of_two_slopes(2 * lower);
  for (int64_t h = 0; static_cast<int64_t>(slopes.size()) < heads; h += 2) slopes.push_back(extra[h]);
  return slopes;
}

PositionalEncodingImpl::PositionalEncodingImpl(const ModelConfig& config) : config_(config) {
  const PositionConfig& p = config.position;
  const int64_t half = config.rotary_pairs();
  auto f32 = torch::TensorOptions().dtype(torch::kFloat);
  auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  if (p.rotary()) {
    std::vector<double> freqs = RopeFrequencies(p.base, config.head_dim);
    auto log_freq = torch::tensor(freqs, f64).log().to(torch::kFloat);
    auto mask = torch::ones({half}, f32);
    if (p.variant == "prope") {
      int64_t rotating = static_cast<int64_t>(std::floor(p.fraction * static_cast<double>(half)));
      mask.narrow(0, rotating, half - rotating).zero_();
    }
    rope_log_freq_ = register_buffer("rope_log_freq", log_freq);
    rotate_mask_ = register_buffer("rotate_mask", mask);
  }
  if (p.variant == "lerope") {
    lerope_log_scale_ = register_parameter("lerope_log_scale", torch::zeros({half}, f32));
  }
  if (p.variant == "adarope") {
    const AdaRopeConfig& a = p.adarope;
    int64_t schedules = a.share_freq == "global" ? 1 : config.layers;
    int64_t groups = a.share_freq == "none" ? config.kv_heads : 1;
    if (a.learned_base) {
      adarope_log_base_ =
          register_parameter("adarope_log_base", torch::full({schedules, groups}, std::log(p.base), f32));
    } else {
      adarope_log_freq_ = register_parameter(
          "adarope_log_freq", rope_log_freq_.view({1, 1, half}).expand({schedules, groups, half}).clone());
    }
    if (a.adascale && !a.fixed_log) {
      double tau_init = a.tau_param == "exp" ? 0.0 : 1.0;
      adascale_tau_ = register_parameter("adascale_tau", torch::full({config.layers, config.heads}, tau_init, f32));
      adascale_gamma_ = register_parameter("adascale_gamma", torch::zeros({config.layers, config.heads}, f32));
    }
  }
  if (p.variant == "alibi") {
    alibi_slopes_ = register_buffer("alibi_slopes", torch::tensor(AlibiSlopes(config.heads), f64).to(torch::kFloat));
  }
}

torch::Tensor PositionalEncodingImpl::Frequencies(int64_t layer) {
  const PositionConfig& p = config_.position;
  const int64_t half = config_.rotary_pairs();
  if (!p.rotary()) return {};
  if (p.variant == "rope" || p.variant == "prope") return (rope_log_freq_.exp() * rotate_mask_).view({1, half});
  if (p.variant == "lerope") return (lerope_log_scale_ + rope_log_freq_).exp().view({1, half});
  const AdaRopeConfig& a = p.adarope;
  int64_t schedule = a.share_freq == "global" ? 0 : layer;
  if (a.learned_base) {
    // theta_f = b^(-2f/d) = exp(-(2f/d) log b)
    auto exponents = torch::arange(half, rope_log_freq_.options()) * (-2.0 / static_cast<double>(config_.head_dim));
    return (adarope_log_base_[schedule].unsqueeze(-1) * exponents.unsqueeze(0)).exp();
  }
  return adarope_log_freq_[schedule].exp();
}

torch::Tensor PositionalEncodingImpl::AdaScale(int64_t layer, int64_t time, const torch::Tensor& keys) {
  const AdaRopeConfig& a = config_.position.adarope;
  // L per query: the keys it sees (query mode) or T (sequence mode)
  torch::Tensor length = a.length == "sequence" ? torch::full_like(keys, static_cast<double>(time), torch::kFloat)
                                                : keys.to(torch::kFloat);
  torch::Tensor log_term = torch::log1p(torch::clamp_min(length, a.l_ref) / a.l_ref);  // [..., T]
  std::vector<int64_t> shape = log_term.sizes().vec();
  shape.push_back(config_.heads);
  if (a.fixed_log) return (log_term / std::log(2.0)).unsqueeze(-1).expand(shape).contiguous();
  torch::Tensor tau = a.tau_param == "exp" ? adascale_tau_[layer].exp() : adascale_tau_[layer];  // [H]
  torch::Tensor gamma = adascale_gamma_[layer];                                                  // [H]
  // lambda[..., t, h] = (1/tau_h) * log_term[..., t]^gamma_h
  return torch::pow(log_term.unsqueeze(-1), gamma.to(keys.device())) / tau.to(keys.device());
}

bool PositionalEncodingImpl::PerDocument(const torch::Tensor& doc_start) const {
  return extension_.per_document && extension_.active() && doc_start.defined();
}

torch::Tensor PositionalEncodingImpl::DocumentLogitFactors(const torch::Tensor& doc_start) const {
  if (!PerDocument(doc_start) || extension_.method != "yarn") return torch::Tensor();
  return ExtensionLogitFactorAt(DocumentScales(doc_start, extension_.train_length), extension_);
}

std::vector<LayerTables> PositionalEncodingImpl::Tables(int64_t time, const torch::Device& device) {
  return Tables(time, torch::arange(1, time + 1, torch::TensorOptions().dtype(torch::kFloat).device(device)));
}

std::vector<LayerTables> PositionalEncodingImpl::Tables(int64_t time, const torch::Tensor& keys,
                                                       const torch::Tensor& doc_start) {
  const PositionConfig& p = config_.position;
  const torch::Device device = keys.device();
  std::vector<LayerTables> tables(config_.layers);
  if (p.rotary()) {
    auto positions = torch::arange(time, torch::TensorOptions().dtype(torch::kFloat).device(device));
    // Per-document extension: a factor per (sequence, position), tables [B, T, G, half].
    const torch::Tensor scales = PerDocument(doc_start) ? DocumentScales(doc_start, extension_.train_length) : torch::Tensor();
    auto make = [&](torch::Tensor freqs, int64_t layer = 0) {  // freqs [G, half] -> angles [T, G, half]
      if (reverted_pair_ >= 0 && reverted_pair_ < freqs.size(-1)) {
        freqs = freqs.clone();
        freqs.select(-1, reverted_pair_).fill_(rope_log_freq_[reverted_pair_].exp().item<float>());
      }
      if (scales.defined()) {
        auto angles = positions.view({1, time, 1, 1}) * ExtendFrequenciesAt(freqs.to(device), scales, extension_, layer);
        return std::make_pair(angles.cos(), angles.sin());
      }
      auto angles = positions.view({time, 1, 1}) * ExtendFrequencies(freqs, extension_, layer).to(device).unsqueeze(0);
      return std::make_pair(angles.cos(), angles.sin());
    };
    bool constant = (p.variant == "rope" || p.variant == "prope") && !scales.defined();
    bool shared = constant || p.variant == "lerope" || (p.variant == "adarope" && p.adarope.share_freq == "global");
    if (constant) {
      if (cached_time_ != time || cached_device_ != device) {
        torch::NoGradGuard no_grad;
        std::tie(cached_cos_, cached_sin_) = make(Frequencies(0));
        cached_time_ = time;
        cached_device_ = device;
      }
      for (auto& layer : tables) layer.cos = cached_cos_, layer.sin = cached_sin_;
    } else if (shared) {
      auto [c, s] = make(Frequencies(0));
      for (auto& layer : tables) layer.cos = c, layer.sin = s;
    } else {
      for (int64_t layer = 0; layer < config_.layers; ++layer) {
        std::tie(tables[layer].cos, tables[layer].sin) = make(Frequencies(layer), layer);
      }
    }
  }
  if (p.variant == "adarope" && (p.adarope.adascale || p.adarope.fixed_log)) {
    for (int64_t layer = 0; layer < config_.layers; ++layer) tables[layer].query_scale = AdaScale(layer, time, keys);
  }
  return tables;
}

void PositionalEncodingImpl::StartContextExtension(double scale, double source_length, double yarn_c) {
  torch::NoGradGuard no_grad;
  if (adarope_log_freq_.defined()) {
    const int64_t half = adarope_log_freq_.size(-1);
    LengthExtension extension{"ntk_by_parts", scale, source_length};
    torch::Tensor theta = adarope_log_freq_.exp().view({-1, half});
    adarope_log_freq_.copy_(ExtendFrequencies(theta, extension).log().view_as(adarope_log_freq_));
  }
  if (adarope_log_base_.defined() && config_.head_dim > 2) {
    const double d = static_cast<double>(config_.head_dim);
    adarope_log_base_.add_(d / (d - 2.0) * std::log(scale));
  }
  const double factor = std::pow(yarn_c * std::log(scale) + 1.0, 2.0);
  if (adascale_tau_.defined()) {
    // With gamma = 0, lambda = 1 / tau: YaRN's logit factor.
    adascale_tau_.fill_(config_.position.adarope.tau_param == "exp" ? -std::log(factor) : 1.0 / factor);
  }
  if (adascale_gamma_.defined()) adascale_gamma_.zero_();
  cached_time_ = -1;
}

void PositionalEncodingImpl::set_reverted_pair(int64_t pair) {
  reverted_pair_ = pair;
  cached_time_ = -1;  // constant tables depend on it
}

void PositionalEncodingImpl::set_length_extension(const LengthExtension& extension) {
  extension_ = extension;
  cached_time_ = -1;  // constant tables depend on the extension
}

std::vector<torch::Tensor> PositionalEncodingImpl::frequency_parameters() const {
  return DefinedTensors({adarope_log_freq_, adarope_log_base_});
}

std::vector<torch::Tensor> PositionalEncodingImpl::scale_parameters() const {
  return DefinedTensors({lerope_log_scale_, adascale_tau_, adascale_gamma_});
}

}  // namespace rung

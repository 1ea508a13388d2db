#include "core/model/positional_encoding.h"

#include <cmath>


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
  const int64_t half = config.rotary_pairs();
  RotaryBasis basis;
  if (config.position.rotary()) {
    std::vector<double> freqs = RopeFrequencies(config.position.base, config.head_dim);
    auto log_freq = torch::tensor(freqs, torch::kDouble).log().to(torch::kFloat);
    rope_log_freq_ = register_buffer("rope_log_freq", log_freq);
    rotate_mask_ = register_buffer("rotate_mask", torch::ones({half}, torch::kFloat));
    basis = {rope_log_freq_, rotate_mask_};
  }
  variant_ = MakePositionalVariantModel(config, *this, basis);
  alibi_slopes_ = variant_->LinearBiasSlopes();
}

torch::Tensor PositionalEncodingImpl::Frequencies(int64_t layer) {
  if (!config_.position.rotary()) return {};
  return variant_->Frequencies(layer);
}

bool PositionalEncodingImpl::PerDocument(const torch::Tensor& doc_start) const {
  return extension_.per_document && extension_.active() && doc_start.defined();
}

torch::Tensor PositionalEncodingImpl::DocumentLogitFactors(const torch::Tensor& doc_start) const {
  if (!PerDocument(doc_start) || !HasLogitFactor(extension_)) return torch::Tensor();
  return ExtensionLogitFactorAt(DocumentScales(doc_start, extension_.train_length), extension_);
}

std::vector<LayerTables> PositionalEncodingImpl::Tables(int64_t time, const torch::Device& device) {
  return Tables(time, torch::arange(1, time + 1, torch::TensorOptions().dtype(torch::kFloat).device(device)));
}

std::vector<LayerTables> PositionalEncodingImpl::TableRows(int64_t time, int64_t start, const torch::Device& device) {
  TORCH_CHECK(start >= 0 && start < time, "TableRows: start ", start, " is not a position of ", time);
  std::vector<LayerTables> tables = Tables(time, device);
  for (LayerTables& layer : tables) {
    for (torch::Tensor* table : {&layer.cos, &layer.sin, &layer.key_cos, &layer.key_sin, &layer.query_scale}) {
      if (table->defined()) *table = table->narrow(0, start, time - start);
    }
  }
  return tables;
}

std::vector<LayerTables> PositionalEncodingImpl::Tables(int64_t time, const torch::Tensor& keys,
                                                       const torch::Tensor& doc_start) {
  const torch::Device device = keys.device();
  std::vector<LayerTables> tables(config_.layers);
  if (config_.position.rotary()) {
    auto positions = torch::arange(time, torch::TensorOptions().dtype(torch::kFloat).device(device));
    // Per-document extension: a factor per (sequence, position), tables [B, T, G, half].
    const torch::Tensor scales = PerDocument(doc_start) ? DocumentScales(doc_start, extension_.train_length) : torch::Tensor();
    auto make = [&](torch::Tensor freqs, int64_t layer = 0) {  // freqs [G, half] -> angles [T, G, half]
      const bool ablated = ablated_pair_ >= 0 && ablated_pair_ < freqs.size(-1);
      if (ablated && ablation_ == BandAblation::kRevertToRope) {
        freqs = freqs.clone();
        freqs.select(-1, ablated_pair_).fill_(rope_log_freq_[ablated_pair_].exp().item<float>());
      }
      torch::Tensor angles =
          scales.defined() ? positions.view({1, time, 1, 1}) * ExtendFrequenciesAt(freqs.to(device), scales, extension_, layer)
                           : positions.view({time, 1, 1}) * ExtendFrequencies(freqs, extension_, layer).to(device).unsqueeze(0);
      torch::Tensor cos = angles.cos(), sin = angles.sin();
      if (ablated && ablation_ == BandAblation::kZero) {
        const torch::Tensor pair = torch::tensor({ablated_pair_}, torch::TensorOptions().dtype(torch::kLong).device(device));
        cos = cos.index_fill(-1, pair, 0.0);
        sin = sin.index_fill(-1, pair, 0.0);
      }
      return std::make_pair(cos, sin);
    };
    using Schedule = PositionalVariantModel::Schedule;
    const bool constant = variant_->schedule() == Schedule::kConstant && !scales.defined();
    const bool shared = constant || variant_->schedule() == Schedule::kShared;
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
    for (int64_t layer = 0; layer < config_.layers; ++layer) variant_->AdjustTables(&tables[layer], positions, layer);
  }
  for (int64_t layer = 0; layer < config_.layers; ++layer) tables[layer].query_scale = variant_->QueryScale(layer, time, keys);
  return tables;
}

void PositionalEncodingImpl::StartContextExtension(const std::string& schedule, double scale, double source_length,
                                                   double yarn_c) {
  TORCH_CHECK(variant_->StartContextExtension(schedule, scale, source_length, yarn_c), "position.variant ",
              config_.position.variant, " has no context extension to start from ", schedule);
  cached_time_ = -1;
}

void PositionalEncodingImpl::set_band_ablation(int64_t pair, BandAblation mode) {
  ablated_pair_ = pair;
  ablation_ = mode;
  cached_time_ = -1;  // constant tables depend on it
}

void PositionalEncodingImpl::set_length_extension(const LengthExtension& extension) {
  extension_ = extension;
  cached_time_ = -1;  // constant tables depend on the extension
}

}  // namespace rung

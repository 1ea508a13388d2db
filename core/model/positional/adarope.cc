// AdaRoPE's model part (core/config/positional/adarope.cc): learned log-frequencies x
// ("adarope_log_freq" [S, G, d/2], init log of RoPE's) or a learned log-base ("adarope_log_base"
// [S, G]), S schedules (one per layer, or one shared) of G rows (one per KV group, or one); and
// AdaScale's tau and gamma per layer and query head ("adascale_tau", "adascale_gamma" [layers, heads];
// [layers, 1] or [1, 1] where share_scale shares them):
// lambda_h(L) = (1/tau_h) [ln(1 + max(L, L_ref)/L_ref)]^gamma_h, or with fixed_log
// ln(1 + max(L, L_ref)/L_ref) / ln 2 with nothing learned.
#include <cmath>

#include "core/model/defined_tensors.h"
#include "core/model/length_extension.h"
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class AdaRopeModel final : public PositionalVariantModel {
 public:
  AdaRopeModel(const ModelConfig& config, torch::nn::Module& owner, const RotaryBasis& basis)
      : config_(config), basis_(basis) {
    const AdaRopeConfig& a = config.position.adarope;
    const int64_t half = config.rotary_pairs();
    const int64_t schedules = a.share_freq == "global" ? 1 : config.layers;
    const int64_t groups = a.share_freq == "none" ? config.kv_heads : 1;
    auto f32 = torch::TensorOptions().dtype(torch::kFloat);
    if (a.learned_base) {
      log_base_ = owner.register_parameter("adarope_log_base",
                                           torch::full({schedules, groups}, std::log(config.position.base), f32));
    } else {
      log_freq_ = owner.register_parameter(
          "adarope_log_freq", basis.log_freq.view({1, 1, half}).expand({schedules, groups, half}).clone());
    }
    if (a.adascale && !a.fixed_log) {
      const double tau_init = a.tau_param == "exp" ? 0.0 : 1.0;
      const int64_t scale_rows = a.share_scale == "global" ? 1 : config.layers;
      const int64_t scale_heads = a.share_scale == "none" ? config.heads : 1;
      tau_ = owner.register_parameter("adascale_tau", torch::full({scale_rows, scale_heads}, tau_init, f32));
      gamma_ = owner.register_parameter("adascale_gamma", torch::zeros({scale_rows, scale_heads}, f32));
    }
  }

  Schedule schedule() const override {
    return config_.position.adarope.share_freq == "global" ? Schedule::kShared : Schedule::kPerLayer;
  }

  torch::Tensor Frequencies(int64_t layer) const override {
    const AdaRopeConfig& a = config_.position.adarope;
    const int64_t schedule = a.share_freq == "global" ? 0 : layer;
    if (a.learned_base) {
      // theta_f = b^(-2f/d) = exp(-(2f/d) log b)
      auto exponents = torch::arange(config_.rotary_pairs(), basis_.log_freq.options()) *
                       (-2.0 / static_cast<double>(config_.head_dim));
      return (log_base_[schedule].unsqueeze(-1) * exponents.unsqueeze(0)).exp();
    }
    return log_freq_[schedule].exp();
  }

  // AdaScale's L is T for every query in the sequence mode.
  bool TablesDependOnLength() const override {
    const AdaRopeConfig& a = config_.position.adarope;
    return a.length == "sequence" && (a.adascale || a.fixed_log);
  }

  torch::Tensor QueryScale(int64_t layer, int64_t time, const torch::Tensor& keys) const override {
    const AdaRopeConfig& a = config_.position.adarope;
    if (!a.adascale && !a.fixed_log) return {};
    // L per query: the keys it sees (query mode) or T (sequence mode)
    torch::Tensor length = a.length == "sequence" ? torch::full_like(keys, static_cast<double>(time), torch::kFloat)
                                                  : keys.to(torch::kFloat);
    torch::Tensor log_term = torch::log1p(torch::clamp_min(length, a.l_ref) / a.l_ref);  // [..., T]
    std::vector<int64_t> shape = log_term.sizes().vec();
    shape.push_back(config_.heads);
    if (a.fixed_log) return (log_term / std::log(2.0)).unsqueeze(-1).expand(shape).contiguous();
    const int64_t row = a.share_scale == "global" ? 0 : layer;
    torch::Tensor tau = a.tau_param == "exp" ? tau_[row].exp() : tau_[row];  // [H], or [1] shared
    torch::Tensor gamma = gamma_[row];                                       // [H], or [1] shared
    // lambda[..., t, h] = (1/tau_h) * log_term[..., t]^gamma_h
    torch::Tensor lambda = torch::pow(log_term.unsqueeze(-1), gamma.to(keys.device())) / tau.to(keys.device());
    return a.share_scale == "none" ? lambda : lambda.expand(shape).contiguous();
  }

  std::vector<torch::Tensor> frequency_parameters() const override { return DefinedTensors({log_freq_, log_base_}); }
  std::vector<torch::Tensor> scale_parameters() const override { return DefinedTensors({tau_, gamma_}); }

  // The start of an extension by `scale` from `source_length`: the frequencies as `schedule` makes them
  // (yarn and ntk_by_parts: NTK-by-parts; pi: divided by scale; a learned base, yarn only, rescaled as
  // NTK: log b + (d/(d-2)) ln scale), gamma = 0, and tau so that AdaScale (lambda = 1 / tau once gamma
  // = 0) starts at YaRN's logit factor (yarn_c ln scale + 1)^2 for yarn, at 1 otherwise.
  bool StartContextExtension(const std::string& schedule, double scale, double source_length,
                             double yarn_c) override {
    torch::NoGradGuard no_grad;
    if (schedule != "yarn" && schedule != "ntk_by_parts" && schedule != "pi") return false;
    // A learned base moves every frequency by one factor: YaRN's start is then NTK's base change (as
    // before the other schedules existed), and a schedule of per-pair factors cannot be held.
    if (schedule != "yarn" && log_base_.defined()) return false;
    // The schedule's frequencies and logit factor as the inference-time extension makes them
    // (core/model/extension/<schedule>.cc), so the start computes what that extension computes.
    LengthExtension extension{schedule, scale, source_length};
    extension.yarn_c = yarn_c;
    if (log_freq_.defined()) {
      const int64_t half = log_freq_.size(-1);
      torch::Tensor theta = log_freq_.exp().view({-1, half});
      log_freq_.copy_(ExtendFrequencies(theta, extension).log().view_as(log_freq_));
    }
    if (log_base_.defined() && config_.head_dim > 2) {
      const double d = static_cast<double>(config_.head_dim);
      log_base_.add_(d / (d - 2.0) * std::log(scale));
    }
    const double factor = ExtensionLogitFactor(extension);
    // With gamma = 0, lambda = 1 / tau: the schedule's logit factor (YaRN's; 1 for the others).
    if (tau_.defined()) tau_.fill_(config_.position.adarope.tau_param == "exp" ? -std::log(factor) : 1.0 / factor);
    if (gamma_.defined()) gamma_.zero_();
    return true;
  }

 private:
  ModelConfig config_;
  RotaryBasis basis_;
  torch::Tensor log_freq_;  // [S, G, d/2]
  torch::Tensor log_base_;  // [S, G]
  torch::Tensor tau_;       // [layers, heads] (tau, or rho when tau_param = exp); shared: [layers, 1], [1, 1]
  torch::Tensor gamma_;     // as tau_
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(adarope, rung::AdaRopeModel)

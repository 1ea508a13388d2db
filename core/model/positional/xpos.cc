// xPos's model part (core/config/positional/xpos.cc): RoPE's constant frequencies, and each position's
// query table scaled by zeta_f^((n - c)/gamma) and key table by zeta_f^(-(n - c)/gamma), so that
// q_n . k_m gains zeta_f^((n - m)/gamma) per pair; c = floor(T/2) centres the exponents (as the
// reference implementation, microsoft/torchscale, does) to keep both scales near 1 in fp32.
#include <cmath>

#include "core/config/positional_variant.h"
#include "core/model/positional_variant_model.h"

namespace rung {
namespace {

class XposModel final : public PositionalVariantModel {
 public:
  XposModel(const ModelConfig& config, torch::nn::Module&, const RotaryBasis& basis)
      : basis_(basis), pairs_(config.rotary_pairs()) {
    const VariantSettings& settings = FindPositionalVariant("xpos")->block_settings()->Of(config.position);
    scale_base_ = settings.reals.at("scale_base");
    const double rate = settings.reals.at("rate");
    const double d = static_cast<double>(config.head_dim);
    log_zeta_ = ((torch::arange(pairs_, torch::kDouble) * (2.0 / d) + rate) / (1.0 + rate)).log().to(torch::kFloat);
  }

  torch::Tensor Frequencies(int64_t) const override { return basis_.RopeFrequencies(); }

  bool TablesDependOnLength() const override { return true; }  // the centre c = floor(T/2)

  void AdjustTables(LayerTables* tables, const torch::Tensor& positions, int64_t) const override {
    const int64_t time = positions.size(0);
    const double centre = std::floor(static_cast<double>(time) / 2.0);
    // [T, 1, d/2]: zeta_f^((n - c)/gamma), broadcast over KV groups (and sequences, per document).
    const torch::Tensor powers = ((positions - centre) / scale_base_).view({time, 1, 1});
    const torch::Tensor scale = (powers * log_zeta_.to(positions.device()).view({1, 1, pairs_})).exp();
    tables->key_cos = tables->cos / scale;
    tables->key_sin = tables->sin / scale;
    tables->cos = tables->cos * scale;
    tables->sin = tables->sin * scale;
  }

 private:
  RotaryBasis basis_;
  int64_t pairs_;
  double scale_base_ = 512.0;
  torch::Tensor log_zeta_;  // [d/2] log zeta_f
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT_MODEL(xpos, rung::XposModel)

// AdaRoPE: learned frequencies per layer and KV group (or a learned base), and AdaScale's query
// multiplier lambda_h(L) = (1/tau_h) [ln(1 + max(L, L_ref)/L_ref)]^gamma_h (docs/science.md section 2);
// its settings are position.adarope.
#include "core/config/json_binding.h"
#include "core/config/positional_variant.h"
#include "core/config/train_config.h"

namespace rung {
namespace {

class AdaRopeVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "adarope"; }
  const char* label() const override { return "AdaRoPE"; }
  const char* summary() const override {
    return "adaptive RoPE: learned frequencies per layer and KV group, and AdaScale's learned query scale "
           "by context length (position.adarope)";
  }
  int listing_order() const override { return 50; }
  // Its frequencies (or base) start at RoPE's and AdaScale at 1 (tau 1, gamma 0), or is off; fixed_log scales
  // logits from the start.
  bool StartsAsRope(const PositionConfig& position) const override { return !position.adarope.fixed_log; }
  bool rotary() const override { return true; }

  std::vector<std::string> own_keys() const override { return {"adarope"}; }
  KeysElsewhere keys_elsewhere() const override { return KeysElsewhere::kWrittenNotInIdentity; }
  void Bind(JsonFieldReader& reader, PositionConfig& position) const override { BindBlock(reader, position); }
  void Bind(JsonFieldWriter& writer, PositionConfig& position, bool) const override { BindBlock(writer, position); }
  void ValidateSettings(const PositionConfig& position, std::vector<ConfigError>* errors) const override {
    const AdaRopeConfig& a = position.adarope;
    if (!(a.l_ref > 0.0)) errors->push_back({"position.adarope.l_ref", "must be positive"});
    if (!(a.freq_lr_mult > 0.0)) errors->push_back({"position.adarope.freq_lr_mult", "must be positive"});
    if (a.share_scale != "none" && (!a.adascale || a.fixed_log)) {
      errors->push_back({"position.adarope.share_scale", "shares AdaScale's learned tau and gamma; with " +
                                                             std::string(a.fixed_log ? "fixed_log" : "adascale: false") +
                                                             " nothing is learned to share"});
    }
    if (a.fixed_log && !a.adascale) {
      errors->push_back(
          {"position.adarope.fixed_log", "replaces AdaScale; it cannot be combined with adascale: false"});
    }
  }

  CheckedInt64 PositionalParameters(const ModelConfig& model) const override {
    const AdaRopeConfig& a = model.position.adarope;
    const CheckedInt64 schedules = a.share_freq == "none"    ? CheckedInt64(model.layers) * model.kv_heads
                                   : a.share_freq == "layer" ? CheckedInt64(model.layers)
                                                             : CheckedInt64(1);
    CheckedInt64 count = schedules * (a.learned_base ? 1 : model.rotary_pairs());
    if (a.adascale && !a.fixed_log) {  // tau, gamma
      const CheckedInt64 scales = a.share_scale == "none"    ? CheckedInt64(model.layers) * model.heads
                                  : a.share_scale == "layer" ? CheckedInt64(model.layers)
                                                             : CheckedInt64(1);
      count = count + CheckedInt64(2) * scales;
    }
    return count;
  }
  std::optional<PositionalRateGroup> RateGroup(const TrainConfig& train, const PositionConfig& position) const override {
    return PositionalRateGroup{"position.adarope.freq_lr_mult",
                               "train.lr x position.lr_mult x position.adarope.freq_lr_mult",
                               train.lr * position.lr_mult * position.adarope.freq_lr_mult};  // the rate
  }

  bool OneFrequencySchedule(const PositionConfig& position) const override {
    return position.adarope.share_freq == "global";
  }
  bool LearnsPairFrequencies(const PositionConfig& position) const override { return !position.adarope.learned_base; }
  bool ReadsKeyCount(const PositionConfig& position) const override {
    const AdaRopeConfig& a = position.adarope;
    return (a.adascale || a.fixed_log) && a.length == "query";
  }

 private:
  template <typename V>
  static void BindBlock(V& v, PositionConfig& position) {
    v.Block("adarope", [&](V& a) {
      AdaRopeConfig& c = position.adarope;
      a.Field("l_ref", c.l_ref);
      a.Enum("length", c.length, {"query", "sequence"});
      a.Enum("share_freq", c.share_freq, {"none", "layer", "global"});
      a.Enum("share_scale", c.share_scale, {"none", "layer", "global"});
      a.Field("adascale", c.adascale);
      a.Field("fixed_log", c.fixed_log);
      a.Field("learned_base", c.learned_base);
      a.Enum("tau_param", c.tau_param, {"direct", "exp"});
      a.Field("freq_lr_mult", c.freq_lr_mult);
    });
  }
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(adarope, rung::AdaRopeVariant)

// p-RoPE (partial RoPE): the fastest floor(p d/2) pairs rotate as RoPE's, the rest carry no position
// (docs/science.md section 2); p is position.fraction.
#include "core/config/json_binding.h"
#include "core/config/positional_variant.h"

namespace rung {
namespace {

class PartialRopeVariant final : public PositionalVariant {
 public:
  const char* name() const override { return "prope"; }
  const char* label() const override { return "p-RoPE"; }
  const char* summary() const override {
    return "partial RoPE: the fastest floor(p d/2) pairs rotate, the rest carry no position; p is "
           "position.fraction (Barbero et al., 2024)";
  }
  int listing_order() const override { return 30; }
  bool rotary() const override { return true; }

  std::vector<std::string> own_keys() const override { return {"fraction"}; }
  KeysElsewhere keys_elsewhere() const override { return KeysElsewhere::kWrittenNotInIdentity; }
  void Bind(JsonFieldReader& reader, PositionConfig& position) const override {
    reader.Field("fraction", position.fraction);
  }
  void Bind(JsonFieldWriter& writer, PositionConfig& position, bool) const override {
    writer.Field("fraction", position.fraction);
  }
  void ValidateSettings(const PositionConfig& position, std::vector<ConfigError>* errors) const override {
    if (!(position.fraction > 0.0 && position.fraction <= 1.0)) {
      errors->push_back({"position.fraction", "must lie in (0, 1], got " + std::to_string(position.fraction)});
    }
  }
};

}  // namespace
}  // namespace rung

RUNG_POSITIONAL_VARIANT(prope, rung::PartialRopeVariant)

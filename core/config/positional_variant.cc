#include "core/config/positional_variant.h"

#include "core/config/json_binding.h"
#include "core/config/registry.h"
#include "core/config/trial_config.h"

namespace rung {

// The generated list (cmake/registry_list.cmake): one entry per core/config/positional/*.cc.
std::vector<const PositionalVariant*> RegisteredPositionalVariants();

void PositionalVariant::Bind(JsonFieldReader&, PositionConfig&) const {}
void PositionalVariant::Bind(JsonFieldWriter&, PositionConfig&, bool) const {}
void PositionalVariant::ValidateSettings(const PositionConfig&, std::vector<ConfigError>*) const {}
void PositionalVariant::ValidateTrial(const TrialConfig&, std::vector<ConfigError>*) const {}
CheckedInt64 PositionalVariant::PositionalParameters(const ModelConfig&) const { return CheckedInt64(0); }
CheckedInt64 PositionalVariant::EmbeddingParameters(const ModelConfig&) const { return CheckedInt64(0); }
std::optional<PositionalRateGroup> PositionalVariant::RateGroup(const TrainConfig&, const PositionConfig&) const {
  return std::nullopt;
}
bool PositionalVariant::OneFrequencySchedule(const PositionConfig&) const { return true; }
bool PositionalVariant::LearnsPairFrequencies(const PositionConfig&) const { return false; }
bool PositionalVariant::ReadsKeyCount(const PositionConfig&) const { return false; }

const VariantSettings& BlockSettings::Of(const PositionConfig& position) const {
  auto found = position.blocks.find(block_);
  return found != position.blocks.end() ? found->second : defaults_;
}

void BlockSettings::Bind(JsonFieldReader& reader, PositionConfig& position) const {
  VariantSettings settings = Of(position);
  reader.Block(block_.c_str(), [&](JsonFieldReader& block) {
    for (auto& [key, value] : settings.reals) block.Field(key.c_str(), value);
    for (auto& [key, value] : settings.words) block.Field(key.c_str(), value);
    for (auto& [key, value] : settings.flags) block.Field(key.c_str(), value);
  });
  position.blocks[block_] = std::move(settings);
}

void BlockSettings::Bind(JsonFieldWriter& writer, PositionConfig& position) const {
  VariantSettings settings = Of(position);
  writer.Block(block_.c_str(), [&](JsonFieldWriter& block) {
    for (const auto& [key, value] : settings.reals) block.Field(key.c_str(), value);
    for (const auto& [key, value] : settings.words) block.Field(key.c_str(), value);
    for (const auto& [key, value] : settings.flags) block.Field(key.c_str(), value);
  });
}

namespace {

const Registry<PositionalVariant>& Variants() {
  static const Registry<PositionalVariant> registry(RegisteredPositionalVariants(), "positional variant");
  return registry;
}

}  // namespace

const std::vector<const PositionalVariant*>& PositionalVariants() { return Variants().entries(); }

const PositionalVariant* FindPositionalVariant(std::string_view name) { return Variants().Find(name); }

std::string PositionalVariantsHelp() { return Variants().Help("Positional variants (position.variant):"); }

const std::vector<std::string>& PositionalVariantNames() { return Variants().Names(); }

}  // namespace rung

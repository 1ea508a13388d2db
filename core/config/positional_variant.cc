#include "core/config/positional_variant.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "core/config/json_binding.h"
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

const std::vector<const PositionalVariant*>& PositionalVariants() {
  static const std::vector<const PositionalVariant*> variants = [] {
    std::vector<const PositionalVariant*> list = RegisteredPositionalVariants();
    std::stable_sort(list.begin(), list.end(), [](const PositionalVariant* a, const PositionalVariant* b) {
      return a->listing_order() < b->listing_order();
    });
    // Two variants of one name would make the config ambiguous: a build error in spirit, caught on
    // the first use of any binary.
    std::set<std::string> names;
    for (const PositionalVariant* variant : list) {
      if (!names.insert(variant->name()).second) {
        std::fprintf(stderr, "rung: two positional variants are named '%s'\n", variant->name());
        std::abort();
      }
    }
    return list;
  }();
  return variants;
}

const PositionalVariant* FindPositionalVariant(std::string_view name) {
  for (const PositionalVariant* variant : PositionalVariants()) {
    if (name == variant->name()) return variant;
  }
  return nullptr;
}

std::string PositionalVariantsHelp() {
  size_t width = 0;
  for (const PositionalVariant* variant : PositionalVariants()) width = std::max(width, std::string(variant->name()).size());
  std::string text = "Positional variants (position.variant):\n";
  for (const PositionalVariant* variant : PositionalVariants()) {
    const std::string name = variant->name();
    text += "  " + name + std::string(width + 2 - name.size(), ' ') + variant->label() + ": " + variant->summary() + "\n";
  }
  return text;
}

std::vector<std::string> PositionalVariantNames() {
  std::vector<std::string> names;
  for (const PositionalVariant* variant : PositionalVariants()) names.emplace_back(variant->name());
  return names;
}

}  // namespace rung

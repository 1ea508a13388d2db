// tests/sweeps/spec/ladder_variant_test.cc
#include "sweeps/spec/ladder_variant.h"

#include <gtest/gtest.h>

namespace rung {
namespace {

using nlohmann::json;

TEST(LadderVariant, TheDefaultKeysAreEveryAxisButTheSeedSorted) {
  const json a = {{"seed", 0}, {"position.variant", "rope"}, {"train.lr", 0.001}};
  const json b = {{"seed", 1}, {"position.variant", "nope"}, {"inverse_temperature.xi", 0.5}};
  EXPECT_EQ(DefaultVariantKeys({&a, &b}),
            (std::vector<std::string>{"inverse_temperature.xi", "position.variant", "train.lr"}));
  const json seeds_only = {{"seed", 3}};
  EXPECT_EQ(DefaultVariantKeys({&seeds_only}), (std::vector<std::string>{"position.variant"}));
}

TEST(LadderVariant, ATunedKeyIsNoVariantKey) {
  const json a = {{"seed", 0}, {"position.variant", "rope"}, {"train.lr", 0.001}};
  EXPECT_EQ(DefaultVariantKeys({&a}, "train.lr"), (std::vector<std::string>{"position.variant"}));
  const json tuned_only = {{"seed", 0}, {"train.lr", 0.001}};
  EXPECT_EQ(DefaultVariantKeys({&tuned_only}, "train.lr"), (std::vector<std::string>{"position.variant"}));
}

TEST(LadderVariant, OneKeyNamesByItsValueAndSeveralByKeyEqualsValue) {
  const json assignments = {{"position.variant", "lerope"}, {"train.lr", 0.001}};
  const json config = {{"position", {{"variant", "lerope"}, {"rotary_fraction", 0.5}}}};
  EXPECT_EQ(LadderVariantName(assignments, config, {"position.variant"}), "lerope");
  EXPECT_EQ(LadderVariantName(assignments, config, {"position.variant", "train.lr"}),
            "position.variant=lerope,train.lr=0.001");
  // A key that is no axis is read from the resolved config; one in neither is null.
  EXPECT_EQ(LadderVariantName(assignments, config, {"position.rotary_fraction"}), "0.5");
  EXPECT_EQ(LadderVariantName(assignments, config, {"model.nothing"}), "null");
}

}  // namespace
}  // namespace rung

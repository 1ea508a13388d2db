#include "core/config/positional_variant.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/trial_config.h"

namespace rung {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(PositionalVariantRegistry, ListsTheVariantsInTheirListingOrderWithUniqueNamesAndLabels) {
  EXPECT_THAT(PositionalVariantNames(),
              ::testing::IsSupersetOf({"nope", "rope", "prope", "lerope", "adarope", "alibi", "absolute"}));
  std::set<std::string> labels;
  int previous = -1;
  for (const PositionalVariant* variant : PositionalVariants()) {
    EXPECT_GT(variant->listing_order(), previous) << variant->name() << ": listing orders are unique and ascend";
    previous = variant->listing_order();
    EXPECT_TRUE(labels.insert(variant->label()).second) << variant->label();
    EXPECT_FALSE(std::string(variant->summary()).empty()) << variant->name();
    EXPECT_EQ(FindPositionalVariant(variant->name()), variant);
  }
  EXPECT_EQ(FindPositionalVariant("ropey"), nullptr);
}

TEST(PositionalVariantRegistry, TheFirstSevenKeepTheirReleasedOrderAndProperties) {
  std::vector<std::string> first;
  for (const PositionalVariant* variant : PositionalVariants()) {
    if (variant->listing_order() <= 70) first.emplace_back(variant->name());
  }
  EXPECT_THAT(first, ElementsAre("nope", "rope", "prope", "lerope", "adarope", "alibi", "absolute"));
  for (const char* rotary : {"rope", "prope", "lerope", "adarope"}) EXPECT_TRUE(FindPositionalVariant(rotary)->rotary());
  for (const char* plain : {"nope", "alibi", "absolute"}) EXPECT_FALSE(FindPositionalVariant(plain)->rotary());
}

TEST(PositionalVariantRegistry, AnUnknownVariantIsRefusedWithTheNearestNameAndWhereTheListIs) {
  std::vector<ConfigError> errors;
  EXPECT_FALSE(ParseTrialConfig({{"position", {{"variant", "ropey"}}}}, &errors).has_value());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "position.variant");
  EXPECT_EQ(errors[0].message, "'ropey' is not a positional variant (did you mean 'rope'?); `rung validate --help` "
                               "(or rung-train --help) lists them");
}

TEST(PositionalVariantRegistry, TheHelpTextHasALineForEachVariant) {
  const std::string help = PositionalVariantsHelp();
  EXPECT_THAT(help, HasSubstr("Positional variants (position.variant):\n"));
  for (const PositionalVariant* variant : PositionalVariants()) {
    EXPECT_THAT(help, HasSubstr(std::string(variant->name()) + " ")) << variant->name();
    EXPECT_THAT(help, HasSubstr(std::string(variant->label()) + ": " + variant->summary() + "\n"));
  }
}

}  // namespace
}  // namespace rung

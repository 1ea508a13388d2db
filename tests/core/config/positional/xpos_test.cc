// xPos's torch-free part: its settings block, written only when chosen, checked with key paths.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/config/model_arithmetic.h"
#include "core/config/positional_variant.h"
#include "core/config/trial_config.h"

namespace rung {
namespace {

using ::testing::HasSubstr;

nlohmann::json Trial(nlohmann::json position) {
  return {{"data", {{"source", "builtin"}, {"seq_len", 32}}}, {"train", {{"steps", 10}}}, {"position", std::move(position)}};
}

TEST(XposVariant, ItsSettingsAreReadAndWrittenOnlyWhenChosen) {
  StatusOr<TrialConfig> xpos = TrialConfigFromJson(Trial({{"variant", "xpos"}, {"xpos", {{"scale_base", 256}}}}));
  ASSERT_TRUE(xpos.ok()) << xpos.status().message();
  const nlohmann::json written = TrialConfigToJson(*xpos)["position"]["xpos"];
  EXPECT_EQ(written, (nlohmann::json{{"scale_base", 256.0}, {"rate", 0.4}}));
  EXPECT_TRUE(FindPositionalVariant("xpos")->rotary());
  EXPECT_EQ(CountParameters(xpos->model).positional, 0);
  StatusOr<TrialConfig> rope = TrialConfigFromJson(Trial({{"variant", "rope"}}));
  ASSERT_TRUE(rope.ok()) << rope.status().message();
  EXPECT_FALSE(TrialConfigToJson(*rope)["position"].contains("xpos"));
}

TEST(XposVariant, BadSettingsNameTheirKey) {
  StatusOr<TrialConfig> zero = TrialConfigFromJson(Trial({{"variant", "xpos"}, {"xpos", {{"scale_base", 0}}}}));
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(zero.status().message(), HasSubstr("position.xpos.scale_base: must be positive"));
  StatusOr<TrialConfig> typo = TrialConfigFromJson(Trial({{"variant", "xpos"}, {"xpos", {{"scale_bse", 64}}}}));
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(typo.status().message(), HasSubstr("scale_base"));
}

}  // namespace
}  // namespace rung

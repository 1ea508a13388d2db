// Every length-extension method has both parts, and the dispatch keeps each method's formula.
#include "core/model/frequency_extension.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "core/config/length_extension_method.h"

namespace rung {
namespace {

TEST(FrequencyExtension, EveryRegisteredMethodHasAModelPartAndNoModelPartLacksAMethod) {
  std::vector<std::string> methods = LengthExtensionMethodNames();
  std::vector<std::string> models = FrequencyExtensionNames();
  std::sort(methods.begin(), methods.end());
  std::sort(models.begin(), models.end());
  EXPECT_EQ(methods, models);
  EXPECT_EQ(LengthExtensionMethodNames(),
            (std::vector<std::string>{"none", "pi", "ntk_by_parts", "yarn", "dynamic_ntk", "dominant_band"}));
}

TEST(FrequencyExtension, EachMethodTransformsTheFrequenciesAsItsFormulaSays) {
  const torch::Tensor theta = torch::tensor({1.0, 0.1, 0.01, 0.001}, torch::kDouble).view({1, 4});
  LengthExtension extension{"none", 4.0, 64.0};
  EXPECT_TRUE(torch::equal(ExtendFrequencies(theta, extension), theta));
  extension.method = "pi";
  EXPECT_TRUE(torch::allclose(ExtendFrequencies(theta, extension), theta / 4.0));
  extension.method = "dynamic_ntk";  // pair f times s^(-2f/(d-2)), d = 8
  const torch::Tensor f = torch::arange(4, torch::kDouble).view({1, 4});
  EXPECT_TRUE(torch::allclose(ExtendFrequencies(theta, extension), theta * torch::pow(4.0, -2.0 * f / 6.0)));
  extension.method = "ntk_by_parts";  // r = 64 theta / (2 pi): 10.2 ramps, 1.02 ramps, the slow two interpolate
  const torch::Tensor turns = theta * (64.0 / (2 * M_PI));
  const torch::Tensor keep = ((turns - 1.0) / 31.0).clamp(0.0, 1.0);
  EXPECT_TRUE(torch::allclose(ExtendFrequencies(theta, extension), (1 - keep) * theta / 4.0 + keep * theta));
  extension.method = "yarn";
  EXPECT_TRUE(torch::allclose(ExtendFrequencies(theta, extension), (1 - keep) * theta / 4.0 + keep * theta));
  EXPECT_DOUBLE_EQ(ExtensionLogitFactor(extension), std::pow(0.1 * std::log(4.0) + 1.0, 2.0));
  extension.method = "dominant_band";
  extension.dominant_pairs = {{2}};
  torch::Tensor expected = theta.clone();
  expected[0][2] = 0.01 / 4.0;
  EXPECT_TRUE(torch::allclose(ExtendFrequencies(theta, extension), expected));
  EXPECT_DOUBLE_EQ(ExtensionLogitFactor(extension), 1.0);
}

}  // namespace
}  // namespace rung

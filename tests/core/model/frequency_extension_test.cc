// Every length-extension method has both parts, and the dispatch keeps each method's formula.
#include "core/model/frequency_extension.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "core/config/length_extension_method.h"
#include "core/model/positional_encoding.h"

namespace rung {
namespace {

TEST(FrequencyExtension, EveryRegisteredMethodHasAModelPartAndNoModelPartLacksAMethod) {
  std::vector<std::string> methods = LengthExtensionMethodNames();
  std::vector<std::string> models = FrequencyExtensionNames();
  std::sort(methods.begin(), methods.end());
  std::sort(models.begin(), models.end());
  EXPECT_EQ(methods, models);
  EXPECT_EQ(LengthExtensionMethodNames(),
            (std::vector<std::string>{"none", "pi", "ntk_by_parts", "yarn", "yarn_hf", "dynamic_ntk", "llama3",
                                      "dominant_band"}));
}

// yarn_hf at d = 64, b = 10000, s = 4 over L = 2048: the correction dimensions are D(32) = 7.4 and
// D(1) = 20.9, floored and ceiled to 8 and 21; pairs up to 8 keep theta, pairs from 21 on are theta / 4,
// pair 14 is 6/13 of the way; the logits are multiplied by (0.1 ln 4 + 1)^2.
TEST(FrequencyExtension, YarnAsTransformersComputesItRampsOverThePairIndex) {
  std::vector<double> rope = RopeFrequencies(10000.0, 64);
  const torch::Tensor theta = torch::tensor(rope, torch::kDouble).unsqueeze(0);
  LengthExtension extension{"yarn_hf", 4.0, 2048.0};
  extension.rope_base = 10000.0;
  const torch::Tensor extended = ExtendFrequencies(theta, extension).squeeze(0);
  for (int64_t f : {0, 8}) EXPECT_NEAR(extended[f].item<double>(), rope[f], 1e-15) << f;
  for (int64_t f : {21, 31}) EXPECT_NEAR(extended[f].item<double>(), rope[f] / 4.0, 1e-15) << f;
  const double ramp = 6.0 / 13.0;
  EXPECT_NEAR(extended[14].item<double>(), rope[14] / 4.0 * ramp + rope[14] * (1.0 - ramp), 1e-15);
  EXPECT_NEAR(ExtensionLogitFactor(extension), std::pow(0.1 * std::log(4.0) + 1.0, 2.0), 1e-15);
  extension.attention_factor = 1.5;
  EXPECT_NEAR(ExtensionLogitFactor(extension), 2.25, 1e-15);
}

// llama3 at factor 8 over L = 8192 with Llama 3.1's 1 and 4: wavelengths above 8192 divided by 8,
// below 2048 kept, between the smooth mix with weight (L / wavelength - 1) / 3.
TEST(FrequencyExtension, Llama3KeepsFastPairsInterpolatesSlowOnesAndMixesBetween) {
  std::vector<double> rope = RopeFrequencies(500000.0, 128);
  const torch::Tensor theta = torch::tensor(rope, torch::kDouble).unsqueeze(0);
  LengthExtension extension{"llama3", 8.0, 8192.0};
  const torch::Tensor extended = ExtendFrequencies(theta, extension).squeeze(0);
  int checked_bands = 0;
  for (size_t f = 0; f < rope.size(); ++f) {
    const double wavelength = 2.0 * M_PI / rope[f];
    double expected = rope[f];
    if (wavelength > 8192.0) {
      expected = rope[f] / 8.0, checked_bands |= 1;
    } else if (wavelength >= 2048.0) {
      const double smooth = (8192.0 / wavelength - 1.0) / 3.0;
      expected = (1.0 - smooth) * rope[f] / 8.0 + smooth * rope[f], checked_bands |= 2;
    } else {
      checked_bands |= 4;
    }
    EXPECT_NEAR(extended[f].item<double>(), expected, 1e-12 * rope[f]) << f;
  }
  EXPECT_EQ(checked_bands, 7) << "every band is exercised";
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

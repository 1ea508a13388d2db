// Every inverse-temperature form has both parts, and the model parts keep the parameter names and
// optimizer order checkpoints hold.
#include "core/model/inverse_temperature_form_model.h"

#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "core/config/inverse_temperature_form.h"
#include "core/model/inverse_temperature.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

TEST(InverseTemperatureFormModel, EveryRegisteredFormHasAModelPartAndNoModelPartLacksAForm) {
  std::vector<std::string> forms = InverseTemperatureFormNames();
  std::vector<std::string> models = InverseTemperatureFormModelNames();
  std::sort(forms.begin(), forms.end());
  std::sort(models.begin(), models.end());
  EXPECT_EQ(forms, models);
  EXPECT_EQ(InverseTemperatureFormNames(), (std::vector<std::string>{"none", "log_power", "qwen", "ssmax", "learned"}));
}

std::vector<std::string> ParameterNames(const std::string& form, bool learn_s = false) {
  ModelConfig config = testing_models::Tiny("rope");
  config.inverse_temperature.form = form;
  config.inverse_temperature.learn_s = learn_s;
  InverseTemperature module(config);
  std::vector<std::string> names;
  for (const auto& item : module->named_parameters()) names.push_back(item.key());
  return names;
}

TEST(InverseTemperatureFormModel, TheReleasedFormsKeepTheirCheckpointNamesAndOptimizerOrder) {
  EXPECT_TRUE(ParameterNames("none").empty());
  EXPECT_TRUE(ParameterNames("qwen").empty());
  EXPECT_TRUE(ParameterNames("log_power").empty());
  EXPECT_EQ(ParameterNames("log_power", /*learn_s=*/true), std::vector<std::string>{"s"});
  EXPECT_EQ(ParameterNames("ssmax"), std::vector<std::string>{"s"});
  EXPECT_EQ(ParameterNames("learned"), (std::vector<std::string>{"beta", "s", "b"}));
  // The positional optimizer group takes them in this order (its flat buffer's layout).
  ModelConfig config = testing_models::Tiny("rope");
  config.inverse_temperature.form = "learned";
  InverseTemperature learned(config);
  const std::vector<torch::Tensor> group = learned->learned_parameters();
  ASSERT_EQ(group.size(), 3u);
  EXPECT_EQ(group[0].sizes(), (std::vector<int64_t>{config.layers, config.heads}));  // s
  EXPECT_EQ(group[2].sizes(), (std::vector<int64_t>{config.seq_len}));               // beta
}

}  // namespace
}  // namespace rung

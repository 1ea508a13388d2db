// Every number of a trial config against the range rung-train holds it in
// (core/config/config_number_range.h): each real key refused past float32, each integer key past
// int64, each refusal naming the key; numbers past double refused where the YAML says them.
#include "core/config/config_number_range.h"

#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"
#include "core/config/yaml_document.h"

namespace rung {
namespace {

using nlohmann::json;
using testing::HasSubstr;

json NumberRangeTrial() {
  return json::parse(R"({"data": {"source": "builtin", "seq_len": 64},
                         "model": {"layers": 2, "d_model": 32, "heads": 4},
                         "train": {"steps": 10}})");
}

// Every numeric leaf of the written config (every key the reader takes), as a JSON pointer.
void NumericLeaves(const json& node, const std::string& pointer, bool reals, std::vector<std::string>* out) {
  if (node.is_object()) {
    for (auto it = node.begin(); it != node.end(); ++it) NumericLeaves(it.value(), pointer + "/" + it.key(), reals, out);
  } else if (reals ? node.is_number_float() : node.is_number_integer()) {
    out->push_back(pointer);
  }
}

std::string DottedPath(std::string pointer) {
  for (char& c : pointer) c = c == '/' ? '.' : c;
  return pointer.substr(1);
}

TEST(ConfigRealRange, HoldsWhatFloat32HoldsAndNothingElse) {
  EXPECT_EQ(ConfigRealRangeProblem(0.0), "");
  EXPECT_EQ(ConfigRealRangeProblem(FLT_MAX), "");
  EXPECT_EQ(ConfigRealRangeProblem(-FLT_MAX), "");
  EXPECT_EQ(ConfigRealRangeProblem(FLT_MIN), "");
  EXPECT_THAT(ConfigRealRangeProblem(std::nextafter(double{FLT_MAX}, 1e300)), HasSubstr("outside float32's range"));
  EXPECT_THAT(ConfigRealRangeProblem(1e39), HasSubstr("1e+39 is outside float32's range"));
  EXPECT_THAT(ConfigRealRangeProblem(std::nextafter(double{FLT_MIN}, 0.0)), HasSubstr("flush to 0"));
  EXPECT_THAT(ConfigRealRangeProblem(INFINITY), HasSubstr("infinity is outside"));
  EXPECT_THAT(ConfigRealRangeProblem(NAN), HasSubstr("NaN"));
}

TEST(ConfigRealRange, EveryRealKeyOfATrialConfigIsRefusedPastFloat32ByName) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(NumberRangeTrial());
  ASSERT_TRUE(trial.ok());
  std::vector<std::string> reals;
  NumericLeaves(TrialConfigToJson(*trial), "", true, &reals);
  ASSERT_GT(reals.size(), 15u);
  for (const std::string& pointer : reals) {
    for (double value : {3.5e38, -1e39, 1e-300}) {
      json config = NumberRangeTrial();
      config[json::json_pointer(pointer)] = value;
      StatusOr<TrialConfig> refused = TrialConfigFromJson(config);
      ASSERT_FALSE(refused.ok()) << pointer << " = " << value;
      EXPECT_THAT(refused.status().message(), HasSubstr(DottedPath(pointer) + ": " + ConfigNumberText(value)))
          << refused.status().message();
    }
  }
}

TEST(ConfigRealRange, EveryIntegerKeyIsRefusedPastInt64ByNameNeverWrapped) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(NumberRangeTrial());
  ASSERT_TRUE(trial.ok());
  std::vector<std::string> integers;
  NumericLeaves(TrialConfigToJson(*trial), "", false, &integers);
  ASSERT_GT(integers.size(), 15u);
  for (const std::string& pointer : integers) {
    for (const json& value : {json(uint64_t{9223372036854775808ull}), json(1e19)}) {
      json config = NumberRangeTrial();
      config[json::json_pointer(pointer)] = value;
      StatusOr<TrialConfig> refused = TrialConfigFromJson(config);
      ASSERT_FALSE(refused.ok()) << pointer << " = " << value.dump();
      EXPECT_THAT(refused.status().message(), HasSubstr(DottedPath(pointer) + ": "));
      EXPECT_THAT(refused.status().message(), HasSubstr("outside int64's range")) << refused.status().message();
    }
  }
}

TEST(ConfigRealRange, AListElementPastFloat32IsRefusedAtItsIndex) {
  json config = NumberRangeTrial();
  config["train"]["diagnostics_at"] = {0.5, 1e39};
  StatusOr<TrialConfig> refused = TrialConfigFromJson(config);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("train.diagnostics_at[1]: 1e+39 is outside float32's range"));
}

TEST(ConfigRealRange, AnOptimiserScalePastFloat32IsAConfigErrorAtTheKeyThatMakesIt) {
  json config = NumberRangeTrial();
  config["train"]["lr"] = 3e38;  // lr / (1 - beta1) = 3e39 at the first step
  StatusOr<TrialConfig> refused = TrialConfigFromJson(config);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("train.lr: the first step's update scale"));

  config = NumberRangeTrial();
  config["train"]["lr"] = 3e37;
  config["train"]["weight_decay"] = 0.0;
  EXPECT_TRUE(TrialConfigFromJson(config).ok());  // 3e38: within float32
  config["position"] = {{"variant", "lerope"}, {"lr_mult", 10.0}};
  refused = TrialConfigFromJson(config);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("position.lr_mult: the first step's update scale"));
  config["position"] = {{"variant", "rope"}, {"lr_mult", 10.0}};  // no positional group to scale
  EXPECT_TRUE(TrialConfigFromJson(config).ok()) << TrialConfigFromJson(config).status().message();

  config = NumberRangeTrial();
  config["train"]["lr"] = 1e30;
  config["train"]["weight_decay"] = 1e9;
  refused = TrialConfigFromJson(config);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("train.weight_decay: train.lr x train.weight_decay"));
}

TEST(ConfigDocumentNumbers, ANumberPastDoubleIsRefusedWhereTheDocumentSaysIt) {
  for (const char* number : {"1e400", "-1e400", "1e-400"}) {
    StatusOr<ConfigDocument> document =
        ParseConfigDocument(std::string("train:\n  lr: ") + number + "\n", "spec.yaml");
    ASSERT_FALSE(document.ok()) << number;
    EXPECT_EQ(document.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(document.status().message(), HasSubstr("spec.yaml:2:7"));
    EXPECT_THAT(document.status().message(), HasSubstr(std::string("the number ") + number + " is outside"));
  }
}

TEST(ConfigDocumentNumbers, InfinityAndNanAreNotNumbersSoNoKeyTakesThem) {
  for (const char* text : {"inf", "-inf", "nan", "infinity", ".inf", ".nan"}) {
    StatusOr<ConfigDocument> document = ParseConfigDocument(std::string("x: ") + text + "\n", "t.yaml");
    ASSERT_TRUE(document.ok()) << text;
    EXPECT_TRUE(document->json["x"].is_string()) << text;
  }
  StatusOr<ConfigDocument> document = ParseConfigDocument("train: {lr: inf}\n", "t.yaml");
  ASSERT_TRUE(document.ok());
  json config = NumberRangeTrial();
  config["train"]["lr"] = document->json["train"]["lr"];
  StatusOr<TrialConfig> refused = TrialConfigFromJson(config);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("train.lr: expected a number, got the string \"inf\""));
}

}  // namespace
}  // namespace rung

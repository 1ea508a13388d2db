// tests/proto/config_value_test.cc: config values (JSON) to the wire and back.
#include "proto/config_value.h"

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace rung::wire {
namespace {

using nlohmann::json;

TEST(ConfigValueTest, EveryJsonValueComesBackAsTheSameTextAfterTheWire) {
  const std::string text =
      R"({"data":{"seq_len":128,"val_fraction":0.05},"flag":true,"lengths":[64,128.5,"x",null,[1,{"k":false}]],)"
      R"("lr":0.003,"nothing":null,"one":1.0,"seed":0,"text":"1","variant":"rope"})";
  const json value = json::parse(text);
  v1::ConfigValue wire_value;
  ASSERT_TRUE(wire_value.ParseFromString(ToConfigValue(value).SerializeAsString()));
  EXPECT_EQ(FromConfigValue(wire_value).dump(), text);
  EXPECT_EQ(FromConfigObject(ToConfigObject(value)).dump(), text);
}

TEST(ConfigValueTest, KeepsIntegersNumbersAndTextApart) {
  EXPECT_EQ(ToConfigValue(json(0)).kind_case(), v1::ConfigValue::kInteger);
  EXPECT_EQ(ToConfigValue(json(-3)).integer(), -3);
  EXPECT_EQ(ToConfigValue(json(0.0)).kind_case(), v1::ConfigValue::kNumber);
  EXPECT_EQ(ToConfigValue(json("1")).kind_case(), v1::ConfigValue::kText);
  EXPECT_EQ(ToConfigValue(json(nullptr)).kind_case(), v1::ConfigValue::kNull);
  EXPECT_EQ(FromConfigValue(ToConfigValue(json(1.0))).dump(), "1.0");
  EXPECT_EQ(FromConfigValue(ToConfigValue(json(1))).dump(), "1");
}

TEST(ConfigValueTest, AnUnsignedIntegerBeyondInt64BecomesANumber) {
  const uint64_t largest = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(ToConfigValue(json(largest)).kind_case(), v1::ConfigValue::kNumber);
  const uint64_t fits = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ToConfigValue(json(fits)).integer(), std::numeric_limits<int64_t>::max());
}

TEST(ConfigValueTest, EntriesKeepTheObjectsOrderAndAnUnsetValueIsNull) {
  google::protobuf::RepeatedPtrField<v1::ConfigEntry> entries;
  ToConfigEntries(json{{"seed", 1}, {"position.variant", "lerope"}}, &entries);
  ASSERT_EQ(entries.size(), 2);
  EXPECT_EQ(entries[0].key(), "position.variant");  // nlohmann::json sorts its keys
  EXPECT_EQ(entries[1].key(), "seed");
  ToConfigEntries(json::array({1, 2}), &entries);  // not an object: nothing added
  EXPECT_EQ(entries.size(), 2);
  entries.Add()->set_key("unset");
  EXPECT_EQ(FromConfigEntries(entries).dump(), R"({"position.variant":"lerope","seed":1,"unset":null})");
}

}  // namespace
}  // namespace rung::wire

// A model folder's weights: one file or an index of shards, tensors found by name, BF16/F16/F32 read
// as floats exactly, and the lies an index can tell refused naming the file.
#include "core/hf/hf_weights.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::hf {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string FloatBytes(const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::string HalfBytes(const std::vector<uint16_t>& values) {
  std::string bytes(values.size() * 2, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

void Write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

fs::path Folder(const std::string& name) {
  const fs::path folder = fs::path(testing::TempDir()) / name;
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

TEST(HfWeights, HalfAndBfloatBitsReadAsTheirValues) {
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToFloat(0xc040), -3.0f);
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // the smallest subnormal
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
  // Every half converts exactly: through the compiler's own _Float16 where it has one.
#if defined(__FLT16_MAX__)
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    _Float16 half;
    const uint16_t b = static_cast<uint16_t>(bits);
    std::memcpy(&half, &b, 2);
    const float expected = static_cast<float>(half);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(b)));
    } else {
      ASSERT_EQ(HalfToFloat(b), expected) << std::hex << bits;
    }
  }
#endif
}

TEST(HfWeights, OneFileFolderFindsEachTensorAndReadsItAsFloats) {
  const fs::path folder = Folder("hf_one_file");
  Write(folder / "model.safetensors",
        SafetensorsImage({{"a", SafetensorsDtype::kF32, {2}, FloatBytes({1.5f, -2.0f})},
                          {"b", SafetensorsDtype::kBF16, {2}, HalfBytes({0x3f80, 0xc040})},
                          {"c", SafetensorsDtype::kF16, {1}, HalfBytes({0x3c00})},
                          {"i", SafetensorsDtype::kI64, {1}, std::string(8, '\0')}}));
  StatusOr<HfWeights> weights = HfWeights::Open(folder.string());
  ASSERT_TRUE(weights.ok()) << weights.status().message();
  EXPECT_EQ(weights->Names(), (std::vector<std::string>{"a", "b", "c", "i"}));
  const SafetensorsFile* file = nullptr;
  const SafetensorsTensor* b = weights->Find("b", &file);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(ToFloats(*file, *b).value(), (std::vector<float>{1.0f, -3.0f}));
  EXPECT_EQ(ToFloats(*file, *weights->Find("a")).value(), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(ToFloats(*file, *weights->Find("c")).value(), (std::vector<float>{1.0f}));
  StatusOr<std::vector<float>> integers = ToFloats(*file, *weights->Find("i"));
  ASSERT_FALSE(integers.ok());
  EXPECT_THAT(integers.status().message(), HasSubstr("tensor 'i' is I64; model weights are read as BF16, F16 or F32"));
  // A copy stays usable after the original goes.
  HfWeights copy = *weights;
  weights = Status::Internal("gone");
  ASSERT_NE(copy.Find("a"), nullptr);
  EXPECT_EQ(copy.Find("a")->shape, (std::vector<int64_t>{2}));
}

TEST(HfWeights, AnIndexSpreadsTensorsOverShards) {
  const fs::path folder = Folder("hf_sharded");
  Write(folder / "model-00001-of-00002.safetensors", SafetensorsImage({{"x", SafetensorsDtype::kF32, {1}, FloatBytes({7})}}));
  Write(folder / "model-00002-of-00002.safetensors", SafetensorsImage({{"y", SafetensorsDtype::kF32, {1}, FloatBytes({8})}}));
  Write(folder / "model.safetensors.index.json",
        R"({"metadata": {"total_size": 8}, "weight_map": {"x": "model-00001-of-00002.safetensors",
            "y": "model-00002-of-00002.safetensors"}})");
  StatusOr<HfWeights> weights = HfWeights::Open(folder.string());
  ASSERT_TRUE(weights.ok()) << weights.status().message();
  EXPECT_EQ(weights->files().size(), 2u);
  const SafetensorsFile* file = nullptr;
  ASSERT_NE(weights->Find("y", &file), nullptr);
  EXPECT_EQ(ToFloats(*file, *weights->Find("y")).value(), (std::vector<float>{8}));
}

TEST(HfWeights, AnIndexThatLiesIsRefusedNamingTheFile) {
  const fs::path folder = Folder("hf_lies");
  Write(folder / "a.safetensors", SafetensorsImage({{"x", SafetensorsDtype::kF32, {1}, FloatBytes({7})}}));
  const auto refused = [&](const std::string& index) {
    Write(folder / "model.safetensors.index.json", index);
    StatusOr<HfWeights> weights = HfWeights::Open(folder.string());
    EXPECT_FALSE(weights.ok()) << index;
    return weights.ok() ? std::string() : weights.status().message();
  };
  EXPECT_THAT(refused(R"({"weight_map": {"x": "missing.safetensors"}})"),
              HasSubstr("names shard 'missing.safetensors', which is not in the folder"));
  EXPECT_THAT(refused(R"({"weight_map": {"x": "../a.safetensors"}})"), HasSubstr("not a file name in the model's folder"));
  EXPECT_THAT(refused(R"({"weight_map": {"x": "a.safetensors", "z": "a.safetensors"}})"),
              HasSubstr("tensor 'z' is mapped to 'a.safetensors', which does not hold it"));
  EXPECT_THAT(refused(R"({"weight_map": []})"), HasSubstr("no weight_map object"));
  EXPECT_THAT(refused(R"({"weight_map": {}})"), HasSubstr("names no tensor"));
  EXPECT_THAT(refused("{"), HasSubstr("model.safetensors.index.json: byte"));
  // A number past a double's range (nlohmann's out_of_range, not a parse_error) is refused, not thrown.
  EXPECT_THAT(refused(R"({"metadata": {"total_size": 1e999}, "weight_map": {"x": "a.safetensors"}})"),
              HasSubstr("model.safetensors.index.json: not valid JSON: [json.exception.out_of_range.406]"));
  // Two shards holding the same tensor.
  Write(folder / "b.safetensors", SafetensorsImage({{"x", SafetensorsDtype::kF32, {1}, FloatBytes({9})}}));
  EXPECT_THAT(refused(R"({"weight_map": {"x": "a.safetensors", "y": "b.safetensors"}})"), HasSubstr("is also in"));
  // A truncated shard.
  const std::string whole = SafetensorsImage({{"x", SafetensorsDtype::kF32, {4}, FloatBytes({1, 2, 3, 4})}});
  Write(folder / "a.safetensors", whole.substr(0, whole.size() - 3));
  EXPECT_THAT(refused(R"({"weight_map": {"x": "a.safetensors"}})"), HasSubstr("a.safetensors: byte"));
}

TEST(HfWeights, AFolderWithoutWeightsIsNotFound) {
  StatusOr<HfWeights> weights = HfWeights::Open(Folder("hf_empty").string());
  ASSERT_FALSE(weights.ok());
  EXPECT_EQ(weights.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(weights.status().message(), HasSubstr("neither model.safetensors nor model.safetensors.index.json"));
}

}  // namespace
}  // namespace rung::hf

// safetensors files: a written file reads back tensor for tensor, and every lie a header can tell is
// refused with the file, the byte and what is wrong, before anything is read from it.
#include "core/hf/safetensors.h"

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

std::string Floats(const std::vector<float>& values) {
  std::string bytes(values.size() * 4, '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// The image of a file with header text `header` and `data` bytes after it.
std::string Image(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  const uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string Message(const std::string& header, const std::string& data) {
  StatusOr<SafetensorsHeader> parsed = ParseSafetensors(Image(header, data), "m.safetensors");
  EXPECT_FALSE(parsed.ok()) << header;
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(Safetensors, AWrittenFileReadsBackTensorForTensor) {
  const std::string path = testing::TempDir() + "/safetensors_round_trip.safetensors";
  const std::vector<SafetensorsEntry> entries = {
      {"model.embed_tokens.weight", SafetensorsDtype::kF32, {2, 3}, Floats({1, 2, 3, 4, 5, 6})},
      {"model.norm.weight", SafetensorsDtype::kBF16, {3}, std::string("\x80\x3f\x00\x40\x40\x40", 6)},
      {"empty", SafetensorsDtype::kF16, {0, 4}, ""},
  };
  {
    std::ofstream out(path, std::ios::binary);
    out << SafetensorsImage(entries, {{"format", "pt"}});
  }
  StatusOr<SafetensorsFile> file = SafetensorsFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().message();
  EXPECT_EQ(file->metadata().at("format"), "pt");
  ASSERT_EQ(file->tensors().size(), 3u);
  const SafetensorsTensor* embed = file->Find("model.embed_tokens.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(embed->elements(), 6);
  float values[6];
  std::memcpy(values, file->Data(*embed), sizeof(values));
  EXPECT_EQ(values[5], 6.0f);
  const SafetensorsTensor* norm = file->Find("model.norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->dtype, SafetensorsDtype::kBF16);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file->Data(*norm)), 6), entries[1].bytes);
  EXPECT_EQ(file->Find("missing"), nullptr);
  // The writer pads the header to a multiple of 8 bytes, as the reference writer does.
  std::ifstream in(path, std::ios::binary);
  uint64_t length = 0;
  in.read(reinterpret_cast<char*>(&length), 8);
  EXPECT_EQ(length % 8, 0u);
}

TEST(Safetensors, AHeaderLengthThatLiesIsRefusedBeforeItIsRead) {
  std::string image = Image("{}", "");
  image[0] = '\x40';  // 64 bytes of header in a 10-byte file
  StatusOr<SafetensorsHeader> parsed = ParseSafetensors(image, "m.safetensors");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(parsed.status().message(), HasSubstr("m.safetensors: byte 0: header length 64 runs past the end"));
  std::string huge(8, '\xff');
  EXPECT_THAT(ParseSafetensors(huge + "{}", "m.safetensors").status().message(),
              HasSubstr("is more than the format's 100000000"));
  EXPECT_THAT(ParseSafetensors("abc", "m.safetensors").status().message(), HasSubstr("fewer than the 8"));
}

TEST(Safetensors, OffsetsThatDoNotTileTheDataAreRefused) {
  const std::string data = Floats({1, 2, 3, 4});
  // A hole between two tensors.
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                      data),
              HasSubstr("tensor 'b' begins at data byte 8 where the tensors before it end at 4 (a hole)"));
  // Two tensors on the same bytes.
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                      data),
              HasSubstr("(overlap)"));
  // Bytes that disagree with the shape.
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}})", data),
              HasSubstr("data_offsets [0,16] hold 16 bytes where its shape [2,3] in F32 needs 24"));
  // A truncated file: the last tensor runs past the data.
  StatusOr<SafetensorsHeader> truncated =
      ParseSafetensors(Image(R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})", data), "m.safetensors");
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(truncated.status().message(), HasSubstr("past the file's 16 bytes of data (truncated?)"));
  // Trailing bytes no tensor owns.
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data),
              HasSubstr("the tensors' data ends at data byte 8 but the file holds 16"));
  // A range backwards.
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", data), HasSubstr("is not a range"));
}

TEST(Safetensors, MalformedEntriesNameTheTensorAndWhatIsWrong) {
  EXPECT_THAT(Message(R"({"a":{"dtype":"F4","shape":[1],"data_offsets":[0,4]}})", "abcd"),
              HasSubstr("m.safetensors: byte 8: header: tensor 'a': unknown dtype 'F4'"));
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"),
              HasSubstr("not a non-negative integer"));
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", "abcd"),
              HasSubstr("not a non-negative integer"));
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,4]}})", "abcd"),
              HasSubstr("more than 2^62"));
  EXPECT_THAT(Message(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0]}})", "abcd"),
              HasSubstr("data_offsets is not [begin, end]"));
  EXPECT_THAT(Message(R"({"a":[1,2]})", "abcd"), HasSubstr("is not an object"));
  EXPECT_THAT(Message(R"({"__metadata__":{"format":1}})", ""), HasSubstr("__metadata__ 'format' is not a string"));
  EXPECT_THAT(Message(R"([1,2])", ""), HasSubstr("byte 8: the header is not a JSON object"));
  EXPECT_THAT(Message(R"({"a":)", ""), HasSubstr("the header is not valid JSON"));
  // A number past a double's range (nlohmann's out_of_range, not a parse_error) is refused, not thrown.
  EXPECT_THAT(Message(R"({"__metadata__":{"x":1e999}})", ""),
              HasSubstr("m.safetensors: byte 8: the header is not valid JSON: [json.exception.out_of_range.406]"));
  EXPECT_THAT(Message(R"({"a":{"b":{"c":{"d":[1]}}}})", ""), HasSubstr("byte 28: the header nests deeper"));
  // A bracket inside a name is no nesting.
  StatusOr<SafetensorsHeader> bracketed = ParseSafetensors(Image(R"({"[[[[[\"{{{{":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})", "x"), "m");
  EXPECT_TRUE(bracketed.ok()) << bracketed.status().message();
}

TEST(Safetensors, AMissingFileIsNotFound) {
  StatusOr<SafetensorsFile> file = SafetensorsFile::Open(testing::TempDir() + "/no-such.safetensors");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace rung::hf

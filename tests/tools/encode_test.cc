// `rung-data encode` in process (tools/rung-data/encode.h) with a Hugging Face tokenizer.json: its
// JSON lines are HfTokenizer's own ids (template tokens on or off), its llm.c shard puts the
// end-of-text id between documents only, a shard of several documents needs an end-of-text token
// (refused before anything is written), and the byte lengths file is the tokenizer's.
#include "tools/rung-data/encode.h"

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/hf/hf_tokenizer.h"
#include "tests/core/data/test_files.h"
#include "tests/tools/hf_tiny_folder.h"

namespace rung::data_tool {
namespace {

using data_test::ReadBytes;
using data_test::TempFolder;
using data_test::WriteBytes;
using hf_tiny::HfTinyConfig;
using hf_tiny::HfTinyJson;
using hf_tiny::WriteHfFolder;

// Documents with what the SentencePiece-style normalizer changes (spaces, leading and repeated), a
// character outside the vocabulary (unknown), the text of a special token (never read as one), and
// non-ASCII letters.
const std::vector<std::string> kDocuments = {
    "the tinker sat in the sun.",
    "  then the ants ran on and on.  ",
    "the sea is near; <s> the hen </s> ate a pea.",
    "caf\xC3\xA9 na\xC3\xAFve \xF0\x9F\x8E\x89 z",
};

// The documents in one file, cut at form feeds by --split-on.
void WriteDocuments(const TempFolder& folder) {
  std::string text;
  for (const std::string& document : kDocuments) text += document + "\f";
  WriteBytes(folder / "docs.txt", text);
}

EncodeOptions Options(const TempFolder& folder, const std::string& format) {
  EncodeOptions options;
  options.tokenizer = folder / "tok";
  options.inputs = {folder / "docs.txt"};
  options.documents.split_on = "\f";
  options.out = folder / ("out." + format);
  options.format = format;
  options.threads = 2;
  return options;
}

// HfTokenizer's own ids of each document.
std::vector<std::vector<int>> OwnIds(bool add_special_tokens) {
  StatusOr<std::unique_ptr<hf::HfTokenizer>> tokenizer = hf::HfTokenizer::FromJson(HfTinyJson(), "hf-tiny");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  std::vector<std::vector<int>> ids;
  if (!tokenizer.ok()) return ids;
  std::unique_ptr<hf::HfTokenizer::Session> session = (*tokenizer)->NewSession();
  for (const std::string& document : kDocuments) {
    ids.emplace_back();
    EXPECT_TRUE((*tokenizer)->Encode(document, add_special_tokens, *session, &ids.back()).ok());
  }
  return ids;
}

std::vector<std::vector<int>> JsonLines(const std::string& path) {
  std::vector<std::vector<int>> lines;
  const std::string text = ReadBytes(path);
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin);
    EXPECT_NE(end, std::string::npos) << "the last line has no newline";
    if (end == std::string::npos) break;
    lines.push_back(nlohmann::json::parse(text.substr(begin, end - begin)).get<std::vector<int>>());
    begin = end + 1;
  }
  return lines;
}

// An llm.c shard's tokens (uint16), after checking its header.
std::vector<int> ShardTokens(const std::string& path) {
  const std::string bytes = ReadBytes(path);
  std::vector<int> tokens;
  EXPECT_GE(bytes.size(), 1024u);
  if (bytes.size() < 1024) return tokens;
  int32_t header[3];
  std::memcpy(header, bytes.data(), sizeof(header));
  EXPECT_EQ(header[0], 20240520);
  EXPECT_EQ(header[1], 1);
  EXPECT_EQ(static_cast<size_t>(header[2]) * 2, bytes.size() - 1024);
  for (size_t at = 1024; at + 1 < bytes.size(); at += 2) {
    tokens.push_back(static_cast<unsigned char>(bytes[at]) | (static_cast<unsigned char>(bytes[at + 1]) << 8));
  }
  return tokens;
}

TEST(EncodeTest, JsonLinesAreHfTokenizersOwnIdsWithItsTemplateTokens) {
  TempFolder folder;
  WriteDocuments(folder);
  WriteHfFolder(folder / "tok", HfTinyConfig());
  StatusOr<EncodeSummary> summary = Encode(Options(folder, "jsonl"));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const std::vector<std::vector<int>> expected = OwnIds(/*add_special_tokens=*/true);
  EXPECT_EQ(JsonLines(folder / "out.jsonl"), expected);
  for (const std::vector<int>& ids : expected) {
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids.front(), 1);  // <s>
  }
  EXPECT_EQ(summary->documents, 4);
  EXPECT_EQ(summary->vocab_size, 40);
  EXPECT_EQ(summary->eot_id, 2);
  int64_t tokens = 0;
  for (const std::vector<int>& ids : expected) tokens += static_cast<int64_t>(ids.size());
  EXPECT_EQ(summary->tokens, tokens);
}

TEST(EncodeTest, NoSpecialTokensDropsTheBos) {
  TempFolder folder;
  WriteDocuments(folder);
  WriteHfFolder(folder / "tok", HfTinyConfig());
  EncodeOptions options = Options(folder, "jsonl");
  options.special_tokens = false;
  StatusOr<EncodeSummary> summary = Encode(options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  const std::vector<std::vector<int>> lines = JsonLines(folder / "out.jsonl");
  EXPECT_EQ(lines, OwnIds(/*add_special_tokens=*/false));
  std::vector<std::vector<int>> with = OwnIds(/*add_special_tokens=*/true);
  for (std::vector<int>& ids : with) ids.erase(ids.begin());
  EXPECT_EQ(lines, with);
}

TEST(EncodeTest, AShardHasTheEotIdBetweenDocumentsAndNotBeforeTheFirst) {
  TempFolder folder;
  WriteDocuments(folder);
  WriteHfFolder(folder / "tok", HfTinyConfig());
  StatusOr<EncodeSummary> summary = Encode(Options(folder, "bin"));
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  std::vector<int> expected;
  const std::vector<std::vector<int>> ids = OwnIds(/*add_special_tokens=*/true);
  for (size_t d = 0; d < ids.size(); ++d) {
    if (d > 0) expected.push_back(2);
    expected.insert(expected.end(), ids[d].begin(), ids[d].end());
  }
  EXPECT_EQ(ShardTokens(folder / "out.bin"), expected);
}

TEST(EncodeTest, AShardOfSeveralDocumentsWithNoEotIsRefusedBeforeAnythingIsWritten) {
  TempFolder folder;
  WriteDocuments(folder);
  WriteHfFolder(folder / "tok", "");  // no tokenizer_config.json: nothing names an end-of-text token
  EncodeOptions options = Options(folder, "bin");
  options.token_byte_lengths_out = folder / "lengths.json";
  StatusOr<EncodeSummary> summary = Encode(options);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(summary.status().message().find("--eot"), std::string::npos) << summary.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(folder / "out.bin"));
  EXPECT_FALSE(std::filesystem::exists(folder / "lengths.json"));

  // JSON lines need none, nor does a shard of one document.
  EXPECT_TRUE(Encode(Options(folder, "jsonl")).ok());
  WriteBytes(folder / "one.txt", kDocuments[0]);
  options.inputs = {folder / "one.txt"};
  StatusOr<EncodeSummary> one = Encode(options);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->eot_id, -1);
  EXPECT_EQ(ShardTokens(folder / "out.bin"), OwnIds(/*add_special_tokens=*/true)[0]);

  // --eot names one.
  options.inputs = {folder / "docs.txt"};
  options.eot = "</s>";
  EXPECT_TRUE(Encode(options).ok());
}

TEST(EncodeTest, StandardOutputIsRefusedForAShard) {
  TempFolder folder;
  WriteDocuments(folder);
  WriteHfFolder(folder / "tok", HfTinyConfig());
  EncodeOptions options = Options(folder, "bin");
  options.out = "-";
  StatusOr<EncodeSummary> summary = Encode(options);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(summary.status().message().find("--out -"), std::string::npos) << summary.status().ToString();
}

TEST(EncodeTest, TheTokenByteLengthsFileIsTheTokenizersTokenByteLengths) {
  TempFolder folder;
  WriteDocuments(folder);
  WriteHfFolder(folder / "tok", HfTinyConfig());
  EncodeOptions options = Options(folder, "jsonl");
  options.token_byte_lengths_out = folder / "lengths.json";
  ASSERT_TRUE(Encode(options).ok());
  StatusOr<std::unique_ptr<hf::HfTokenizer>> tokenizer = hf::HfTokenizer::FromJson(HfTinyJson(), "hf-tiny");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  const std::vector<int32_t> lengths = nlohmann::json::parse(ReadBytes(folder / "lengths.json")).get<std::vector<int32_t>>();
  EXPECT_EQ(lengths, (*tokenizer)->TokenByteLengths());
  // <unk> <s> </s> count nothing, "▁" a space, the letters one byte each, then the merges'.
  const std::vector<int32_t> expected = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                         1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 4, 2, 2, 2, 2, 2, 2, 1};
  EXPECT_EQ(lengths, expected);
}

TEST(EncodeTest, ADocumentEncodedInPiecesGetsNoStartMarkAtEachCut) {
  // hf-tiny prepends "▁" to a text (its Prepend normalizer): each piece after the first continues the
  // document, so a cut at a line or a run of spaces adds no "▁" and, as no token spans these cuts,
  // the ids are the whole document's.
  TempFolder folder;
  WriteHfFolder(folder / "tok", HfTinyConfig());
  const std::string document = "the tinker sat\nin the sun then\nthe ants ran on and on  the end";
  WriteBytes(folder / "docs.txt", document);
  EncodeOptions options = Options(folder, "jsonl");
  options.documents.split_on = "";
  options.max_document_bytes = 16;
  StatusOr<EncodeSummary> summary = Encode(options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->documents_split, 1);
  StatusOr<std::unique_ptr<hf::HfTokenizer>> tokenizer = hf::HfTokenizer::FromJson(HfTinyJson(), "hf-tiny");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  std::vector<int> whole;
  ASSERT_TRUE((*tokenizer)->Encode(document, true, *(*tokenizer)->NewSession(), &whole).ok());
  EXPECT_EQ(JsonLines(options.out), std::vector<std::vector<int>>{whole});
}

}  // namespace
}  // namespace rung::data_tool

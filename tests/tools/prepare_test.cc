// rung-data prepare and tokenizer training in process: a document longer than --max-document-bytes
// encoded in pieces (its ids those of its pieces one after another, shorter documents' ids those of the
// whole document), and the smallest vocabulary SentencePiece trains, against SentencePiece itself;
// a Hugging Face tokenizer folder (its manifest, its copy of tokenizer.json, the BOS at the start of
// every document).
#include "tools/rung-data/prepare.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sentencepiece_trainer.h>

#include "core/common/sha256.h"
#include "core/data/token_manifest.h"
#include "core/data/token_shards.h"
#include "core/hf/hf_tokenizer.h"
#include "tests/core/data/test_files.h"
#include "tests/tools/hf_tiny_folder.h"
#include "tests/tools/vector_sentences.h"
#include "tools/rung-data/document_pieces.h"
#include "tools/rung-data/tokenizer.h"

namespace rung::data_tool {
namespace {

using data_test::TempFolder;
using data_test::WriteBytes;

// Lines of words, for a tokenizer to learn.
std::string Words(int lines, int seed) {
  const std::vector<std::string> words = {"the", "river", "ran", "past", "a", "mill", "where", "nobody", "lived",
                                          "and", "Elizabeth", "said,", "indeed!", "1813", "caf\xC3\xA9"};
  std::string text;
  uint32_t state = static_cast<uint32_t>(seed) * 2654435761u + 1;
  for (int line = 0; line < lines; ++line) {
    for (int w = 0; w < 12; ++w) {
      state = state * 1664525u + 1013904223u;
      text += (w == 0 ? "" : " ") + words[(state >> 16) % words.size()];
    }
    text += "\n";
  }
  return text;
}

// The documents of a prepared folder's shards, each without the end-of-text id that starts it.
std::vector<std::vector<int>> PreparedDocuments(const std::string& folder, int64_t vocab_size, int64_t eot_id) {
  DataConfig config;
  config.source = "shards";
  config.path = folder;
  config.vocab_size = vocab_size;
  config.seq_len = 1;
  auto shards = data_test::OpenedOrNull(TokenShards::Open(config, 0));
  std::vector<std::vector<int>> documents;
  if (shards == nullptr) return documents;
  for (Split split : {Split::kTrain, Split::kValidation}) {
    for (int64_t p = 0; p < shards->SplitTokens(split); ++p) {
      const int64_t token = shards->Token(split, p);
      if (token == eot_id) {
        documents.emplace_back();
      } else {
        documents.back().push_back(static_cast<int>(token));
      }
    }
  }
  std::sort(documents.begin(), documents.end());
  return documents;
}

TEST(PrepareTest, ADocumentOverTheLimitIsEncodedInPiecesAndShorterOnesWhole) {
  TempFolder folder;
  TokenizerTrainOptions train;
  train.type = "unigram";  // the encoder that is superlinear in what it is given
  train.vocab_size = 300;
  StatusOr<std::string> model = TrainTokenizer({Words(300, 1)}, train);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  WriteBytes(folder / "tokenizer.model", *model);
  auto tokenizer = data_test::OpenedOrNull(Tokenizer::Load(folder / "tokenizer.model"));
  ASSERT_NE(tokenizer, nullptr);

  // One long document: lines, a line longer than the limit, and a run with no space at all.
  const std::string long_document = Words(20, 2) + Words(1, 3).substr(0, 70) + Words(1, 4).substr(0, 600) +
                                    std::string(300, 'x') + "\n" + Words(3, 5);
  const std::vector<std::string> documents = {long_document, Words(2, 6), Words(3, 7)};
  for (size_t d = 0; d < documents.size(); ++d) WriteBytes(folder / ("docs/" + std::to_string(d) + ".txt"), documents[d]);

  PrepareOptions options;
  options.tokenizer = folder / "tokenizer.model";
  options.inputs = {folder / "docs"};
  options.out = folder / "prepared";
  options.val_fraction = 0.5;
  options.threads = 2;
  options.max_document_bytes = 256;
  StatusOr<PrepareSummary> summary = Prepare(options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->documents_split, 1);

  std::vector<std::vector<int>> expected;
  for (const std::string& document : documents) {
    std::vector<int> ids, piece_ids;
    if (document.size() <= 256) {
      ASSERT_TRUE(tokenizer->Encode(document, &ids).ok());  // as before the limit existed
    } else {
      const std::vector<std::string_view> pieces = DocumentPieces(document, 256);
      EXPECT_GT(pieces.size(), 4u);
      for (std::string_view piece : pieces) {
        ASSERT_TRUE(tokenizer->Encode(piece, &piece_ids).ok());
        ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
      }
    }
    expected.push_back(ids);
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(PreparedDocuments(folder / "prepared", tokenizer->vocab_size(), tokenizer->eot_id()), expected);

  StatusOr<TokenManifest> manifest = ReadTokenManifest(folder / "prepared");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  EXPECT_EQ(manifest->documents_split, 1);
  EXPECT_EQ(manifest->max_document_bytes, 256);
}

// hf-tiny's own ids of `text` (no template tokens).
std::vector<int> HfTinyIds(const std::string& text) {
  StatusOr<std::unique_ptr<hf::HfTokenizer>> tokenizer = hf::HfTokenizer::FromJson(hf_tiny::HfTinyJson(), "hf-tiny");
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().ToString();
  std::vector<int> ids;
  if (!tokenizer.ok()) return ids;
  std::unique_ptr<hf::HfTokenizer::Session> session = (*tokenizer)->NewSession();
  EXPECT_TRUE((*tokenizer)->Encode(text, /*add_special_tokens=*/false, *session, &ids).ok());
  return ids;
}

TEST(PrepareTest, AHuggingFaceFolderGivesAManifestNamingItsTokenizerJsonAndEveryDocumentStartsWithTheBos) {
  TempFolder folder;
  hf_tiny::WriteHfFolder(folder / "tok", hf_tiny::HfTinyConfig());
  const std::vector<std::string> documents = {"the tinker sat in the sun.", "then the ants ran on and on.",
                                              "the sea is near", "the hen ate a pea."};
  for (size_t d = 0; d < documents.size(); ++d) WriteBytes(folder / ("docs/" + std::to_string(d) + ".txt"), documents[d]);
  PrepareOptions options;
  options.tokenizer = folder / "tok";
  options.inputs = {folder / "docs"};
  options.out = folder / "prepared";
  options.val_fraction = 0.5;
  options.threads = 2;
  StatusOr<PrepareSummary> summary = Prepare(options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->eot_id, 2);
  EXPECT_EQ(summary->eot_token, "</s>");

  const nlohmann::json manifest = nlohmann::json::parse(data_test::ReadBytes(folder / "prepared/manifest.json"));
  EXPECT_EQ(manifest["tokenizer"]["file"], "tokenizer.json");
  EXPECT_EQ(manifest["tokenizer"]["sha256"], Sha256Hex(hf_tiny::HfTinyJson()));
  EXPECT_EQ(manifest["tokenizer"]["type"], "sentencepiece-bpe");
  EXPECT_EQ(manifest["bos_id"], 1);
  EXPECT_EQ(manifest["eot_id"], 2);
  EXPECT_EQ(manifest["vocab_size"], 40);
  const std::vector<int32_t> lengths = {0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 4, 2, 2, 2, 2, 2, 2, 1};
  EXPECT_EQ(manifest["token_byte_lengths"].get<std::vector<int32_t>>(), lengths);
  StatusOr<TokenManifest> parsed = ReadTokenManifest(folder / "prepared");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->tokenizer_file, "tokenizer.json");
  EXPECT_EQ(parsed->bos_id, 1);
  EXPECT_EQ(data_test::ReadBytes(folder / "prepared/tokenizer.json"), hf_tiny::HfTinyJson());
  EXPECT_FALSE(std::filesystem::exists(folder / "prepared/tokenizer.model"));

  std::vector<std::vector<int>> expected;
  for (const std::string& document : documents) {
    expected.push_back({1});
    const std::vector<int> ids = HfTinyIds(document);
    expected.back().insert(expected.back().end(), ids.begin(), ids.end());
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(PreparedDocuments(folder / "prepared", 40, 2), expected);
}

TEST(PrepareTest, AHuggingFaceDocumentOverTheLimitStillStartsWithExactlyOneBos) {
  TempFolder folder;
  hf_tiny::WriteHfFolder(folder / "tok", hf_tiny::HfTinyConfig());
  std::string long_document;
  for (int line = 0; line < 12; ++line) long_document += "the tinker sat in the sun\n";
  WriteBytes(folder / "docs/long.txt", long_document);
  WriteBytes(folder / "docs/short.txt", "then the ants ran on and on");
  PrepareOptions options;
  options.tokenizer = folder / "tok";
  options.inputs = {folder / "docs"};
  options.out = folder / "prepared";
  options.val_fraction = 0.5;
  options.threads = 1;
  options.max_document_bytes = 40;
  StatusOr<PrepareSummary> summary = Prepare(options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->documents_split, 1);
  const std::vector<std::vector<int>> prepared = PreparedDocuments(folder / "prepared", 40, 2);
  ASSERT_EQ(prepared.size(), 2u);
  for (const std::vector<int>& ids : prepared) {
    ASSERT_FALSE(ids.empty());
    EXPECT_EQ(ids.front(), 1);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), 1), 1);
  }
}

TEST(PrepareTest, AFolderPreparedWithAHuggingFaceTokenizerInsideTheInputIsNotReadAsText) {
  TempFolder folder;
  hf_tiny::WriteHfFolder(folder / "tok", hf_tiny::HfTinyConfig());
  WriteBytes(folder / "docs/a.txt", "the tinker sat in the sun.");
  WriteBytes(folder / "docs/b.txt", "the hen ate a pea.");
  PrepareOptions options;
  options.tokenizer = folder / "tok";
  options.inputs = {folder / "docs"};
  options.out = folder / "docs/prepared";  // manifest.json, tokenizer.json and shards: no tokenizer.model
  options.val_fraction = 0.5;
  options.threads = 1;
  StatusOr<PrepareSummary> summary = Prepare(options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  options.out = folder / "again";
  summary = Prepare(options);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->documents[0] + summary->documents[1], 2);
  StatusOr<TokenManifest> manifest = ReadTokenManifest(folder / "again");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_EQ(manifest->sources.size(), 2u);
  for (const ManifestSource& source : manifest->sources) {
    EXPECT_EQ(source.path.find("/docs/prepared"), std::string::npos) << source.path;
  }
}

// Lines with what SentencePiece counts in its own way: tabs, its own pieces' text, a line holding its
// reserved U+2585 (skipped whole), a NUL, a space beside U+2581, an emoji, a line over 65,536 bytes.
std::vector<std::string> EdgeDocuments() {
  return {"plain words here and there\twith tabs\r\nmeta <s> and </s> and <unk> and <0x41> <0x4A> <0xZZ> literal\n",
          "a line with the reserved \xE2\x96\x85 char xyzq\nnul " + std::string(1, '\0') + " inside\n",
          "emoji \xF0\x9F\x8E\x89 and \xE2\x96\x81 mark\n" + std::string(70000, 'L') + "W\n" + "abababab\n"};
}

// Whether SentencePiece trains on `documents` at `vocab_size` with rung-data's settings (tokenizer.cc),
// asked directly, without rung-data's own check.
bool SentencePieceTrains(const std::vector<std::string>& documents, const std::string& type, int64_t vocab_size) {
  std::vector<std::string> lines;
  for (const std::string& document : documents) {
    for (size_t begin = 0; begin < document.size();) {
      size_t end = document.find('\n', begin);
      if (end == std::string::npos) end = document.size();
      if (end > begin) lines.push_back(document.substr(begin, end - begin));
      begin = end + 1;
    }
  }
  VectorSentences iterator(lines);
  const std::unordered_map<std::string, std::string> arguments = {
      {"model_type", type}, {"vocab_size", std::to_string(vocab_size)}, {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"}, {"add_dummy_prefix", "false"}, {"byte_fallback", "true"},
      {"character_coverage", "1.0"}, {"split_digits", "false"}, {"allow_whitespace_only_pieces", "true"},
      {"max_sentence_length", "65536"}, {"num_threads", "1"}, {"unk_id", "0"}, {"bos_id", "1"}, {"eos_id", "2"},
      {"pad_id", "-1"}, {"minloglevel", "2"}};
  std::string model;
  return sentencepiece::SentencePieceTrainer::Train(arguments, &iterator, &model).ok();
}

TEST(TokenizerTrainingTest, TheMinimumVocabularyIsExactlyWhatSentencePieceNeeds) {
  const std::vector<std::string> documents = EdgeDocuments();
  StatusOr<int64_t> minimum = MinimumVocabSize(documents);
  ASSERT_TRUE(minimum.ok()) << minimum.status().ToString();
  for (const char* type : {"bpe", "unigram"}) {
    EXPECT_FALSE(SentencePieceTrains(documents, type, *minimum - 1)) << type;
    TokenizerTrainOptions options;
    options.type = type;
    options.vocab_size = *minimum;
    EXPECT_TRUE(TrainTokenizer(documents, options).ok()) << type;
    options.vocab_size = *minimum - 1;
    StatusOr<std::string> refused = TrainTokenizer(documents, options);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(refused.status().message().find("needs at least " + std::to_string(*minimum) + " ids"), std::string::npos)
        << refused.status().ToString();
  }
  EXPECT_EQ(MinimumVocabSize({std::string(70000, 'L')}).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace rung::data_tool

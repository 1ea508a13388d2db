#include "core/data/builtin_corpus.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "core/common/sha256.h"
#include "core/data/byte_corpus.h"
#include "core/data/llmc_shard_format.h"
#include "core/data/token_manifest.h"
#include "tests/core/data/test_files.h"

namespace rung {
namespace {

using data_test::TempFolder;
using data_test::WriteBytes;

std::string ChapterText() {
  std::string text = "A Novel\n\nBy Somebody\n";
  for (int chapter = 1; chapter <= 6; ++chapter) {
    text += "\f\nCHAPTER " + std::to_string(chapter) + "\n\n";
    for (int line = 0; line < 10; ++line) text += "It was a truth universally acknowledged, line " + std::to_string(line) + ".\n";
  }
  return text;
}

// Writes DIR/builtin/austen.txt and a manifest whose sha256 is `sha256` (the text's own when empty).
void WriteFakeCorpus(const std::string& dir, const std::string& text, std::string sha256 = "") {
  if (sha256.empty()) sha256 = Sha256Hex(text);
  WriteBytes(dir + "/builtin/austen.txt", text);
  WriteBytes(dir + "/builtin/austen.json",
             R"({"package": "r-cran-janeaustenr", "version": "1.0.0-1", "sha256": ")" + sha256 + R"("})");
}

DataConfig BuiltinConfig() {
  DataConfig config;
  config.source = "builtin";
  config.seq_len = 32;
  config.val_fraction = 0.3;
  return config;
}

TEST(BuiltinCorpusTest, FindsTheFirstExistingCandidateAndReadsItsManifest) {
  TempFolder folder;
  WriteFakeCorpus(folder / "second", ChapterText());
  StatusOr<BuiltinCorpusFiles> files =
      FindBuiltinCorpus({folder / "first/builtin/austen.txt", folder / "second/builtin/austen.txt"});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->text_path, folder / "second/builtin/austen.txt");
  EXPECT_EQ(files->manifest_path, folder / "second/builtin/austen.json");
  EXPECT_EQ(files->package, "r-cran-janeaustenr");
  EXPECT_EQ(files->version, "1.0.0-1");
  EXPECT_EQ(files->sha256, Sha256Hex(ChapterText()));
}

TEST(BuiltinCorpusTest, MissingCorpusIsNotFoundAndSaysHowToBuildIt) {
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({"/nonexistent/rung/builtin/austen.txt"});
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.status().code(), StatusCode::kNotFound);
  const std::string& message = files.status().message();
  EXPECT_NE(message.find("/nonexistent/rung/builtin/austen.txt"), std::string::npos) << message;
  EXPECT_NE(message.find("make corpus"), std::string::npos) << message;
  EXPECT_NE(message.find("deploy/fetch-builtin-corpus.sh"), std::string::npos) << message;
}

TEST(BuiltinCorpusTest, MissingOrMalformedManifestIsAnError) {
  TempFolder folder;
  WriteBytes(folder / "builtin/austen.txt", ChapterText());
  EXPECT_EQ(FindBuiltinCorpus({folder / "builtin/austen.txt"}).status().code(), StatusCode::kNotFound);
  WriteBytes(folder / "builtin/austen.json", "{\"package\": 3}");
  EXPECT_EQ(FindBuiltinCorpus({folder / "builtin/austen.txt"}).status().code(), StatusCode::kDataLoss);
  WriteBytes(folder / "builtin/austen.json", "not json");
  EXPECT_EQ(FindBuiltinCorpus({folder / "builtin/austen.txt"}).status().code(), StatusCode::kDataLoss);
}

TEST(BuiltinCorpusTest, DataDirEnvironmentVariableIsSearchedFirst) {
  TempFolder folder;
  const char* previous = std::getenv("RUNG_DATA_DIR");
  const std::string saved = previous != nullptr ? previous : "";
  ASSERT_EQ(setenv("RUNG_DATA_DIR", folder.path().c_str(), 1), 0);
  const std::vector<std::string> candidates = BuiltinCorpusCandidates();
  if (previous != nullptr) {
    setenv("RUNG_DATA_DIR", saved.c_str(), 1);
  } else {
    unsetenv("RUNG_DATA_DIR");
  }
  ASSERT_GE(candidates.size(), 4u);
  EXPECT_EQ(candidates[0], folder / "builtin/austen.txt");
  EXPECT_EQ(candidates[candidates.size() - 2], "/usr/local/share/rung/builtin/austen.txt");
  EXPECT_EQ(candidates.back(), "/usr/share/rung/builtin/austen.txt");
}

TEST(BuiltinCorpusTest, LoadsAsByteTextWithPackageProvenance) {
  TempFolder folder;
  WriteFakeCorpus(folder.path(), ChapterText());
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({folder / "builtin/austen.txt"});
  ASSERT_TRUE(files.ok());
  StatusOr<std::unique_ptr<BatchSource>> source = LoadBuiltinCorpusFrom(*files, BuiltinConfig(), 0);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->vocab_size(), 256);
  const nlohmann::json description = (*source)->Describe();
  EXPECT_EQ(description["source"], "builtin");
  EXPECT_EQ(description["package"], "r-cran-janeaustenr");
  EXPECT_EQ(description["version"], "1.0.0-1");
  EXPECT_EQ(description["sha256"], Sha256Hex(ChapterText()));
  EXPECT_EQ(description["documents"]["train"].get<int>() + description["documents"]["validation"].get<int>(), 7);
}

TEST(BuiltinCorpusTest, TextThatDoesNotMatchItsManifestIsDataLoss) {
  TempFolder folder;
  WriteFakeCorpus(folder.path(), ChapterText(), Sha256Hex("something else"));
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({folder / "builtin/austen.txt"});
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(LoadBuiltinCorpusFrom(*files, BuiltinConfig(), 0).status().code(), StatusCode::kDataLoss);
}

// Two books of 1 + 6 and 1 + 2 documents (front matter and chapters), with the manifest's boundaries.
std::string TwoBookText() {
  std::string text = ChapterText() + "\f\nANOTHER NOVEL\n";
  for (int chapter = 1; chapter <= 2; ++chapter) text += "\f\nCHAPTER " + std::to_string(chapter) + "\nShort.\n";
  return text;
}

void WriteTwoBookCorpus(const std::string& dir, const std::string& books_field) {
  const std::string text = TwoBookText();
  WriteBytes(dir + "/builtin/austen.txt", text);
  WriteBytes(dir + "/builtin/austen.json", R"({"package": "r-cran-janeaustenr", "version": "1.0.0-1", "sha256": ")" +
                                               Sha256Hex(text) + "\"" + books_field + "}");
}

TEST(BuiltinCorpusTest, BooksAreOneDocumentEachWithoutChapterSeparators) {
  TempFolder folder;
  WriteTwoBookCorpus(folder.path(), R"(, "book_first_documents": [0, 7])");
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({folder / "builtin/austen.txt"});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  EXPECT_EQ(files->book_first_documents, (std::vector<int64_t>{0, 7}));
  DataConfig config = BuiltinConfig();
  config.builtin_documents = "books";
  config.seq_len = 8;
  config.val_fraction = 0.5;
  auto source = data_test::OpenedOrNull(LoadBuiltinCorpusFrom(*files, config, 0));
  ASSERT_NE(source, nullptr);
  const nlohmann::json description = source->Describe();
  EXPECT_EQ(description["documents"]["train"].get<int>() + description["documents"]["validation"].get<int>(), 2);
  EXPECT_EQ(description["documents_are"], "books");
  // Each split's stream is one separator per book, the chapters' own gone.
  const auto& corpus = static_cast<const ByteCorpus&>(*source);
  for (Split split : {Split::kTrain, Split::kValidation}) {
    const std::string& bytes = corpus.SplitBytes(split);
    EXPECT_EQ(std::count(bytes.begin(), bytes.end(), '\f'), 1);
    EXPECT_EQ(bytes[0], '\f');
  }
  EXPECT_EQ(corpus.SplitBytes(Split::kTrain).size() + corpus.SplitBytes(Split::kValidation).size(),
            TwoBookText().size() - 9 + 2);  // 9 chapter separators out (one was the first document's none), 2 in
}

TEST(BuiltinCorpusTest, BooksFromAManifestWithoutBoundariesIsNotFoundSayingToRebuild) {
  TempFolder folder;
  WriteTwoBookCorpus(folder.path(), "");
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({folder / "builtin/austen.txt"});
  ASSERT_TRUE(files.ok());
  DataConfig config = BuiltinConfig();
  config.builtin_documents = "books";
  StatusOr<std::unique_ptr<BatchSource>> source = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_EQ(source.status().code(), StatusCode::kNotFound);
  EXPECT_NE(source.status().message().find("make corpus"), std::string::npos) << source.status().message();
}

TEST(BuiltinCorpusTest, EvalFilterKeepsOnlyLongDocumentsAndRefusesWhenNoneQualifies) {
  TempFolder folder;
  WriteTwoBookCorpus(folder.path(), R"(, "book_first_documents": [0, 7])");
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({folder / "builtin/austen.txt"});
  ASSERT_TRUE(files.ok());
  DataConfig config = BuiltinConfig();
  config.seq_len = 8;
  config.val_fraction = 0.5;
  auto chapters = data_test::OpenedOrNull(LoadBuiltinCorpusFrom(*files, config, 0));
  ASSERT_NE(chapters, nullptr);
  const auto& corpus = static_cast<const ByteCorpus&>(*chapters);
  // The validation documents (each preceded by its separator) and how many reach 100 bytes.
  const std::string& validation = corpus.SplitBytes(Split::kValidation);
  std::vector<std::string_view> documents = SplitDocuments(validation, "\f");
  const int64_t long_ones = std::count_if(documents.begin(), documents.end(),
                                          [](std::string_view d) { return static_cast<int64_t>(d.size()) + 1 >= 100; });
  ASSERT_GT(long_ones, 0);
  ASSERT_LT(long_ones, static_cast<int64_t>(documents.size()));
  config.eval_min_doc_tokens = 100;
  auto filtered = data_test::OpenedOrNull(LoadBuiltinCorpusFrom(*files, config, 0));
  ASSERT_NE(filtered, nullptr);
  EXPECT_EQ(filtered->Describe()["eval_documents"]["documents"], long_ones);
  // Every validation window starts inside a kept document and stays in it.
  const TokenBatch batch = filtered->Batch(Split::kValidation, 0, 64, 8);
  for (int64_t row = 0; row < 64; ++row) {
    for (int64_t t = 1; t < 8; ++t) EXPECT_NE(batch.inputs[static_cast<size_t>(row * 8 + t)], '\f') << row;
  }
  config.eval_min_doc_tokens = 100000;
  StatusOr<std::unique_ptr<BatchSource>> none = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("no validation document"), std::string::npos) << none.status().message();
}

// A BPE form beside a fake corpus, as deploy/build-builtin-tokens.sh lays it out: two llm.c shards of
// 40 tokens (documents starting at the end-of-text id) and a manifest naming `text_sha256`.
void WriteFakeBpeForm(const std::string& dir, const std::string& text_sha256, int64_t eot_id = kBuiltinBpeEotId) {
  const std::string folder = dir + "/builtin/" + kBuiltinBpeFolder;
  TokenManifest manifest;
  manifest.tokenizer_file = "tokenizer.model";
  manifest.tokenizer_type = "bpe";
  manifest.sources = {{"austen.txt", 100, text_sha256}};
  manifest.eot_id = eot_id;
  manifest.vocab_size = kBuiltinBpeVocabSize;
  manifest.token_bytes = 2;
  manifest.val_fraction = 0.05;
  manifest.seed = 0;
  manifest.token_byte_lengths.assign(kBuiltinBpeVocabSize, 3);
  for (const char* split : {"train", "val"}) {
    std::string body;
    for (int t = 0; t < 40; ++t) {
      const int id = t % 10 == 0 ? static_cast<int>(kBuiltinBpeEotId) : 300 + t;
      body.push_back(static_cast<char>(id & 0xFF));
      body.push_back(static_cast<char>(id >> 8));
    }
    const std::string file = std::string(split) + "_000000.bin";
    WriteBytes(folder + "/" + file, LlmcShardHeader(40, 2) + body);
    manifest.shards.push_back({file, split, 4, 40, 120, Sha256Hex(LlmcShardHeader(40, 2) + body)});
  }
  WriteBytes(folder + "/manifest.json", manifest.ToJson().dump(1));
}

TEST(BuiltinCorpusTest, BpeFormReadsThePreparedFolderBesideTheTextAsShards) {
  TempFolder folder;
  WriteFakeCorpus(folder.path(), ChapterText());
  WriteFakeBpeForm(folder.path(), Sha256Hex(ChapterText()));
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({folder / "builtin/austen.txt"});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  DataConfig config = BuiltinConfig();
  config.builtin_form = "bpe-4096";
  config.seq_len = 16;
  config.val_fraction = 0.05;
  config.cross_doc_mask = true;
  StatusOr<std::unique_ptr<BatchSource>> source = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ((*source)->vocab_size(), kBuiltinBpeVocabSize);
  EXPECT_EQ((*source)->SplitTokens(Split::kTrain), 40);
  EXPECT_EQ((*source)->SplitTokens(Split::kValidation), 40);
  ASSERT_NE((*source)->TokenByteLengths(), nullptr);
  EXPECT_EQ((*source)->TokenByteLengths()->at(300), 3);
  EXPECT_EQ(DocumentStartToken(config), kBuiltinBpeEotId);
  EXPECT_EQ((*source)->Describe()["split"], "manifest");
}

TEST(BuiltinCorpusTest, BpeFormMissingStaleOrSplitOtherwiseIsAnErrorSayingWhat) {
  TempFolder folder;
  WriteFakeCorpus(folder.path(), ChapterText());
  StatusOr<BuiltinCorpusFiles> files = FindBuiltinCorpus({folder / "builtin/austen.txt"});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  DataConfig config = BuiltinConfig();
  config.builtin_form = "bpe-4096";
  config.seq_len = 16;
  config.val_fraction = 0.05;
  StatusOr<std::unique_ptr<BatchSource>> missing = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("make corpus"), std::string::npos) << missing.status().message();

  WriteFakeBpeForm(folder.path(), Sha256Hex("another text"));
  StatusOr<std::unique_ptr<BatchSource>> stale = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(stale.status().message().find("was not prepared from"), std::string::npos) << stale.status().message();

  WriteFakeBpeForm(folder.path(), Sha256Hex(ChapterText()));
  config.val_fraction = 0.2;
  StatusOr<std::unique_ptr<BatchSource>> resplit = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_FALSE(resplit.ok());
  EXPECT_EQ(resplit.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(resplit.status().message().find("data.val_fraction"), std::string::npos) << resplit.status().message();
}

// Runs against the real corpus when one is installed (deploy/fetch-builtin-corpus.sh), else skips.
TEST(BuiltinCorpusTest, InstalledCorpusHasOneDocumentPerChapter) {
  StatusOr<BuiltinCorpusFiles> files = LocateBuiltinCorpus();
  if (!files.ok()) GTEST_SKIP() << files.status().message();
  DataConfig config = BuiltinConfig();
  config.seq_len = 512;
  config.val_fraction = 0.05;
  StatusOr<std::unique_ptr<BatchSource>> source = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  const nlohmann::json description = (*source)->Describe();
  const int documents =
      description["documents"]["train"].get<int>() + description["documents"]["validation"].get<int>();
  EXPECT_EQ(documents, 275);  // 269 chapters and 6 front matters
  EXPECT_GT(description["tokens"]["train"].get<int64_t>(), 3000000);
  EXPECT_GT(description["documents"]["validation"].get<int>(), 3);
  if (files->book_first_documents.empty()) return;  // a corpus built before the book boundaries
  config.builtin_documents = "books";
  config.val_fraction = 0.2;
  StatusOr<std::unique_ptr<BatchSource>> books = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_TRUE(books.ok()) << books.status().ToString();
  const nlohmann::json by_book = (*books)->Describe();
  EXPECT_EQ(by_book["documents"]["train"].get<int>() + by_book["documents"]["validation"].get<int>(), 6);
}

// The BPE form `make corpus` builds, when it is there: the same chapters as the byte form, and the
// same held-out ones (the byte form's split), read through the manifest.
TEST(BuiltinCorpusTest, InstalledBpeFormHoldsOutTheByteFormsChapters) {
  StatusOr<BuiltinCorpusFiles> files = LocateBuiltinCorpus();
  if (!files.ok()) GTEST_SKIP() << files.status().message();
  const std::string folder = (std::filesystem::path(files->text_path).parent_path() / kBuiltinBpeFolder).string();
  if (!HasTokenManifest(folder)) GTEST_SKIP() << "no " << folder << " (make corpus)";
  StatusOr<TokenManifest> manifest = ReadTokenManifest(folder);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  DataConfig config = BuiltinConfig();
  config.val_fraction = 0.05;
  config.seq_len = 512;
  StatusOr<std::unique_ptr<BatchSource>> bytes = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  const nlohmann::json byte_description = (*bytes)->Describe();
  int64_t documents[2] = {0, 0};
  for (const ManifestShard& shard : manifest->shards) documents[shard.split == "val" ? 1 : 0] += shard.documents;
  EXPECT_EQ(documents[0], byte_description["documents"]["train"].get<int64_t>());
  EXPECT_EQ(documents[1], byte_description["documents"]["validation"].get<int64_t>());
  config.builtin_form = "bpe-4096";
  StatusOr<std::unique_ptr<BatchSource>> tokens = LoadBuiltinCorpusFrom(*files, config, 0);
  ASSERT_TRUE(tokens.ok()) << tokens.status().ToString();
  EXPECT_EQ((*tokens)->vocab_size(), kBuiltinBpeVocabSize);
  EXPECT_LT((*tokens)->SplitTokens(Split::kTrain), (*bytes)->SplitTokens(Split::kTrain) / 2);
}

}  // namespace
}  // namespace rung

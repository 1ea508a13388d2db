#include "core/data/builtin_corpus.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "core/common/sha256.h"
#include "core/data/byte_corpus.h"
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
  EXPECT_EQ(FindBuiltinCorpus({folder / "builtin/austen.txt"}).status().code(), StatusCode::kInvalidArgument);
  WriteBytes(folder / "builtin/austen.json", "not json");
  EXPECT_EQ(FindBuiltinCorpus({folder / "builtin/austen.txt"}).status().code(), StatusCode::kInvalidArgument);
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

}  // namespace
}  // namespace rung

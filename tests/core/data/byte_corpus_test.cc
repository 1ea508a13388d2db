#include "core/data/byte_corpus.h"

#include <algorithm>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "core/common/sha256.h"
#include "tests/core/data/test_files.h"

namespace rung {
namespace {

using data_test::ReadBytes;
using data_test::SampleCorpusPath;
using data_test::TempFolder;
using data_test::WriteBytes;

DataConfig SampleConfig() {
  DataConfig config;
  config.source = "text";
  config.path = SampleCorpusPath();
  config.seq_len = 32;
  config.val_fraction = 0.3;
  return config;
}

std::unique_ptr<ByteCorpus> LoadOrDie(const DataConfig& config, uint64_t seed = 1) {
  return data_test::OpenedOrNull(ByteCorpus::Load(config, seed));
}

std::string RowText(const std::vector<int32_t>& tokens, int64_t row, int64_t seq_len) {
  std::string text;
  for (int64_t t = 0; t < seq_len; ++t) text.push_back(static_cast<char>(tokens[row * seq_len + t]));
  return text;
}

TEST(SplitDocumentsTest, CutsAtTheSeparatorAndDropsEmptyPieces) {
  const std::vector<std::string_view> documents = SplitDocuments("\fone\f\ftwo\n\fthree\f", "\f");
  ASSERT_EQ(documents.size(), 3u);
  EXPECT_EQ(documents[0], "one");
  EXPECT_EQ(documents[1], "two\n");
  EXPECT_EQ(documents[2], "three");
  EXPECT_TRUE(SplitDocuments("", "\f").empty());
  EXPECT_EQ(SplitDocuments("a<>b", "<>").size(), 2u);
}

TEST(ByteCorpusTest, SameSplitAndIndexGiveIdenticalBatches) {
  auto corpus = LoadOrDie(SampleConfig());
  ASSERT_NE(corpus, nullptr);
  for (Split split : {Split::kTrain, Split::kValidation}) {
    const TokenBatch first = corpus->Batch(split, 7, 4, 32);
    const TokenBatch again = corpus->Batch(split, 7, 4, 32);
    EXPECT_EQ(first.inputs, again.inputs);
    EXPECT_EQ(first.targets, again.targets);
  }
  // A second load with the same seed reproduces the batch too.
  auto reloaded = LoadOrDie(SampleConfig());
  EXPECT_EQ(corpus->Batch(Split::kTrain, 3, 4, 32).inputs, reloaded->Batch(Split::kTrain, 3, 4, 32).inputs);
}

TEST(ByteCorpusTest, TrainingBatchesDependOnIndexAndSeed) {
  auto corpus = LoadOrDie(SampleConfig(), 1);
  auto other_seed = LoadOrDie(SampleConfig(), 2);
  EXPECT_NE(corpus->Batch(Split::kTrain, 0, 8, 32).inputs, corpus->Batch(Split::kTrain, 1, 8, 32).inputs);
  EXPECT_NE(corpus->Batch(Split::kTrain, 0, 8, 32).inputs, other_seed->Batch(Split::kTrain, 0, 8, 32).inputs);
  // Validation batches do not depend on the training seed.
  EXPECT_EQ(corpus->Batch(Split::kValidation, 0, 8, 32).inputs,
            other_seed->Batch(Split::kValidation, 0, 8, 32).inputs);
}

TEST(ByteCorpusTest, TargetsAreInputsShiftedByOne) {
  auto corpus = LoadOrDie(SampleConfig());
  for (Split split : {Split::kTrain, Split::kValidation}) {
    const TokenBatch batch = corpus->Batch(split, 5, 6, 32);
    ASSERT_EQ(batch.inputs.size(), 6u * 32u);
    ASSERT_EQ(batch.targets.size(), 6u * 32u);
    EXPECT_TRUE(batch.loss_mask.empty());
    const std::string& stream = corpus->SplitBytes(split);
    for (int64_t row = 0; row < 6; ++row) {
      for (int64_t t = 0; t + 1 < 32; ++t) EXPECT_EQ(batch.targets[row * 32 + t], batch.inputs[row * 32 + t + 1]);
      // The row is seq_len + 1 consecutive bytes of its split.
      std::string window = RowText(batch.inputs, row, 32);
      window.push_back(static_cast<char>(batch.targets[row * 32 + 31]));
      EXPECT_NE(stream.find(window), std::string::npos);
    }
  }
}

TEST(ByteCorpusTest, TrainAndValidationDocumentsAreDisjoint) {
  auto corpus = LoadOrDie(SampleConfig());
  const std::vector<int64_t>& train = corpus->DocumentIndices(Split::kTrain);
  const std::vector<int64_t>& validation = corpus->DocumentIndices(Split::kValidation);
  ASSERT_FALSE(train.empty());
  ASSERT_FALSE(validation.empty());
  std::set<int64_t> all(train.begin(), train.end());
  for (int64_t document : validation) EXPECT_TRUE(all.insert(document).second) << "document " << document;
  EXPECT_EQ(all.size(), 9u);  // three files of three documents
  EXPECT_EQ(*all.rbegin(), 8);

  // No validation document's text appears in the training stream and vice versa.
  const std::vector<std::string_view> validation_documents =
      SplitDocuments(corpus->SplitBytes(Split::kValidation), "\f");
  const std::vector<std::string_view> train_documents = SplitDocuments(corpus->SplitBytes(Split::kTrain), "\f");
  EXPECT_EQ(validation_documents.size(), validation.size());
  EXPECT_EQ(train_documents.size(), train.size());
  for (std::string_view document : validation_documents) {
    EXPECT_EQ(corpus->SplitBytes(Split::kTrain).find(document), std::string::npos);
  }
  for (std::string_view document : train_documents) {
    EXPECT_EQ(corpus->SplitBytes(Split::kValidation).find(document), std::string::npos);
  }
  EXPECT_EQ(corpus->Describe()["documents"]["train"], train.size());
  EXPECT_EQ(corpus->Describe()["documents"]["validation"], validation.size());
}

TEST(ByteCorpusTest, EachSplitGetsADocumentWhateverTheFraction) {
  DataConfig config = SampleConfig();
  config.val_fraction = 1e-12;
  auto tiny = LoadOrDie(config);
  EXPECT_EQ(tiny->DocumentIndices(Split::kValidation).size(), 1u);
  EXPECT_EQ(tiny->DocumentIndices(Split::kTrain).size(), 8u);
  config.val_fraction = 1.0 - 1e-12;
  auto huge = LoadOrDie(config);
  EXPECT_EQ(huge->DocumentIndices(Split::kValidation).size(), 8u);
  EXPECT_EQ(huge->DocumentIndices(Split::kTrain).size(), 1u);
}

TEST(ByteCorpusTest, SplitFollowsTheDocumentHash) {
  DataConfig config = SampleConfig();
  config.split_seed = 12345;
  auto corpus = LoadOrDie(config);
  const std::vector<int64_t>& validation = corpus->DocumentIndices(Split::kValidation);
  int64_t drawn = 0;
  for (int64_t d = 0; d < 9; ++d) {
    const bool by_hash = DocumentSplitDraw(config.split_seed, d) < config.val_fraction;
    drawn += by_hash;
    if (by_hash) {
      EXPECT_NE(std::find(validation.begin(), validation.end(), d), validation.end());
    }
  }
  if (drawn > 0 && drawn < 9) {
    EXPECT_EQ(static_cast<int64_t>(validation.size()), drawn);
  }
}

TEST(ByteCorpusTest, ValidationBatchesEnumerateNonOverlappingWindows) {
  auto corpus = LoadOrDie(SampleConfig());
  const std::string& stream = corpus->SplitBytes(Split::kValidation);
  const int64_t seq_len = 16;
  const int64_t windows = (static_cast<int64_t>(stream.size()) - 1) / seq_len;
  const TokenBatch batch = corpus->Batch(Split::kValidation, 0, 3, seq_len);
  for (int64_t row = 0; row < 3; ++row) {
    EXPECT_EQ(RowText(batch.inputs, row, seq_len), stream.substr(row * seq_len, seq_len));
  }
  // Batch index i, row r is window (i * batch_size + r) mod windows.
  const int64_t index = windows / 3 + 1;
  const TokenBatch later = corpus->Batch(Split::kValidation, index, 3, seq_len);
  const int64_t window = (index * 3) % windows;
  EXPECT_EQ(RowText(later.inputs, 0, seq_len), stream.substr(window * seq_len, seq_len));
}

TEST(ByteCorpusTest, EveryDocumentIsPrecededByTheSeparator) {
  auto corpus = LoadOrDie(SampleConfig());
  for (Split split : {Split::kTrain, Split::kValidation}) {
    const std::string& stream = corpus->SplitBytes(split);
    ASSERT_FALSE(stream.empty());
    EXPECT_EQ(stream[0], '\f');
    EXPECT_EQ(static_cast<size_t>(std::count(stream.begin(), stream.end(), '\f')),
              corpus->DocumentIndices(split).size());
  }
}

TEST(ByteCorpusTest, FolderIsReadRecursivelyInSortedPathOrderSkippingHiddenNames) {
  TempFolder folder;
  WriteBytes(folder / "b.txt", std::string(40, 'b'));
  WriteBytes(folder / "a/z.txt", std::string(40, 'z'));
  WriteBytes(folder / "a/y.txt", std::string(40, 'y'));
  WriteBytes(folder / ".hidden.txt", "hidden");
  WriteBytes(folder / ".git/config", "hidden too");
  StatusOr<std::vector<std::string>> files = ListCorpusFiles(folder.path());
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0], folder / "a/y.txt");
  EXPECT_EQ((*files)[1], folder / "a/z.txt");
  EXPECT_EQ((*files)[2], folder / "b.txt");

  DataConfig config = SampleConfig();
  config.path = folder.path();
  config.seq_len = 8;
  auto corpus = LoadOrDie(config);
  // Documents are numbered in read order: y (0), z (1), b (2).
  std::string all = corpus->SplitBytes(Split::kTrain) + corpus->SplitBytes(Split::kValidation);
  EXPECT_EQ(all.find("hidden"), std::string::npos);
  EXPECT_EQ(corpus->Describe()["sha256"],
            Sha256Hex(std::string(40, 'y') + std::string(40, 'z') + std::string(40, 'b')));
}

TEST(ByteCorpusTest, ShaCoversTheFilesBytesInReadOrder) {
  auto corpus = LoadOrDie(SampleConfig());
  std::string bytes;
  for (const char* name : {"a_garden.txt", "b_harbour.txt", "c_letters.txt"}) {
    bytes += ReadBytes(SampleCorpusPath() + "/" + name);
  }
  const nlohmann::json description = corpus->Describe();
  EXPECT_EQ(description["sha256"], Sha256Hex(bytes));
  EXPECT_EQ(description["source"], "text");
  EXPECT_EQ(description["path"], SampleCorpusPath());
  EXPECT_EQ(description["files"], 3);
  EXPECT_EQ(description["split"], "by_document");
  EXPECT_EQ(description["tokens"]["train"], corpus->SplitTokens(Split::kTrain));
  EXPECT_EQ(description["tokens"]["validation"], corpus->SplitTokens(Split::kValidation));
}

TEST(ByteCorpusTest, SingleDocumentHoldsOutItsTail) {
  TempFolder folder;
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + "\n";
  WriteBytes(folder / "one.txt", text);
  DataConfig config = SampleConfig();
  config.path = folder / "one.txt";
  config.val_fraction = 0.25;
  auto corpus = LoadOrDie(config);
  const std::string& validation = corpus->SplitBytes(Split::kValidation);
  EXPECT_NEAR(static_cast<double>(validation.size()), 0.25 * static_cast<double>(text.size()), 1.0);
  EXPECT_EQ(text.substr(text.size() - validation.size()), validation);
  EXPECT_EQ(corpus->SplitBytes(Split::kTrain), "\f" + text.substr(0, text.size() - validation.size()));
  EXPECT_EQ(corpus->Describe()["split"], "single_document_tail");
}

TEST(ByteCorpusTest, MissingPathIsNotFound) {
  DataConfig config = SampleConfig();
  config.path = "/nonexistent/rung/corpus";
  StatusOr<std::unique_ptr<ByteCorpus>> corpus = ByteCorpus::Load(config, 0);
  ASSERT_FALSE(corpus.ok());
  EXPECT_EQ(corpus.status().code(), StatusCode::kNotFound);
  EXPECT_NE(corpus.status().message().find("/nonexistent/rung/corpus"), std::string::npos);
}

TEST(ByteCorpusTest, NoTextIsDataLossAndTooLittleForTheLengthIsInvalidArgument) {
  TempFolder folder;
  WriteBytes(folder / "empty/separators.txt", "\f\f\f");
  DataConfig config = SampleConfig();
  config.path = folder / "empty";
  EXPECT_EQ(ByteCorpus::Load(config, 0).status().code(), StatusCode::kDataLoss);  // the data: rung-train exits 4

  WriteBytes(folder / "short/a.txt", "tiny\fdocs");
  config.path = folder / "short";
  StatusOr<std::unique_ptr<ByteCorpus>> corpus = ByteCorpus::Load(config, 0);
  EXPECT_EQ(corpus.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(corpus.status().message().find("seq_len"), std::string::npos) << corpus.status().message();
}

TEST(ByteCorpusTest, RequestsLongerThanASplitReadItCircularly) {
  auto corpus = LoadOrDie(SampleConfig());
  const int64_t seq_len = corpus->SplitTokens(Split::kValidation) + 10;
  const TokenBatch batch = corpus->Batch(Split::kValidation, 0, 1, seq_len);
  const std::string& stream = corpus->SplitBytes(Split::kValidation);
  const std::string row = RowText(batch.inputs, 0, seq_len);
  EXPECT_EQ(row.substr(0, stream.size()), stream);
  EXPECT_EQ(row.substr(stream.size()), stream.substr(0, 10));
}

}  // namespace
}  // namespace rung

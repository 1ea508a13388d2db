// llm.c shards (core/data/llmc_shard_format.h) as TokenShards reads them under data.format, prepared
// folders read through their manifest, and the long-document evaluation filter (data.eval_min_doc_tokens).
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/common/sha256.h"
#include "core/data/llmc_shard_format.h"
#include "core/data/token_manifest.h"
#include "core/data/token_shards.h"
#include "tests/core/data/test_files.h"

namespace rung {
namespace {

using data_test::ReadBytes;
using data_test::Ramp;
using data_test::TempFolder;
using data_test::WriteBytes;
using data_test::WriteTokens;

std::string TokenBytes(const std::vector<uint32_t>& ids, int token_bytes) {
  std::string bytes;
  for (uint32_t id : ids) {
    for (int b = 0; b < token_bytes; ++b) bytes.push_back(static_cast<char>((id >> (8 * b)) & 0xFF));
  }
  return bytes;
}

// An llm.c shard built by hand: header ints, then the tokens.
std::string HandBuiltShard(int32_t magic, int32_t version, int32_t count, const std::vector<uint32_t>& ids,
                           int token_bytes) {
  std::vector<uint32_t> header(256, 0);
  header[0] = static_cast<uint32_t>(magic);
  header[1] = static_cast<uint32_t>(version);
  header[2] = static_cast<uint32_t>(count);
  return TokenBytes(header, 4) + TokenBytes(ids, token_bytes);
}

DataConfig ShardConfig(const std::string& path, int64_t vocab_size) {
  DataConfig config;
  config.source = "shards";
  config.path = path;
  config.vocab_size = vocab_size;
  config.seq_len = 16;
  config.val_fraction = 0.1;
  return config;
}

// The message of the error opening `config` fails with, which must have `code`.
std::string OpenError(const DataConfig& config, StatusCode code = StatusCode::kDataLoss) {
  StatusOr<std::unique_ptr<TokenShards>> shards = TokenShards::Open(config, 0);
  EXPECT_FALSE(shards.ok());
  if (shards.ok()) return std::string();
  EXPECT_EQ(shards.status().code(), code) << shards.status().ToString();
  return shards.status().message();
}

TEST(LlmcShardTest, ReadsAShardWrittenTheWayLlmcWritesIt) {
  TempFolder folder;
  // llm.c's write_datafile: np.zeros(256, int32) header with magic, version and count, then the tokens
  // as uint16 (version 1) or uint32 (version 7); written here with Python's array module.
  const std::string script =
      "import array, sys\n"
      "def write_datafile(path, toks, wide):\n"
      "    header = array.array('i', [0] * 256)\n"
      "    header[0], header[1], header[2] = (20240801, 7, len(toks)) if wide else (20240520, 1, len(toks))\n"
      "    with open(path, 'wb') as f:\n"
      "        f.write(header.tobytes())\n"
      "        f.write(array.array('I' if wide else 'H', toks).tobytes())\n"
      "write_datafile(sys.argv[1], [i % 50000 for i in range(3000)], False)\n"
      "write_datafile(sys.argv[2], [70000 + i for i in range(3000)], True)\n";
  WriteBytes(folder / "write.py", script);
  const std::string command =
      "python3 " + (folder / "write.py") + " " + (folder / "narrow.bin") + " " + (folder / "wide.bin");
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  auto narrow = data_test::OpenedOrNull(TokenShards::Open(ShardConfig(folder / "narrow.bin", 50257), 0));
  ASSERT_NE(narrow, nullptr);
  EXPECT_EQ(narrow->SplitTokens(Split::kTrain) + narrow->SplitTokens(Split::kValidation), 3000);
  for (int64_t p = 0; p < 100; ++p) ASSERT_EQ(narrow->Token(Split::kTrain, p), p);
  EXPECT_EQ(narrow->Describe()["files"][0]["format"], "llmc");

  DataConfig wide_config = ShardConfig(folder / "wide.bin", 100000);
  wide_config.format = "llmc";
  auto wide = data_test::OpenedOrNull(TokenShards::Open(wide_config, 0));
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(wide->Token(Split::kTrain, 0), 70000);
  EXPECT_EQ(wide->Token(Split::kValidation, 299), 72999);
  EXPECT_EQ(wide->Describe()["files"][0]["token_bytes"], 4);
}

TEST(LlmcShardTest, ReadsShardsThatLlmcsOwnWriterMade) {
  // tests/data/llmc/README.md: written by llm.c's write_datafile, one shard of each form.
  const std::string folder = std::string(RUNG_SOURCE_DIR) + "/tests/data/llmc/";
  DataConfig gpt2 = ShardConfig(folder + "gpt2_tokens.bin", 50257);
  gpt2.eot_token = 50256;
  auto narrow = data_test::OpenedOrNull(TokenShards::Open(gpt2, 0));
  ASSERT_NE(narrow, nullptr);
  EXPECT_EQ(narrow->SplitTokens(Split::kTrain) + narrow->SplitTokens(Split::kValidation), 1000);
  for (int64_t p = 0; p < narrow->SplitTokens(Split::kTrain); ++p) {
    ASSERT_EQ(narrow->Token(Split::kTrain, p), p % 100 == 0 ? 50256 : (p * 37) % 50256) << p;
  }
  EXPECT_EQ(narrow->Describe()["files"][0]["format"], "llmc");
  EXPECT_EQ(narrow->Describe()["files"][0]["token_bytes"], 2);

  DataConfig llama3 = ShardConfig(folder + "llama3_tokens.bin", 128256);
  llama3.eot_token = 128001;
  auto wide = data_test::OpenedOrNull(TokenShards::Open(llama3, 0));
  ASSERT_NE(wide, nullptr);
  const int64_t train = wide->SplitTokens(Split::kTrain);
  EXPECT_EQ(train + wide->SplitTokens(Split::kValidation), 1000);
  for (int64_t p = 0; p < 1000; ++p) {
    const int64_t expected = p % 100 == 0 ? 128001 : 65536 + (p * 7919) % 62000;
    ASSERT_EQ(p < train ? wide->Token(Split::kTrain, p) : wide->Token(Split::kValidation, p - train), expected) << p;
  }
  EXPECT_EQ(wide->Describe()["files"][0]["token_bytes"], 4);
}

TEST(LlmcShardTest, HandBuiltHeaderIsStrippedAndHeaderlessFilesReadAsBefore) {
  TempFolder folder;
  WriteBytes(folder / "shards/a.bin", HandBuiltShard(kLlmcMagic16, 1, 200, Ramp(0, 200, 1000), 2));
  WriteTokens(folder / "shards/b.bin", Ramp(200, 200, 1000), 2);  // headerless, data.token_bytes 2
  auto shards = data_test::OpenedOrNull(TokenShards::Open(ShardConfig(folder / "shards", 1000), 0));
  ASSERT_NE(shards, nullptr);
  for (int64_t p = 0; p < 360; ++p) ASSERT_EQ(shards->Token(Split::kTrain, p), p);
  EXPECT_EQ(shards->Describe()["files"][1]["format"], "raw");
  EXPECT_EQ(LlmcShardHeader(200, 2), HandBuiltShard(kLlmcMagic16, 1, 200, {}, 2));
}

TEST(LlmcShardTest, RawFormatsReadHeaderBytesAsTokens) {
  TempFolder folder;
  WriteBytes(folder / "a.bin", HandBuiltShard(kLlmcMagic16, 1, 200, Ramp(0, 200, 1000), 2));
  DataConfig config = ShardConfig(folder / "a.bin", 65536);
  config.format = "raw16";
  auto shards = data_test::OpenedOrNull(TokenShards::Open(config, 0));
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->SplitTokens(Split::kTrain) + shards->SplitTokens(Split::kValidation), 512 + 200);
  EXPECT_EQ(shards->Token(Split::kTrain, 0), kLlmcMagic16 & 0xFFFF);
}

TEST(LlmcShardTest, HostileShardsAreClearErrorsWithFileAndOffset) {
  TempFolder folder;
  const std::string full = HandBuiltShard(kLlmcMagic16, 1, 200, Ramp(0, 200, 1000), 2);
  WriteBytes(folder / "truncated_header.bin", full.substr(0, 600));
  std::string message = OpenError(ShardConfig(folder / "truncated_header.bin", 1000));
  EXPECT_NE(message.find(folder / "truncated_header.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("truncated llm.c header"), std::string::npos) << message;

  WriteBytes(folder / "version.bin", HandBuiltShard(kLlmcMagic16, 7, 200, Ramp(0, 200, 1000), 2));
  message = OpenError(ShardConfig(folder / "version.bin", 1000));
  EXPECT_NE(message.find("byte offset 4: llm.c version 7"), std::string::npos) << message;

  WriteBytes(folder / "count.bin", full.substr(0, full.size() - 2));
  message = OpenError(ShardConfig(folder / "count.bin", 1000));
  EXPECT_NE(message.find("byte offset 8"), std::string::npos) << message;
  EXPECT_NE(message.find("200 tokens"), std::string::npos) << message;

  std::vector<uint32_t> ids = Ramp(0, 200, 1000);
  ids[150] = 5000;
  WriteBytes(folder / "id.bin", HandBuiltShard(kLlmcMagic16, 1, 200, ids, 2));
  message = OpenError(ShardConfig(folder / "id.bin", 1000));
  EXPECT_NE(message.find("token offset 150 (byte offset " + std::to_string(1024 + 300) + ")"), std::string::npos)
      << message;

  WriteTokens(folder / "plain.bin", Ramp(0, 200, 1000), 2);
  DataConfig llmc = ShardConfig(folder / "plain.bin", 1000);
  llmc.format = "llmc";
  message = OpenError(llmc);
  EXPECT_NE(message.find("byte offset 0"), std::string::npos) << message;
  EXPECT_NE(message.find("not an llm.c shard header"), std::string::npos) << message;

  WriteBytes(folder / "negative.bin", HandBuiltShard(kLlmcMagic32, 7, -1, {}, 4));
  message = OpenError(ShardConfig(folder / "negative.bin", 1000));
  EXPECT_NE(message.find("-1 tokens"), std::string::npos) << message;
}

// llm.c's own folders name their splits: fineweb_train_000001.bin ... and fineweb_val_000000.bin, or
// tinyshakespeare_train.bin and tinyshakespeare_val.bin. Its validation tokens are never trained on.
TEST(LlmcShardTest, AFolderOfFilesNamedForTheirSplitKeepsLlmcsValidationFiles) {
  TempFolder folder;
  WriteBytes(folder / "fineweb/fineweb_val_000000.bin", HandBuiltShard(kLlmcMagic16, 1, 100, Ramp(500, 100, 1000), 2));
  WriteBytes(folder / "fineweb/fineweb_train_000001.bin", HandBuiltShard(kLlmcMagic16, 1, 300, Ramp(0, 300, 1000), 2));
  WriteBytes(folder / "fineweb/fineweb_train_000002.bin", HandBuiltShard(kLlmcMagic16, 1, 200, Ramp(300, 200, 1000), 2));
  auto fineweb = data_test::OpenedOrNull(TokenShards::Open(ShardConfig(folder / "fineweb", 1000), 0));
  ASSERT_NE(fineweb, nullptr);
  ASSERT_EQ(fineweb->SplitTokens(Split::kTrain), 500);
  ASSERT_EQ(fineweb->SplitTokens(Split::kValidation), 100);
  for (int64_t p = 0; p < 500; ++p) ASSERT_EQ(fineweb->Token(Split::kTrain, p), p);
  for (int64_t p = 0; p < 100; ++p) ASSERT_EQ(fineweb->Token(Split::kValidation, p), 500 + p);
  EXPECT_EQ(fineweb->Describe()["split"], "file_names");

  WriteTokens(folder / "shakespeare/tinyshakespeare_train.bin", Ramp(0, 400, 1000), 2);
  WriteTokens(folder / "shakespeare/tinyshakespeare_val.bin", Ramp(900, 50, 1000), 2);
  auto shakespeare = data_test::OpenedOrNull(TokenShards::Open(ShardConfig(folder / "shakespeare", 1000), 0));
  ASSERT_NE(shakespeare, nullptr);
  EXPECT_EQ(shakespeare->SplitTokens(Split::kTrain), 400);
  EXPECT_EQ(shakespeare->SplitTokens(Split::kValidation), 50);
  EXPECT_EQ(shakespeare->Token(Split::kValidation, 0), 900);
}

TEST(LlmcShardTest, FilesNamedForOneSplitOnlyAreCutByTheTailFraction) {
  TempFolder folder;
  // "interval" holds "val" but not as a part of the name.
  WriteTokens(folder / "one/corpus_train_000000.bin", Ramp(0, 500, 1000), 2);
  WriteTokens(folder / "one/interval_data.bin", Ramp(500, 500, 1000), 2);
  auto shards = data_test::OpenedOrNull(TokenShards::Open(ShardConfig(folder / "one", 1000), 0));
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->Describe()["split"], "tail_fraction");
  EXPECT_EQ(shards->SplitTokens(Split::kValidation), 100);
  EXPECT_EQ(shards->Token(Split::kValidation, 0), 900);

  // Both splits named, and a file named for neither: which split it is for is not guessed.
  WriteTokens(folder / "mixed/data_train.bin", Ramp(0, 500, 1000), 2);
  WriteTokens(folder / "mixed/data_val.bin", Ramp(0, 500, 1000), 2);
  WriteTokens(folder / "mixed/extra.bin", Ramp(0, 500, 1000), 2);
  const std::string message = OpenError(ShardConfig(folder / "mixed", 1000), StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("1 named for neither (extra.bin)"), std::string::npos) << message;
}

// A prepared folder: train and val shards and their manifest, as rung-data prepare writes them.
void WritePreparedFolder(const TempFolder& folder, const std::vector<uint32_t>& train, const std::vector<uint32_t>& val,
                         int64_t vocab_size, int64_t eot_id) {
  const std::string train_bytes = LlmcShardHeader(static_cast<int64_t>(train.size()), 2) + TokenBytes(train, 2);
  const std::string val_bytes = LlmcShardHeader(static_cast<int64_t>(val.size()), 2) + TokenBytes(val, 2);
  WriteBytes(folder / "prepared/train_000000.bin", train_bytes);
  WriteBytes(folder / "prepared/val_000000.bin", val_bytes);
  TokenManifest manifest;
  manifest.tokenizer_file = "tokenizer.model";
  manifest.tokenizer_sha256 = std::string(64, 'a');
  manifest.tokenizer_type = "bpe";
  manifest.vocab_size = vocab_size;
  manifest.eot_id = eot_id;
  manifest.shards = {{"train_000000.bin", "train", 1, static_cast<int64_t>(train.size()), 10, Sha256Hex(train_bytes)},
                     {"val_000000.bin", "val", 1, static_cast<int64_t>(val.size()), 10, Sha256Hex(val_bytes)}};
  manifest.token_byte_lengths.assign(static_cast<size_t>(vocab_size), 3);
  WriteBytes(folder / "prepared/manifest.json", manifest.ToJson().dump());
}

TEST(PreparedFolderTest, ReadsSplitsAndByteLengthsThroughTheManifest) {
  TempFolder folder;
  WritePreparedFolder(folder, Ramp(0, 400, 100), Ramp(7, 100, 100), 100, 0);
  DataConfig config = ShardConfig(folder / "prepared", 100);
  config.eot_token = 0;
  auto shards = data_test::OpenedOrNull(TokenShards::Open(config, 0));
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->SplitTokens(Split::kTrain), 400);
  EXPECT_EQ(shards->SplitTokens(Split::kValidation), 100);
  EXPECT_EQ(shards->Token(Split::kValidation, 0), 7);
  ASSERT_NE(shards->TokenByteLengths(), nullptr);
  EXPECT_EQ(shards->TokenByteLengths()->size(), 100u);
  EXPECT_EQ(shards->Describe()["split"], "manifest");
  EXPECT_EQ(shards->Describe()["manifest"]["eot_id"], 0);
}

TEST(PreparedFolderTest, ConfigThatDisagreesWithTheManifestIsAnError) {
  TempFolder folder;
  WritePreparedFolder(folder, Ramp(0, 400, 100), Ramp(7, 100, 100), 100, 0);
  std::string message = OpenError(ShardConfig(folder / "prepared", 120), StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("set data.vocab_size: 100"), std::string::npos) << message;
  DataConfig config = ShardConfig(folder / "prepared", 100);
  config.eot_token = 5;
  message = OpenError(config, StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("set data.eot_token: 0"), std::string::npos) << message;
}

// Opens `config`: whether each shard's whole SHA-256 was checked at this open or an earlier one, in
// Describe()'s order ("train", then "val").
std::vector<std::string> VerifiedAt(const DataConfig& config) {
  auto shards = data_test::OpenedOrNull(TokenShards::Open(config, 0));
  if (shards == nullptr) return {"not opened"};
  std::vector<std::string> verified;
  const nlohmann::json description = shards->Describe();
  for (const auto& file : description["files"]) verified.push_back(file.value("sha256_verified", "absent"));
  return verified;
}

using Verified = std::vector<std::string>;

TEST(PreparedFolderTest, AShardEditedInPlaceIsDataLossNamingItAndBothDigests) {
  TempFolder folder;
  WritePreparedFolder(folder, Ramp(0, 400, 100), Ramp(7, 100, 100), 100, 0);
  const DataConfig config = ShardConfig(folder / "prepared", 100);
  EXPECT_EQ(VerifiedAt(config), Verified({"now", "now"}));
  EXPECT_EQ(VerifiedAt(config), Verified({"cached", "cached"}));  // recorded beside the shards
  const std::string record = ReadBytes(folder / "prepared/.rung-verified.json");
  WriteBytes(folder / "prepared/.rung-verified.json", "{\"format\": \"rung-shard-verification\", \"shards\": [");
  EXPECT_EQ(VerifiedAt(config), Verified({"now", "now"}));  // a garbled record vouches for nothing
  EXPECT_EQ(ReadBytes(folder / "prepared/.rung-verified.json"), record);

  // Same size, ten tokens changed, as an edit some time after the open leaves it.
  const std::string shard = folder / "prepared/train_000000.bin";
  const std::string original = ReadBytes(shard);
  std::string edited = original;
  for (int t = 0; t < 10; ++t) edited[1024 + 2 * (100 + t)] ^= 1;
  const auto written = std::filesystem::last_write_time(shard);
  WriteBytes(shard, edited);
  std::filesystem::last_write_time(shard, written + std::chrono::seconds(1));
  const std::string message = OpenError(config);
  EXPECT_NE(message.find("shard " + shard + ": its SHA-256 is " + Sha256Hex(edited) + ", but " +
                         (folder / "prepared/manifest.json") + " says " + Sha256Hex(original)),
            std::string::npos)
      << message;

  // Even with its modification time put back, the edit is seen (its status change time moved).
  std::filesystem::last_write_time(shard, written);
  OpenError(config);

  WriteBytes(shard, original);
  EXPECT_EQ(VerifiedAt(config), Verified({"now", "cached"}));
}

TEST(PreparedFolderTest, AFolderThatCannotTakeTheRecordKeepsItInTheUserCache) {
  TempFolder folder;
  WritePreparedFolder(folder, Ramp(0, 400, 100), Ramp(7, 100, 100), 100, 0);
  // A folder in the record's way: nothing can be renamed over it (whoever runs the test).
  std::filesystem::create_directories(folder / "prepared/.rung-verified.json");
  const char* saved = std::getenv("XDG_CACHE_HOME");
  const std::string previous = saved == nullptr ? "" : saved;
  ::setenv("XDG_CACHE_HOME", (folder / "cache").c_str(), 1);
  const DataConfig config = ShardConfig(folder / "prepared", 100);
  EXPECT_EQ(VerifiedAt(config), Verified({"now", "now"}));
  EXPECT_EQ(VerifiedAt(config), Verified({"cached", "cached"}));
  EXPECT_FALSE(std::filesystem::is_empty(folder / "cache/rung/verified-shards"));
  if (saved == nullptr) {
    ::unsetenv("XDG_CACHE_HOME");
  } else {
    ::setenv("XDG_CACHE_HOME", previous.c_str(), 1);
  }
}

TEST(PreparedFolderTest, HostileManifestsAreDataLossNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1, 2]", "not a JSON object"},
      {R"({"format": "other"})", "format"},
      {R"({"format": "rung-token-manifest", "version": 1, "vocab_size": 70000, "token_bytes": 2})", "token_bytes"},
      {R"({"format": "rung-token-manifest", "version": 1, "vocab_size": 10, "token_bytes": 2, "eot_id": 10})",
       "eot_id"},
      {R"({"format": "rung-token-manifest", "version": 1, "vocab_size": 2, "token_bytes": 2, "eot_id": 0,
          "tokenizer": {"file": "t", "sha256": "x"}, "shards": [{"file": "../escape.bin", "split": "train",
          "documents": 1, "tokens": 1, "bytes": 1, "sha256": ""}], "token_byte_lengths": [1, 1]})",
       "shards[0].file"},
      {R"({"format": "rung-token-manifest", "version": 1, "vocab_size": 2, "token_bytes": 2, "eot_id": 0,
          "tokenizer": {"file": "t", "sha256": "x"}, "shards": [], "token_byte_lengths": [1]})",
       "token_byte_lengths"},
  };
  for (const auto& [text, field] : cases) {
    StatusOr<TokenManifest> manifest = ParseTokenManifest(text, "m.json");
    ASSERT_FALSE(manifest.ok()) << text;
    EXPECT_EQ(manifest.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(manifest.status().message().find("m.json"), std::string::npos) << manifest.status().message();
    EXPECT_NE(manifest.status().message().find(field), std::string::npos) << manifest.status().message();
  }
}

TEST(EvalDocumentFilterTest, ValidationWindowsKeepToDocumentsOfAtLeastTheMinimum) {
  TempFolder folder;
  // Validation documents (each starting at eot 0) of lengths 5, 40, 12, 70 and 16 tokens.
  const std::vector<int64_t> lengths = {5, 40, 12, 70, 16};
  std::vector<uint32_t> val;
  std::vector<int64_t> starts;
  for (int64_t length : lengths) {
    starts.push_back(static_cast<int64_t>(val.size()));
    val.push_back(0);
    for (int64_t t = 1; t < length; ++t) val.push_back(1 + static_cast<uint32_t>(starts.size()));
  }
  WritePreparedFolder(folder, Ramp(1, 400, 100), val, 100, 0);
  DataConfig config = ShardConfig(folder / "prepared", 100);
  config.eot_token = 0;
  config.eval_min_doc_tokens = 16;
  auto shards = data_test::OpenedOrNull(TokenShards::Open(config, 0));
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->Describe()["eval_documents"]["documents"], 3);  // 40, 70 and 16 tokens
  // seq_len 8: windows of 9 tokens inside each kept document from its start: 4 + 8 + 1 of them.
  const TokenBatch batch = shards->Batch(Split::kValidation, 0, 13, 8);
  std::vector<int64_t> expected_starts;
  for (size_t d : {1u, 3u, 4u}) {
    for (int64_t w = 0; w < std::max<int64_t>(1, (lengths[d] - 1) / 8); ++w) expected_starts.push_back(starts[d] + w * 8);
  }
  ASSERT_EQ(expected_starts.size(), 13u);
  for (int64_t row = 0; row < 13; ++row) {
    EXPECT_EQ(batch.inputs[static_cast<size_t>(row * 8)], static_cast<int32_t>(val[expected_starts[row]])) << row;
    // Every window's tokens belong to the document it starts in (no eot after its first token).
    for (int64_t t = 1; t < 8; ++t) EXPECT_NE(batch.inputs[static_cast<size_t>(row * 8 + t)], 0) << row;
  }
  EXPECT_EQ(batch.inputs[0], 0);  // the first window starts at its document's eot

  config.eval_min_doc_tokens = 71;
  const std::string message = OpenError(config, StatusCode::kInvalidArgument);
  EXPECT_NE(message.find("no validation document"), std::string::npos) << message;
}

}  // namespace
}  // namespace rung

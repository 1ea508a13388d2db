// rung-data end to end, as a user runs it: the real binary on real text, its shards read back by an
// independent reader (a few lines of Python reading the llm.c header), decoded by Debian's spm_decode,
// and by rung's own TokenShards through the manifest.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/folder_lock.h"
#include "core/config/trial_config.h"
#include "core/data/token_shards.h"
#include "tests/core/data/test_files.h"
#include "tests/support/small_disk/small_disk.h"

namespace rung {
namespace {

using data_test::ReadBytes;
using data_test::TempFolder;
using data_test::WriteBytes;

struct CommandRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

CommandRun RunCommand(const std::string& command) {
  CommandRun run;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) run.output.append(buffer, n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

const std::string kBinary = RUNG_DATA_BINARY;

// Documents with what whitespace folding or normalisation would change: tabs, runs of spaces, blank
// lines, carriage returns, non-ASCII letters and an emoji.
const char* const kDocuments[] = {
    "Hello,\tworld!\n\n  two  spaces   and\ttabs\t\there\n",
    "non-ASCII: caf\xC3\xA9, na\xC3\xAFve, \xCE\x95\xCE\xBB\xCE\xBB\xCE\xB7\xCE\xBD\xCE\xB9\xCE\xBA\xCE\xAC, "
    "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x8E\x89\r\nend without newline",
    "   leading spaces, trailing spaces   \n\n\n",
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must be in want of a wife.",
};

void WriteCorpus(const TempFolder& folder) {
  std::string training;
  for (int repeat = 0; repeat < 40; ++repeat) {
    for (const char* document : kDocuments) training += document + std::string("\n");
  }
  WriteBytes(folder / "train.txt", training);
  for (size_t d = 0; d < std::size(kDocuments); ++d) {
    WriteBytes(folder / ("docs/" + std::to_string(d) + ".txt"), kDocuments[d]);
  }
}

TEST(RungDataTest, PreparedShardsDecodeToTheSourceDocumentsAndReadThroughTheManifest) {
  TempFolder folder;
  WriteCorpus(folder);
  CommandRun train = RunCommand(kBinary + " tokenizer train --input " + (folder / "train.txt") +
                         " --vocab-size 400 --seed 3 --out " + (folder / "tok"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  CommandRun prepare = RunCommand(kBinary + " prepare --tokenizer " + (folder / "tok/tokenizer.model") + " --input " +
                           (folder / "docs") + " --out " + (folder / "prepared") + " --val-fraction 0.5 --threads 2");
  ASSERT_EQ(prepare.exit_code, 0) << prepare.output;

  // The independent reader: each shard's header, each document decoded by spm_decode, in the source's
  // order, compared with the source files' bytes.
  const std::string reader =
      "import array, json, subprocess, sys\n"
      "d = sys.argv[1]\n"
      "m = json.load(open(d + '/manifest.json'))\n"
      "decoded = []\n"
      "for s in m['shards']:\n"
      "    raw = open(d + '/' + s['file'], 'rb').read()\n"
      "    h = array.array('i'); h.frombytes(raw[:1024])\n"
      "    assert (h[0], h[1]) == (20240520, 1) and h[2] * 2 == len(raw) - 1024 == 2 * s['tokens'], h[:3]\n"
      "    t = array.array('H'); t.frombytes(raw[1024:])\n"
      "    docs = []\n"
      "    for x in t:\n"
      "        if x == m['eot_id']: docs.append([])\n"
      "        else: docs[-1].append(x)\n"
      "    assert sum(m['token_byte_lengths'][x] for doc in docs for x in doc) == s['bytes']\n"
      "    for doc in docs:\n"
      "        ids = ' '.join(map(str, doc))\n"
      "        out = subprocess.run(['spm_decode', '--model', d + '/tokenizer.model', '--input_format', 'id'],\n"
      "                             input=(ids + '\\n').encode(), capture_output=True, check=True).stdout\n"
      "        decoded.append(out[:-1])\n"
      "sources = sorted(open(p, 'rb').read() for p in [x['path'] for x in m['sources']])\n"
      "assert sorted(decoded) == sources, (decoded, sources)\n"
      "print('ok', len(decoded))\n";
  WriteBytes(folder / "reader.py", reader);
  CommandRun read = RunCommand("python3 " + (folder / "reader.py") + " " + (folder / "prepared"));
  ASSERT_EQ(read.exit_code, 0) << read.output;
  EXPECT_EQ(read.output, "ok 4\n");

  DataConfig config;
  config.source = "shards";
  config.path = folder / "prepared";
  config.vocab_size = 400;
  config.eot_token = 2;
  config.seq_len = 4;
  auto shards = data_test::OpenedOrNull(TokenShards::Open(config, 0));
  ASSERT_NE(shards, nullptr);
  EXPECT_EQ(shards->Token(Split::kTrain, 0), 2);  // every document starts at the end-of-text token

  // The prepared folder alone is a data block: the vocabulary and end-of-text id come from its manifest,
  // and a stated value that disagrees is an error naming both.
  nlohmann::json trial = {{"data", {{"source", "shards"}, {"path", (folder / "prepared")}, {"seq_len", 4}}},
                          {"model", {{"layers", 1}, {"d_model", 16}, {"heads", 2}}},
                          {"train", {{"steps", 2}, {"batch_size", 2}}}};
  StatusOr<TrialConfig> resolved = TrialConfigFromJson(trial);
  ASSERT_TRUE(resolved.ok()) << resolved.status().ToString();
  EXPECT_EQ(resolved->data.vocab_size, 400);
  EXPECT_EQ(resolved->data.eot_token, 2);
  EXPECT_EQ(resolved->model.vocab_size, 400) << "the model's vocabulary follows the data's";
  trial["data"]["vocab_size"] = 512;
  StatusOr<TrialConfig> contradicted = TrialConfigFromJson(trial);
  ASSERT_FALSE(contradicted.ok());
  EXPECT_NE(contradicted.status().message().find("data.vocab_size: is 512, but " + (folder / "prepared/manifest.json") +
                                                 " says vocab_size 400"),
            std::string::npos)
      << contradicted.status().message();
  trial["data"]["vocab_size"] = 400;
  trial["data"]["eot_token"] = 1;
  EXPECT_NE(TrialConfigFromJson(trial).status().message().find("data.eot_token: is 1, but"), std::string::npos);

  // A rerun finds every shard in place and rewrites none.
  CommandRun again = RunCommand(kBinary + " prepare --tokenizer " + (folder / "tok/tokenizer.model") + " --input " +
                         (folder / "docs") + " --out " + (folder / "prepared") + " --val-fraction 0.5 --threads 1");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0 shards written, 2 already there"), std::string::npos) << again.output;
}

TEST(RungDataTest, BadInputIsAClearErrorNamingFileAndOffsetAndWritesNothing) {
  TempFolder folder;
  WriteCorpus(folder);
  ASSERT_EQ(RunCommand(kBinary + " tokenizer train --input " + (folder / "train.txt") + " --vocab-size 400 --out " +
                       (folder / "tok")).exit_code, 0);
  WriteBytes(folder / "bad/a.txt", "fine text");
  WriteBytes(folder / "bad/b.txt", std::string("valid start \xC3\x28 then broken"));
  CommandRun run = RunCommand(kBinary + " prepare --tokenizer " + (folder / "tok/tokenizer.model") + " --input " +
                       (folder / "bad") + " --out " + (folder / "out"));
  EXPECT_EQ(run.exit_code, 4) << run.output;
  EXPECT_NE(run.output.find(folder / "bad/b.txt"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("byte offset 12: invalid UTF-8"), std::string::npos) << run.output;
  EXPECT_FALSE(std::ifstream(folder / "out/manifest.json").good());

  WriteBytes(folder / "lines.jsonl", "{\"text\": \"one\"}\n{\"body\": \"two\"}\n");
  run = RunCommand(kBinary + " prepare --tokenizer " + (folder / "tok/tokenizer.model") + " --input " +
                   (folder / "lines.jsonl") + " --text-field text --out " + (folder / "out"));
  EXPECT_EQ(run.exit_code, 4) << run.output;
  EXPECT_NE(run.output.find("lines.jsonl:2 (byte offset 16)"), std::string::npos) << run.output;

  run = RunCommand(kBinary + " prepare --tokenizer " + (folder / "missing.model") + " --input " + (folder / "docs") +
                   " --out " + (folder / "out"));
  EXPECT_EQ(run.exit_code, 4) << run.output;
  EXPECT_NE(run.output.find("missing.model"), std::string::npos) << run.output;

  run = RunCommand(kBinary + " prepare --help");
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_NE(run.output.find("--shard-tokens"), std::string::npos) << run.output;
}

// The files a folder holds (hidden ones too), sorted; none if it does not exist.
std::vector<std::string> FilesIn(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code error;
  for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// A tokenizer trained on the corpus, and its command line's start for prepare.
std::string TrainedPrepare(const TempFolder& folder) {
  WriteCorpus(folder);
  const CommandRun train = RunCommand(kBinary + " tokenizer train --input " + (folder / "train.txt") +
                                      " --vocab-size 400 --seed 3 --threads 1 --out " + (folder / "tok"));
  EXPECT_EQ(train.exit_code, 0) << train.output;
  return kBinary + " prepare --tokenizer " + (folder / "tok/tokenizer.model") + " ";
}

TEST(RungDataTest, ASecondPrepareIntoAFolderBeingWrittenIsRefusedAndWritesNothing) {
  TempFolder folder;
  const std::string prepare = TrainedPrepare(folder);
  std::filesystem::create_directories(folder / "out");
  {
    // What a first prepare holds while it writes (the test is that process here).
    StatusOr<FolderLock> first = FolderLock::Acquire(folder / "out", "rung-data prepare");
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    const CommandRun second = RunCommand(prepare + "--input " + (folder / "docs") + " --out " + (folder / "out"));
    EXPECT_EQ(second.exit_code, 2) << second.output;
    EXPECT_NE(second.output.find("rung-data: UNAVAILABLE: another rung-data prepare is writing " + (folder / "out") +
                                 " (pid " + std::to_string(::getpid()) + ")"),
              std::string::npos)
        << second.output;
    EXPECT_EQ(FilesIn(folder / "out"), std::vector<std::string>{".rung-lock"});
  }
  const CommandRun alone = RunCommand(prepare + "--input " + (folder / "docs") + " --out " + (folder / "out"));
  EXPECT_EQ(alone.exit_code, 0) << alone.output;
}

// Shards on a disk too small for them (a tmpfs in a private mount namespace, tests/support/small_disk):
// exit 5 naming the shard, and nothing but the folder's lock left in --out.
TEST(RungDataTest, AFullDiskExitsFiveNamingThePathAndLeavesNoShard) {
  TempFolder folder;
  const std::string prepare = TrainedPrepare(folder);
  std::string many;  // about 100 KB of documents: some 50 KB of 2-byte tokens, past an 8 KiB disk
  for (int repeat = 0; repeat < 200; ++repeat) {
    for (const char* document : kDocuments) many += document + std::string("\n\n");
  }
  WriteBytes(folder / "many.txt", many);
  const std::string disk = folder / "disk";
  StatusOr<testing::SmallDiskRun> run = testing::RunOnSmallDisk(
      disk, "8k", prepare + "--input \"$1\" --split-on '\\n\\n' --out $RUNG_DISK/shards; code=$?; echo left:; "
                  "ls -A $RUNG_DISK/shards; exit $code",
      {folder / "many.txt"}, std::chrono::minutes(2));
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  if (run->refused) GTEST_SKIP() << testing::kSmallDiskRefused << run->refusal;
  EXPECT_EQ(run->result.exit.code, 5) << run->result.stderr_text;
  EXPECT_NE(run->result.stderr_text.find("no space left on device at " + disk + "/shards/"), std::string::npos)
      << run->result.stderr_text;
  const std::string left = run->result.stdout_text.substr(run->result.stdout_text.find("left:") + 5);
  EXPECT_EQ(left, "\n.rung-lock\n") << "files left in --out";
}

TEST(RungDataTest, BadUsageExitsTwoWithAMessageNamingTheFlagAndWritesNothing) {
  TempFolder folder;
  const std::string prepare = TrainedPrepare(folder);
  WriteBytes(folder / "a-file", "not a folder");
  const std::string train = kBinary + " tokenizer train --input " + (folder / "train.txt") + " ";
  const std::string docs = "--input " + (folder / "docs") + " ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {train + "--vocab-size 1 --out " + (folder / "t1"), "--vocab-size must lie in [260, 2^24]"},
      {train + "--vocab-size 400 --threads 0 --out " + (folder / "t2"),
       "--threads must lie in [1, 128] for tokenizer training, got 0"},
      {train + "--vocab-size 400 --out " + (folder / "a-file"), "--out " + (folder / "a-file") + " is a file"},
      {prepare + docs + "--val-fraction 0 --out " + (folder / "p1"), "--val-fraction must lie in (0, 1), got 0"},
      {prepare + docs + "--threads -1 --out " + (folder / "p2"), "--threads must lie in [0, 1024]"},
      {prepare + docs + "--max-document-bytes 3 --out " + (folder / "p3"), "--max-document-bytes must be at least 4"},
      {prepare + docs + "--out " + (folder / "a-file"), "--out " + (folder / "a-file") + " is a file, not a folder"},
      {prepare + docs + "--out " + (folder / "a-file/below"),
       "--out " + (folder / "a-file/below") + ": " + (folder / "a-file") + " is a file, not a folder"},
      {prepare + docs + "--split-on '\\x' --out " + (folder / "p4"),
       "--split-on '\\x': '\\x' at byte offset 0 is not an escape (the escapes are \\n, \\t, \\f, \\r and "
       "\\\\)"},
      {prepare + docs + "--split-on 'end\\' --out " + (folder / "p5"), "--split-on 'end\\': a lone backslash ends it"},
  };
  for (const auto& [command, message] : cases) {
    const CommandRun run = RunCommand(command);
    EXPECT_EQ(run.exit_code, 2) << command << "\n" << run.output;
    EXPECT_NE(run.output.find("rung-data: INVALID_ARGUMENT: " + message), std::string::npos)
        << command << "\n" << run.output;
  }
  for (const char* out : {"t1", "t2", "p1", "p2", "p3", "p4", "p5"}) EXPECT_TRUE(FilesIn(folder / out).empty()) << out;
  EXPECT_EQ(ReadBytes(folder / "a-file"), "not a folder");
}

TEST(RungDataTest, AVocabularyTooSmallForTheTextSaysTheLeastSentencePieceTrains) {
  TempFolder folder;
  WriteCorpus(folder);
  for (const char* type : {"bpe", "unigram"}) {
    const std::string train = kBinary + " tokenizer train --input " + (folder / "train.txt") + " --type " + type +
                              " --threads 1 --out " + (folder / type) + " --vocab-size ";
    const CommandRun small = RunCommand(train + "260");
    EXPECT_EQ(small.exit_code, 2) << small.output;
    const std::string said =
        "is too small for these documents: a " + std::string(type) + " tokenizer of them needs at least ";
    const size_t at = small.output.find(said);
    ASSERT_NE(at, std::string::npos) << small.output;
    const int least = std::atoi(small.output.c_str() + at + said.size());
    EXPECT_GT(least, 260) << small.output;
    EXPECT_EQ(RunCommand(train + std::to_string(least - 1)).exit_code, 2);
    const CommandRun enough = RunCommand(train + std::to_string(least));
    EXPECT_EQ(enough.exit_code, 0) << enough.output;  // SentencePiece trains at exactly the least
  }
}

TEST(RungDataTest, AnOutputFolderInsideTheInputIsNotReadAsText) {
  TempFolder folder;
  WriteCorpus(folder);
  // The documents, the tokenizer and the prepared shards all in one folder, prepared twice.
  const CommandRun train = RunCommand(kBinary + " tokenizer train --input " + (folder / "train.txt") +
                                      " --vocab-size 400 --threads 1 --out " + (folder / "docs/tok"));
  ASSERT_EQ(train.exit_code, 0) << train.output;
  const std::string prepare = kBinary + " prepare --tokenizer " + (folder / "docs/tok/tokenizer.model") +
                              " --input " + (folder / "docs") + " --val-fraction 0.5 --out " + (folder / "docs/prepared");
  for (int run = 0; run < 2; ++run) {
    const CommandRun prepared = RunCommand(prepare);
    ASSERT_EQ(prepared.exit_code, 0) << prepared.output;
    EXPECT_NE(prepared.output.find("1 train and 3 val documents"), std::string::npos) << prepared.output;
    EXPECT_NE(prepared.output.find("not reading " + (folder / "docs/tok") + " (rung-data's own output)"),
              std::string::npos)
        << prepared.output;
  }
  // And a tokenizer trained on the folder, into it, again.
  const CommandRun again = RunCommand(kBinary + " tokenizer train --input " + (folder / "docs") +
                                      " --vocab-size 310 --threads 1 --out " + (folder / "docs/tok"));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("on 4 documents"), std::string::npos) << again.output;

  const nlohmann::json manifest = nlohmann::json::parse(ReadBytes(folder / "docs/prepared/manifest.json"));
  ASSERT_EQ(manifest["sources"].size(), 4u);
  for (const auto& source : manifest["sources"]) {
    EXPECT_EQ(source["path"].get<std::string>().find("/docs/prepared"), std::string::npos) << source;
  }

  const CommandRun itself = RunCommand(kBinary + " prepare --tokenizer " + (folder / "docs/tok/tokenizer.model") +
                                       " --input " + (folder / "docs/prepared") + " --out " + (folder / "docs/prepared"));
  EXPECT_EQ(itself.exit_code, 2) << itself.output;
  EXPECT_NE(itself.output.find("is the output folder (--out)"), std::string::npos) << itself.output;
}

TEST(RungDataTest, AShardTokensThatMakesTooManyShardsIsRefusedBeforeAnyIsWritten) {
  TempFolder folder;
  const std::string prepare = TrainedPrepare(folder);
  // 40,000 CJK characters the tokenizer has no piece for: three byte tokens each, over 100,000 tokens.
  std::string text;
  for (int c = 0; c < 40000; ++c) {
    const int code = 0x4E00 + (c * 7919) % 8000;
    text += static_cast<char>(0xE0 | (code >> 12));
    text += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    text += static_cast<char>(0x80 | (code & 0x3F));
    if (c == 20000) text += '\f';
  }
  WriteBytes(folder / "cjk.txt", text);
  const CommandRun run = RunCommand(prepare + "--input " + (folder / "cjk.txt") + " --split-on '\\f' --shard-tokens 1 --out " +
                                    (folder / "out"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("rung-data: INVALID_ARGUMENT: --shard-tokens 1 would cut the "), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("a prepared folder holds at most 100000: use --shard-tokens 2 or more"), std::string::npos)
      << run.output;
  EXPECT_EQ(FilesIn(folder / "out"), std::vector<std::string>{".rung-lock"});
}

}  // namespace
}  // namespace rung

// rung-data end to end, as a user runs it: the real binary on real text, its shards read back by an
// independent reader (a few lines of Python reading the llm.c header), decoded by Debian's spm_decode,
// and by rung's own TokenShards through the manifest.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/data/token_shards.h"
#include "tests/core/data/test_files.h"

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

}  // namespace
}  // namespace rung

// tests/cli/golden_file.h
//
// The golden files of the `rung` command line (tests/cli/golden/*.test, DuckDB's test/sql style):
// plain text, one case after another, each a command and what it must print. This header is the
// format's reference; tests/cli/README.md shows it by example.
//
//   # Lines before the first case are the file's comment (kept as they are on rewrite).
//   === results of a sweep as CSV
//   # Lines starting with '#' right after the === line are comments of the case.
//   rung results 1 --format csv
//   --- exit 0
//   --- stdout
//   trial,rung_label,position.variant,seed,mean,std,min,count,trials,paired_diff,paired_sd,pairs
//   ...
//
// A case starts at a line "=== TITLE". Its first line that is not a comment is the command: words
// split as a shell would (single and double quotes, backslash escapes; no globs, pipes or
// variables), starting with `rung` (or `rung-coordinator`, `rung-worker`, `rung-train`: the
// binaries beside it; a case whose binary is not built is skipped), optionally preceded by `env` and NAME=VALUE or `-u
// NAME` words that change the environment of that one command. ${SOURCE} (the repository), ${SCRATCH} (a folder of this
// file's run) and ${COORDINATOR} (the coordinator's address) are replaced in it.
//
// Then sections, each introduced by a line starting with "--- ":
//   --- exit N              the exit code (required)
//   --- stdin               the body is the command's standard input (otherwise /dev/null)
//   --- stdout              the body is the whole standard output, exactly
//   --- stdout contains     each non-empty line of the body appears somewhere in standard output
//   --- stderr              the body is the whole standard error, exactly
//   --- stderr contains     each non-empty line of the body appears somewhere in standard error
//   --- file PATH           the body is the whole content of the file PATH after the command
//                           (PATH with ${SCRATCH} and the like)
//   --- file contains PATH  each non-empty line of the body appears somewhere in that file
//   --- end                 ends the last body (only needed when it ends with empty lines)
// A stream without a section is not checked. A body is every line up to the next "--- " or
// "=== " line; a body that runs up to the next case (or the end of the file) loses its trailing
// empty lines, which separate cases. A body's text is its lines, each ending with "\n", unless its
// last line is "\ no newline at end". Before the comparison the outputs have the values of
// ${SCRATCH}, ${SOURCE} and ${COORDINATOR} replaced by those names (longest first).
//
// Update mode (RUNG_GOLDEN_UPDATE=1) rewrites each file with what the commands did: the exit code,
// stdout exactly (a "contains" section is kept as written), stderr exactly when the case had an
// exact stderr section or stderr was not empty (a "contains" section is kept), and every file
// section; a "contains" section that does not hold still fails the test. Review the diff of every
// rewritten golden by eye before committing it.
//
// Thread safety: pure functions over values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung::cli::testing {

// What one stream (or file) must hold.
struct GoldenExpectation {
  bool contains = false;  // each non-empty line a fragment, instead of the exact text
  std::string text;       // the body's text ("\n" after every line, unless marked otherwise)
};

// A file a case checks after its command.
struct GoldenFileExpectation {
  std::string path;  // as written, with its ${...} names
  GoldenExpectation expected;
};

struct GoldenCase {
  int line = 0;                       // of the === line, 1-based
  std::string title;                  // after "=== "
  std::vector<std::string> comments;  // the '#' lines after the === line, as written
  std::string command;                // as written
  std::optional<std::string> stdin_text;
  std::optional<int> exit_code;
  std::optional<GoldenExpectation> stdout_expected;
  std::optional<GoldenExpectation> stderr_expected;
  std::vector<GoldenFileExpectation> files;
};

struct GoldenFile {
  std::vector<std::string> header;  // the lines before the first case
  std::vector<GoldenCase> cases;
};

// Errors: INVALID_ARGUMENT with `name:line:` for a case without a command or an exit section, an
// unknown section, a section given twice, text outside any section.
StatusOr<GoldenFile> ParseGoldenFile(const std::string& text, const std::string& name);

// The file as text; ParseGoldenFile(FormatGoldenFile(file)) gives `file` back.
std::string FormatGoldenFile(const GoldenFile& file);

// Splits a command line into words as described above. INVALID_ARGUMENT for an unterminated quote.
StatusOr<std::vector<std::string>> SplitCommandLine(const std::string& line);

// Whether `actual` meets `expected`; otherwise `*why` says what differs (a diff of the lines for an
// exact expectation, the missing fragments for a contains one).
bool MeetsExpectation(const GoldenExpectation& expected, const std::string& actual, std::string* why);

// A line diff of two texts ("-" expected, "+" actual, " " both), for messages.
std::string LineDiff(const std::string& expected, const std::string& actual);

// Every occurrence of each `from` in `text` replaced by its `to`, longest `from` first.
std::string ReplaceAll(std::string text, std::vector<std::pair<std::string, std::string>> replacements);

}  // namespace rung::cli::testing

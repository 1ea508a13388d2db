// tests/cli/golden_file.cc
#include "tests/cli/golden_file.h"

#include <algorithm>
#include <sstream>

namespace rung::cli::testing {
namespace {

constexpr char kCaseMarker[] = "=== ";
constexpr char kSectionMarker[] = "--- ";
constexpr char kNoNewline[] = "\\ no newline at end";

bool StartsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream stream(text);
  while (std::getline(stream, line)) lines.push_back(line);
  return lines;
}

// A body's lines as text.
std::string BodyText(std::vector<std::string> lines) {
  bool newline_at_end = true;
  if (!lines.empty() && lines.back() == kNoNewline) {
    lines.pop_back();
    newline_at_end = false;
  }
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  if (!newline_at_end && !text.empty()) text.pop_back();
  return text;
}

// A text as body lines, and whether it ends with an empty line (which needs "--- end" when it is
// the last body of its case).
std::vector<std::string> BodyLines(const std::string& text, bool* ends_empty) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) {
      lines.push_back(text.substr(begin));
      lines.push_back(kNoNewline);
      break;
    }
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  *ends_empty = !lines.empty() && lines.back().empty();
  return lines;
}

Status Error(const std::string& name, size_t line, const std::string& message) {
  return Status::InvalidArgument(name + ":" + std::to_string(line + 1) + ": " + message);
}

}  // namespace

StatusOr<GoldenFile> ParseGoldenFile(const std::string& text, const std::string& name) {
  const std::vector<std::string> lines = SplitLines(text);
  GoldenFile file;
  size_t at = 0;
  while (at < lines.size() && !StartsWith(lines[at], kCaseMarker)) file.header.push_back(lines[at++]);
  while (at < lines.size()) {
    GoldenCase golden;
    golden.line = static_cast<int>(at + 1);
    golden.title = lines[at].substr(std::string(kCaseMarker).size());
    const size_t case_line = at++;
    while (at < lines.size() && StartsWith(lines[at], "#")) golden.comments.push_back(lines[at++]);
    if (at >= lines.size() || StartsWith(lines[at], kCaseMarker) || StartsWith(lines[at], kSectionMarker) ||
        lines[at].empty()) {
      return Error(name, case_line, "case '" + golden.title + "' has no command line after its comments");
    }
    golden.command = lines[at++];
    bool ended = false;
    while (at < lines.size() && !StartsWith(lines[at], kCaseMarker)) {
      const size_t section_line = at;
      if (!StartsWith(lines[at], kSectionMarker)) {
        if (lines[at].empty()) {  // separators before the next case
          ++at;
          continue;
        }
        return Error(name, at, "text outside any section: '" + lines[at] + "'");
      }
      if (ended) return Error(name, at, "a section after '--- end'");
      const std::string section = lines[at++].substr(std::string(kSectionMarker).size());
      std::vector<std::string> body;
      while (at < lines.size() && !StartsWith(lines[at], kCaseMarker) && !StartsWith(lines[at], kSectionMarker)) {
        body.push_back(lines[at++]);
      }
      if (at >= lines.size() || StartsWith(lines[at], kCaseMarker)) {  // the case's last body
        while (!body.empty() && body.back().empty()) body.pop_back();
      }
      auto expectation = [&](std::optional<GoldenExpectation>* slot, bool contains) -> Status {
        if (slot->has_value()) return Error(name, section_line, "section '" + section + "' given twice");
        *slot = GoldenExpectation{contains, BodyText(body)};
        return Status::Ok();
      };
      auto no_body = [&]() -> Status {
        for (const std::string& line : body) {
          if (!line.empty()) return Error(name, section_line, "'--- " + section + "' takes no lines after it");
        }
        return Status::Ok();
      };
      if (StartsWith(section, "exit ")) {
        if (golden.exit_code) return Error(name, section_line, "section 'exit' given twice");
        try {
          size_t used = 0;
          const std::string number = section.substr(5);
          golden.exit_code = std::stoi(number, &used);
          if (used != number.size()) throw std::invalid_argument(number);
        } catch (const std::exception&) {
          return Error(name, section_line, "'--- " + section + "': expected '--- exit N'");
        }
        RUNG_RETURN_IF_ERROR(no_body());
      } else if (section == "stdin") {
        if (golden.stdin_text) return Error(name, section_line, "section 'stdin' given twice");
        golden.stdin_text = BodyText(body);
      } else if (section == "stdout" || section == "stdout contains") {
        RUNG_RETURN_IF_ERROR(expectation(&golden.stdout_expected, section != "stdout"));
      } else if (section == "stderr" || section == "stderr contains") {
        RUNG_RETURN_IF_ERROR(expectation(&golden.stderr_expected, section != "stderr"));
      } else if (StartsWith(section, "file ") || StartsWith(section, "file contains ")) {
        const bool contains = StartsWith(section, "file contains ");
        GoldenFileExpectation expected;
        expected.path = section.substr(contains ? 14 : 5);
        expected.expected = GoldenExpectation{contains, BodyText(body)};
        golden.files.push_back(std::move(expected));
      } else if (section == "end") {
        RUNG_RETURN_IF_ERROR(no_body());
        ended = true;
      } else {
        return Error(name, section_line,
                     "unknown section '--- " + section +
                         "' (exit N, stdin, stdout, stdout contains, stderr, stderr contains, file PATH, end)");
      }
    }
    if (!golden.exit_code) return Error(name, case_line, "case '" + golden.title + "' has no '--- exit N' section");
    file.cases.push_back(std::move(golden));
  }
  return file;
}

std::string FormatGoldenFile(const GoldenFile& file) {
  std::string text;
  for (const std::string& line : file.header) text += line + "\n";
  for (size_t index = 0; index < file.cases.size(); ++index) {
    const GoldenCase& golden = file.cases[index];
    if (index > 0) text += "\n";
    text += kCaseMarker + golden.title + "\n";
    for (const std::string& comment : golden.comments) text += comment + "\n";
    text += golden.command + "\n";
    bool last_ends_empty = false;
    auto body = [&](const std::string& header, const std::string& content) {
      text += kSectionMarker + header + "\n";
      for (const std::string& line : BodyLines(content, &last_ends_empty)) text += line + "\n";
    };
    if (golden.stdin_text) body("stdin", *golden.stdin_text);
    text += std::string(kSectionMarker) + "exit " + std::to_string(golden.exit_code.value_or(0)) + "\n";
    last_ends_empty = false;
    if (golden.stdout_expected) {
      body(golden.stdout_expected->contains ? "stdout contains" : "stdout", golden.stdout_expected->text);
    }
    if (golden.stderr_expected) {
      body(golden.stderr_expected->contains ? "stderr contains" : "stderr", golden.stderr_expected->text);
    }
    for (const GoldenFileExpectation& expected : golden.files) {
      body((expected.expected.contains ? "file contains " : "file ") + expected.path, expected.expected.text);
    }
    if (last_ends_empty) text += std::string(kSectionMarker) + "end\n";
  }
  return text;
}

StatusOr<std::vector<std::string>> SplitCommandLine(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote == '\'') {
      if (c == '\'') quote = 0;
      else word += c;
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < line.size() && (line[i + 1] == '"' || line[i + 1] == '\\')) {
        word += line[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return Status::InvalidArgument("unterminated " + std::string(1, quote) + " quote in: " + line);
  if (in_word) words.push_back(word);
  return words;
}

std::string LineDiff(const std::string& expected, const std::string& actual) {
  const std::vector<std::string> a = SplitLines(expected), b = SplitLines(actual);
  // Longest common subsequence of lines, then the edit script from it.
  std::vector<std::vector<int>> common(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;) {
    for (size_t j = b.size(); j-- > 0;) {
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
    }
  }
  std::string diff;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) {
      diff += "  " + a[i++] + "\n";
      ++j;
    } else if (i < a.size() && (j == b.size() || common[i + 1][j] >= common[i][j + 1])) {
      diff += "- " + a[i++] + "\n";
    } else {
      diff += "+ " + b[j++] + "\n";
    }
  }
  const bool a_newline = expected.empty() || expected.back() == '\n';
  const bool b_newline = actual.empty() || actual.back() == '\n';
  if (a_newline != b_newline) {
    diff += std::string("(the ") + (a_newline ? "actual" : "expected") + " text has no newline at its end)\n";
  }
  return diff;
}

bool MeetsExpectation(const GoldenExpectation& expected, const std::string& actual, std::string* why) {
  if (!expected.contains) {
    if (expected.text == actual) return true;
    *why = "differs (- expected, + actual):\n" + LineDiff(expected.text, actual);
    return false;
  }
  std::string missing;
  for (const std::string& fragment : SplitLines(expected.text)) {
    if (!fragment.empty() && actual.find(fragment) == std::string::npos) missing += "  " + fragment + "\n";
  }
  if (missing.empty()) return true;
  *why = "lacks these fragments:\n" + missing + "in:\n" + actual;
  return false;
}

std::string ReplaceAll(std::string text, std::vector<std::pair<std::string, std::string>> replacements) {
  std::stable_sort(replacements.begin(), replacements.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [from, to] : replacements) {
    if (from.empty()) continue;
    size_t at = 0;
    while ((at = text.find(from, at)) != std::string::npos) {
      text.replace(at, from.size(), to);
      at += to.size();
    }
  }
  return text;
}

}  // namespace rung::cli::testing

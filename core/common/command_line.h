// core/common/command_line.h
//
// What every rung program does with its command line, in one place: parsing it so that a mistake
// exits 2 (bad usage, docs/cli.md) after CLI11's message, never CLI11's own codes (105, 109, ...),
// and number checks whose messages say the rule ("--step: must be a number >= 0, got -1") where
// CLI::PositiveNumber and CLI::NonNegativeNumber print a range of doubles 300 digits long.
//
// Thread safety: call from main.
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

namespace rung {

inline constexpr int kExitBadUsage = 2;

// Parses argv into `app`. nullopt: parsed, the program goes on; else the exit code to return now:
// 0 after --help or --version (printed), kExitBadUsage after a mistake (CLI11's message on stderr).
std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv);

// A check for numeric options that must be > 0 (or >= 0 with `zero_allowed`): finite numbers only.
CLI::Validator PositiveNumberCheck(bool zero_allowed = false);

}  // namespace rung

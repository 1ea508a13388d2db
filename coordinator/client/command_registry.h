// coordinator/client/command_registry.h
//
// The registry of `rung`'s subcommands. Each subcommand lives in its own file (its options, its
// handler, and one registration line): under coordinator/cli/commands/, and `rung dashboard` in
// coordinator/dashboard/ (the registry is the client library's, so that neither depends on the
// other). `rung`'s main adds whatever is registered: a new command is its file and its golden
// tests, nothing else.
//
// Example (coordinator/cli/commands/sweeps_command.cc):
//   void AddSweepsCommand(CLI::App& app, int* exit_code) { ... app.add_subcommand("sweeps", ...) ... }
//   RUNG_CLI_COMMAND("sweeps", kSweeps, AddSweepsCommand);
//
// `rung --help` lists the commands by section (in CommandSection's order), by name within one.
// Contract: `add` adds exactly one subcommand named `name` to the app and sets *exit_code from its
// callback. Registration happens during static initialization; AddRegisteredCommands runs after.
// Thread safety: register and add from one thread (main).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace rung::client {

// The sections of `rung --help`, in the order they print.
enum class CommandSection {
  kHere,     // a spec or a ladder on this machine: validate, run, serve
  kSweeps,   // a coordinator's sweeps, trials and workers
  kResults,  // what a sweep produced: results, fits, plots, diagnostics, logs
  kBrowser,  // the web dashboard
};

// The heading of a section in `rung --help`.
const char* CommandSectionTitle(CommandSection section);

using AddCommandFunction = void (*)(CLI::App& app, int* exit_code);

// Records a subcommand to add; returns true (for the static registration of RUNG_CLI_COMMAND).
// REQUIRES: `name` is not registered yet.
bool RegisterCommand(const char* name, CommandSection section, AddCommandFunction add);

// Adds every registered subcommand to `app`, by section and then name, each in its section's group.
void AddRegisteredCommands(CLI::App& app, int* exit_code);

}  // namespace rung::client

// Registers `add` as the subcommand `name` in `section` (a CommandSection enumerator), at namespace scope.
#define RUNG_CLI_COMMAND(name, section, add)                                                   \
  [[maybe_unused]] static const bool rung_cli_command_registered_##add =                       \
      ::rung::client::RegisterCommand(name, ::rung::client::CommandSection::section, add)

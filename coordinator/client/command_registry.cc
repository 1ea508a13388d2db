#include "coordinator/client/command_registry.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <tuple>
#include <vector>

namespace rung::client {
namespace {

struct RegisteredCommand {
  std::string name;
  CommandSection section;
  AddCommandFunction add;
};

// Constructed on first use, so that registrations from any translation unit's static
// initialization find it.
std::vector<RegisteredCommand>& Registry() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

// `rung --help` lists each command with the head of its description: the first line, up to its
// first ": " or "; " outside parentheses (the whole description is in `rung COMMAND --help`).
class CommandListFormatter : public CLI::Formatter {
 public:
  std::string make_subcommand(const CLI::App* command) const override {
    const std::string& description = command->get_description();
    size_t end = 0;
    for (int depth = 0; end < description.size() && description[end] != '\n'; ++end) {
      const char c = description[end];
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (depth == 0 && (c == ':' || c == ';') && end + 1 < description.size() && description[end + 1] == ' ') break;
    }
    const std::string head = description.substr(0, end);
    std::stringstream out;
    CLI::detail::format_help(out, command->get_display_name(true), head, get_column_width());
    return out.str();
  }
};

}  // namespace

const char* CommandSectionTitle(CommandSection section) {
  switch (section) {
    case CommandSection::kHere:
      return "Plan and run on this machine";
    case CommandSection::kSweeps:
      return "A coordinator's sweeps, trials and workers";
    case CommandSection::kResults:
      return "A sweep's results";
    case CommandSection::kBrowser:
      return "In a browser";
  }
  return "Other";
}

bool RegisterCommand(const char* name, CommandSection section, AddCommandFunction add) {
  for (const RegisteredCommand& command : Registry()) {
    if (command.name == name) {
      std::fprintf(stderr, "rung: the command '%s' is registered twice\n", name);  // a build error, not input
      std::abort();
    }
  }
  Registry().push_back({name, section, add});
  return true;
}

void AddRegisteredCommands(CLI::App& app, int* exit_code) {
  std::vector<RegisteredCommand> commands = Registry();
  std::sort(commands.begin(), commands.end(), [](const RegisteredCommand& a, const RegisteredCommand& b) {
    return std::tie(a.section, a.name) < std::tie(b.section, b.name);
  });
  app.formatter(std::make_shared<CommandListFormatter>());
  app.footer("Run `rung COMMAND --help` for a command's options and what it prints.");
  for (const RegisteredCommand& command : commands) {
    command.add(app, exit_code);
    app.get_subcommand(command.name)->group(CommandSectionTitle(command.section));
  }
}

}  // namespace rung::client

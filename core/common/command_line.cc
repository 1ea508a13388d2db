#include "core/common/command_line.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace rung {

std::optional<int> ParseCommandLine(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : kExitBadUsage;
  }
  return std::nullopt;
}

CLI::Validator PositiveNumberCheck(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool number = !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
        if (number && (zero_allowed ? value >= 0 : value > 0)) return "";
        return std::string("must be a number ") + (zero_allowed ? ">= 0" : "> 0") + ", got " + text;
      },
      zero_allowed ? "NUMBER >= 0" : "NUMBER > 0");
}

}  // namespace rung

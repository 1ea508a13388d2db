#include "sweeps/spec/spec_diagnostics.h"

#include <algorithm>
#include <regex>
#include <sstream>

namespace rung {

std::string SpecDiagnostic::ToString() const {
  return location + ": " + (warning ? "warning" : "error") + ": " + (path.empty() ? "" : path + ": ") + message;
}

void SpecDiagnostics::Add(SpecDiagnostic diagnostic) {
  auto key = std::make_tuple(diagnostic.location, diagnostic.path, diagnostic.message, diagnostic.warning);
  if (!seen_.insert(key).second) return;
  diagnostics_.push_back(std::move(diagnostic));
}

void SpecDiagnostics::Error(const std::string& location, const std::string& path, const std::string& message) {
  Add({location, path, message, false});
}

void SpecDiagnostics::Warning(const std::string& location, const std::string& path, const std::string& message) {
  Add({location, path, message, true});
}

bool SpecDiagnostics::has_errors() const {
  return std::any_of(diagnostics_.begin(), diagnostics_.end(), [](const SpecDiagnostic& d) { return !d.warning; });
}

std::vector<SpecDiagnostic> SpecDiagnostics::warnings() const {
  std::vector<SpecDiagnostic> out;
  for (const SpecDiagnostic& d : diagnostics_) {
    if (d.warning) out.push_back(d);
  }
  return out;
}

namespace {
// Orders "file:12:5" by line and column numerically.
std::tuple<std::string, int, int> LocationKey(const std::string& location) {
  size_t second = location.rfind(':');
  size_t first = second == std::string::npos ? std::string::npos : location.rfind(':', second - 1);
  if (first == std::string::npos) return {location, 0, 0};
  try {
    return {location.substr(0, first), std::stoi(location.substr(first + 1, second - first - 1)),
            std::stoi(location.substr(second + 1))};
  } catch (...) {
    return {location, 0, 0};
  }
}
}  // namespace

bool LocationBefore(const std::string& a, const std::string& b) { return LocationKey(a) < LocationKey(b); }

std::vector<SpecDiagnostic> ParseSpecDiagnostics(const std::string& message, const std::string& file_name) {
  static const std::regex kHeader(R"(^\d+ error\(s\) in the sweep spec$)");
  static const std::regex kLocated(R"(^(.*:\d+:\d+): (.*)$)");
  std::vector<SpecDiagnostic> diagnostics;
  std::istringstream lines(message);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || std::regex_match(line, kHeader)) continue;
    SpecDiagnostic diagnostic;
    diagnostic.location = file_name;
    diagnostic.message = line;
    for (const char* severity : {": error: ", ": warning: "}) {
      const size_t at = line.find(severity);
      if (at == std::string::npos) continue;
      diagnostic.location = line.substr(0, at);
      diagnostic.warning = std::string(severity) == ": warning: ";
      diagnostic.message = line.substr(at + std::string(severity).size());
      // ToString writes "path: message"; a path has no spaces.
      const size_t colon = diagnostic.message.find(": ");
      if (colon != std::string::npos && colon > 0 && diagnostic.message.find(' ') > colon) {
        diagnostic.path = diagnostic.message.substr(0, colon);
        diagnostic.message = diagnostic.message.substr(colon + 2);
      }
      break;
    }
    std::smatch located;
    if (diagnostic.location == file_name && diagnostic.message == line && std::regex_match(line, located, kLocated)) {
      diagnostic.location = located[1];
      diagnostic.message = located[2];
    }
    diagnostics.push_back(std::move(diagnostic));
  }
  return diagnostics;
}

Status SpecDiagnostics::ToStatus() const {
  std::vector<SpecDiagnostic> errors;
  for (const SpecDiagnostic& d : diagnostics_) {
    if (!d.warning) errors.push_back(d);
  }
  if (errors.empty()) return Status::Ok();
  std::stable_sort(errors.begin(), errors.end(),
                   [](const SpecDiagnostic& a, const SpecDiagnostic& b) { return LocationBefore(a.location, b.location); });
  std::string message = std::to_string(errors.size()) + " error(s) in the sweep spec";
  for (const SpecDiagnostic& error : errors) message += "\n" + error.ToString();
  return Status::InvalidArgument(message);
}

}  // namespace rung

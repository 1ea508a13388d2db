// sweeps/spec/spec_diagnostics.h
//
// Errors and warnings about a sweep spec, each with the file:line:col it concerns, collected so
// that a user sees all of them at once.
#pragma once

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/common/status.h"

namespace rung {

struct SpecDiagnostic {
  std::string location;  // "spec.yaml:12:5" (or the file alone when unknown)
  std::string path;      // key path inside the spec or the trial config
  std::string message;
  bool warning = false;

  // "spec.yaml:12:5: error: sweep.position.variant[1]: 'ropee' is not one of ..."
  std::string ToString() const;
};

// The diagnostics an INVALID_ARGUMENT message of SpecDiagnostics::ToStatus (or of the YAML parser,
// "file:line:col: message") lists, one per line, for callers that only have the Status; a line of
// another form becomes a diagnostic located at `file_name`.
std::vector<SpecDiagnostic> ParseSpecDiagnostics(const std::string& message, const std::string& file_name);

// Orders "file:line:col" locations by file, then line and column numerically.
bool LocationBefore(const std::string& a, const std::string& b);

class SpecDiagnostics {
 public:
  // Adds a diagnostic unless an identical one was added before (cells repeat errors).
  void Error(const std::string& location, const std::string& path, const std::string& message);
  void Warning(const std::string& location, const std::string& path, const std::string& message);

  bool has_errors() const;
  const std::vector<SpecDiagnostic>& all() const { return diagnostics_; }
  std::vector<SpecDiagnostic> warnings() const;

  // INVALID_ARGUMENT listing every error (one per line, ordered by location), or OK.
  Status ToStatus() const;

 private:
  void Add(SpecDiagnostic diagnostic);
  std::vector<SpecDiagnostic> diagnostics_;
  std::set<std::tuple<std::string, std::string, std::string, bool>> seen_;
};

}  // namespace rung

#include "coordinator/cli/command_support.h"

#include "core/common/executable_folder.h"
#include "core/common/utc_time.h"

#include <cmath>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <ctime>


namespace rung::cli {

void PrintSubmissionWarnings(const rung::v1::SubmitSweepResponse& response) {
  for (const rung::v1::SpecDiagnostic& warning : response.warnings()) {
    std::cerr << warning.location() << ": warning: " << warning.path() << ": " << warning.message() << "\n";
  }
}

std::string ValueText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

std::string UtcTime(const google::protobuf::Timestamp& time) {
  if (time.seconds() == 0 && time.nanos() == 0) return "";
  return UtcText(static_cast<std::time_t>(time.seconds()));
}

std::string Number(double value, int digits) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

std::string ExecutableDirectory() {
  const std::string folder = ExecutableFolder();
  return folder.empty() ? std::string(".") : folder;
}

std::string NumberOrBlank(double value, int digits) { return std::isfinite(value) ? Number(value, digits) : ""; }

std::string ExactNumber(double value) { return std::isfinite(value) ? nlohmann::json(value).dump() : ""; }

nlohmann::json NumberOrNull(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

}  // namespace rung::cli

#include "coordinator/cli/command_support.h"

#include "core/common/executable_folder.h"
#include "core/common/utc_time.h"

#include <cmath>
#include <filesystem>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <google/protobuf/util/json_util.h>

namespace rung::cli {

nlohmann::json ToJson(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;  // a zero count is 0, not a missing key
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return nlohmann::json::parse(text, nullptr, false);
}

CLI::Validator Positive(bool zero_allowed) {
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

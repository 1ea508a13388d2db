#include "coordinator/cli/command_support.h"

#include <cmath>
#include <cstdio>

#include <google/protobuf/util/json_util.h>

namespace rung::cli {

nlohmann::json ToJson(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  return nlohmann::json::parse(text, nullptr, false);
}

std::string Number(double value, int digits) {
  if (std::isnan(value)) return "nan";
  char text[32];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

}  // namespace rung::cli

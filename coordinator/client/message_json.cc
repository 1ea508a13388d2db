// coordinator/client/message_json.cc
#include "coordinator/client/message_json.h"

#include <string>

#include <google/protobuf/util/json_util.h>

#include "proto/config_value.h"

namespace rung::client {
namespace {

// Replaces, in `json` (the proto3 JSON of `message`), every config value by the JSON it stands for.
void WritePlainConfigValues(const google::protobuf::Message& message, nlohmann::json* json) {
  namespace gp = google::protobuf;
  if (!json->is_object()) return;
  const gp::Reflection* reflection = message.GetReflection();
  const gp::Descriptor* descriptor = message.GetDescriptor();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const gp::FieldDescriptor* field = descriptor->field(f);
    if (field->cpp_type() != gp::FieldDescriptor::CPPTYPE_MESSAGE || !json->contains(field->name())) continue;
    nlohmann::json& slot = (*json)[field->name()];
    const gp::Descriptor* type = field->message_type();
    if (type == v1::ConfigEntry::descriptor() && field->is_repeated()) {
      google::protobuf::RepeatedPtrField<v1::ConfigEntry> entries;
      for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
        *entries.Add() = static_cast<const v1::ConfigEntry&>(reflection->GetRepeatedMessage(message, field, i));
      }
      slot = wire::FromConfigEntries(entries);
    } else if (field->is_map() || (field->is_repeated() && !slot.is_array())) {
      continue;  // a map's values are no config values
    } else if (field->is_repeated()) {
      for (int i = 0; i < reflection->FieldSize(message, field) && i < static_cast<int>(slot.size()); ++i) {
        const gp::Message& element = reflection->GetRepeatedMessage(message, field, i);
        if (type == v1::ConfigValue::descriptor()) {
          slot[static_cast<size_t>(i)] = wire::FromConfigValue(static_cast<const v1::ConfigValue&>(element));
        } else {
          WritePlainConfigValues(element, &slot[static_cast<size_t>(i)]);
        }
      }
    } else if (type == v1::ConfigValue::descriptor()) {
      slot = wire::FromConfigValue(static_cast<const v1::ConfigValue&>(reflection->GetMessage(message, field)));
    } else if (type == v1::ConfigObject::descriptor()) {
      slot = wire::FromConfigObject(static_cast<const v1::ConfigObject&>(reflection->GetMessage(message, field)));
    } else {
      WritePlainConfigValues(reflection->GetMessage(message, field), &slot);
    }
  }
}

}  // namespace

nlohmann::json ToJson(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;  // a zero count is 0, not a missing key
  (void)google::protobuf::util::MessageToJsonString(message, &text, options);
  nlohmann::json json = nlohmann::json::parse(text, nullptr, false);
  WritePlainConfigValues(message, &json);
  return json;
}

}  // namespace rung::client

// proto/config_value.cc
#include "proto/config_value.h"

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace rung::wire {

v1::ConfigValue ToConfigValue(const nlohmann::json& value) {
  v1::ConfigValue out;
  switch (value.type()) {
    case nlohmann::json::value_t::boolean:
      out.set_boolean(value.get<bool>());
      break;
    case nlohmann::json::value_t::number_integer:
      out.set_integer(value.get<int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t number = value.get<uint64_t>();
      if (number <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        out.set_integer(static_cast<int64_t>(number));
      } else {
        out.set_number(static_cast<double>(number));
      }
      break;
    }
    case nlohmann::json::value_t::number_float:
      out.set_number(value.get<double>());
      break;
    case nlohmann::json::value_t::string:
      out.set_text(value.get<std::string>());
      break;
    case nlohmann::json::value_t::array: {
      v1::ConfigList* list = out.mutable_list();
      for (const nlohmann::json& element : value) *list->add_values() = ToConfigValue(element);
      break;
    }
    case nlohmann::json::value_t::object:
      ToConfigEntries(value, out.mutable_object()->mutable_entries());
      break;
    default:  // null, discarded, binary
      out.set_null(true);
      break;
  }
  return out;
}

nlohmann::json FromConfigValue(const v1::ConfigValue& value) {
  switch (value.kind_case()) {
    case v1::ConfigValue::kBoolean:
      return value.boolean();
    case v1::ConfigValue::kInteger:
      return value.integer();
    case v1::ConfigValue::kNumber:
      return value.number();
    case v1::ConfigValue::kText:
      return value.text();
    case v1::ConfigValue::kList: {
      nlohmann::json list = nlohmann::json::array();
      for (const v1::ConfigValue& element : value.list().values()) list.push_back(FromConfigValue(element));
      return list;
    }
    case v1::ConfigValue::kObject:
      return FromConfigObject(value.object());
    default:
      return nullptr;
  }
}

bool ConfigValueDeeperThan(const v1::ConfigValue& value, int max_depth) {
  std::vector<std::pair<const v1::ConfigValue*, int>> pending = {{&value, 0}};
  while (!pending.empty()) {
    const auto [current, depth] = pending.back();
    pending.pop_back();
    if (current->kind_case() == v1::ConfigValue::kList) {
      if (depth + 1 > max_depth) return true;
      for (const v1::ConfigValue& element : current->list().values()) pending.emplace_back(&element, depth + 1);
    } else if (current->kind_case() == v1::ConfigValue::kObject) {
      if (depth + 1 > max_depth) return true;
      for (const v1::ConfigEntry& entry : current->object().entries()) pending.emplace_back(&entry.value(), depth + 1);
    }
  }
  return false;
}

void ToConfigEntries(const nlohmann::json& object, google::protobuf::RepeatedPtrField<v1::ConfigEntry>* entries) {
  if (!object.is_object()) return;
  for (auto it = object.begin(); it != object.end(); ++it) {
    v1::ConfigEntry* entry = entries->Add();
    entry->set_key(it.key());
    *entry->mutable_value() = ToConfigValue(it.value());
  }
}

v1::ConfigObject ToConfigObject(const nlohmann::json& object) {
  v1::ConfigObject out;
  ToConfigEntries(object, out.mutable_entries());
  return out;
}

nlohmann::json FromConfigEntries(const google::protobuf::RepeatedPtrField<v1::ConfigEntry>& entries) {
  nlohmann::json object = nlohmann::json::object();
  for (const v1::ConfigEntry& entry : entries) object[entry.key()] = FromConfigValue(entry.value());
  return object;
}

nlohmann::json FromConfigObject(const v1::ConfigObject& object) { return FromConfigEntries(object.entries()); }

}  // namespace rung::wire

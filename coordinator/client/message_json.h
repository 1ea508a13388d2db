// coordinator/client/message_json.h
//
// A coordinator's answer as JSON, for the clients that print or serve it (`rung ... --format json`,
// the dashboard's JSON endpoints).
//
// Thread safety: a pure function.
#pragma once

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

namespace rung::client {

// The message as JSON, with the proto's field names and every field, zeros and empty strings
// included (int64 fields are strings, as proto3's JSON mapping writes them); config values
// (ConfigValue, ConfigObject, repeated ConfigEntry, wherever they are nested) are written as the JSON
// they stand for (proto/config_value.h): "assignments": {"position.variant": "rope", "seed": 0}.
nlohmann::json ToJson(const google::protobuf::Message& message);

}  // namespace rung::client

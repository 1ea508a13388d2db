// proto/config_value.h
//
// JSON values of configs to and from their wire form (proto/rung.proto, ConfigValue, ConfigObject,
// ConfigEntry): the one codec for a cell's axis values, a baseline selector, a results group's
// values, a filter's value and a resolved trial config. Where the data is stored as JSON (the
// coordinator's store), it is converted here once, on its way to the wire; clients turn the typed
// values back into JSON to print or write them.
//
// Mapping: null <-> null, boolean <-> boolean, an integer within int64 <-> integer, any other
// number <-> number (an unsigned integer beyond int64 becomes a number), string <-> text, array <->
// list, object <-> object (keys in the JSON object's order, sorted for nlohmann::json). Going to
// JSON and back gives the same JSON value; its dump() is the same text as the stored document's.
//
// Thread safety: pure functions.
#pragma once

#include <google/protobuf/repeated_ptr_field.h>
#include <nlohmann/json.hpp>

#include "proto/rung.pb.h"

namespace rung::wire {

v1::ConfigValue ToConfigValue(const nlohmann::json& value);
nlohmann::json FromConfigValue(const v1::ConfigValue& value);

// An object's keys as entries (a non-object, null included, gives none).
void ToConfigEntries(const nlohmann::json& object, google::protobuf::RepeatedPtrField<v1::ConfigEntry>* entries);
v1::ConfigObject ToConfigObject(const nlohmann::json& object);

// Whether `value` nests lists and objects deeper than `max_depth` levels (a list or an object is one;
// records::JsonDeeperThan's count for the JSON it stands for). Without recursion: a message built in
// memory may nest deeper than any parser would let it.
bool ConfigValueDeeperThan(const v1::ConfigValue& value, int max_depth);

// Entries as a JSON object (a key repeated: the last one wins).
nlohmann::json FromConfigEntries(const google::protobuf::RepeatedPtrField<v1::ConfigEntry>& entries);
nlohmann::json FromConfigObject(const v1::ConfigObject& object);

}  // namespace rung::wire

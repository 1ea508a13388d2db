// core/hf/json_keys.h
//
// The text of a Hugging Face JSON file parsed (ParseJson), and the keys of one of its JSON objects
// (config.json, tokenizer.json), read with their
// fallbacks and range checks, every error INVALID_ARGUMENT naming the file (and where in it) and the
// key: "m/config.json: key 'rope_theta': -1 is not in [1, 1e300]". `source` is what messages start with
// ("m/config.json", or "m/tokenizer.json: in 'model'").
//
// Thread safety: reads only; the object must outlive it.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.h"

namespace rung::hf {

// Parses a whole JSON file's text; `source` starts its errors, INVALID_ARGUMENT with the byte where
// the text stops being JSON ("m/config.json: byte 12: not valid JSON: ..."), or with none for a number
// past a double's range (nlohmann's out_of_range, which names no byte).
inline StatusOr<nlohmann::json> ParseJson(std::string_view text, const std::string& source) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& error) {
    return Status::InvalidArgument(source + ": byte " + std::to_string(error.byte > 0 ? error.byte - 1 : 0) +
                                   ": not valid JSON: " + error.what());
  } catch (const nlohmann::json::exception& error) {
    return Status::InvalidArgument(source + ": not valid JSON: " + error.what());
  }
}

class JsonKeys {
 public:
  JsonKeys(const nlohmann::json& object, std::string source) : object_(object), source_(std::move(source)) {}

  Status Error(const std::string& key, const std::string& what) const {
    return Status::InvalidArgument(source_ + ": key '" + key + "': " + what);
  }

  // A positive integer, or `fallback` when the key is absent or null.
  StatusOr<int64_t> Positive(const std::string& key, int64_t fallback) const {
    const auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return fallback;
    if (!it->is_number_integer() || it->get<int64_t>() <= 0 || it->get<int64_t>() > (int64_t{1} << 40)) {
      return Error(key, it->dump() + " is not a positive integer");
    }
    return it->get<int64_t>();
  }

  StatusOr<double> Number(const std::string& key, double fallback, double low, double high) const {
    const auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return fallback;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < low || it->get<double>() > high) {
      return Error(key, it->dump() + " is not a number in [" + Text(low) + ", " + Text(high) + "]");
    }
    return it->get<double>();
  }

  StatusOr<std::optional<double>> OptionalNumber(const std::string& key, double low, double high) const {
    if (!object_.contains(key) || object_.at(key).is_null()) return std::optional<double>();
    RUNG_ASSIGN_OR_RETURN(double value, Number(key, 0, low, high));
    return std::optional<double>(value);
  }

  StatusOr<bool> Flag(const std::string& key, bool fallback) const {
    const auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) return Error(key, it->dump() + " is not true or false");
    return it->get<bool>();
  }

  StatusOr<std::string> String(const std::string& key, const std::string& fallback) const {
    const auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return fallback;
    if (!it->is_string()) return Error(key, it->dump() + " is not a string");
    return it->get<std::string>();
  }

 private:
  static std::string Text(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  }
  const nlohmann::json& object_;
  std::string source_;
};

}  // namespace rung::hf

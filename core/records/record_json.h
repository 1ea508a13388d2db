// core/records/record_json.h
//
// The JSON codec of the records' field types (trainer_records.h, diagnostics_payloads.h), for code that
// holds JSON itself: the trainer's lines are written with it, the store keeps the diagnostics payloads
// in its form, and `rung diag --format json` prints them. The mapping is trainer_records.h's "JSON
// form": each field a key of its name, an unset optional and a false bool left out, a non-finite
// double written as null and read back as NaN, null for an array or an object read as its default
// (empty, every field's default), a JsonText field
// written as its document; reading ignores keys it does not know, leaves missing ones at their
// defaults, and refuses a key of the wrong JSON type naming its path ("layers[0].heads").
//
// Example:
//   nlohmann::json row = records::DocumentJson(attention.pooled);
//   records::AttentionDiagnostics attention;
//   Status read = records::DecodeDocument(stored_text, &attention);
//
// Thread safety: pure functions.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/records/trainer_records.h"

namespace rung::records {
namespace internal {

template <class Struct>
nlohmann::json StructToJson(const Struct& value);

template <class Value>
nlohmann::json ValueToJson(const Value& value) {
  if constexpr (std::is_same_v<Value, JsonText>) {
    if (value.text.empty()) return nlohmann::json(nullptr);
    nlohmann::json document = nlohmann::json::parse(value.text, nullptr, /*allow_exceptions=*/false);
    return document.is_discarded() ? nlohmann::json(value.text) : document;  // not JSON after all: kept as a string
  } else if constexpr (std::is_same_v<Value, double>) {
    return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(nullptr);
  } else if constexpr (IsVector<Value>::value) {
    nlohmann::json array = nlohmann::json::array();
    for (const auto& element : value) array.push_back(ValueToJson(element));
    return array;
  } else if constexpr (HasFields<Value>::value) {
    return StructToJson(value);
  } else {
    return nlohmann::json(value);
  }
}

template <class Struct>
nlohmann::json StructToJson(const Struct& value) {
  nlohmann::json object = nlohmann::json::object();
  Struct::Fields(value, [&](const char* name, const auto& field) {
    using Field = std::decay_t<decltype(field)>;
    if constexpr (IsOptional<Field>::value) {
      if (field) object[name] = ValueToJson(*field);
    } else if constexpr (std::is_same_v<Field, bool>) {
      if (field) object[name] = true;
    } else if constexpr (std::is_same_v<Field, JsonText>) {
      if (!field.empty()) object[name] = ValueToJson(field);
    } else {
      object[name] = ValueToJson(field);
    }
  });
  return object;
}

// Reads `value` from `in`; an error names `path`.
template <class Struct>
Status StructFromJson(const nlohmann::json& in, const std::string& path, Struct* out);

template <class Value>
Status ValueFromJson(const nlohmann::json& in, const std::string& path, Value* out) {
  auto wrong = [&](const char* expected) {
    return Status::InvalidArgument("field '" + path + "' must be " + expected + ", not " + in.type_name());
  };
  if constexpr (std::is_same_v<Value, JsonText>) {
    out->text = in.is_null() ? std::string() : in.dump();
  } else if constexpr (std::is_same_v<Value, double>) {
    if (in.is_null()) {
      *out = std::numeric_limits<double>::quiet_NaN();
    } else if (in.is_number()) {
      *out = in.get<double>();
    } else {
      return wrong("a number");
    }
  } else if constexpr (std::is_same_v<Value, int64_t>) {
    if (in.is_number_unsigned() && in.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return wrong("an integer within int64");  // would read back negative
    } else if (in.is_number_integer()) {
      *out = in.get<int64_t>();
    } else if (in.is_number_float() && std::nearbyint(in.get<double>()) == in.get<double>() &&
               std::fabs(in.get<double>()) < 9.0e15) {
      *out = static_cast<int64_t>(in.get<double>());
    } else {
      return wrong("an integer");
    }
  } else if constexpr (std::is_same_v<Value, bool>) {
    if (!in.is_boolean()) return wrong("true or false");
    *out = in.get<bool>();
  } else if constexpr (std::is_same_v<Value, std::string>) {
    if (!in.is_string()) return wrong("a string");
    *out = in.get<std::string>();
  } else if constexpr (IsOptional<Value>::value) {
    if (in.is_null() && !std::is_same_v<typename Value::value_type, double>) {
      out->reset();
      return Status::Ok();
    }
    typename Value::value_type inner{};
    RUNG_RETURN_IF_ERROR(ValueFromJson(in, path, &inner));
    *out = std::move(inner);
  } else if constexpr (IsVector<Value>::value) {
    if (in.is_null()) {  // JSON's "none" for a list
      out->clear();
      return Status::Ok();
    }
    if (!in.is_array()) return wrong("an array");
    out->clear();
    out->reserve(in.size());
    for (size_t index = 0; index < in.size(); ++index) {
      typename Value::value_type element{};
      RUNG_RETURN_IF_ERROR(ValueFromJson(in[index], path + "[" + std::to_string(index) + "]", &element));
      out->push_back(std::move(element));
    }
  } else {
    static_assert(HasFields<Value>::value, "a record field of a type the codec does not know");
    if (in.is_null()) return Status::Ok();  // JSON's "none" for an object: its defaults
    if (!in.is_object()) return wrong("an object");
    return StructFromJson(in, path, out);
  }
  return Status::Ok();
}

template <class Struct>
Status StructFromJson(const nlohmann::json& in, const std::string& path, Struct* out) {
  Status status;
  Struct::Fields(*out, [&](const char* name, auto& field) {
    if (!status.ok()) return;
    const auto found = in.find(name);
    if (found == in.end()) return;  // a missing field keeps its default
    status = ValueFromJson(*found, path.empty() ? std::string(name) : path + "." + name, &field);
  });
  return status;
}

}  // namespace internal

// The JSON of a value of the records' field types (a struct with Fields(), a vector of them, ...).
template <class Value>
nlohmann::json DocumentJson(const Value& value) {
  return internal::ValueToJson(value);
}

// A tensor measured at `step`, as the store keeps a final record's tensors and `rung diag --format json`
// prints them: {"step", "shape", "values"} (the name is the diagnostic's).
inline nlohmann::json StepTensorJson(int64_t step, const Tensor& tensor) {
  return {{"step", step}, {"shape", tensor.shape}, {"values", DocumentJson(tensor.values)}};
}

// DocumentJson's text, as the store keeps it.
template <class Value>
std::string EncodeDocument(const Value& value) {
  return DocumentJson(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Reads `document` as `value`, from its defaults; INVALID_ARGUMENT naming the field that is of the
// wrong type.
template <class Value>
Status DocumentFromJson(const nlohmann::json& document, Value* value) {
  *value = Value{};
  return internal::ValueFromJson(document, "", value);
}

// Reads `text` (a JSON document nested at most kMaxJsonTextDepth levels) as `value`, from its defaults;
// INVALID_ARGUMENT naming the field that is of the wrong type.
template <class Value>
Status DecodeDocument(std::string_view text, Value* value) {
  if (JsonDeeperThan(text, kMaxJsonTextDepth)) {
    return Status::InvalidArgument("the document nests deeper than " + std::to_string(kMaxJsonTextDepth) + " levels");
  }
  nlohmann::json document = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Status::InvalidArgument("the document is not JSON");
  return DocumentFromJson(document, value);
}

}  // namespace rung::records

// core/records/trainer_records.cc
#include "core/records/trainer_records.h"

#include <cmath>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

namespace rung::records {
namespace {

using nlohmann::json;

using records::internal::HasFields;
using records::internal::IsOptional;
using records::internal::IsVector;

template <class Struct>
json StructToJson(const Struct& value);

template <class Value>
json ValueToJson(const Value& value) {
  if constexpr (std::is_same_v<Value, JsonText>) {
    if (value.text.empty()) return json(nullptr);
    json document = json::parse(value.text, nullptr, /*allow_exceptions=*/false);
    return document.is_discarded() ? json(value.text) : document;  // not JSON after all: kept as a string
  } else if constexpr (std::is_same_v<Value, double>) {
    return std::isfinite(value) ? json(value) : json(nullptr);
  } else if constexpr (IsVector<Value>::value) {
    json array = json::array();
    for (const auto& element : value) array.push_back(ValueToJson(element));
    return array;
  } else if constexpr (HasFields<Value>::value) {
    return StructToJson(value);
  } else {
    return json(value);
  }
}

template <class Struct>
json StructToJson(const Struct& value) {
  json object = json::object();
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
Status StructFromJson(const json& in, const std::string& path, Struct* out);

template <class Value>
Status ValueFromJson(const json& in, const std::string& path, Value* out) {
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
    if (!in.is_object()) return wrong("an object");
    return StructFromJson(in, path, out);
  }
  return Status::Ok();
}

template <class Struct>
Status StructFromJson(const json& in, const std::string& path, Struct* out) {
  Status status;
  Struct::Fields(*out, [&](const char* name, auto& field) {
    if (!status.ok()) return;
    const auto found = in.find(name);
    if (found == in.end()) return;  // a missing field keeps its default
    status = ValueFromJson(*found, path.empty() ? std::string(name) : path + "." + name, &field);
  });
  return status;
}

// Decodes a record of the alternative whose kType is `type`.
template <size_t Index = 0>
StatusOr<TrainerRecord> DecodeAs(std::string_view type, const json& object) {
  if constexpr (Index == std::variant_size_v<TrainerRecord>) {
    return Status::InvalidArgument("unknown record type '" + std::string(type) + "'");
  } else {
    using Record = std::variant_alternative_t<Index, TrainerRecord>;
    if (type != Record::kType) return DecodeAs<Index + 1>(type, object);
    Record record;
    Status status = StructFromJson(object, "", &record);
    if (!status.ok()) return status.WithContext(std::string(type) + " record");  // field errors are INVALID_ARGUMENT
    return TrainerRecord(std::move(record));
  }
}

template <class Record>
std::vector<std::string> NumericFieldNames() {
  std::vector<std::string> names;
  Record record;
  Record::Fields(record, [&](const char* name, const auto& value) {
    using Value = std::decay_t<decltype(value)>;
    if (std::string_view(name) == "step") return;
    if constexpr (std::is_same_v<Value, int64_t> || std::is_same_v<Value, double> ||
                  std::is_same_v<Value, std::optional<double>> || std::is_same_v<Value, std::optional<int64_t>>) {
      names.emplace_back(name);
    }
  });
  return names;
}

}  // namespace

std::string_view RecordType(const TrainerRecord& record) {
  return std::visit([](const auto& alternative) { return std::decay_t<decltype(alternative)>::kType; }, record);
}

std::string EncodeRecord(const TrainerRecord& record) {
  return std::visit(
      [](const auto& alternative) {
        json object = StructToJson(alternative);
        object["type"] = std::decay_t<decltype(alternative)>::kType;
        return object.dump(-1, ' ', false, json::error_handler_t::replace);
      },
      record);
}

bool JsonDeeperThan(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

StatusOr<TrainerRecord> DecodeRecord(std::string_view line) {
  if (JsonDeeperThan(line, kMaxJsonTextDepth + 1)) {
    return Status::InvalidArgument("not a trainer record: the line nests deeper than " +
                                   std::to_string(kMaxJsonTextDepth + 1) + " levels");
  }
  json object = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) return Status::InvalidArgument("not a trainer record: the line is not a JSON object");
  const auto type = object.find("type");
  if (type == object.end() || !type->is_string()) {
    return Status::InvalidArgument("not a trainer record: no string \"type\"");
  }
  return DecodeAs(type->get_ref<const std::string&>(), object);
}

std::string ExtrapolationSummaryName(std::string_view metric, const ExtrapolationResult& result) {
  std::string name = std::string(metric) + "_" + std::to_string(result.multiple) + "x";
  if (!result.method.empty() && result.method != "none") name += "_" + result.method;
  return name;
}

std::vector<std::string> StepMetricNames() { return NumericFieldNames<StepRecord>(); }
std::vector<std::string> FinalSummaryNames() { return NumericFieldNames<FinalRecord>(); }

}  // namespace rung::records

// core/records/trainer_records.cc
#include "core/records/trainer_records.h"

#include "core/records/record_json.h"

#include <cmath>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

namespace rung::records {
namespace {

using nlohmann::json;
using records::internal::StructFromJson;
using records::internal::StructToJson;

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

std::string LengthSuffixedName(std::string_view metric, int64_t multiple, const std::string& method) {
  std::string name = std::string(metric) + "_" + std::to_string(multiple) + "x";
  if (!method.empty() && method != "none") name += "_" + method;
  return name;
}

std::string ExtrapolationSummaryName(std::string_view metric, const ExtrapolationResult& result) {
  return LengthSuffixedName(metric, result.multiple, result.method);
}

std::string AttentionDiagnosticName(const AttentionDiagnostics& attention) {
  if (!attention.multiple) return "attention";
  return LengthSuffixedName("attention", *attention.multiple, attention.method.value_or("none"));
}

bool IsAttentionDiagnosticName(std::string_view name) {
  if (name == "attention") return true;
  constexpr std::string_view kPrefix = "attention_";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  // attention_<digits>x, then nothing or _<method>.
  size_t at = kPrefix.size();
  const size_t digits = at;
  while (at < name.size() && name[at] >= '0' && name[at] <= '9') ++at;
  if (at == digits || at >= name.size() || name[at] != 'x') return false;
  ++at;
  return at == name.size() || (name[at] == '_' && at + 1 < name.size());
}

std::vector<std::pair<std::string, double>> ProbeSummaries(const std::vector<ProbeResult>& cells) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<int64_t, int64_t>> pooled;  // name -> (correct, instances)
  auto add = [&](const std::string& name, const ProbeResult& cell) {
    auto [entry, inserted] = pooled.try_emplace(name, 0, 0);
    if (inserted) order.push_back(name);
    entry->second.first += cell.correct;
    entry->second.second += cell.instances;
  };
  for (const ProbeResult& cell : cells) {
    const std::string suffix = cell.method.empty() || cell.method == "none" ? "" : "_" + cell.method;
    add(cell.probe + "_accuracy" + suffix, cell);
    add(cell.probe + "_accuracy_" + (cell.elements ? "n" + std::to_string(*cell.elements) : std::to_string(cell.length)) + suffix,
        cell);
  }
  std::vector<std::pair<std::string, double>> summaries;
  for (const std::string& name : order) {
    const auto& [correct, instances] = pooled.at(name);
    summaries.emplace_back(name, instances > 0 ? static_cast<double>(correct) / static_cast<double>(instances) : 0.0);
  }
  return summaries;
}

std::vector<std::string> StepMetricNames() { return NumericFieldNames<StepRecord>(); }
std::vector<std::string> FinalSummaryNames() { return NumericFieldNames<FinalRecord>(); }

}  // namespace rung::records

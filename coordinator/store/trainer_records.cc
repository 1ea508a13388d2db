#include "coordinator/store/trainer_records.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace rung {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A JSON number, or NaN for null (a non-finite value written by nlohmann).
double NumberOrNan(const nlohmann::json& value) { return value.is_number() ? value.get<double>() : kNaN; }

// {"name", "shape", "values"} as the trainer writes a tensor; nullopt for anything else.
std::optional<NamedTensor> ParseTensorRecord(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("name") || !record["name"].is_string()) return std::nullopt;
  const nlohmann::json& values = record.contains("values") ? record["values"] : nlohmann::json();
  if (!values.is_array()) return std::nullopt;
  NamedTensor tensor;
  tensor.name = record["name"].get<std::string>();
  if (record.contains("shape") && record["shape"].is_array()) {
    for (const nlohmann::json& extent : record["shape"]) {
      if (!extent.is_number_integer()) return std::nullopt;
      tensor.shape.push_back(extent.get<int64_t>());
    }
  } else {
    tensor.shape = {static_cast<int64_t>(values.size())};
  }
  for (const nlohmann::json& value : values) tensor.values.push_back(NumberOrNan(value));
  return tensor;
}

NamedTensor Vector(const std::string& name, const nlohmann::json& values) {
  NamedTensor tensor;
  tensor.name = name;
  tensor.shape = {static_cast<int64_t>(values.size())};
  for (const nlohmann::json& value : values) tensor.values.push_back(NumberOrNan(value));
  return tensor;
}

void AddStepRecord(const nlohmann::json& record, std::vector<MetricPoint>* points) {
  if (!record.contains("step") || !record["step"].is_number_integer()) return;
  MetricPoint position;
  position.step = record["step"].get<int64_t>();
  if (record.contains("tokens") && record["tokens"].is_number()) position.tokens = record["tokens"].get<int64_t>();
  if (record.contains("flops") && record["flops"].is_number()) position.flops = record["flops"].get<double>();
  if (record.contains("elapsed_sec") && record["elapsed_sec"].is_number()) {
    position.wall_time = record["elapsed_sec"].get<double>();
  }
  for (auto field = record.begin(); field != record.end(); ++field) {
    if (field.key() == "step" || !field.value().is_number()) continue;
    MetricPoint point = position;
    point.name = field.key();
    point.value = field.value().get<double>();
    points->push_back(std::move(point));
  }
}

// Validation beyond the training length as summaries that `rung results` and fits can name:
// val_loss_<m>x (no extension) and val_loss_<m>x_<method>, likewise val_accuracy.
void AddExtrapolationSummaries(const nlohmann::json& table, int64_t step, TrialResults* results) {
  if (!table.is_array()) return;
  for (const nlohmann::json& entry : table) {
    if (!entry.is_object() || !entry.contains("multiple") || !entry["multiple"].is_number_integer()) continue;
    const std::string method = entry.value("method", std::string("none"));
    const std::string suffix =
        "_" + std::to_string(entry["multiple"].get<int64_t>()) + "x" + (method == "none" ? "" : "_" + method);
    for (const char* name : {"val_loss", "val_accuracy"}) {
      if (entry.contains(name) && entry[name].is_number()) {
        results->summaries.push_back({std::string(name) + suffix, entry[name].get<double>(), step});
      }
    }
  }
}

void AddFinalRecord(const nlohmann::json& record, TrialResults* results) {
  const int64_t step =
      record.contains("step") && record["step"].is_number_integer() ? record["step"].get<int64_t>() : 0;
  for (auto field = record.begin(); field != record.end(); ++field) {
    if (field.key() == "step" || !field.value().is_number()) continue;
    results->summaries.push_back({field.key(), field.value().get<double>(), step});
  }
  if (record.contains("positional_parameters") && record["positional_parameters"].is_array()) {
    for (const nlohmann::json& entry : record["positional_parameters"]) {
      std::optional<NamedTensor> tensor = ParseTensorRecord(entry);
      if (!tensor) continue;
      std::vector<LearnedParamValue> elements = TensorToElements(step, *tensor);
      results->learned_params.insert(results->learned_params.end(), elements.begin(), elements.end());
    }
  }
  if (record.contains("frequencies") && record["frequencies"].is_array()) {
    for (const nlohmann::json& entry : record["frequencies"]) {
      std::optional<NamedTensor> tensor = ParseTensorRecord(entry);
      if (!tensor) continue;
      tensor->name = "frequencies." + tensor->name;
      results->diagnostics.push_back({tensor->name, TensorToJson({step, *tensor})});
    }
  }
  if (record.contains("val_loss_per_position") && record["val_loss_per_position"].is_array()) {
    results->diagnostics.push_back(
        {"val_loss_per_position", TensorToJson({step, Vector("val_loss_per_position", record["val_loss_per_position"])})});
  }
  if (record.contains("extrapolation") && !record["extrapolation"].is_null()) {
    results->diagnostics.push_back({"extrapolation", record["extrapolation"]});
    AddExtrapolationSummaries(record["extrapolation"], step, results);
  }
}

}  // namespace

TrainerRecords ParseTrainerRecords(const std::vector<std::string>& lines) {
  TrainerRecords parsed;
  for (const std::string& line : lines) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!record.is_object() || !record.contains("type") || !record["type"].is_string()) continue;
    const std::string type = record["type"].get<std::string>();
    if (type == "step") {
      AddStepRecord(record, &parsed.points);
    } else if (type == "provenance") {
      parsed.provenance = std::move(record);
    } else if (type == "final") {
      AddFinalRecord(record, &parsed.results);
    } else if (type == "diagnostics") {
      record.erase("type");
      parsed.results.diagnostics.push_back({"attention", std::move(record)});
    }
  }
  return parsed;
}

std::vector<LearnedParamValue> TensorToElements(int64_t step, const NamedTensor& tensor) {
  const size_t rank = tensor.shape.size();
  int64_t inner = 1;  // elements per (i0, i1) for rank >= 3
  for (size_t dim = 2; dim < rank; ++dim) inner *= tensor.shape[dim];
  const int64_t heads = rank >= 2 ? tensor.shape[1] : 1;
  std::vector<LearnedParamValue> elements;
  elements.reserve(tensor.values.size());
  for (size_t flat = 0; flat < tensor.values.size(); ++flat) {
    LearnedParamValue element;
    element.step = step;
    element.name = tensor.name;
    element.value = tensor.values[flat];
    element.shape = tensor.shape;
    const int64_t position = static_cast<int64_t>(flat);
    if (rank <= 1) {
      element.index = position;
    } else if (rank == 2) {
      element.layer = position / heads;
      element.head = position % heads;
    } else {
      element.layer = position / (heads * inner);
      element.head = (position / inner) % heads;
      element.index = position % inner;
    }
    elements.push_back(std::move(element));
  }
  return elements;
}

std::vector<StepTensor> TensorsFromElements(const std::vector<LearnedParamValue>& elements) {
  std::map<std::pair<int64_t, std::string>, size_t> position;  // (step, name) -> index in `groups`
  std::vector<std::vector<const LearnedParamValue*>> groups;
  for (const LearnedParamValue& element : elements) {
    auto [found, inserted] = position.try_emplace({element.step, element.name}, groups.size());
    if (inserted) groups.emplace_back();
    groups[found->second].push_back(&element);
  }
  std::vector<StepTensor> tensors;
  tensors.reserve(groups.size());
  for (std::vector<const LearnedParamValue*>& group : groups) {
    std::stable_sort(group.begin(), group.end(), [](const LearnedParamValue* a, const LearnedParamValue* b) {
      return std::tie(a->layer, a->head, a->index) < std::tie(b->layer, b->head, b->index);
    });
    StepTensor tensor;
    tensor.step = group.front()->step;
    tensor.tensor.name = group.front()->name;
    for (const LearnedParamValue* element : group) tensor.tensor.values.push_back(element->value);
    tensor.tensor.shape = group.front()->shape.value_or(std::vector<int64_t>{static_cast<int64_t>(group.size())});
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

nlohmann::json TensorToJson(const StepTensor& tensor) {
  nlohmann::json values = nlohmann::json::array();
  for (double value : tensor.tensor.values) values.push_back(value);  // NaN is written as null
  return {{"step", tensor.step}, {"shape", tensor.tensor.shape}, {"values", values}};
}

std::optional<StepTensor> TensorFromJson(const std::string& name, const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("shape") || !json.contains("values")) return std::nullopt;
  nlohmann::json record = json;
  record["name"] = name;
  std::optional<NamedTensor> tensor = ParseTensorRecord(record);
  if (!tensor) return std::nullopt;
  StepTensor result;
  result.step = json.contains("step") && json["step"].is_number_integer() ? json["step"].get<int64_t>() : 0;
  result.tensor = std::move(*tensor);
  return result;
}

}  // namespace rung

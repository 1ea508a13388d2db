// worker/agent/trainer_records.cc
#include "worker/agent/trainer_records.h"

#include <limits>

namespace rung::agent {
namespace {

using nlohmann::json;

RecordType TypeOf(const json& record) {
  const auto type = record.find("type");
  if (type == record.end() || !type->is_string()) return RecordType::kOther;
  const std::string& name = type->get_ref<const std::string&>();
  if (name == "provenance") return RecordType::kProvenance;
  if (name == "step") return RecordType::kStep;
  if (name == "checkpoint") return RecordType::kCheckpoint;
  if (name == "diagnostics") return RecordType::kDiagnostics;
  if (name == "final") return RecordType::kFinal;
  if (name == "preempted") return RecordType::kPreempted;
  if (name == "error") return RecordType::kError;
  return RecordType::kOther;
}

std::optional<int64_t> IntegerField(const json& record, const char* name) {
  const auto field = record.find(name);
  if (field == record.end() || !field->is_number_integer()) return std::nullopt;
  return field->get<int64_t>();
}

double NumberOr(const json& record, const char* name, double fallback) {
  const auto field = record.find(name);
  return field != record.end() && field->is_number() ? field->get<double>() : fallback;
}

// A Tensor from {"name", "shape", "values"}; nullopt when the object is not one.
std::optional<v1::Tensor> TensorFrom(const json& object, const std::string& name) {
  if (!object.is_object() || !object.contains("values") || !object["values"].is_array()) return std::nullopt;
  v1::Tensor tensor;
  tensor.set_name(name);
  if (const auto shape = object.find("shape"); shape != object.end() && shape->is_array()) {
    for (const json& extent : *shape) {
      if (extent.is_number_integer()) tensor.add_shape(extent.get<int64_t>());
    }
  }
  for (const json& value : object["values"]) {
    tensor.add_values(value.is_number() ? value.get<double>() : std::numeric_limits<double>::quiet_NaN());
  }
  return tensor;
}

// A 1-D tensor of a plain array of numbers.
std::optional<v1::Tensor> VectorTensor(const json& values, const std::string& name) {
  if (!values.is_array()) return std::nullopt;
  return TensorFrom(json{{"shape", {values.size()}}, {"values", values}}, name);
}

}  // namespace

TrainerRecord ParseTrainerRecord(std::string_view line) {
  TrainerRecord record;
  json parsed = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return record;
  record.type = TypeOf(parsed);
  record.json = std::move(parsed);
  return record;
}

std::vector<v1::MetricRow> StepMetricRows(const json& step_record) {
  std::vector<v1::MetricRow> rows;
  const std::optional<int64_t> step = IntegerField(step_record, "step");
  if (!step) return rows;
  const int64_t tokens = IntegerField(step_record, "tokens").value_or(0);
  const double flops = NumberOr(step_record, "flops", 0.0);
  const double wall_time = NumberOr(step_record, "elapsed_sec", 0.0);
  for (const auto& [name, value] : step_record.items()) {
    if (name == "step" || name == "type") continue;
    if (!value.is_number() && !value.is_null()) continue;  // strings, booleans, arrays: not metrics
    v1::MetricRow row;
    row.set_step(*step);
    row.set_name(name);
    row.set_value(value.is_number() ? value.get<double>() : std::numeric_limits<double>::quiet_NaN());
    row.set_tokens(tokens);
    row.set_flops(flops);
    row.set_wall_time(wall_time);
    rows.push_back(std::move(row));
  }
  return rows;
}

const TrainerRecord& AttemptRecords::Add(std::string_view line) {
  last_ = ParseTrainerRecord(line);
  const json& record = last_.json;
  if (last_.type == RecordType::kOther && record.is_null()) return last_;
  if (std::optional<int64_t> step = IntegerField(record, "step"); step && *step > latest_step_) latest_step_ = *step;
  switch (last_.type) {
    case RecordType::kFinal: final_ = record; break;
    case RecordType::kError:
      error_reason_ = record.contains("reason") && record["reason"].is_string() ? record["reason"].get<std::string>()
                                                                                 : record.dump();
      break;
    case RecordType::kCheckpoint:
    case RecordType::kPreempted: {
      const char* key = last_.type == RecordType::kCheckpoint ? "path" : "checkpoint";
      if (record.contains(key) && record[key].is_string()) {
        v1::CheckpointLocation location;
        location.set_latest_path(record[key].get<std::string>());
        location.set_step(IntegerField(record, "step").value_or(0));
        checkpoint_ = location;
      }
      break;
    }
    default: break;
  }
  return last_;
}

void AttemptRecords::FillCompleteRequest(const std::string& checkpoint_dir, v1::CompleteRequest* request) const {
  v1::CheckpointLocation* checkpoint = request->mutable_checkpoint();
  if (checkpoint_) *checkpoint = *checkpoint_;
  checkpoint->set_dir(checkpoint_dir);
  if (!final_) return;
  const json& record = *final_;
  auto& metrics = *request->mutable_final_metrics();
  for (const auto& [name, value] : record.items()) {
    // "step" says where the record was written (the summaries keep it as their step), not a result.
    if (value.is_number() && name != "step") metrics[name] = value.get<double>();
  }
  if (const auto parameters = record.find("positional_parameters");
      parameters != record.end() && parameters->is_array()) {
    for (const json& parameter : *parameters) {
      if (!parameter.contains("name") || !parameter["name"].is_string()) continue;
      if (auto tensor = TensorFrom(parameter, parameter["name"].get<std::string>())) {
        *request->add_learned_parameters() = std::move(*tensor);
      }
    }
  }
  if (const auto frequencies = record.find("frequencies"); frequencies != record.end() && frequencies->is_array()) {
    for (const json& layer : *frequencies) {
      if (!layer.contains("name") || !layer["name"].is_string()) continue;
      if (auto tensor = TensorFrom(layer, "frequencies." + layer["name"].get<std::string>())) {
        *request->add_diagnostics() = std::move(*tensor);
      }
    }
  }
  if (const auto per_position = record.find("val_loss_per_position"); per_position != record.end()) {
    if (auto tensor = VectorTensor(*per_position, "val_loss_per_position")) *request->add_diagnostics() = std::move(*tensor);
  }
  if (const auto extrapolation = record.find("extrapolation");
      extrapolation != record.end() && extrapolation->is_array()) {
    for (const json& point : *extrapolation) {
      if (!point.is_object() || !point.contains("multiple") || !point.contains("method")) continue;
      const std::string prefix = "extrapolation.x" + point["multiple"].dump() + "." +
                                 (point["method"].is_string() ? point["method"].get<std::string>() : point["method"].dump());
      if (point.contains("val_loss") && point["val_loss"].is_number()) {
        metrics[prefix + ".val_loss"] = point["val_loss"].get<double>();
      }
      if (point.contains("val_loss_per_position")) {
        if (auto tensor = VectorTensor(point["val_loss_per_position"], prefix + ".val_loss_per_position")) {
          *request->add_diagnostics() = std::move(*tensor);
        }
      }
    }
  }
}

}  // namespace rung::agent

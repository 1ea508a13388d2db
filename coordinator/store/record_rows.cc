// coordinator/store/record_rows.cc
#include "coordinator/store/record_rows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <variant>

#include "core/records/record_json.h"

namespace rung {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

records::Tensor Vector(const std::string& name, const std::vector<double>& values) {
  return records::Tensor{name, {static_cast<int64_t>(values.size())}, values};
}

void AddStep(const records::StepRecord& record, std::vector<MetricPoint>* points) {
  MetricPoint position;
  position.step = record.step;
  position.tokens = record.tokens;
  position.flops = record.flops;
  position.wall_time = record.elapsed_sec;
  position.replayed = record.replayed;
  records::ForEachStepMetric(record, [&](const char* name, double value, bool evaluation) {
    MetricPoint point = position;
    point.name = name;
    point.value = value;
    point.evaluation = evaluation;
    points->push_back(std::move(point));
  });
}

void AddFinal(const records::FinalRecord& record, TrialResults* results) {
  const int64_t step = record.step;
  records::ForEachNumericField(record, [&](const char* name, double value) {
    results->summaries.push_back({name, value, step});
  });
  for (const records::Tensor& tensor : record.positional_parameters) {
    std::vector<LearnedParamValue> elements = TensorToElements(step, tensor);
    results->learned_params.insert(results->learned_params.end(), elements.begin(), elements.end());
  }
  for (const records::Tensor& layer : record.frequencies) {
    records::Tensor tensor = layer;
    tensor.name = "frequencies." + layer.name;
    results->diagnostics.push_back({tensor.name, TensorToJson({step, tensor}), step});
  }
  if (!record.val_loss_per_position.empty()) {
    results->diagnostics.push_back(
        {"val_loss_per_position", TensorToJson({step, Vector("val_loss_per_position", record.val_loss_per_position)}),
         step});
  }
  if (!record.extrapolation.empty()) {
    for (const records::ExtrapolationResult& entry : record.extrapolation) {
      results->summaries.push_back({records::ExtrapolationSummaryName("val_loss", entry), entry.val_loss, step});
      results->summaries.push_back({records::ExtrapolationSummaryName("val_loss_full", entry), entry.val_loss, step});
      if (entry.val_loss_in_dist) {
        results->summaries.push_back(
            {records::ExtrapolationSummaryName("val_loss_in_dist", entry), *entry.val_loss_in_dist, step});
      }
      if (entry.val_bpb) {
        results->summaries.push_back({records::ExtrapolationSummaryName("val_bpb", entry), *entry.val_bpb, step});
      }
      if (entry.val_loss_extrap) {
        results->summaries.push_back(
            {records::ExtrapolationSummaryName("val_loss_extrap", entry), *entry.val_loss_extrap, step});
      }
      if (entry.val_accuracy) {
        results->summaries.push_back(
            {records::ExtrapolationSummaryName("val_accuracy", entry), *entry.val_accuracy, step});
      }
      if (entry.val_loss_back_half) {
        results->summaries.push_back(
            {records::ExtrapolationSummaryName("val_loss_back_half", entry), *entry.val_loss_back_half, step});
      }
    }
    results->diagnostics.push_back(
        {"extrapolation", records::DocumentJson(record.extrapolation), step});
  }
  if (!record.probe.empty()) {
    for (const auto& [name, accuracy] : records::ProbeSummaries(record.probe)) {
      results->summaries.push_back({name, accuracy, step});
    }
    results->diagnostics.push_back({"probe", records::DocumentJson(record.probe), step});
  }
}

void AddDiagnostics(const records::DiagnosticsRecord& record, TrialResults* results) {
  Diagnostic diagnostic;
  diagnostic.step = record.step;
  diagnostic.layer = record.layer.value_or(-1);
  diagnostic.head = record.head.value_or(-1);
  // Named by the measurement it holds (the kind names the same one).
  diagnostic.value = nlohmann::json::object();
  // A record beyond the training length names its length; one without its multiple is no attention
  // record of the training length either (it keeps its kind's name, which reads as unknown), so that it
  // never replaces the end's.
  const bool beyond = !record.attention && record.attention_beyond && record.attention_beyond->multiple;
  if (record.attention || beyond) {
    const records::AttentionDiagnostics& attention = record.attention ? *record.attention : *record.attention_beyond;
    diagnostic.name = records::AttentionDiagnosticName(attention);
    diagnostic.value = records::DocumentJson(attention);
    // xi_Lambda where it is measured at the end: "xi_lambda", and beyond the training length
    // "xi_lambda_<m>x[_<method>]", for `rung results` and the fits.
    const std::optional<double>& xi = attention.pooled.xi_lambda;
    if (record.milestone == "end" && xi && std::isfinite(*xi)) {
      const std::string name =
          attention.multiple
              ? records::LengthSuffixedName("xi_lambda", *attention.multiple, attention.method.value_or("none"))
              : "xi_lambda";
      results->summaries.push_back({name, *xi, record.step});
    }
  } else if (record.niah_grid) {
    diagnostic.name = "niah_grid";
    diagnostic.value = records::DocumentJson(*record.niah_grid);
  } else if (record.band_ablation) {
    diagnostic.name = "band_ablation";
    diagnostic.value = records::DocumentJson(*record.band_ablation);
  } else if (record.head_influence) {
    diagnostic.name = "head_influence";
    diagnostic.value = records::DocumentJson(*record.head_influence);
  } else {
    diagnostic.name = record.kind.empty() ? "diagnostics" : record.kind;
  }
  results->diagnostics.push_back(std::move(diagnostic));
}

// Gap counting as releases before the aggregation wrote it: parallel "lengths" and "mean_log_lambda"
// instead of buckets, and "xi_lambda_ci" [low, high] instead of the half-IQR.
bool IsEarlyGapCounting(const nlohmann::json& gap) {
  return gap.is_object() && !gap.contains("buckets") && (gap.contains("lengths") || gap.contains("xi_lambda_ci"));
}

void UpgradeEarlyGapCounting(nlohmann::json* gap) {
  if (!IsEarlyGapCounting(*gap)) return;
  const nlohmann::json lengths = gap->value("lengths", nlohmann::json());
  const nlohmann::json logs = gap->value("mean_log_lambda", nlohmann::json());
  if (lengths.is_array() && logs.is_array()) {
    nlohmann::json buckets = nlohmann::json::array();
    for (size_t i = 0; i < lengths.size() && i < logs.size(); ++i) {
      if (!lengths[i].is_number()) continue;
      buckets.push_back({{"n", static_cast<int64_t>(lengths[i].get<double>())}, {"mean_log_lambda", logs[i]}});
    }
    (*gap)["buckets"] = std::move(buckets);
  }
  const nlohmann::json interval = gap->value("xi_lambda_ci", nlohmann::json());
  if (interval.is_array() && interval.size() == 2) {
    (*gap)["xi_lambda_ci_low"] = interval[0];
    (*gap)["xi_lambda_ci_high"] = interval[1];
  }
  gap->erase("lengths");
  gap->erase("mean_log_lambda");
  gap->erase("xi_lambda_ci");
}

// xi_beta's fit as releases before the OLS standard error wrote it: "half_iqr", 0.6745 times the
// standard error (the half-IQR of a normal with that spread), which reads back exactly.
constexpr const char* kBetaFits[] = {"xi_beta_grid", "xi_beta_trim"};

bool IsEarlyBetaFit(const nlohmann::json& fit) {
  return fit.is_object() && fit.contains("half_iqr") && !fit.contains("standard_error");
}

bool HasEarlyBetaFits(const nlohmann::json& attention) {
  const auto temperature = attention.find("inverse_temperature");
  if (temperature == attention.end() || !temperature->is_object()) return false;
  for (const char* name : kBetaFits) {
    if (temperature->contains(name) && IsEarlyBetaFit((*temperature)[name])) return true;
  }
  return false;
}

void UpgradeEarlyBetaFits(nlohmann::json* attention) {
  if (!HasEarlyBetaFits(*attention)) return;
  constexpr double kHalfIqrPerSigma = 0.6744897501960817;
  for (const char* name : kBetaFits) {
    nlohmann::json& temperature = (*attention)["inverse_temperature"];
    if (!temperature.contains(name) || !IsEarlyBetaFit(temperature[name])) continue;
    nlohmann::json& fit = temperature[name];
    const nlohmann::json half_iqr = fit["half_iqr"];
    fit["standard_error"] = half_iqr.is_number() ? nlohmann::json(half_iqr.get<double>() / kHalfIqrPerSigma) : half_iqr;
    fit.erase("half_iqr");
  }
}

// An attention document of such a release in this release's form; nullopt for one that needs nothing
// (the document is then read as it is, without a copy).
std::optional<nlohmann::json> UpgradeEarlyAttention(const nlohmann::json& attention) {
  if (!attention.is_object()) return std::nullopt;
  const nlohmann::json* layers =
      attention.contains("layers") && attention["layers"].is_array() ? &attention["layers"] : nullptr;
  bool early = attention.contains("pooled") && IsEarlyGapCounting(attention["pooled"]);
  for (size_t i = 0; layers != nullptr && !early && i < layers->size(); ++i) {
    const nlohmann::json& layer = (*layers)[i];
    early = layer.is_object() && layer.contains("gap_counting") && IsEarlyGapCounting(layer["gap_counting"]);
  }
  if (!early && !HasEarlyBetaFits(attention)) return std::nullopt;
  nlohmann::json upgraded = attention;
  UpgradeEarlyBetaFits(&upgraded);
  if (upgraded.contains("pooled")) UpgradeEarlyGapCounting(&upgraded["pooled"]);
  if (layers != nullptr) {
    for (nlohmann::json& layer : upgraded["layers"]) {
      if (layer.is_object() && layer.contains("gap_counting")) UpgradeEarlyGapCounting(&layer["gap_counting"]);
    }
  }
  return upgraded;
}

}  // namespace

RecordRows RowsFromRecords(const std::vector<records::TrainerRecord>& batch_records) {
  RecordRows rows;
  for (const records::TrainerRecord& record : batch_records) {
    if (const auto* step = std::get_if<records::StepRecord>(&record)) {
      AddStep(*step, &rows.points);
    } else if (std::holds_alternative<records::ProvenanceRecord>(record)) {
      rows.provenance_json = records::EncodeRecord(record);
    } else if (const auto* final_record = std::get_if<records::FinalRecord>(&record)) {
      AddFinal(*final_record, &rows.results);
    } else if (const auto* diagnostics = std::get_if<records::DiagnosticsRecord>(&record)) {
      AddDiagnostics(*diagnostics, &rows.results);
    }
  }
  return rows;
}

std::vector<LearnedParamValue> TensorToElements(int64_t step, const records::Tensor& tensor) {
  const size_t rank = tensor.shape.size();
  int64_t inner = 1;  // elements per (i0, i1) for rank >= 3
  for (size_t dim = 2; dim < rank; ++dim) inner *= tensor.shape[dim];
  const int64_t heads = rank >= 2 ? std::max<int64_t>(1, tensor.shape[1]) : 1;
  inner = std::max<int64_t>(1, inner);
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
  return records::StepTensorJson(tensor.step, tensor.tensor);
}

std::optional<StepTensor> TensorFromJson(const std::string& name, const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("shape") || !json.contains("values")) return std::nullopt;
  const nlohmann::json& shape = json["shape"];
  const nlohmann::json& values = json["values"];
  if (!shape.is_array() || !values.is_array()) return std::nullopt;
  StepTensor result;
  result.step = json.contains("step") && json["step"].is_number_integer() ? json["step"].get<int64_t>() : 0;
  result.tensor.name = name;
  for (const nlohmann::json& extent : shape) {
    if (!extent.is_number_integer()) return std::nullopt;
    result.tensor.shape.push_back(extent.get<int64_t>());
  }
  for (const nlohmann::json& value : values) result.tensor.values.push_back(value.is_number() ? value.get<double>() : kNaN);
  return result;
}

StatusOr<DiagnosticDocument> ReadDiagnosticDocument(const Diagnostic& diagnostic) {
  const std::string& name = diagnostic.name;
  auto read = [&](auto document) -> StatusOr<DiagnosticDocument> {
    const std::optional<nlohmann::json> upgraded =
        name == "attention" ? UpgradeEarlyAttention(diagnostic.value) : std::nullopt;
    Status status = records::DocumentFromJson(upgraded ? *upgraded : diagnostic.value, &document);
    if (!status.ok()) {
      return Status::DataLoss("the stored diagnostic '" + name + "' does not read: " + status.message());
    }
    return DiagnosticDocument(std::move(document));
  };
  if (records::IsAttentionDiagnosticName(name)) return read(records::AttentionDiagnostics());
  if (name == "niah_grid") return read(records::NiahGridDiagnostics());
  if (name == "band_ablation") return read(records::BandAblationDiagnostics());
  if (name == "head_influence") return read(records::HeadInfluenceDiagnostics());
  if (name == "extrapolation") return read(std::vector<records::ExtrapolationResult>());
  if (name == "probe") return read(std::vector<records::ProbeResult>());
  // A tensor: a layer's frequencies, the loss per position (protocol 1's databases also hold
  // "extrapolation.x<m>.<method>.val_loss_per_position").
  const std::string per_position = "val_loss_per_position";
  const bool loss_per_position =
      name.size() >= per_position.size() && name.compare(name.size() - per_position.size(), per_position.size(),
                                                         per_position) == 0;
  if (loss_per_position || name.rfind("frequencies.", 0) == 0) {
    std::optional<StepTensor> tensor = TensorFromJson(name, diagnostic.value);
    if (!tensor) return Status::DataLoss("the stored diagnostic '" + name + "' is not a tensor {step, shape, values}");
    return DiagnosticDocument(std::move(tensor->tensor));
  }
  return Status::DataLoss("the stored diagnostic '" + name + "' is of a kind this build does not know");
}

}  // namespace rung

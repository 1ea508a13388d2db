// coordinator/store/record_rows.h
//
// What the store keeps of a trainer's typed records (core/records/trainer_records.h), which workers
// send decoded (the coordinator never parses a trainer's lines; those are log text):
//   step         one MetricPoint per numeric field but `step` (train_loss, val_loss, lr, tokens,
//                flops, ...; records::ForEachNumericField), each at the record's step, tokens, flops
//                and elapsed_sec; a NaN value stays NaN (stored as NULL)
//   provenance   the attempt's provenance, as the record's JSON (the trial becomes RUNNING)
//   final        summaries (every numeric field but `step`, at the record's step; each
//                extrapolation as val_loss_<m>x[_<method>]), learned parameters
//                (positional_parameters), diagnostics ("frequencies.<layer>", "val_loss_per_position"
//                as tensors; "extrapolation" as its table), all at the record's step
//   diagnostics  a diagnostic named by the measurement it holds (its kind: attention, niah_grid,
//                band_ablation, head_influence), at its step (and layer/head), as the measurement's JSON document
// checkpoint, preempted and error records add nothing here (the lines are kept as log text).
//
// Tensors and the learned_params table: a tensor of shape S becomes one LearnedParamValue per
// element, row-major, each carrying S. Rank 0 and 1: layer = head = -1, index = the element;
// rank 2 ([layers, heads] for per-head parameters): layer = i0, head = i1, index = 0; rank 3 and
// more: layer = i0, head = i1, index = the element within the rest. Ordering elements by (layer,
// head, index) gives them back row-major, which TensorsFromElements relies on.
//
// Example:
//   RecordRows rows = RowsFromRecords(batch_records);
//   batch.points = std::move(rows.points);
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/store/store_types.h"
#include "core/records/trainer_records.h"

namespace rung {

// What a batch's records hold for the store.
struct RecordRows {
  std::vector<MetricPoint> points;
  std::string provenance_json;  // the provenance record as JSON text, or "" when the batch has none
  TrialResults results;
};

RecordRows RowsFromRecords(const std::vector<records::TrainerRecord>& batch_records);

// A tensor as learned_params elements at `step` (see above).
std::vector<LearnedParamValue> TensorToElements(int64_t step, const records::Tensor& tensor);

// A tensor recorded at a step.
struct StepTensor {
  int64_t step = 0;
  records::Tensor tensor;
};

// Elements grouped back into tensors by (step, name), in order of first appearance. An element
// without a shape belongs to a vector of its elements.
std::vector<StepTensor> TensorsFromElements(const std::vector<LearnedParamValue>& elements);

// A tensor as a diagnostic's JSON, {"step": ..., "shape": [...], "values": [...]}, and back
// (nullopt for JSON of another form).
nlohmann::json TensorToJson(const StepTensor& tensor);
std::optional<StepTensor> TensorFromJson(const std::string& name, const nlohmann::json& json);

// A stored diagnostic read as its type, chosen by its name: "attention" (and "attention_<m>x[_<method>]",
// beyond the training length), "niah_grid", "band_ablation",
// "head_influence" (core/records/diagnostics_payloads.h), "extrapolation" and "probe" (the final record's results and
// probe cells), and the tensors
// "frequencies.<layer>" and "val_loss_per_position" (any name ending so: protocol 1 stored
// "extrapolation.x<m>.<method>.val_loss_per_position"). An attention document of a release before
// the gap-counting aggregation ("lengths" and "mean_log_lambda" for buckets, "xi_lambda_ci") reads as
// buckets and xi_lambda_ci_low/_high; one whose xi_beta fits carry "half_iqr" (0.6745 times the OLS
// standard error, before the standard error itself was kept) reads as their standard_error. DATA_LOSS, naming the diagnostic and the field, for
// a document that does not read as its type, or a name this build does not know.
using DiagnosticDocument =
    std::variant<records::AttentionDiagnostics, records::NiahGridDiagnostics, records::BandAblationDiagnostics,
                 records::HeadInfluenceDiagnostics, std::vector<records::ExtrapolationResult>, std::vector<records::ProbeResult>, records::Tensor>;
StatusOr<DiagnosticDocument> ReadDiagnosticDocument(const Diagnostic& diagnostic);

}  // namespace rung

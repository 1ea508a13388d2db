// coordinator/store/trainer_records.h
//
// The bridge from rung-train's JSON record lines (core/train/trainer.h), which workers relay
// verbatim, to what the store keeps:
//   {"type":"step", ...}         one MetricPoint per numeric field but "step" (train_loss, val_loss,
//                                lr, grad_norm, tokens, flops, tokens_per_sec, elapsed_sec, ...), each
//                                with the record's tokens, flops and elapsed_sec as its position
//   {"type":"provenance", ...}   the attempt's provenance (the trial becomes RUNNING)
//   {"type":"final", ...}        summaries (every numeric field but "step", at the final step),
//                                learned parameters (positional_parameters), diagnostics
//                                ("frequencies.<layer>", "val_loss_per_position" as tensors;
//                                "extrapolation" as it is)
//   {"type":"diagnostics", ...}  the diagnostic "attention" (the record without type)
// Other records (checkpoint, preempted, error) and lines that are not JSON objects are kept as log
// lines only. A null in a numeric array (how JSON spells a non-finite value) reads as NaN.
//
// Tensors and the learned_params table: a tensor of shape S becomes one LearnedParamValue per
// element, row-major, each carrying S. Rank 0 and 1: layer = head = -1, index = the element;
// rank 2 ([layers, heads] for per-head parameters): layer = i0, head = i1, index = 0; rank 3 and
// more: layer = i0, head = i1, index = the element within the rest. Ordering elements by (layer,
// head, index) gives them back row-major, which TensorsFromElements relies on.
//
// Example:
//   TrainerRecords parsed = ParseTrainerRecords(request.records());
//   batch.points = std::move(parsed.points);
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/store/store_types.h"

namespace rung {

// A dense tensor by name, row-major (proto's Tensor).
struct NamedTensor {
  std::string name;
  std::vector<int64_t> shape;  // empty for a scalar
  std::vector<double> values;  // product(shape) values
};

// What a batch of record lines holds for the store.
struct TrainerRecords {
  std::vector<MetricPoint> points;
  nlohmann::json provenance;  // the provenance record, or null when the lines hold none
  TrialResults results;
};

TrainerRecords ParseTrainerRecords(const std::vector<std::string>& lines);

// A tensor as learned_params elements at `step` (see above).
std::vector<LearnedParamValue> TensorToElements(int64_t step, const NamedTensor& tensor);

// A tensor recorded at a step.
struct StepTensor {
  int64_t step = 0;
  NamedTensor tensor;
};

// Elements grouped back into tensors by (step, name), in order of first appearance. An element
// without a shape belongs to a vector of its elements.
std::vector<StepTensor> TensorsFromElements(const std::vector<LearnedParamValue>& elements);

// A tensor as a diagnostic's JSON, {"step": ..., "shape": [...], "values": [...]}, and back
// (nullopt for JSON of another form).
nlohmann::json TensorToJson(const StepTensor& tensor);
std::optional<StepTensor> TensorFromJson(const std::string& name, const nlohmann::json& json);

}  // namespace rung

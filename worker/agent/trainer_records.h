// worker/agent/trainer_records.h
//
// What the agent understands of rung-train's stdout (core/train/trainer.h): one JSON object per line,
// told apart by "type". Every line is relayed verbatim; these functions derive what the wire contract
// wants on top of that:
//   step        -> MetricRows, one per numeric field but "step" itself (train_loss, lr, val_loss,
//                  tokens, ...), each at the record's step, tokens, flops and elapsed_sec; a null
//                  field is a non-finite value (JSON has no NaN) and is sent as NaN
//   provenance  -> the first batch's provenance_json (the trial becomes RUNNING)
//   checkpoint, preempted -> the newest checkpoint (CompleteRequest.checkpoint)
//   error       -> the failure reason of the attempt
//   final       -> CompleteRequest's final_metrics (its numeric fields but step, and val_loss of every
//                  extrapolation as "extrapolation.x<multiple>.<method>.val_loss"), learned_parameters
//                  (positional_parameters) and diagnostics ("frequencies.<layer>", "val_loss_per_position",
//                  "extrapolation.x<multiple>.<method>.val_loss_per_position")
// A line that is not a JSON object (a stray print) is relayed as a record and otherwise ignored.
//
// Example:
//   AttemptRecords records;
//   const TrainerRecord& record = records.Add(line);
//   if (record.type == RecordType::kStep) rows = StepMetricRows(record.json);
//   ...
//   records.FillCompleteRequest(&complete);   // after the trainer exited
//
// Thread safety: AttemptRecords has one owner; the functions are reentrant.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "proto/rung.pb.h"

namespace rung::agent {

enum class RecordType { kProvenance, kStep, kCheckpoint, kDiagnostics, kFinal, kPreempted, kError, kOther };

struct TrainerRecord {
  RecordType type = RecordType::kOther;
  nlohmann::json json;  // the parsed object; null for a line that is not a JSON object
};

// Parses one stdout line.
TrainerRecord ParseTrainerRecord(std::string_view line);

// The metric rows of a step record (see above); empty for a record without an integer "step".
std::vector<v1::MetricRow> StepMetricRows(const nlohmann::json& step_record);

// What one attempt's records add up to.
class AttemptRecords {
 public:
  // Parses `line`, updates the summary and returns the parsed record (valid until the next Add).
  const TrainerRecord& Add(std::string_view line);

  int64_t latest_step() const { return latest_step_; }  // newest step of any record, 0 before one
  bool has_final() const { return final_.has_value(); }
  // The reason of the last error record, if any.
  const std::optional<std::string>& error_reason() const { return error_reason_; }
  // The newest checkpoint a checkpoint or preempted record named.
  const std::optional<v1::CheckpointLocation>& checkpoint() const { return checkpoint_; }

  // Sets final_metrics, learned_parameters and diagnostics from the final record (nothing without
  // one), and checkpoint from the newest checkpoint record, under `checkpoint_dir`.
  void FillCompleteRequest(const std::string& checkpoint_dir, v1::CompleteRequest* request) const;

 private:
  TrainerRecord last_;
  int64_t latest_step_ = 0;
  std::optional<nlohmann::json> final_;
  std::optional<std::string> error_reason_;
  std::optional<v1::CheckpointLocation> checkpoint_;
};

}  // namespace rung::agent

// worker/agent/attempt_records.h
//
// What the agent keeps of one attempt's stdout: each line is decoded once, with the record codec
// (core/records/trainer_records.h), into a typed record that the relay sends on (the raw line
// still goes to records.jsonl; the coordinator writes the record's line from it); a line that is no
// record (a stray print, a malformed record) is log text, sent as text. On top of that the attempt's summary: the
// newest step, whether a final record came, the last error record's reason and the newest
// checkpoint, which the attempt's ending is classified from (attempt_outcome.h).
//
// Example:
//   AttemptRecords records;
//   const records::TrainerRecord* record = records.Add(line);   // nullptr: not a record
//   relay.AddLine(line, record ? std::optional(*record) : std::nullopt);
//
// Thread safety: one owner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/records/trainer_records.h"

namespace rung::agent {

// The newest checkpoint an attempt's records named.
struct CheckpointSeen {
  std::string path;
  int64_t step = 0;
};

class AttemptRecords {
 public:
  // Decodes `line` and updates the summary. Returns the record (valid until the next Add), or
  // nullptr for a line that is no trainer record.
  const records::TrainerRecord* Add(std::string_view line);

  int64_t latest_step() const { return latest_step_; }  // newest step of any record, 0 before one
  bool has_final() const { return has_final_; }
  // The reason of the last error record, if any.
  const std::optional<std::string>& error_reason() const { return error_reason_; }
  // The newest checkpoint a checkpoint or preempted record named.
  const std::optional<CheckpointSeen>& checkpoint() const { return checkpoint_; }
  // Lines that looked like records ({"type": ...}) but did not decode; the first such error.
  int64_t undecodable_lines() const { return undecodable_lines_; }
  const std::string& first_decode_error() const { return first_decode_error_; }

 private:
  std::optional<records::TrainerRecord> last_;
  int64_t latest_step_ = 0;
  bool has_final_ = false;
  std::optional<std::string> error_reason_;
  std::optional<CheckpointSeen> checkpoint_;
  int64_t undecodable_lines_ = 0;
  std::string first_decode_error_;
};

}  // namespace rung::agent

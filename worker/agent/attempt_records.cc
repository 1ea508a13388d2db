// worker/agent/attempt_records.cc
#include "worker/agent/attempt_records.h"

#include <variant>

namespace rung::agent {
namespace {

// Every record has a step; the summary follows the newest.
int64_t StepOf(const records::TrainerRecord& record) {
  return std::visit(
      [](const auto& alternative) -> int64_t {
        using Record = std::decay_t<decltype(alternative)>;
        if constexpr (std::is_same_v<Record, records::ProvenanceRecord>) {
          return alternative.start_step;
        } else {
          return alternative.step;
        }
      },
      record);
}

// A line a trainer meant as a record: a JSON object line (the codec then says what is wrong).
bool LooksLikeRecord(std::string_view line) {
  const size_t first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '{' && line.find("\"type\"") != std::string_view::npos;
}

}  // namespace

const records::TrainerRecord* AttemptRecords::Add(std::string_view line) {
  StatusOr<records::TrainerRecord> decoded = records::DecodeRecord(line);
  if (!decoded.ok()) {
    if (LooksLikeRecord(line)) {
      if (undecodable_lines_++ == 0) first_decode_error_ = decoded.status().message();
    }
    last_.reset();
    return nullptr;
  }
  last_ = std::move(decoded).value();
  const records::TrainerRecord& record = *last_;
  latest_step_ = std::max(latest_step_, StepOf(record));
  if (std::holds_alternative<records::FinalRecord>(record)) {
    has_final_ = true;
  } else if (const auto* error = std::get_if<records::ErrorRecord>(&record)) {
    error_reason_ = error->reason;
  } else if (const auto* checkpoint = std::get_if<records::CheckpointRecord>(&record)) {
    checkpoint_ = CheckpointSeen{checkpoint->path, checkpoint->step};
  } else if (const auto* preempted = std::get_if<records::PreemptedRecord>(&record)) {
    if (preempted->checkpoint) checkpoint_ = CheckpointSeen{*preempted->checkpoint, preempted->step};
  }
  return &*last_;
}

}  // namespace rung::agent

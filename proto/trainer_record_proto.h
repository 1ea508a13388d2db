// proto/trainer_record_proto.h
//
// Trainer records (core/records/trainer_records.h) on the wire (proto/rung.proto, TrainerRecord and
// the messages it holds), both ways. The conversion goes by field name through each record's
// Fields() and protobuf reflection, so no field is named a second time here: a field the header
// and the proto message both have travels; CheckRecordMessages() says where the two disagree (the
// test of this file calls it, so they cannot drift apart).
//
// Field mapping: int64_t <-> int64, double <-> double, bool <-> bool, std::string <-> string,
// JsonText <-> ConfigValue (the JSON value the text stands for, unset for an empty one; FromProto
// refuses one that nests deeper than records::kMaxJsonTextDepth), std::optional<T> <-> `optional` T (presence kept),
// std::vector<T> <-> repeated T, a struct with Fields() <-> the message of its field,
// std::vector<std::vector<T>> <-> repeated DoubleRow (a message of one repeated T).
//
// Example:
//   *request.add_records() = ToProto(record);                      // the agent
//   StatusOr<records::TrainerRecord> record = FromProto(request.records(0));  // the coordinator
//
// Thread safety: pure functions.
#pragma once

#include "core/common/status.h"
#include "core/records/trainer_records.h"
#include "proto/rung.pb.h"

namespace rung::wire {

v1::TrainerRecord ToProto(const records::TrainerRecord& record);

// INVALID_ARGUMENT for a message that holds no record, or a JSON value nested deeper than
// records::kMaxJsonTextDepth (the message names the record and the field).
StatusOr<records::TrainerRecord> FromProto(const v1::TrainerRecord& record);

// OK when every record's fields and its proto message's fields match one to one, by name and
// type; otherwise INVALID_ARGUMENT listing every difference, one per line.
Status CheckRecordMessages();

// One value of the records' types (a diagnostics payload, an extrapolation result, a tensor) into its
// message and back, by the same field mapping; a vector of vectors maps to a repeated message of one
// repeated field (DoubleRow). StructFromMessage's errors name the message and field. CheckStructMessage
// says where the struct and the message disagree, as CheckRecordMessages. Instantiated for
// records::AttentionDiagnostics, NiahGridDiagnostics, BandAblationDiagnostics, HeadInfluenceDiagnostics,
// ExtrapolationResult, ProbeResult and Tensor.
template <class Struct>
void StructToMessage(const Struct& value, google::protobuf::Message* message);
template <class Struct>
Status StructFromMessage(const google::protobuf::Message& message, Struct* value);
template <class Struct>
Status CheckStructMessage(const google::protobuf::Descriptor* descriptor);

// Appends one stdout line of a trainer to `batch`: its record when it decodes as one, else its text.
// Returns the record, or nullptr. (The agent decodes each line once as it arrives and fills its
// batches itself; this is for those who hold the lines whole: tests, benchmarks, fuzzers.)
const v1::TrainerRecord* AddStdoutLine(const std::string& line, v1::MetricBatch* batch);

}  // namespace rung::wire

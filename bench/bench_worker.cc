// bench/bench_worker.cc
#include "bench/bench_worker.h"

#include <unistd.h>

#include <cmath>
#include <utility>
#include <variant>

#include "core/common/token_file.h"
#include "core/records/trainer_records.h"
#include "proto/protocol_version.h"
#include "proto/trainer_record_proto.h"

namespace rung::bench {

StatusOr<agent::CoordinatorClientOptions> BenchClientOptions(const std::string& address, const std::string& token_file,
                                                             std::chrono::milliseconds call_timeout) {
  RUNG_ASSIGN_OR_RETURN(std::string token, ReadBearerTokenFile(token_file));
  agent::CoordinatorClientOptions options;
  options.address = address;
  options.token = std::move(token);
  options.call_timeout = call_timeout;
  options.max_tries = 1;
  return options;
}

v1::RegisterRequest BenchRegistration(const std::string& worker_id) {
  v1::RegisterRequest registration;
  registration.set_worker_id(worker_id);
  registration.set_host("localhost");
  registration.set_cpu_slots(1);
  registration.set_pid(::getpid());
  registration.set_protocol_version(wire::kProtocolVersion);
  return registration;
}

std::string StepLine(int64_t step) {
  records::StepRecord record;
  record.step = step;
  record.tokens = step * 4096;
  record.flops = 2.4e10;
  record.flops_total = 6e6 * static_cast<double>(record.tokens);
  record.lr = 1e-3;
  record.train_loss = 5.0 / std::sqrt(static_cast<double>(step));
  record.grad_norm = 0.5;
  record.tokens_per_sec = 1e5;
  record.elapsed_sec = static_cast<double>(step) * 0.04;
  return records::EncodeRecord(record);
}

std::string ProvenanceLine(const std::string& commit) {
  records::ProvenanceRecord provenance;
  provenance.commit = commit;
  provenance.threads = 1;
  return records::EncodeRecord(provenance);
}

std::string FinalLine(int64_t step) {
  records::FinalRecord final_record;
  final_record.step = step;
  final_record.val_loss = 1.0;
  return records::EncodeRecord(final_record);
}

int64_t AddLine(const std::string& line, v1::MetricBatch* batch) {
  const v1::TrainerRecord* record = wire::AddStdoutLine(line, batch);
  if (record == nullptr || !record->has_step()) return 0;
  int64_t points = 0;
  StatusOr<records::TrainerRecord> typed = wire::FromProto(*record);
  if (const auto* step = typed.ok() ? std::get_if<records::StepRecord>(&*typed) : nullptr) {
    records::ForEachNumericField(*step, [&](const char*, double) { ++points; });
  }
  return points;
}

}  // namespace rung::bench

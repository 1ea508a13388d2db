// bench/bench_worker.h
//
// What the coordinator benchmarks that play workers (rung-bench-metric-ingest, metric_ingest.cc;
// rung-bench-worker-soak, worker_soak.cc) send in place of a trainer and an agent: their client's
// options, a worker's registration, and a trainer's record lines put into MetricBatch messages as
// rung-worker's MetricRelay puts them (each line decoded once by the record codec and sent typed; a
// line that is no record as text). Benchmarks only.
//
// Example:
//   v1::ReportMetricsRequest request;
//   int64_t points = AddLine(StepLine(7), request.mutable_batch());  // 9: what the database stores
//
// Thread safety: reentrant.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/common/status.h"
#include "proto/rung.pb.h"
#include "worker/agent/coordinator_client.h"

namespace rung::bench {

// Options of a client of the coordinator at `address` with the worker token of `token_file`, one
// try a call (the benchmark decides what to retry). Errors: ReadBearerTokenFile's.
StatusOr<agent::CoordinatorClientOptions> BenchClientOptions(const std::string& address, const std::string& token_file,
                                                             std::chrono::milliseconds call_timeout);

// A registration of `worker_id`: this host, one CPU slot, this process, this protocol version.
v1::RegisterRequest BenchRegistration(const std::string& worker_id);

// A step record shaped like rung-train's (step > 0), as its JSON line.
std::string StepLine(int64_t step);
// A provenance record naming `commit`, as its JSON line.
std::string ProvenanceLine(const std::string& commit);
// A final record at `step` (val_loss 1), as its JSON line.
std::string FinalLine(int64_t step);

// Adds a stdout line to `batch` as the agent does: its typed record when it decodes, else its text
// (wire::AddStdoutLine). Returns the metric points the record makes (a step record's numeric fields but the
// step; 0 for other records): what the coordinator stores as metric rows.
int64_t AddLine(const std::string& line, v1::MetricBatch* batch);

}  // namespace rung::bench

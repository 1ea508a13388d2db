// tests/cli/golden_fixture.h
//
// The coordinator the CLI goldens run against: a real in-process CoordinatorServer on 127.0.0.1
// port 0 over a real SQLite file in a scratch folder, on a ManualClock (timestamps, elapsed times
// and ETAs are fixed), with user and worker token files. Its database is built only through the
// public gRPC API, in this order:
//   1. SubmitSweep (user) tests/cli/fixture/ladder.yaml: sweep 1 "golden-ladder", 2 rungs (L1-d16,
//      L2-d16) x position.variant rope (baseline), lerope x seed 0, 1: trials 1..8.
//   2. PopulateGoldenSweep (worker, golden_population.cc): registers workers w1 and w2 and plays w1
//      running sweep 1: six trials SUCCEEDED with curves and final records (positional parameters,
//      frequencies, extrapolation; one with attention diagnostics), lerope L2-d16 seed 1 PREEMPTED
//      once and then FAILED, lerope L2-d16 seed 0 RUNNING.
//   3. SubmitSweep (user) tests/cli/fixture/second.yaml: sweep 2 "golden-second", two trials
//      PENDING (nobody leases them).
//   4. Fit (user) of sweep 1 with 200 bootstrap replicates, seed 7: stored fit 1.
// The clock starts at 2023-11-14 22:13:20 UTC (1,700,000,000 s) and moves only in step 2 and
// between the steps, by whole seconds.
//
// Example:
//   StatusOr<std::unique_ptr<GoldenCoordinator>> coordinator = GoldenCoordinator::Start();
//   ASSERT_TRUE(coordinator.ok()) << coordinator.status().ToString();
//   setenv("RUNG_COORDINATOR", (*coordinator)->address().c_str(), 1);
//
// Thread safety: Start from one thread; the accessors from any.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "coordinator/server/grpc_server.h"
#include "coordinator/store/clock.h"
#include "core/common/status.h"
#include "proto/rung.grpc.pb.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::cli::testing {

inline constexpr int64_t kGoldenStartMicros = 1'700'000'000'000'000;

class GoldenCoordinator {
 public:
  // Starts the server in a fresh scratch folder and builds the database above. Errors: whatever a
  // step returns, with the step named.
  static StatusOr<std::unique_ptr<GoldenCoordinator>> Start();

  ~GoldenCoordinator();

  const std::string& address() const { return server_->address(); }
  const std::string& user_token_file() const { return options_.user_token_file; }
  // The scratch folder (database, tokens, artifacts); goldens see it as ${SCRATCH}.
  const std::string& scratch() const { return scratch_path_; }
  ManualClock& clock() { return clock_; }

 private:
  GoldenCoordinator() = default;
  Status Build();

  agent::testing::ScratchDir scratch_;
  std::string scratch_path_;
  ManualClock clock_{FromUnixMicros(kGoldenStartMicros)};
  server::ServerOptions options_;
  std::string user_token_;
  std::string worker_token_;
  std::unique_ptr<server::CoordinatorServer> server_;
  std::unique_ptr<v1::UserService::Stub> users_;
  std::unique_ptr<v1::WorkerService::Stub> workers_;
};

// Step 2 above: everything a worker sends to build the fixture (Register, Lease, ReportMetrics
// with rung-train's record lines, Complete). This one function is the fixture's only user of the
// worker wire format: when ReportMetricsRequest or CompleteRequest change, only it changes.
// `sweep_id` is the golden-ladder sweep; `clock` moves by whole seconds between the calls.
Status PopulateGoldenSweep(v1::WorkerService::Stub& workers, const std::string& worker_token, ManualClock& clock,
                           int64_t sweep_id);

}  // namespace rung::cli::testing

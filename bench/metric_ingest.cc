// bench/metric_ingest.cc
//
// rung-bench-metric-ingest: metric ingestion throughput of a running coordinator, through the real
// WorkerService path (benchmarks only; bench/orchestration.py drives it). R reporters, each a worker
// of its own (its own channel, Register, one Lease of a PENDING trial: the caller submits a sweep
// of at least R trials first), stream ReportMetrics batches one after another for S seconds, cut as
// rung-worker's MetricRelay cuts them (RelayOptions::batch_lines step records a batch, each
// decoded by the record codec into its typed record and sent with its line as log text, the
// provenance record alone in batch 1). Each reporter then completes its trial (SUCCEEDED, its final
// record in the last batch), so the sweep ends cleanly.
//
//   rung-bench-metric-ingest --coordinator HOST:PORT --worker-token-file FILE [--reporters 32]
//                            [--seconds 30] [--lines-per-batch 64]
//
// Prints one JSON line: reporters, seconds (first report to the last acknowledgement), acknowledged
// batches and points (the metric points of acknowledged step records: every numeric field but the
// step; what the database must hold afterwards),
// points_per_sec, the trial ids used, and errors (calls that failed; the run is void if any).
// Exit codes: 0 measured, 1 a reporter could not register, lease or report, 2 bad arguments.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/command_line.h"
#include "bench/bench_worker.h"
#include "worker/agent/coordinator_client.h"
#include "worker/agent/metric_relay.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace agent = rung::agent;
using rung::bench::AddLine;
using rung::bench::BenchRegistration;
using rung::bench::FinalLine;
using rung::bench::ProvenanceLine;
using rung::bench::StepLine;

struct ReporterResult {
  int64_t trial_id = 0;
  int64_t batches = 0;
  int64_t points = 0;
  Clock::time_point first_call{};
  Clock::time_point last_ack{};
  std::string error;
};

// One reporter: register, lease, stream until `stop_at`, complete.
ReporterResult Report(const agent::CoordinatorClientOptions& options, int index, Clock::time_point stop_at,
                      size_t lines_per_batch) {
  ReporterResult result;
  auto connected = agent::CoordinatorClient::Connect(options);
  if (!connected.ok()) {
    result.error = connected.status().message();
    return result;
  }
  agent::CoordinatorClient& client = **connected;
  const rung::v1::RegisterRequest registration =
      BenchRegistration("bench-ingest-" + std::to_string(::getpid()) + "-" + std::to_string(index));
  if (auto registered = client.Register(registration); !registered.ok()) {
    result.error = "register: " + registered.status().message();
    return result;
  }
  rung::v1::LeaseRequest ask;
  ask.mutable_free()->set_cpu_slots(1);
  auto leased = client.Lease(ask, std::chrono::seconds(5));
  if (!leased.ok() || !leased->has_lease()) {
    result.error = leased.ok() ? "no PENDING trial to lease (submit a sweep of >= reporters trials first)"
                               : "lease: " + leased.status().message();
    return result;
  }
  const rung::v1::TrialLease& lease = leased->lease();
  result.trial_id = lease.trial_id();

  int64_t sequence = 0;
  int64_t step = 0;
  const auto send = [&](rung::v1::ReportMetricsRequest request, int64_t points) -> bool {
    request.set_trial_id(lease.trial_id());
    request.set_attempt(lease.attempt());
    request.mutable_batch()->set_sequence(++sequence);
    auto response = client.ReportMetrics(std::move(request));
    if (!response.ok()) {
      result.error = "report batch " + std::to_string(sequence) + ": " + response.status().message();
      return false;
    }
    result.last_ack = Clock::now();
    ++result.batches;
    result.points += points;
    return true;
  };

  result.first_call = Clock::now();
  rung::v1::ReportMetricsRequest first;
  AddLine(ProvenanceLine("rung-bench-metric-ingest (benchmarks only)"), first.mutable_batch());
  if (!send(std::move(first), 0)) return result;
  while (Clock::now() < stop_at) {
    rung::v1::ReportMetricsRequest batch;
    int64_t points = 0;
    for (size_t line = 0; line < lines_per_batch; ++line) points += AddLine(StepLine(++step), batch.mutable_batch());
    if (!send(std::move(batch), points)) return result;
  }

  rung::v1::ReportMetricsRequest last;
  AddLine(FinalLine(step), last.mutable_batch());
  if (!send(std::move(last), 0)) return result;
  rung::v1::CompleteRequest complete;
  complete.set_trial_id(lease.trial_id());
  complete.set_attempt(lease.attempt());
  complete.set_outcome(rung::v1::OUTCOME_SUCCEEDED);
  complete.set_last_batch_sequence(sequence);
  if (auto completed = client.Complete(complete); !completed.ok()) {
    result.error = "complete: " + completed.status().message();
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  rung::agent::PollReconnectsPromptly();  // as rung-worker does, before any gRPC object exists
  CLI::App app{"rung-bench-metric-ingest: concurrent ReportMetrics streams against a coordinator (benchmarks "
               "only). Needs a submitted sweep with at least --reporters PENDING trials.\n"
               "Exit codes: 0 measured, 1 a call failed, 2 bad arguments."};
  std::string address, token_file;
  int reporters = 32;
  double seconds = 30;
  size_t lines_per_batch = agent::RelayOptions{}.batch_lines;
  app.add_option("--coordinator", address, "Coordinator address")->required()->type_name("HOST:PORT");
  app.add_option("--worker-token-file", token_file, "The coordinator's worker token file")->required();
  app.add_option("--reporters", reporters, "Concurrent reporters (workers)")->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  app.add_option("--seconds", seconds, "How long each reporter streams")->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  app.add_option("--lines-per-batch", lines_per_batch, "Step records per batch (the agent's batch_lines)")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  rung::StatusOr<agent::CoordinatorClientOptions> client_options =
      rung::bench::BenchClientOptions(address, token_file, std::chrono::seconds(30));
  if (!client_options.ok()) {
    std::cerr << "rung-bench-metric-ingest: " << client_options.status().message() << "\n";
    return 2;
  }
  const agent::CoordinatorClientOptions& options = *client_options;

  const Clock::time_point stop_at =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<ReporterResult> results(static_cast<size_t>(reporters));
  std::vector<std::thread> threads;
  for (int index = 0; index < reporters; ++index) {
    threads.emplace_back([&, index] { results[index] = Report(options, index, stop_at, lines_per_batch); });
  }
  for (std::thread& thread : threads) thread.join();

  int64_t batches = 0, points = 0;
  Clock::time_point first = Clock::time_point::max(), last = Clock::time_point::min();
  json trials = json::array(), errors = json::array();
  for (const ReporterResult& result : results) {
    batches += result.batches;
    points += result.points;
    if (result.trial_id > 0) trials.push_back(result.trial_id);
    if (!result.error.empty()) errors.push_back(result.error);
    if (result.batches > 0) {
      first = std::min(first, result.first_call);
      last = std::max(last, result.last_ack);
    }
  }
  const double elapsed = batches > 0 ? std::chrono::duration<double>(last - first).count() : 0.0;
  std::cout << json{{"reporters", reporters},
                    {"lines_per_batch", lines_per_batch},
                    {"seconds", elapsed},
                    {"acknowledged_batches", batches},
                    {"acknowledged_points", points},
                    {"points_per_sec", elapsed > 0 ? static_cast<double>(points) / elapsed : 0.0},
                    {"trials", trials},
                    {"errors", errors}}
                   .dump()
            << std::endl;
  return errors.empty() ? 0 : 1;
}

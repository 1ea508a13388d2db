// bench/metric_ingest.cc
//
// rung-bench-metric-ingest: metric ingestion throughput of a running coordinator, through the real
// WorkerService path (benchmarks only; bench/orchestration.py drives it). R reporters, each a worker
// of its own (its own channel, Register, one Lease of a PENDING trial: the caller submits a sweep
// of at least R trials first), stream ReportMetrics batches one after another for S seconds, cut as
// rung-worker's MetricRelay cuts them (RelayOptions::batch_lines step records a batch, every line
// also sent verbatim as a record, the provenance record alone in batch 1), the rows made by the
// agent's own StepMetricRows. Each reporter then completes its trial (SUCCEEDED, naming its last
// batch), so the sweep ends cleanly.
//
//   rung-bench-metric-ingest --coordinator HOST:PORT --worker-token-file FILE [--reporters 32]
//                            [--seconds 30] [--lines-per-batch 64]
//
// Prints one JSON line: reporters, seconds (first report to the last acknowledgement), acknowledged
// batches and points (rows of acknowledged batches; what the database must hold afterwards),
// points_per_sec, the trial ids used, and errors (calls that failed; the run is void if any).
// Exit codes: 0 measured, 1 a reporter could not register, lease or report, 2 bad arguments.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/token_file.h"
#include "worker/agent/coordinator_client.h"
#include "worker/agent/metric_relay.h"
#include "worker/agent/trainer_records.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace agent = rung::agent;

struct ReporterResult {
  int64_t trial_id = 0;
  int64_t batches = 0;
  int64_t points = 0;
  Clock::time_point first_call{};
  Clock::time_point last_ack{};
  std::string error;
};

// A step record shaped like rung-train's (numeric fields the agent turns into metric rows).
std::string StepLine(int64_t step) {
  const double tokens = static_cast<double>(step) * 4096.0;
  return json{{"type", "step"},          {"step", step},
              {"tokens", step * 4096},   {"flops", 2.4e10},
              {"flops_total", 6e6 * tokens}, {"lr", 1e-3},
              {"train_loss", 5.0 / std::sqrt(static_cast<double>(step))},
              {"grad_norm", 0.5},        {"tokens_per_sec", 1e5},
              {"elapsed_sec", static_cast<double>(step) * 0.04}}
      .dump();
}

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
  rung::v1::RegisterRequest registration;
  registration.set_worker_id("bench-ingest-" + std::to_string(::getpid()) + "-" + std::to_string(index));
  registration.set_host("localhost");
  registration.set_cpu_slots(1);
  registration.set_pid(::getpid());
  if (auto registered = client.Register(registration); !registered.ok()) {
    result.error = "register: " + registered.status().message();
    return result;
  }
  rung::v1::LeaseRequest ask;
  ask.set_free_cpu_slots(1);
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
  const auto send = [&](rung::v1::ReportMetricsRequest request) -> bool {
    request.set_trial_id(lease.trial_id());
    request.set_attempt(lease.attempt());
    request.set_sequence(++sequence);
    const int64_t rows = request.rows_size();
    auto response = client.ReportMetrics(std::move(request));
    if (!response.ok()) {
      result.error = "report batch " + std::to_string(sequence) + ": " + response.status().message();
      return false;
    }
    result.last_ack = Clock::now();
    ++result.batches;
    result.points += rows;
    return true;
  };

  result.first_call = Clock::now();
  rung::v1::ReportMetricsRequest first;
  const std::string provenance =
      json{{"type", "provenance"}, {"trainer", "rung-bench-metric-ingest (benchmarks only)"}, {"threads", 1}}.dump();
  first.set_provenance_json(provenance);
  first.add_records(provenance);
  if (!send(std::move(first))) return result;
  while (Clock::now() < stop_at) {
    rung::v1::ReportMetricsRequest batch;
    for (size_t line = 0; line < lines_per_batch; ++line) {
      std::string text = StepLine(++step);
      for (rung::v1::MetricRow& row : agent::StepMetricRows(agent::ParseTrainerRecord(text).json)) {
        *batch.add_rows() = std::move(row);
      }
      batch.add_records(std::move(text));
    }
    if (!send(std::move(batch))) return result;
  }

  rung::v1::CompleteRequest complete;
  complete.set_trial_id(lease.trial_id());
  complete.set_attempt(lease.attempt());
  complete.set_outcome(rung::v1::OUTCOME_SUCCEEDED);
  complete.set_last_batch_sequence(sequence);
  (*complete.mutable_final_metrics())["val_loss"] = 1.0;
  if (auto completed = client.Complete(complete); !completed.ok()) {
    result.error = "complete: " + completed.status().message();
  }
  return result;
}

}  // namespace

int main(int argc, char** argv) {
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
      ->check(CLI::PositiveNumber);
  app.add_option("--seconds", seconds, "How long each reporter streams")->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--lines-per-batch", lines_per_batch, "Step records per batch (the agent's batch_lines)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : 2;
  }
  rung::StatusOr<std::string> token = rung::ReadBearerTokenFile(token_file);
  if (!token.ok()) {
    std::cerr << "rung-bench-metric-ingest: " << token.status().message() << "\n";
    return 2;
  }
  agent::CoordinatorClientOptions options;
  options.address = address;
  options.token = *token;
  options.call_timeout = std::chrono::seconds(30);
  options.max_tries = 1;

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

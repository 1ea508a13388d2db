// bench/worker_soak.cc
//
// rung-bench-worker-soak: a load generator for the coordinator's load-and-soak benchmark
// (bench/soak.py drives it; benchmarks only). One process holds W worker identities, each a worker
// of its own to the coordinator: its own worker id (Register), its own CoordinatorClient, and one
// thread that blocks in its calls. gRPC shares one connection among channels to the same target with
// the same arguments, so the W identities reach the coordinator over few connections and the process
// costs little CPU: what is measured is the coordinator, not W agents on a small machine.
//
// Each identity loops until --seconds have passed since the start: Lease (a long-poll of at most
// --lease-wait, never past the end), and on a lease a short fake trial of --trial-seconds: batch 1 is
// the provenance record alone, then --batches ReportMetrics batches of --lines-per-batch step records
// (each line once, typed, as rung-worker's MetricRelay sends them; bench_worker.h)
// spread over the trial, a Heartbeat every heartbeat_interval of the RegisterResponse, and at the
// end a last batch holding the final record and Complete SUCCEEDED, as rung-worker ends an attempt; every
// trial begins with a Lease call. After --seconds an identity
// leases no more and finishes the trial it runs.
//
// The coordinator may be killed and restarted under it. As rung-worker does, a call that fails
// transiently (UNAVAILABLE, DEADLINE_EXCEEDED, ...: agent::IsTransient) is tried again with backoff,
// the same request (a batch keeps its sequence number: a batch the coordinator had committed is
// acknowledged as a duplicate, not applied again); a coordinator that forgot the worker (NOT_FOUND)
// is registered with again by the client; an attempt refused for good (FAILED_PRECONDITION: fenced;
// NOT_FOUND after registering again; a Heartbeat answered CANCEL) is dropped: the identity reports
// nothing more of it and leases again. A call still failing transiently after --give-up-seconds is
// an error and drops its attempt.
//
// Lease-to-start latency, per trial: the time from the start of the Lease call that returned the
// lease to its answer (steady clock), which is when the fake trial starts. It covers only that call:
// tries that failed before it (the coordinator away) are not in it, and a Lease of a worker that
// waited for a trial because none was PENDING measures the wait. "free_ms" in the ledger is the time
// from the first Lease try of the identity's free spell to the lease (outages included).
//
//   rung-bench-worker-soak --coordinator HOST:PORT --worker-token-file FILE [--workers 200]
//       [--seconds 600] [--trial-seconds 2] [--batches 3] [--lines-per-batch 8] [--lease-wait 20]
//       [--give-up-seconds 120] [--ledger FILE]
//
// Prints one JSON line at the end: the counts (attempts leased, completed, dropped as fenced or
// cancelled; batches and metric points acknowledged; duplicate acknowledgements; transient failures
// retried), lease-to-start p50/p99/max in ms, the outages seen (wall-clock start of each spell of
// transient failures, the wall-clock answer of the first call started after it that succeeded, the
// failed calls, and the first 8 distinct error messages with their counts),
// and errors (calls that failed for good; the run is void if any). --ledger writes one JSON line per
// leased attempt: trial, attempt, identity, lease_unix (wall clock of the Lease call's start),
// lease_ms, free_ms, batches and points acknowledged, completed (Complete acknowledged),
// complete_duplicate, trial_state (Complete's answer), dropped (why, or "").
// Exit codes: 0 measured, 1 errors (see "errors"), 2 bad arguments or no token.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <google/protobuf/util/time_util.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/command_line.h"
#include "bench/bench_worker.h"
#include "worker/agent/backoff.h"
#include "worker/agent/coordinator_client.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace agent = rung::agent;

double UnixNow() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

Clock::duration Seconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double Millis(Clock::duration duration) { return std::chrono::duration<double, std::milli>(duration).count(); }

struct Options {
  agent::CoordinatorClientOptions client;
  int workers = 200;
  double seconds = 600;
  double trial_seconds = 2;
  int batches = 3;
  int lines_per_batch = 8;
  double lease_wait = 20;
  double give_up_seconds = 120;
  std::string ledger;
};

// One leased attempt, as the ledger keeps it.
struct AttemptEntry {
  int64_t trial = 0;
  int64_t attempt = 0;
  int identity = 0;
  double lease_unix = 0;
  double lease_ms = 0;
  double free_ms = 0;
  int64_t batches = 0;  // acknowledged ReportMetrics batches, and the final batch once Complete is
  int64_t points = 0;   // metric points of the acknowledged batches
  bool completed = false;
  bool complete_duplicate = false;
  std::string trial_state;
  std::string dropped;
};

// Spells of transient failures seen by any identity. A spell opens at the first transient failure
// while none is open, and closes at the answer of the first successful call that started after it
// opened: a call that started after a failure was seen is served by whoever answers now.
class OutageLog {
 public:
  void Failed(const rung::Status& status) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_) {
      open_ = true;
      outages_.push_back({UnixNow(), 0, 0, {}});
    }
    Outage& outage = outages_.back();
    ++outage.failures;
    auto counted = outage.messages.find(status.message());
    if (counted != outage.messages.end()) {
      ++counted->second;
    } else if (outage.messages.size() < 8) {
      outage.messages.emplace(status.message(), 1);
    }
  }
  void Answered(double call_started_unix) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!open_ || call_started_unix < outages_.back().start_unix) return;
    open_ = false;
    outages_.back().end_unix = UnixNow();
  }
  json ToJson() const {
    std::lock_guard<std::mutex> lock(mutex_);
    json spells = json::array();
    for (const Outage& outage : outages_) {
      spells.push_back({{"start_unix", outage.start_unix},
                        {"first_answer_unix", outage.end_unix > 0 ? json(outage.end_unix) : json(nullptr)},
                        {"failed_calls", outage.failures},
                        {"errors_seen", outage.messages}});
    }
    return spells;
  }

 private:
  struct Outage {
    double start_unix;
    double end_unix;
    int64_t failures;
    std::map<std::string, int64_t> messages;  // the first few distinct messages, and how often each came
  };
  mutable std::mutex mutex_;
  bool open_ = false;
  std::vector<Outage> outages_;
};

// Everything the identities share: counters, the ledger, the outages, the errors.
struct Shared {
  std::atomic<int64_t> transient_retries{0};
  std::atomic<int64_t> duplicate_batches{0};
  std::atomic<int64_t> empty_leases{0};
  std::atomic<int64_t> heartbeats{0};
  OutageLog outages;
  std::mutex mutex;
  std::vector<AttemptEntry> attempts;  // guarded by mutex
  std::vector<std::string> errors;     // guarded by mutex

  void Error(std::string message) {
    std::lock_guard<std::mutex> lock(mutex);
    errors.push_back(std::move(message));
  }
};

// One worker identity and its loop.
class Identity {
 public:
  Identity(const Options& options, int index, Clock::time_point stop_at, Shared* shared)
      : options_(options), index_(index), stop_at_(stop_at), shared_(*shared) {}

  void Run() {
    auto connected = agent::CoordinatorClient::Connect(options_.client);
    if (!connected.ok()) {
      shared_.Error("identity " + std::to_string(index_) + ": " + connected.status().message());
      return;
    }
    client_ = std::move(*connected);
    const rung::v1::RegisterRequest registration =
        rung::bench::BenchRegistration("bench-soak-" + std::to_string(::getpid()) + "-" + std::to_string(index_));
    rung::StatusOr<rung::v1::RegisterResponse> registered =
        UntilAnswered<rung::v1::RegisterResponse>([&] { return client_->Register(registration); }, stop_at_);
    if (!registered.ok()) {
      shared_.Error("identity " + std::to_string(index_) + ": register: " + registered.status().message());
      return;
    }
    heartbeat_interval_ = std::chrono::milliseconds(
        google::protobuf::util::TimeUtil::DurationToMilliseconds(registered->heartbeat_interval()));
    if (heartbeat_interval_.count() <= 0) heartbeat_interval_ = std::chrono::seconds(10);
    LeaseLoop();
  }

 private:
  // Calls `call` until it answers or fails for good; transient failures are retried with backoff
  // until `until` or --give-up-seconds after the first of them, whichever comes first.
  template <typename Response>
  rung::StatusOr<Response> UntilAnswered(const std::function<rung::StatusOr<Response>()>& call,
                                         Clock::time_point until = Clock::time_point::max()) {
    agent::Backoff backoff(agent::BackoffPolicy{std::chrono::milliseconds(100), std::chrono::milliseconds(2000), 2.0});
    const Clock::time_point give_up = std::min(until, Clock::now() + Seconds(options_.give_up_seconds));
    for (;;) {
      const double started = UnixNow();
      rung::StatusOr<Response> response = call();
      if (response.ok()) {
        shared_.outages.Answered(started);
        return response;
      }
      if (!agent::IsTransient(response.status())) return response;
      shared_.outages.Failed(response.status());
      ++shared_.transient_retries;
      if (Clock::now() >= give_up) return response;
      std::this_thread::sleep_for(backoff.Next());
    }
  }

  void LeaseLoop() {
    Clock::time_point free_since = Clock::now();
    for (;;) {
      const Clock::duration left = stop_at_ - Clock::now();
      if (left <= Clock::duration::zero()) return;
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::min<Clock::duration>(left, Seconds(options_.lease_wait)));
      rung::v1::LeaseRequest ask;
      ask.mutable_free()->set_cpu_slots(1);
      double lease_unix = 0;
      Clock::time_point asked;
      rung::StatusOr<rung::v1::LeaseResponse> leased = UntilAnswered<rung::v1::LeaseResponse>(
          [&] {
            lease_unix = UnixNow();
            asked = Clock::now();
            return client_->Lease(ask, wait);
          },
          stop_at_);
      const Clock::time_point answered = Clock::now();
      if (!leased.ok()) {
        if (agent::IsTransient(leased.status()) && answered >= stop_at_) return;  // away at the end
        shared_.Error("identity " + std::to_string(index_) + ": lease: " + leased.status().message());
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      if (!leased->has_lease()) {
        ++shared_.empty_leases;
        continue;
      }
      AttemptEntry entry;
      entry.trial = leased->lease().trial_id();
      entry.attempt = leased->lease().attempt();
      entry.identity = index_;
      entry.lease_unix = lease_unix;
      entry.lease_ms = Millis(answered - asked);
      entry.free_ms = Millis(answered - free_since);
      RunTrial(leased->lease(), &entry);
      {
        std::lock_guard<std::mutex> lock(shared_.mutex);
        shared_.attempts.push_back(std::move(entry));
      }
      free_since = Clock::now();
    }
  }

  // Whether `status` drops the attempt (refused for good); records why in `entry`, and as an error
  // unless the coordinator fenced it.
  bool Dropped(const char* call, const rung::Status& status, AttemptEntry* entry) {
    if (status.ok()) return false;
    entry->dropped = std::string(call) + ": " + status.message();
    const bool fenced =
        status.code() == rung::StatusCode::kFailedPrecondition || status.code() == rung::StatusCode::kNotFound;
    if (!fenced) {
      shared_.Error("trial " + std::to_string(entry->trial) + " attempt " + std::to_string(entry->attempt) + ": " +
                    entry->dropped);
    }
    return true;
  }

  void RunTrial(const rung::v1::TrialLease& lease, AttemptEntry* entry) {
    const Clock::time_point start = Clock::now();
    const Clock::time_point end = start + Seconds(options_.trial_seconds);
    int64_t sequence = 0;
    int64_t step = 0;
    const auto report = [&](rung::v1::ReportMetricsRequest request, int64_t points) {
      request.set_trial_id(lease.trial_id());
      request.set_attempt(lease.attempt());
      request.mutable_batch()->set_sequence(++sequence);
      rung::StatusOr<rung::v1::ReportMetricsResponse> response =
          UntilAnswered<rung::v1::ReportMetricsResponse>([&] { return client_->ReportMetrics(request); });
      if (Dropped("ReportMetrics", response.status(), entry)) return false;
      if (response->duplicate()) ++shared_.duplicate_batches;
      ++entry->batches;
      entry->points += points;
      return true;
    };
    const auto heartbeat = [&] {
      rung::v1::HeartbeatRequest request;
      request.set_trial_id(lease.trial_id());
      request.set_attempt(lease.attempt());
      request.set_step(step);
      ++shared_.heartbeats;
      // Once, as the agent's heartbeat thread does: a transient failure waits for the next beat.
      rung::StatusOr<rung::v1::HeartbeatResponse> response = client_->Heartbeat(request);
      if (!response.ok()) {
        if (agent::IsTransient(response.status())) {
          shared_.outages.Failed(response.status());
          return true;
        }
        return !Dropped("Heartbeat", response.status(), entry);
      }
      if (response->action() == rung::v1::HeartbeatResponse::ACTION_CANCEL) {
        entry->dropped = "Heartbeat: cancelled: " + response->reason();
        return false;
      }
      return true;
    };

    rung::v1::ReportMetricsRequest first;
    rung::bench::AddLine(rung::bench::ProvenanceLine("rung-bench-worker-soak (benchmarks only)"),
                         first.mutable_batch());
    if (!report(std::move(first), 0)) return;
    Clock::time_point next_beat = start + heartbeat_interval_;
    for (int batch = 1; batch <= options_.batches; ++batch) {
      const Clock::time_point due = start + (end - start) * batch / (options_.batches + 1);
      while (next_beat <= due) {
        std::this_thread::sleep_until(next_beat);
        if (!heartbeat()) return;
        next_beat = std::max(next_beat + heartbeat_interval_, Clock::now());
      }
      std::this_thread::sleep_until(due);
      rung::v1::ReportMetricsRequest request;
      int64_t points = 0;
      for (int line = 0; line < options_.lines_per_batch; ++line) {
        points += rung::bench::AddLine(rung::bench::StepLine(++step), request.mutable_batch());
      }
      if (!report(std::move(request), points)) return;
    }
    while (next_beat <= end) {
      std::this_thread::sleep_until(next_beat);
      if (!heartbeat()) return;
      next_beat = std::max(next_beat + heartbeat_interval_, Clock::now());
    }
    std::this_thread::sleep_until(end);

    rung::v1::ReportMetricsRequest last;
    rung::bench::AddLine(rung::bench::FinalLine(step), last.mutable_batch());
    if (!report(std::move(last), 0)) return;
    rung::v1::CompleteRequest complete;
    complete.set_trial_id(lease.trial_id());
    complete.set_attempt(lease.attempt());
    complete.set_outcome(rung::v1::OUTCOME_SUCCEEDED);
    complete.set_last_batch_sequence(sequence);
    rung::StatusOr<rung::v1::CompleteResponse> completed =
        UntilAnswered<rung::v1::CompleteResponse>([&] { return client_->Complete(complete); });
    if (Dropped("Complete", completed.status(), entry)) return;
    ++entry->batches;
    entry->completed = true;
    entry->complete_duplicate = completed->duplicate();
    entry->trial_state = rung::v1::TrialState_Name(completed->trial_state());
  }

  const Options& options_;
  const int index_;
  const Clock::time_point stop_at_;
  Shared& shared_;
  std::unique_ptr<agent::CoordinatorClient> client_;
  std::chrono::milliseconds heartbeat_interval_{10000};
};

// The q-quantile (nearest rank) of `values`, sorted in place; 0 when empty.
double Quantile(std::vector<double>& values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(q * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(rank, values.size() - 1)];
}

json EntryJson(const AttemptEntry& entry) {
  return {{"trial", entry.trial},
          {"attempt", entry.attempt},
          {"identity", entry.identity},
          {"lease_unix", entry.lease_unix},
          {"lease_ms", entry.lease_ms},
          {"free_ms", entry.free_ms},
          {"batches", entry.batches},
          {"points", entry.points},
          {"completed", entry.completed},
          {"complete_duplicate", entry.complete_duplicate},
          {"trial_state", entry.trial_state},
          {"dropped", entry.dropped}};
}

}  // namespace

int main(int argc, char** argv) {
  rung::agent::PollReconnectsPromptly();  // as rung-worker does, before any gRPC object exists
  CLI::App app{
      "rung-bench-worker-soak: many worker identities in one process running short fake trials "
      "against a coordinator (benchmarks only; bench/soak.py drives it). Needs a submitted sweep with "
      "enough PENDING trials.\nExit codes: 0 measured, 1 errors, 2 bad arguments."};
  Options options;
  std::string address, token_file;
  app.add_option("--coordinator", address, "Coordinator address")->required()->type_name("HOST:PORT");
  app.add_option("--worker-token-file", token_file, "The coordinator's worker token file")->required();
  app.add_option("--workers", options.workers, "Worker identities")->capture_default_str()->check(rung::PositiveNumberCheck());
  app.add_option("--seconds", options.seconds, "How long identities lease trials")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  app.add_option("--trial-seconds", options.trial_seconds, "How long a fake trial lasts")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true));
  app.add_option("--batches", options.batches, "Step-record batches a trial reports (after the provenance's)")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true));
  app.add_option("--lines-per-batch", options.lines_per_batch, "Step records per batch")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  app.add_option("--lease-wait", options.lease_wait, "Longest Lease long-poll, seconds")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  app.add_option("--give-up-seconds", options.give_up_seconds,
                 "How long a call is retried while it fails transiently before it is an error")
      ->capture_default_str()
      ->check(rung::PositiveNumberCheck());
  app.add_option("--ledger", options.ledger, "Write one JSON line per leased attempt to this file");
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  // One try a call: Identity::UntilAnswered retries, and counts the tries.
  rung::StatusOr<agent::CoordinatorClientOptions> client =
      rung::bench::BenchClientOptions(address, token_file, std::chrono::seconds(10));
  if (!client.ok()) {
    std::cerr << "rung-bench-worker-soak: " << client.status().message() << "\n";
    return 2;
  }
  options.client = *client;

  Shared shared;
  const Clock::time_point begin = Clock::now();
  const Clock::time_point stop_at = begin + Seconds(options.seconds);
  std::vector<std::unique_ptr<Identity>> identities;
  std::vector<std::thread> threads;
  for (int index = 0; index < options.workers; ++index) {
    identities.push_back(std::make_unique<Identity>(options, index, stop_at, &shared));
    threads.emplace_back([identity = identities.back().get()] { identity->Run(); });
  }
  for (std::thread& thread : threads) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();

  int64_t completed = 0, dropped = 0, batches = 0, points = 0, duplicate_completes = 0;
  std::vector<double> latencies;
  for (const AttemptEntry& entry : shared.attempts) {
    completed += entry.completed ? 1 : 0;
    dropped += entry.dropped.empty() ? 0 : 1;
    duplicate_completes += entry.complete_duplicate ? 1 : 0;
    batches += entry.batches;
    points += entry.points;
    latencies.push_back(entry.lease_ms);
  }
  if (!options.ledger.empty()) {
    std::ofstream ledger(options.ledger);
    for (const AttemptEntry& entry : shared.attempts) ledger << EntryJson(entry).dump() << "\n";
    if (!ledger.flush()) shared.errors.push_back("cannot write the ledger " + options.ledger);
  }
  json errors = json::array();
  for (size_t index = 0; index < shared.errors.size() && index < 20; ++index) errors.push_back(shared.errors[index]);
  std::cout << json{{"workers", options.workers},
                    {"seconds", elapsed},
                    {"trial_seconds", options.trial_seconds},
                    {"attempts_leased", shared.attempts.size()},
                    {"trials_completed", completed},
                    {"attempts_dropped", dropped},
                    {"acknowledged_batches", batches},
                    {"acknowledged_points", points},
                    {"duplicate_batches", shared.duplicate_batches.load()},
                    {"duplicate_completes", duplicate_completes},
                    {"heartbeats", shared.heartbeats.load()},
                    {"empty_leases", shared.empty_leases.load()},
                    {"transient_retries", shared.transient_retries.load()},
                    {"lease_ms_p50", Quantile(latencies, 0.50)},
                    {"lease_ms_p99", Quantile(latencies, 0.99)},
                    {"lease_ms_max", latencies.empty() ? 0.0 : latencies.back()},
                    {"outages", shared.outages.ToJson()},
                    {"error_count", shared.errors.size()},
                    {"errors", errors}}
                   .dump()
            << std::endl;
  return shared.errors.empty() ? 0 : 1;
}

// worker/agent/attempt_runner.h
//
// Runs one leased attempt from start to report, on the calling thread:
//
//   1. prepares its workspace (attempt_workspace.h): trial.json, the checkpoint folder of this
//      attempt, the resume point among the earlier attempts' folders;
//   2. starts rung-train with exactly the trial's CPU slots as threads (trainer_process.h); a
//      data-parallel trial (resources.world_size > 1) as that many ranks on this host, each with
//      its share of the slots, all or nothing (trainer_gang.h): a rank that dies stops the others
//      and the attempt is reported FAILED (retried from its checkpoint like any failure). A gang
//      lease (TrialLease.rendezvous set: a data-parallel trial spread over several workers) runs
//      only the lease's rank, with --rank and --rendezvous from the lease; a rank > 0 relays no
//      output (rank 0 reports metrics and results) and reports SUCCEEDED without results when its
//      trainer exits 0; any failure is reported and ends the attempt for every rank;
//   3. reads the trainer's (rank 0's) stdout line by line: every line goes to records.jsonl and to the
//      MetricRelay: a trainer record decoded once into its typed record (attempt_records.h), any
//      other line as text; stderr lines go to the relay as well;
//   4. heartbeats the lease every heartbeat_interval on a thread of its own, from the start until the
//      attempt has been reported (the first an interval after the start); CANCEL -> SIGTERM to the
//      trainer, SIGKILL after stop_grace, and nothing reported (the trial is already CANCELLED);
//      FAILED_PRECONDITION or NOT_FOUND (the attempt is fenced: its lease expired and the trial
//      moved on) -> the same, and nothing more is sent;
//   5. after the trainer exits, drains the relay (every batch acknowledged: the last holds the final
//      record, and the results travel only there) and sends Complete: the outcome
//      (attempt_outcome.h), the exit code and the last batch's sequence.
//
// Preempt() (the agent's SIGTERM/SIGUSR1) forwards SIGTERM: rung-train checkpoints after its current
// step and exits 75, and the attempt is reported PREEMPTED (also when it had not started yet, or
// needed a SIGKILL after stop_grace). A trainer that crashes ends its attempt as FAILED, never the
// agent.
//
// While the coordinator is away the trainer keeps training: metrics are buffered, heartbeats and the
// final report retried with backoff for as long as it takes, until GiveUpReporting() (the agent's
// shutdown deadline).
//
// Example (what the agent does for each lease):
//   auto runner = std::make_unique<AttemptRunner>(client, lease, options);
//   std::thread thread([&] { AttemptResult result = runner->Run(); ... });
//   ... runner->Preempt("SIGTERM");   // on shutdown
//
// Thread safety: Run() once, on a thread that lives until it returns (the trainer's parent-death
// signal follows the thread that started it). Preempt() and GiveUpReporting() from any thread while
// the object lives.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proto/rung.pb.h"
#include "worker/agent/checkpoint_retention.h"
#include "worker/agent/attempt_outcome.h"
#include "worker/agent/backoff.h"
#include "worker/agent/clock.h"
#include "worker/agent/coordinator_client.h"
#include "worker/agent/metric_relay.h"
#include "worker/agent/trainer_gang.h"
#include "worker/agent/trainer_process.h"

namespace rung::agent {

struct AttemptOptions {
  std::string trainer_path;  // the rung-train binary
  std::string work_dir;      // attempts' folders go under it
  std::chrono::milliseconds heartbeat_interval{10000};
  // Between the SIGTERM that asks the trainer to checkpoint and stop, and the SIGKILL.
  std::chrono::milliseconds stop_grace{120000};
  RelayOptions relay;
  BackoffPolicy report_backoff{std::chrono::milliseconds(200), std::chrono::milliseconds(2000), 2.0};
  std::vector<std::string> extra_trainer_arguments;  // appended to rung-train's (tests)
  // What stays of the trial's checkpoints once it SUCCEEDED (checkpoint_retention.h).
  RetentionAfterSuccess retention = RetentionAfterSuccess::kFinal;
};

// What became of an attempt.
enum class AttemptFate {
  kReported,    // Complete was acknowledged with `end`
  kCancelled,   // the coordinator said CANCEL; nothing was reported
  kFenced,      // the coordinator no longer counts this attempt; nothing more was reported
  kUnreported,  // the report was given up (shutdown deadline) or refused for another reason
};

struct AttemptResult {
  AttemptFate fate = AttemptFate::kUnreported;
  AttemptEnd end;          // the outcome determined (what was, or would have been, reported)
  std::string detail;      // why, for cancelled, fenced and unreported attempts
  v1::TrialState trial_state = v1::TRIAL_STATE_UNSPECIFIED;  // the coordinator's answer to Complete
};

// The CPU slots a lease takes (TrialLease.cpu_slots), at least 1.
int CpuSlotsOf(const v1::TrialLease& lease);

// The rung-train processes this worker starts for a lease: 1 for a rank of a gang, else the trial's
// world size (TrialLease.world_size), at least 1.
int LocalRanksOf(const v1::TrialLease& lease);

class AttemptRunner {
 public:
  // Heartbeats, the grace period, delays and backoffs are timed on `clock` (the trainer's pipes
  // are polled in real time). REQUIRES: `client` and `clock` outlive the runner.
  AttemptRunner(CoordinatorClient* client, v1::TrialLease lease, AttemptOptions options,
                const Clock& clock = RealClock());
  ~AttemptRunner();
  AttemptRunner(const AttemptRunner&) = delete;
  AttemptRunner& operator=(const AttemptRunner&) = delete;

  // Runs the attempt to its end (see above) and says how it ended. Once.
  AttemptResult Run();

  // Asks the trainer to checkpoint and stop; the attempt is then reported PREEMPTED with `reason`.
  void Preempt(const std::string& reason);

  // Stops waiting for the coordinator: unsent metrics and an unsent Complete are dropped (the lease
  // then expires and the trial resumes elsewhere from its checkpoints).
  void GiveUpReporting();

  const v1::TrialLease& lease() const { return lease_; }

 private:
  AttemptResult RunAttempt();
  AttemptResult Report(const AttemptEnd& end, v1::CompleteRequest complete);
  // Applies options_.retention once the trial SUCCEEDED (a failure to remove is logged, not fatal).
  void PruneCheckpoints(const std::string& final_dir);
  // The heartbeat thread's body, from Run()'s start until the attempt finished.
  void HeartbeatLoop();
  // REQUIRES: mutex_ held. SIGTERMs the trainer (once) and sets the SIGKILL deadline.
  void StopTrainerLocked();
  // SIGKILLs the trainer once the deadline set by StopTrainerLocked passed.
  void KillIfOverdue();
  // Marks the attempt fenced (stops the trainer, drops unsent metrics).
  void Fence(const std::string& reason);
  std::string Name() const;  // "trial 12 attempt 3"

  CoordinatorClient* client_;
  const v1::TrialLease lease_;
  const AttemptOptions options_;
  const Clock& clock_;
  CallInterrupter interrupter_;  // heartbeats and Complete
  std::atomic<int64_t> latest_step_{0};

  std::string checkpoint_dir_;    // the attempt's checkpoint folder, once its workspace is prepared

  std::mutex mutex_;
  std::condition_variable wake_;  // finished_ or give_up_
  std::thread heartbeats_;        // started by Run()
  std::unique_ptr<MetricRelay> relay_;
  TrainerGang* trainer_ = nullptr;  // while it runs
  std::optional<Clock::TimePoint> kill_at_;
  bool stop_signalled_ = false;
  bool killed_ = false;
  std::optional<std::string> preempt_reason_;
  std::optional<std::string> cancel_reason_;
  std::optional<std::string> fenced_reason_;
  bool finished_ = false;
  bool give_up_ = false;
};

}  // namespace rung::agent

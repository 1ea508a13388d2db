// worker/agent/agent.h
//
// The worker agent's main loop (docs/design.md "Processes and data flow"): registers this worker's
// resources, leases trials while it has free CPU slots, runs each leased attempt on a thread of its
// own (attempt_runner.h), and on Shutdown() preempts every running trainer and waits for their
// reports.
//
// Slots: the worker offers `cpu_slots` CPU threads and GPUs 0..gpus-1. A running attempt holds its
// lease's cpu_slots (its trainer's threads) and GPUs; the agent asks for a lease (a long-poll of up
// to lease_wait) only while slots are free, telling the coordinator what is free. An attempt that
// ends frees its slots and GPUs for the next poll; a poll in flight is interrupted (to ask again at
// once) only when GPUs were freed (Agent::Finished says why).
//
// The coordinator may go away at any time: registration and leasing retry with backoff, running
// attempts keep training and buffer their reports (attempt_runner.h), and a coordinator that
// restarted and forgot the worker is told again (coordinator_client.h).
//
// Shutdown (SIGTERM, SIGUSR1, SIGINT in rung-worker): no new leases; every trainer gets SIGTERM,
// checkpoints and exits 75; each attempt is reported PREEMPTED; Run() returns once every attempt is
// reported, or after stop_grace + report_timeout, when unsent reports are given up (those leases
// expire and the trials resume elsewhere from their checkpoints).
//
// The artifact root (artifact_root_check.h): when a registration names the coordinator's artifact
// root, the agent checks that this host sees it (its .rung-artifact-root marker holds the
// coordinator's id, and it is writable). While it does not, the agent leases nothing, says so in one
// line ("the coordinator's artifact root /srv/rung/artifacts is not mounted here (no
// .rung-artifact-root: No such file or directory): this worker leases nothing until it is; checked
// again every 10 s"), checks again every 10 s on its Clock, and says when leasing resumes. Running
// attempts are not affected. A coordinator that names no root (one before this check) gets none.
//
// The allocation's end (allocation_end.h): a worker that knows when its allocation ends registers
// stops_at = that end less end_margin (the coordinator leases it only trials whose next checkpoint
// fits before then), and at stops_at shuts itself down as above, the reason saying so ("allocation
// ends at ... : stopping 180 s before it"). Run() turns stops_at into a time on its Clock once, when
// it starts: a wall clock that jumps later does not move it.
//
// Example:
//   Agent agent(client.get(), options);
//   std::thread signals([&] { int signal = WaitForStopSignal(); agent.Shutdown(strsignal(signal)); });
//   options.allocation_end = AllocationEnd{end, "--until ..."};   // optional
//   Status status = agent.Run();   // returns after Shutdown(), or once stopped before that end
//
// Thread safety: Run() once, from one thread; Shutdown() from any thread, any number of times.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <optional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "core/common/status.h"
#include "worker/agent/allocation_end.h"
#include "worker/agent/attempt_runner.h"
#include "worker/agent/clock.h"
#include "worker/agent/coordinator_client.h"

namespace rung::agent {

struct AgentOptions {
  std::string worker_id;  // letters, digits, '-', '_', '.'
  std::string host;       // this host's name
  std::string name;       // optional label (e.g. a SLURM job id)
  int cpu_slots = 1;      // CPU threads trials may use in total, >= 1
  int gpus = 0;           // GPUs 0..gpus-1 trials may use
  // Heartbeats of each attempt: the coordinator's interval, or this when shorter (0: the coordinator's).
  std::chrono::milliseconds heartbeat_interval{0};
  std::chrono::milliseconds lease_wait{20000};  // long-poll of one Lease call
  // After stop_grace (AttemptOptions), how long to wait for preempted attempts' reports.
  std::chrono::milliseconds report_timeout{30000};
  BackoffPolicy retry_backoff{std::chrono::milliseconds(200), std::chrono::milliseconds(2000), 2.0};
  AttemptOptions attempt;  // trainer path, work dir, stop grace, relay batching
  // The trainer's BLAS kernel on this machine, as registered ("Cooperlake (rung)";
  // core/common/trainer_blas_kernel.h); "" when the trainer could not say.
  std::string blas_kernel;
  // When this worker's allocation ends (nullopt: unknown, it runs until Shutdown()), and how long
  // before it the worker stops by itself: time for each trainer's stop_grace and the reports
  // (rung-worker's --end-margin, default --grace-seconds + 60 s).
  std::optional<AllocationEnd> allocation_end;
  std::chrono::milliseconds end_margin{180000};
};

// INVALID_ARGUMENT naming the flag when options cannot work (no slots, bad worker id, no trainer, a
// negative end margin). Whether the allocation's end is still ahead is CheckStopsAfter's (it needs now).
Status ValidateAgentOptions(const AgentOptions& options);

class Agent {
 public:
  // Backoffs, the shutdown's deadline and every attempt's times are on `clock` (a lease long-poll
  // is a real-time gRPC deadline). REQUIRES: `client` and `clock` outlive the agent;
  // ValidateAgentOptions(options).ok().
  Agent(CoordinatorClient* client, AgentOptions options, const Clock& clock = RealClock());
  // REQUIRES: Run() has returned (or was never called).
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Registers and runs trials until Shutdown() or the stop before the allocation's end, then
  // preempts and reports (see above). Returns OK after a shutdown; errors: the coordinator refused
  // the registration for good, with its code (UNAUTHENTICATED or PERMISSION_DENIED: the worker
  // token; INVALID_ARGUMENT: the worker id or the request).
  Status Run();

  // Starts the shutdown; `reason` goes into the PREEMPTED reports ("SIGTERM").
  void Shutdown(const std::string& reason);

  // Whether the agent stopped because its stop before the allocation's end came (not a signal):
  // rung-worker then exits 5, and deploy/slurm/workers.sbatch requeues its job.
  bool StoppedForAllocationEnd() const;

 private:
  struct Running {
    std::unique_ptr<AttemptRunner> runner;
    std::thread thread;
    int cpu_slots = 0;
    std::set<int> gpus;
    bool done = false;
    bool released = false;  // its slots and GPUs went back to the pool (or to the next lease)
  };
  using AttemptId = std::pair<int64_t, int64_t>;  // trial, attempt

  Status Register();
  // Waits on the clock until `deadline`, then shuts down for the allocation's end; returns early
  // once a shutdown started or Run() is over.
  void StopAt(Clock::TimePoint deadline);
  void LeaseLoop();
  // The lease loop's thread only. Whether this worker may lease as far as the artifact root goes:
  // checks the root the last registration named (artifact_root_check.h) when it names one anew, and
  // while that check fails, again once artifact_root_next_check_ is reached; logs when the root is
  // found missing, and when it is back.
  bool ArtifactRootMounted();
  void Launch(const v1::TrialLease& lease);
  // REQUIRES: mutex_ held. Launch() under the caller's lock: adds the running entry of `lease` (its
  // slots taken) and starts its thread. False when that attempt runs already (the lease is ignored).
  bool LaunchLocked(const v1::TrialLease& lease);
  // The end of an attempt, the last thing its thread does: its slots free for the next lease.
  void Finished(const AttemptId& id, const AttemptResult& result);
  // REQUIRES: mutex_ held. Gives a running entry's slots and GPUs back (once).
  void Release(Running& running);
  // REQUIRES: mutex_ held. Joins the threads of finished attempts and frees their slots.
  void ReapFinished(std::unique_lock<std::mutex>& lock);
  void PreemptAndWait();

  CoordinatorClient* client_;
  AgentOptions options_;
  const Clock& clock_;
  CallInterrupter lease_interrupter_;  // cancels a lease long-poll: shutdown, or GPUs were freed

  mutable std::mutex mutex_;
  std::condition_variable changed_;  // an attempt finished, or shutdown
  std::map<AttemptId, Running> running_;
  int used_cpu_slots_ = 0;
  std::set<int> used_gpus_;
  bool shutting_down_ = false;
  std::string shutdown_reason_;
  bool run_over_ = false;  // Run() is returning: StopAt() ends
  bool stopped_for_allocation_end_ = false;  // StopAt() reached its deadline before any other shutdown
  // Set when a trainer exited for a full disk: the folder it named. No trial is leased (and one that
  // comes with a Complete answer is preempted at once) until that file system has room again.
  std::optional<std::string> full_disk_folder_;
  // The lease loop's thread only: the artifact root (path, marker id) the last registration named and
  // was checked; while it is not usable here, why (no trial is leased; running attempts go on), and
  // when to check it again.
  std::pair<std::string, std::string> artifact_root_;
  std::optional<std::string> artifact_root_problem_;
  Clock::TimePoint artifact_root_next_check_;
};

}  // namespace rung::agent

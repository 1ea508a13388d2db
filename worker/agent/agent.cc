// worker/agent/agent.cc
#include "worker/agent/agent.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>

#include <google/protobuf/util/time_util.h>

#include "core/common/provenance.h"
#include "proto/protocol_version.h"
#include "worker/agent/artifact_root_check.h"
#include "worker/agent/disk_space.h"
#include "worker/agent/log.h"

namespace rung::agent {
namespace {

bool IsWorkerIdCharacter(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

}  // namespace

Status ValidateAgentOptions(const AgentOptions& options) {
  if (options.cpu_slots < 1) return Status::InvalidArgument("--cpus must be at least 1");
  if (options.gpus < 0) return Status::InvalidArgument("--gpus must not be negative");
  if (options.worker_id.empty()) return Status::InvalidArgument("--worker-id must not be empty");
  for (char c : options.worker_id) {
    if (!IsWorkerIdCharacter(c)) {
      return Status::InvalidArgument("--worker-id '" + options.worker_id +
                                     "' may only have letters, digits, '-', '_' and '.'");
    }
  }
  if (options.attempt.trainer_path.empty() || ::access(options.attempt.trainer_path.c_str(), X_OK) != 0) {
    return Status::InvalidArgument("--trainer '" + options.attempt.trainer_path +
                                   "' is not an executable rung-train binary");
  }
  if (options.host.empty()) {
    return Status::InvalidArgument("--host must not be empty: give the name other workers reach this one by");
  }
  if (options.attempt.work_dir.empty()) return Status::InvalidArgument("--work-dir must not be empty");
  if (options.heartbeat_interval.count() < 0) return Status::InvalidArgument("--heartbeat-seconds must not be negative");
  if (options.end_margin.count() < 0) return Status::InvalidArgument("--end-margin must not be negative");
  return Status::Ok();
}

Agent::Agent(CoordinatorClient* client, AgentOptions options, const Clock& clock)
    : client_(client), options_(std::move(options)), clock_(clock), lease_interrupter_(clock) {}

Agent::~Agent() = default;

void Agent::Shutdown(const std::string& reason) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (shutting_down_) return;
    shutting_down_ = true;
    shutdown_reason_ = reason;
    changed_.notify_all();
  }
  AgentLog("shutting down (" + reason + "): no new trials; running trainers checkpoint and stop");
  lease_interrupter_.Interrupt();
}

Status Agent::Run() {
  std::thread stop_timer;
  if (options_.allocation_end) {
    // Once, now: the wall clock's distance to stops_at, from here on a time of the agent's clock.
    const auto left = StopsAt(*options_.allocation_end, options_.end_margin) - std::chrono::system_clock::now();
    const Clock::TimePoint deadline = clock_.Now() + std::chrono::duration_cast<Clock::Duration>(left);
    stop_timer = std::thread([this, deadline] { StopAt(deadline); });
  }
  Status status = Register();
  if (status.ok()) {
    LeaseLoop();
    PreemptAndWait();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    run_over_ = true;
    changed_.notify_all();
  }
  if (stop_timer.joinable()) stop_timer.join();
  return status;
}

void Agent::StopAt(Clock::TimePoint deadline) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (clock_.WaitUntil(changed_, lock, deadline, [this] { return shutting_down_ || run_over_; })) return;
    stopped_for_allocation_end_ = true;
  }
  Shutdown(StopReason(*options_.allocation_end, options_.end_margin));
}

bool Agent::StoppedForAllocationEnd() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stopped_for_allocation_end_;
}

Status Agent::Register() {
  v1::RegisterRequest request;
  request.set_worker_id(options_.worker_id);
  request.set_host(options_.host);
  request.set_name(options_.name);
  request.set_cpu_slots(options_.cpu_slots);
  for (int index = 0; index < options_.gpus; ++index) request.add_gpus()->set_index(index);
  request.set_build_commit(BuildCommit());
  request.set_blas_kernel(options_.blas_kernel);
  request.set_pid(::getpid());
  request.set_protocol_version(wire::kProtocolVersion);
  if (options_.allocation_end) {
    const WallTime stops_at = StopsAt(*options_.allocation_end, options_.end_margin);
    *request.mutable_stops_at() = google::protobuf::util::TimeUtil::MillisecondsToTimestamp(
        std::chrono::duration_cast<std::chrono::milliseconds>(stops_at.time_since_epoch()).count());
  }

  Backoff backoff(options_.retry_backoff);
  bool outage_logged = false;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (shutting_down_) return Status::Ok();
      lease_interrupter_.Reset();
    }
    StatusOr<v1::RegisterResponse> response = client_->Register(request, &lease_interrupter_);
    if (response.ok()) {
      const std::chrono::milliseconds coordinator_interval(
          google::protobuf::util::TimeUtil::DurationToMilliseconds(response->heartbeat_interval()));
      std::chrono::milliseconds interval = coordinator_interval;
      if (options_.heartbeat_interval.count() > 0 &&
          (interval.count() <= 0 || options_.heartbeat_interval < interval)) {
        interval = options_.heartbeat_interval;
      }
      if (interval.count() <= 0) interval = std::chrono::seconds(10);
      options_.attempt.heartbeat_interval = interval;
      AgentLog("registered as " + response->worker_id() + " (" + std::to_string(options_.cpu_slots) + " CPU slots, " +
               std::to_string(options_.gpus) + " GPUs) with the coordinator (rung " +
               response->server().build_commit() + "); heartbeat every " + SecondsText(interval));
      return Status::Ok();
    }
    const Status& status = response.status();
    if (status.code() == StatusCode::kCancelled) continue;
    if (!IsTransient(status)) return status;
    if (!outage_logged) AgentLog(status.message() + "; retrying until the coordinator answers");
    outage_logged = true;
    lease_interrupter_.SleepFor(backoff.Next());
  }
}

void Agent::LeaseLoop() {
  Backoff backoff(options_.retry_backoff);
  bool outage_logged = false;
  bool quarantined = false;  // as the coordinator's last answer said
  for (;;) {
    v1::LeaseRequest request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ReapFinished(lock);
      while (!shutting_down_ && used_cpu_slots_ >= options_.cpu_slots) {
        changed_.wait(lock);
        ReapFinished(lock);
      }
      if (shutting_down_) return;
      lease_interrupter_.Reset();
      if (full_disk_folder_) {
        if (!EnoughSpaceToLease(*full_disk_folder_)) {
          lock.unlock();
          lease_interrupter_.SleepFor(std::chrono::seconds(5));  // heartbeats go on; asks again
          continue;
        }
        AgentLog(*full_disk_folder_ + " has room again: leasing resumes");
        full_disk_folder_.reset();
      }
      request.mutable_free()->set_cpu_slots(options_.cpu_slots - used_cpu_slots_);
      for (int index = 0; index < options_.gpus; ++index) {
        if (used_gpus_.count(index) == 0) request.mutable_free()->add_gpus(index);
      }
    }
    if (!ArtifactRootMounted()) {  // outside the lock: a slow mount holds up no attempt's ending
      lease_interrupter_.SleepFor(
          std::chrono::ceil<std::chrono::milliseconds>(artifact_root_next_check_ - clock_.Now()));
      continue;  // heartbeats go on; checks again when due
    }
    StatusOr<v1::LeaseResponse> response = client_->Lease(request, options_.lease_wait, &lease_interrupter_);
    if (response.ok()) {
      if (outage_logged) AgentLog("the coordinator answers again");
      outage_logged = false;
      backoff.Reset();
      const bool now_quarantined = !response->quarantine_reason().empty();
      if (now_quarantined != quarantined) {
        AgentLog(now_quarantined ? "quarantined by the coordinator: " + response->quarantine_reason() +
                                       "; this worker runs no trial until then"
                                 : std::string("released from quarantine"));
      }
      quarantined = now_quarantined;
      if (response->has_lease()) Launch(response->lease());
      continue;
    }
    const Status& status = response.status();
    if (status.code() == StatusCode::kCancelled) continue;  // shutdown, or GPUs were freed: ask again
    if (!outage_logged) {
      AgentLog(status.message() + (IsTransient(status) ? "; trials keep training, leasing resumes when it is back"
                                                       : "; retrying"));
    }
    outage_logged = true;
    lease_interrupter_.SleepFor(backoff.Next());
  }
}

bool Agent::ArtifactRootMounted() {
  const v1::RegisterResponse registered = client_->last_registration();
  const std::pair<std::string, std::string> named{registered.artifact_root(), registered.artifact_root_id()};
  if (named.first.empty()) {  // a coordinator that names no root: nothing to check
    artifact_root_ = named;
    artifact_root_problem_.reset();
    return true;
  }
  const bool named_anew = named != artifact_root_;
  if (!named_anew && (!artifact_root_problem_ || clock_.Now() < artifact_root_next_check_)) {
    return !artifact_root_problem_;
  }
  const Status mounted = CheckArtifactRoot(named.first, named.second);
  artifact_root_next_check_ = clock_.Now() + kArtifactRootRecheckInterval;
  if (mounted.ok()) {
    if (artifact_root_problem_) AgentLog(ArtifactRootMountedAgainLine(named.first));
    artifact_root_problem_.reset();
  } else {
    if (named_anew || !artifact_root_problem_) AgentLog(ArtifactRootNotMountedLine(named.first, mounted));
    artifact_root_problem_ = mounted.message();
  }
  artifact_root_ = named;
  return mounted.ok();
}

void Agent::Launch(const v1::TrialLease& lease) {
  std::lock_guard<std::mutex> lock(mutex_);
  LaunchLocked(lease);
}

bool Agent::LaunchLocked(const v1::TrialLease& lease) {
  const AttemptId id{lease.trial_id(), lease.attempt()};
  const int cpu_slots = CpuSlotsOf(lease);
  if (running_.count(id) != 0) {
    AgentLog("trial " + std::to_string(id.first) + " attempt " + std::to_string(id.second) +
             " leased again while it runs; ignored");
    return false;
  }
  if (cpu_slots > options_.cpu_slots - used_cpu_slots_) {
    AgentLog("trial " + std::to_string(id.first) + " takes " + std::to_string(cpu_slots) + " CPU slots, " +
             std::to_string(options_.cpu_slots - used_cpu_slots_) + " are free; running it anyway");
  }
  Running& running = running_[id];
  running.runner = std::make_unique<AttemptRunner>(client_, lease, options_.attempt, clock_);
  running.cpu_slots = cpu_slots;
  running.gpus.insert(lease.gpus().begin(), lease.gpus().end());
  used_cpu_slots_ += cpu_slots;
  used_gpus_.insert(running.gpus.begin(), running.gpus.end());
  AgentLog("leased trial " + std::to_string(id.first) + " attempt " + std::to_string(id.second) + " (" +
           std::to_string(cpu_slots) + " CPU slots; " + std::to_string(options_.cpu_slots - used_cpu_slots_) +
           " left)");
  if (shutting_down_) running.runner->Preempt("worker shutting down (" + shutdown_reason_ + ")");
  else if (full_disk_folder_) running.runner->Preempt("no space left on device at " + *full_disk_folder_ + " on this worker");
  AttemptRunner* runner = running.runner.get();
  running.thread = std::thread([this, id, runner] { Finished(id, runner->Run()); });
  return true;
}

void Agent::Finished(const AttemptId& id, const AttemptResult& result) {
  bool freed_gpus = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Running& running = running_.at(id);
    running.done = true;
    freed_gpus = !running.gpus.empty();
    if (result.end.exit_code == kTrainerExitNoSpace && !full_disk_folder_) {
      full_disk_folder_ = NoSpaceFolder(result.end.reason).value_or(options_.attempt.work_dir);
      AgentLog("no space left on device at " + *full_disk_folder_ + ": this worker leases no trial until " +
               std::to_string(kMinFreeBytesToLease >> 20) + " MiB are free there (trial " +
               std::to_string(id.first) + " was reported PREEMPTED and resumes from its last checkpoint)");
    }
    changed_.notify_all();  // the lease loop joins this thread (it takes the lock no more)
  }
  // A poll in flight asked with what was free when it left, and serves trials of that size as they
  // come: an ending that freed CPU slots leaves it be (the next poll asks with them), because
  // interrupting it races a lease the coordinator may be committing for it (handed back when the
  // coordinator sees the cancel in time, LeaseBroker::Acquire; else it waits out its lease). An
  // ending that freed GPUs interrupts it: a poll that asked without them would leave them idle
  // until it timed out (lease_wait).
  if (freed_gpus) lease_interrupter_.Interrupt();
}

void Agent::Release(Running& running) {
  if (running.released) return;
  running.released = true;
  used_cpu_slots_ -= running.cpu_slots;
  for (int gpu : running.gpus) used_gpus_.erase(gpu);
}

void Agent::ReapFinished(std::unique_lock<std::mutex>& /*lock*/) {
  for (auto entry = running_.begin(); entry != running_.end();) {
    Running& running = entry->second;
    if (!running.done) {
      ++entry;
      continue;
    }
    running.thread.join();  // the thread has left the lock and ends without taking it again
    Release(running);
    entry = running_.erase(entry);
  }
}

void Agent::PreemptAndWait() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (auto& [id, running] : running_) running.runner->Preempt("worker shutting down (" + shutdown_reason_ + ")");
  const auto all_done = [this] {
    for (const auto& [id, running] : running_) {
      if (!running.done) return false;
    }
    return true;
  };
  if (!clock_.WaitFor(changed_, lock, options_.attempt.stop_grace + options_.report_timeout, all_done)) {
    AgentLog("giving up the reports still unsent after " + SecondsText(options_.attempt.stop_grace + options_.report_timeout) +
             "; their leases expire and the trials resume elsewhere");
    for (auto& [id, running] : running_) {
      if (!running.done) running.runner->GiveUpReporting();
    }
    changed_.wait(lock, all_done);
  }
  ReapFinished(lock);
  AgentLog("every attempt ended; exiting");
}

}  // namespace rung::agent

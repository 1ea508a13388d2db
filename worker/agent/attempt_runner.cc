// worker/agent/attempt_runner.cc
#include "worker/agent/attempt_runner.h"

#include <signal.h>

#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

#include "worker/agent/attempt_workspace.h"
#include "worker/agent/log.h"
#include "worker/agent/attempt_records.h"

namespace rung::agent {
namespace {

constexpr std::chrono::milliseconds kPollInterval{100};
constexpr size_t kStderrTailLines = 20;

const char* OutcomeName(v1::AttemptOutcome outcome) {
  switch (outcome) {
    case v1::OUTCOME_SUCCEEDED: return "SUCCEEDED";
    case v1::OUTCOME_FAILED: return "FAILED";
    case v1::OUTCOME_PREEMPTED: return "PREEMPTED";
    default: return "UNSPECIFIED";
  }
}

// Whether a refusal means the coordinator no longer counts this attempt.
bool IsFenced(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition || status.code() == StatusCode::kNotFound;
}

// An attempt that ends without a report: cancelled or fenced, and why.
AttemptResult Unreported(AttemptFate fate, const std::string& detail) {
  AttemptResult result;
  result.fate = fate;
  result.detail = detail;
  return result;
}

}  // namespace

int CpuSlotsOf(const v1::TrialLease& lease) { return std::max(1, lease.cpu_slots()); }

bool IsGangRankLease(const v1::TrialLease& lease) { return !lease.rendezvous().empty() && lease.world_size() > 1; }

int LocalRanksOf(const v1::TrialLease& lease) { return IsGangRankLease(lease) ? 1 : std::max(1, lease.world_size()); }

AttemptRunner::AttemptRunner(CoordinatorClient* client, v1::TrialLease lease, AttemptOptions options,
                             const Clock& clock)
    : client_(client),
      lease_(std::move(lease)),
      options_(std::move(options)),
      clock_(clock),
      interrupter_(clock) {}

AttemptRunner::~AttemptRunner() = default;

std::string AttemptRunner::Name() const {
  return "trial " + std::to_string(lease_.trial_id()) + " attempt " + std::to_string(lease_.attempt());
}

AttemptResult AttemptRunner::Run() {
  heartbeats_ = std::thread([this] { HeartbeatLoop(); });
  AttemptResult result = RunAttempt();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
    wake_.notify_all();
  }
  interrupter_.Interrupt();  // a heartbeat in flight
  heartbeats_.join();
  return result;
}

void AttemptRunner::Preempt(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (preempt_reason_) return;
  preempt_reason_ = reason;
  StopTrainerLocked();
}

void AttemptRunner::GiveUpReporting() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    give_up_ = true;
    if (relay_) relay_->Abandon();
    wake_.notify_all();
  }
  interrupter_.Interrupt();
}

void AttemptRunner::StopTrainerLocked() {
  const Clock::TimePoint deadline = clock_.Now() + options_.stop_grace;
  if (!kill_at_ || deadline < *kill_at_) kill_at_ = deadline;
  if (trainer_ != nullptr && !stop_signalled_) {
    stop_signalled_ = true;
    Status signalled = trainer_->Signal(SIGTERM);
    if (!signalled.ok()) AgentLog(Name() + ": " + signalled.message());
  }
}

void AttemptRunner::KillIfOverdue() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (trainer_ == nullptr || killed_ || !kill_at_ || clock_.Now() < *kill_at_) return;
  killed_ = true;
  AgentLog(Name() + ": rung-train did not stop within the grace period; SIGKILL");
  Status signalled = trainer_->Signal(SIGKILL);
  if (!signalled.ok()) AgentLog(Name() + ": " + signalled.message());
}

void AttemptRunner::Fence(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (fenced_reason_) return;
  fenced_reason_ = reason;
  AgentLog(Name() + " is no longer current (" + reason + "); stopping it, reporting nothing more");
  if (relay_) relay_->Abandon();
  StopTrainerLocked();
}

void AttemptRunner::HeartbeatLoop() {
  bool outage_logged = false;
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::TimePoint due = clock_.Now() + options_.heartbeat_interval;
  for (;;) {
    clock_.WaitUntil(wake_, lock, due, [this] { return finished_ || give_up_; });
    due = clock_.Now() + options_.heartbeat_interval;
    if (finished_ || give_up_ || cancel_reason_ || fenced_reason_) return;
    lock.unlock();
    v1::HeartbeatRequest request;
    request.set_trial_id(lease_.trial_id());
    request.set_attempt(lease_.attempt());
    request.set_step(latest_step_.load());
    StatusOr<v1::HeartbeatResponse> response = client_->Heartbeat(request, &interrupter_);
    if (!response.ok() && IsFenced(response.status())) {
      Fence(response.status().message());
      return;
    }
    lock.lock();
    if (response.ok()) {
      if (outage_logged) AgentLog(Name() + ": heartbeats reach the coordinator again");
      outage_logged = false;
      if (response->action() == v1::HeartbeatResponse::ACTION_CANCEL) {
        cancel_reason_ = response->reason().empty() ? "cancelled" : response->reason();
        AgentLog(Name() + ": CANCEL (" + *cancel_reason_ + "); stopping rung-train");
        if (relay_) relay_->Abandon();
        StopTrainerLocked();
        return;
      }
    } else if (response.status().code() != StatusCode::kCancelled && !outage_logged) {
      AgentLog(Name() + ": heartbeat failed: " + response.status().message() + "; training on");
      outage_logged = true;
    }
  }
}

AttemptResult AttemptRunner::RunAttempt() {
  v1::CompleteRequest complete;
  StatusOr<AttemptWorkspace> workspace = PrepareAttemptWorkspace(options_.work_dir, lease_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    relay_ = std::make_unique<MetricRelay>(client_, lease_.trial_id(), lease_.attempt(), options_.relay, clock_);
    if (give_up_) relay_->Abandon();
  }
  if (!workspace.ok()) {
    AttemptEnd end;
    end.reason = "the worker cannot prepare the attempt: " + workspace.status().message();
    return Report(end, complete);
  }
  const int threads = CpuSlotsOf(lease_);
  TrainerLaunch launch;
  launch.trainer_path = options_.trainer_path;
  launch.config_path = workspace->config_path;
  launch.checkpoint_dir = workspace->checkpoint_dir;
  checkpoint_dir_ = workspace->checkpoint_dir;
  launch.resume = workspace->resume;
  launch.threads = threads;
  launch.gpus.assign(lease_.gpus().begin(), lease_.gpus().end());
  launch.stderr_path = workspace->stderr_path;
  launch.extra_arguments = options_.extra_trainer_arguments;
  // One rank of a gang across workers: this worker runs only that rank, meeting the others at the
  // lease's rendezvous; only rank 0 relays output (ranks > 0 print only errors, kept in their log).
  const bool gang_rank = IsGangRankLease(lease_);
  const bool relays_output = !gang_rank || lease_.rank() == 0;
  if (gang_rank) {
    launch.extra_arguments.insert(launch.extra_arguments.begin(),
                                  {"--rank", std::to_string(lease_.rank()), "--rendezvous", lease_.rendezvous()});
  }

  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancel_reason_) return Unreported(AttemptFate::kCancelled, *cancel_reason_);
    if (fenced_reason_) return Unreported(AttemptFate::kFenced, *fenced_reason_);
    if (preempt_reason_) {
      AttemptEnd end;
      end.outcome = v1::OUTCOME_PREEMPTED;
      end.reason = *preempt_reason_ + " before rung-train started";
      return Report(end, complete);
    }
  }
  const int world_size = LocalRanksOf(lease_);
  StatusOr<std::unique_ptr<TrainerGang>> started = TrainerGang::Start(launch, world_size);
  if (!started.ok()) {
    AttemptEnd end;
    end.exit_code = 127;
    end.reason = "the worker cannot start rung-train: " + started.status().message();
    return Report(end, complete);
  }
  std::unique_ptr<TrainerGang> trainer = std::move(started).value();
  AgentLog(Name() + ": rung-train started (pid " + std::to_string(trainer->pid()) + ", " +
           (world_size > 1 ? std::to_string(world_size) + " ranks of " : std::string()) +
           (gang_rank ? "rank " + std::to_string(lease_.rank()) + " of " + std::to_string(lease_.world_size()) +
                            " at " + lease_.rendezvous() + ", "
                      : std::string()) +
           std::to_string(trainer->threads_per_rank()) + " thread(s), resume " + workspace->resume + ", in " +
           workspace->dir + ")");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    trainer_ = trainer.get();
    if (preempt_reason_ || cancel_reason_ || fenced_reason_) StopTrainerLocked();
  }

  std::ofstream records_file(workspace->records_path, std::ios::app);
  bool records_copy_failed = false;
  AttemptRecords records;
  std::deque<std::string> stderr_tail;
  TrainerOutput output;
  for (bool more = true; more;) {
    more = trainer->ReadOutput(kPollInterval, &output);
    for (std::string& line : output.stdout_lines) {
      records_file << line << '\n';
      const records::TrainerRecord* record = records.Add(line);
      latest_step_.store(records.latest_step());
      if (relays_output) relay_->AddStdout(std::move(line), record);
    }
    if (!output.stdout_lines.empty()) records_file.flush();
    // The local copy is for reading by hand (the coordinator has every record the relay delivers): a
    // write it refuses (a full disk) is said once, and training goes on.
    if (!records_file && !records_copy_failed) {
      records_copy_failed = true;
      AgentLog(Name() + ": the local copy of the records at " + workspace->records_path +
               " stops here (its write failed: " + std::strerror(errno) + "); the coordinator has them");
    }
    for (std::string& line : output.stderr_lines) {
      stderr_tail.push_back(line);
      if (stderr_tail.size() > kStderrTailLines) stderr_tail.pop_front();
      if (relays_output) relay_->AddStderr(std::move(line));
    }
    output.Clear();
    if (Status relayed = relay_->status(); IsFenced(relayed)) Fence(relayed.message());
    KillIfOverdue();
  }
  std::optional<TrainerExit> exit;
  while (!(exit = trainer->Wait(kPollInterval))) KillIfOverdue();
  std::optional<std::string> preempt_reason;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    trainer_ = nullptr;
    preempt_reason = preempt_reason_;
    if (cancel_reason_) {
      AgentLog(Name() + ": rung-train " + exit->Describe() + " after CANCEL");
      return Unreported(AttemptFate::kCancelled, *cancel_reason_);
    }
    if (fenced_reason_) return Unreported(AttemptFate::kFenced, *fenced_reason_);
  }
  const std::string broken_by = trainer->broken_by();
  trainer.reset();
  AgentLog(Name() + ": rung-train " + exit->Describe());
  AttemptEnd end = ClassifyTrainerExit(*exit, records, preempt_reason, stderr_tail);
  if (!relays_output && exit->signal == 0 && exit->exit_code == 0) {
    end = AttemptEnd{};  // a rank > 0 prints no final record: rank 0 reports the results
    end.outcome = v1::OUTCOME_SUCCEEDED;
  }
  if (world_size > 1 && !broken_by.empty()) {
    AgentLog(Name() + ": " + broken_by + "; every rank was stopped");
    end.reason = broken_by + ", so every rank of the attempt was stopped: " + end.reason;
  }
  if (records.undecodable_lines() > 0) {
    AgentLog(Name() + ": " + std::to_string(records.undecodable_lines()) +
             " stdout line(s) looked like records but did not decode (kept as log text): " +
             records.first_decode_error());
  }
  return Report(end, complete);
}

AttemptResult AttemptRunner::Report(const AttemptEnd& end, v1::CompleteRequest complete) {
  AttemptResult result;
  result.end = end;
  StatusOr<int64_t> last_sequence = relay_->Drain();
  if (!last_sequence.ok()) {
    const Status& status = last_sequence.status();
    result.detail = status.message();
    result.fate = IsFenced(status) ? AttemptFate::kFenced : AttemptFate::kUnreported;
    AgentLog(Name() + ": not reported (" + status.message() + ")");
    return result;
  }
  complete.set_trial_id(lease_.trial_id());
  complete.set_attempt(lease_.attempt());
  complete.set_outcome(end.outcome);
  complete.set_reason(end.reason);
  complete.set_exit_code(end.exit_code);
  complete.set_last_batch_sequence(*last_sequence);
  Backoff backoff(options_.report_backoff);
  bool outage_logged = false;
  for (;;) {
    StatusOr<v1::CompleteResponse> response = client_->Complete(complete, &interrupter_);
    if (response.ok()) {
      result.fate = AttemptFate::kReported;
      result.trial_state = response->trial_state();
      AgentLog(Name() + ": reported " + OutcomeName(end.outcome) + (end.reason.empty() ? "" : " (" + end.reason + ")") +
               "; trial now " + v1::TrialState_Name(response->trial_state()));
      if (!response->quarantine_reason().empty()) {
        AgentLog("the coordinator quarantined this worker: " + response->quarantine_reason());
      }
      if (response->trial_state() == v1::TRIAL_STATE_SUCCEEDED) PruneCheckpoints(checkpoint_dir_);
      return result;
    }
    const Status& status = response.status();
    result.detail = status.message();
    if (IsFenced(status)) {
      result.fate = AttemptFate::kFenced;
      AgentLog(Name() + ": Complete refused: " + status.message());
      return result;
    }
    if (!IsTransient(status)) {
      AgentLog(Name() + ": not reported (" + status.message() + ")");
      return result;
    }
    if (!outage_logged) AgentLog(Name() + ": " + status.message() + "; will report when the coordinator is back");
    outage_logged = true;
    if (!interrupter_.SleepFor(backoff.Next())) {
      AgentLog(Name() + ": report given up");
      return result;
    }
  }
}

void AttemptRunner::PruneCheckpoints(const std::string& final_dir) {
  std::vector<std::string> earlier(lease_.resume_from_dirs().begin(), lease_.resume_from_dirs().end());
  StatusOr<int> removed = ApplyRetentionAfterSuccess(options_.retention, final_dir, earlier);
  if (!removed.ok()) {
    AgentLog(Name() + ": " + removed.status().message());
  } else if (*removed > 0) {
    AgentLog(Name() + ": removed " + std::to_string(*removed) + " checkpoint(s) of the succeeded trial");
  }
}

}  // namespace rung::agent

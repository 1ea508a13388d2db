// worker/agent/trainer_gang.cc
#include "worker/agent/trainer_gang.h"

#include <signal.h>

#include <algorithm>

#include "core/common/loopback_port.h"

namespace rung::agent {
namespace {

// A rank's exit that a gang survives: done (0) or stopped by agreement after a checkpoint (75).
bool EndedNormally(const TrainerExit& exit) { return exit.signal == 0 && (exit.exit_code == 0 || exit.exit_code == 75); }

// trainer.log -> trainer-rank2.log
std::string RankLogPath(const std::string& path, int rank) {
  const std::string suffix = "-rank" + std::to_string(rank);
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".log") == 0) {
    return path.substr(0, path.size() - 4) + suffix + ".log";
  }
  return path + suffix;
}

}  // namespace

StatusOr<std::unique_ptr<TrainerGang>> TrainerGang::Start(const TrainerLaunch& launch, int world_size) {
  if (world_size < 1) return Status::InvalidArgument("a trial needs at least one rank");
  auto gang = std::unique_ptr<TrainerGang>(new TrainerGang());
  if (world_size == 1) {
    RUNG_ASSIGN_OR_RETURN(std::unique_ptr<TrainerProcess> process, TrainerProcess::Start(launch));
    gang->threads_per_rank_ = launch.threads;
    gang->ranks_.push_back(std::move(process));
    gang->output_ended_.assign(1, false);
    return gang;
  }
  RUNG_ASSIGN_OR_RETURN(int port, FreeLoopbackPort());
  const std::string rendezvous = "127.0.0.1:" + std::to_string(port);
  gang->threads_per_rank_ = std::max(1, launch.threads / world_size);
  const size_t gpus_per_rank = launch.gpus.size() / static_cast<size_t>(world_size);
  for (int rank = 0; rank < world_size; ++rank) {
    TrainerLaunch rank_launch = launch;
    rank_launch.threads = gang->threads_per_rank_;
    rank_launch.gpus.assign(launch.gpus.begin() + static_cast<std::ptrdiff_t>(rank * gpus_per_rank),
                            launch.gpus.begin() + static_cast<std::ptrdiff_t>((rank + 1) * gpus_per_rank));
    if (rank > 0) rank_launch.stderr_path = RankLogPath(launch.stderr_path, rank);
    rank_launch.extra_arguments = {"--rank", std::to_string(rank), "--rendezvous", rendezvous};
    rank_launch.extra_arguments.insert(rank_launch.extra_arguments.end(), launch.extra_arguments.begin(),
                                       launch.extra_arguments.end());
    StatusOr<std::unique_ptr<TrainerProcess>> process = TrainerProcess::Start(rank_launch);
    if (!process.ok()) {
      // The ranks already started would wait for this one at the rendezvous: the destructor kills them.
      return process.status().WithContext("rank " + std::to_string(rank));
    }
    gang->ranks_.push_back(std::move(process).value());
  }
  gang->output_ended_.assign(static_cast<size_t>(world_size), false);
  return gang;
}

bool TrainerGang::ReadOutput(std::chrono::milliseconds timeout, TrainerOutput* output) {
  // The wait goes to rank 0 while its output lasts, then to the first rank whose output still does.
  const size_t waited = static_cast<size_t>(
      std::find(output_ended_.begin(), output_ended_.end(), false) - output_ended_.begin());
  for (size_t rank = 0; rank < ranks_.size(); ++rank) {
    if (output_ended_[rank]) continue;
    const std::chrono::milliseconds wait = rank == waited ? timeout : std::chrono::milliseconds(0);
    if (rank == 0) {
      output_ended_[0] = !ranks_[0]->ReadOutput(wait, output);
      continue;
    }
    TrainerOutput rank_output;
    output_ended_[rank] = !ranks_[rank]->ReadOutput(wait, &rank_output);
    const std::string prefix = "[rank " + std::to_string(rank) + "] ";
    for (const auto* lines : {&rank_output.stdout_lines, &rank_output.stderr_lines}) {
      for (const std::string& line : *lines) output->stderr_lines.push_back(prefix + line);
    }
  }
  NoticeExits();
  return std::find(output_ended_.begin(), output_ended_.end(), false) != output_ended_.end();
}

void TrainerGang::NoticeExits() {
  if (broken_exit_ || stopping_.load()) return;
  // Of the ranks found ended abnormally, the one killed by a signal broke the gang (the others then
  // fail on their next collective), else the lowest.
  std::optional<size_t> breaker;
  for (size_t rank = 0; rank < ranks_.size(); ++rank) {
    std::optional<TrainerExit> exit = ranks_[rank]->Wait(std::chrono::milliseconds(0));
    if (!exit || EndedNormally(*exit)) continue;
    if (!breaker || (exit->signal != 0 && ranks_[*breaker]->Wait(std::chrono::milliseconds(0))->signal == 0)) {
      breaker = rank;
    }
  }
  if (!breaker) return;
  broken_exit_ = ranks_[*breaker]->Wait(std::chrono::milliseconds(0));
  broken_by_ = "rank " + std::to_string(*breaker) + " " + broken_exit_->Describe();
  // No-op for the reaped; a rank that cannot be signalled fails its next collective anyway.
  for (auto& other : ranks_) other->Signal(SIGKILL).IgnoreError();
}

Status TrainerGang::Signal(int signal_number) {
  stopping_.store(true);
  Status first = Status::Ok();
  for (auto& rank : ranks_) {
    Status signalled = rank->Signal(signal_number);
    if (!signalled.ok() && first.ok()) first = signalled;
  }
  return first;
}

std::optional<TrainerExit> TrainerGang::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    NoticeExits();
    bool all_exited = true;
    for (auto& rank : ranks_) {
      if (!rank->Wait(std::chrono::milliseconds(0))) all_exited = false;
    }
    if (all_exited) return broken_exit_ ? broken_exit_ : ranks_.front()->Wait(std::chrono::milliseconds(0));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    // Wait on the first rank still running, a slice at a time, so that any rank's exit is noticed.
    for (auto& rank : ranks_) {
      if (!rank->Wait(std::chrono::milliseconds(0))) {
        rank->Wait(std::min(left, std::chrono::milliseconds(50)));
        break;
      }
    }
  }
}

}  // namespace rung::agent

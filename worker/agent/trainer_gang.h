// worker/agent/trainer_gang.h
//
// The rung-train processes of one attempt, started together and ended together: one process for an
// ordinary trial, `world_size` ranks for a data-parallel one (resources.world_size > 1) on this
// host. Rank r runs
//
//   rung-train <TrainerLaunch's arguments> --rank r --rendezvous 127.0.0.1:<port> [extra arguments]
//
// with its share of the attempt's CPU slots as threads and of its GPUs, and a free loopback port for
// rank 0's rendezvous. Rank 0's stdout is the attempt's records and its stderr the attempt's log
// (launch.stderr_path); the other ranks' stderr goes to <stderr_path minus .log>-rank<r>.log, and
// their lines (stderr and any stdout: they print only errors) are passed on as stderr lines
// prefixed "[rank r] ".
//
// All or nothing: a rank that ends abnormally (killed by a signal, or an exit code other than 0 and
// 75) while the gang was not being stopped breaks the gang: every other rank is SIGKILLed at once
// (they cannot step without it), and the gang's exit is that rank's, with broken_by() saying which.
// Otherwise the gang's exit is rank 0's (the other ranks end with 0 when done, 75 when the gang
// agreed to stop). A rank that cannot be started stops the ranks started before it.
//
// Same threading rules as TrainerProcess (trainer_process.h): Signal() from any thread, everything
// else on the thread that called Start(), which must outlive the ranks.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "worker/agent/trainer_process.h"

namespace rung::agent {

class TrainerGang {
 public:
  // launch.threads and launch.gpus are the whole attempt's; each rank gets 1/world_size of them
  // (threads at least 1). Errors: those of TrainerProcess::Start, and INTERNAL without a free port.
  static StatusOr<std::unique_ptr<TrainerGang>> Start(const TrainerLaunch& launch, int world_size);

  // SIGKILLs and reaps ranks still running.
  ~TrainerGang() = default;
  TrainerGang(const TrainerGang&) = delete;
  TrainerGang& operator=(const TrainerGang&) = delete;

  int world_size() const { return static_cast<int>(ranks_.size()); }
  pid_t pid() const { return ranks_.front()->pid(); }  // rank 0's
  int threads_per_rank() const { return threads_per_rank_; }

  // Rank 0's new stdout lines and every rank's stderr lines, waiting up to `timeout`. Also notices
  // ranks that ended and breaks the gang when one ended abnormally. Returns false once every rank's
  // output has ended.
  bool ReadOutput(std::chrono::milliseconds timeout, TrainerOutput* output);

  // Sends `signal_number` to every rank still running (a stop asked of the gang: a rank that then
  // ends abnormally does not count as breaking it). Errors: the first INTERNAL of a rank.
  Status Signal(int signal_number);

  // Waits up to `timeout` for every rank to exit; then the gang's exit (see above), else nullopt.
  std::optional<TrainerExit> Wait(std::chrono::milliseconds timeout);

  // "rank 1 killed by signal 9 (Killed)" when a rank broke the gang; "" otherwise.
  const std::string& broken_by() const { return broken_by_; }

 private:
  TrainerGang() = default;
  // Reaps ranks that exited; breaks the gang on the first abnormal exit.
  void NoticeExits();

  std::vector<std::unique_ptr<TrainerProcess>> ranks_;
  std::vector<bool> output_ended_;
  int threads_per_rank_ = 1;
  std::atomic<bool> stopping_{false};  // Signal() was called: exits from now on are the stop's
  std::optional<TrainerExit> broken_exit_;
  std::string broken_by_;
};

}  // namespace rung::agent

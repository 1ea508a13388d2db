// worker/agent/trainer_process.h
//
// One `rung-train` child process and its output. Start() starts (core/common/subprocess.h)
//
//   rung-train --config <config> --checkpoint-dir <dir> --resume <checkpoint|never> --threads <slots>
//
// with OMP_NUM_THREADS=<slots> and CUDA_VISIBLE_DEVICES naming the trial's GPUs (mapped through the
// agent's own CUDA_VISIBLE_DEVICES), stdin from /dev/null, stdout into a pipe the agent reads line by
// line (the JSON records), and stderr appended to a file the agent follows. What Subprocess gives
// every child: no copy of the agent's memory, the default disposition and an empty mask for every
// signal, every inherited descriptor above 2 closed, a failed exec reported by Start() (not by a
// mysterious exit code), signals and reaping through a pidfd (Signal() can never hit a recycled pid).
// And what a trainer asks of it: PR_SET_PDEATHSIG = SIGKILL (a parent that died before it was set is
// noticed), and a process group of its own (a terminal's Ctrl-C reaches the agent, which decides).
//
// The parent-death signal is tied to the *thread* that started it, not to the process (prctl(2)): the
// thread that calls Start() must live until the trainer has been reaped. AttemptRunner runs a whole
// attempt on one thread for this reason.
//
// Example:
//   TrainerLaunch launch{"/opt/rung/bin/rung-train", "trial.json", "ckpt", "never", 4};
//   launch.stderr_path = "trainer.log";
//   StatusOr<std::unique_ptr<TrainerProcess>> trainer = TrainerProcess::Start(launch);
//   TrainerOutput output;
//   while ((*trainer)->ReadOutput(std::chrono::milliseconds(100), &output)) { ...; output.Clear(); }
//   std::optional<TrainerExit> exit = (*trainer)->Wait(std::chrono::seconds(10));
//
// Thread safety: Signal() may be called from any thread at any time while the object lives; every
// other method belongs to the thread that called Start().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace rung::agent {

// What to run.
struct TrainerLaunch {
  std::string trainer_path;     // the rung-train binary
  std::string config_path;      // --config
  std::string checkpoint_dir;   // --checkpoint-dir
  std::string resume = "never"; // --resume: a checkpoint file, or "never"
  int threads = 1;              // --threads and OMP_NUM_THREADS: the trial's CPU slots, >= 1
  std::vector<int> gpus;        // the trial's GPU indices; empty hides every GPU
  std::string stderr_path;      // the trainer's stderr, appended (created if missing); required
  std::vector<std::string> extra_arguments;  // appended after the others (tests: --stop-after-step N)
};

// How a trainer ended.
struct TrainerExit {
  int exit_code = 0;  // the exit status, when it exited
  int signal = 0;     // the signal that killed it; 0 when it exited

  // The exit code, or -signal (CompleteRequest.exit_code).
  int ReportedCode() const { return signal != 0 ? -signal : exit_code; }
  // "exit code 3", or "killed by signal 9 (Killed)".
  std::string Describe() const { return ExitStatus{exit_code, signal}.Describe(); }
};

// New output lines (without their '\n').
struct TrainerOutput {
  std::vector<std::string> stdout_lines;  // the JSON records
  std::vector<std::string> stderr_lines;  // from the stderr file
  void Clear() {
    stdout_lines.clear();
    stderr_lines.clear();
  }
};

class TrainerProcess {
 public:
  // Starts the trainer. Errors: INVALID_ARGUMENT (no trainer path, no stderr path, threads < 1),
  // FAILED_PRECONDITION (the stderr file cannot be opened, the trainer cannot be executed: the
  // message has the errno text), INTERNAL (clone, pipe).
  // REQUIRES: the calling thread outlives the trainer (see above).
  static StatusOr<std::unique_ptr<TrainerProcess>> Start(const TrainerLaunch& launch);

  // SIGKILLs (with its process group) and reaps a trainer that is still running; closes every descriptor.
  ~TrainerProcess();
  TrainerProcess(const TrainerProcess&) = delete;
  TrainerProcess& operator=(const TrainerProcess&) = delete;

  pid_t pid() const { return process_->pid(); }

  // Appends the lines that arrived since the last call, waiting up to `timeout` for stdout data.
  // Returns false once stdout has ended (the trainer exited or closed it) and every line, including
  // an unterminated last one, has been returned.
  bool ReadOutput(std::chrono::milliseconds timeout, TrainerOutput* output);

  // Sends `signal_number` to the trainer; OK and no effect once it has been reaped.
  // Errors: INTERNAL with the errno text.
  Status Signal(int signal_number);

  // Waits up to `timeout` for the trainer to exit and reaps it; nullopt while it still runs. After
  // the first exit is returned, returns it again at once.
  std::optional<TrainerExit> Wait(std::chrono::milliseconds timeout);

 private:
  TrainerProcess() = default;
  void ReadStderr(bool flush_partial, TrainerOutput* output);

  std::unique_ptr<Subprocess> process_;
  int stderr_fd_ = -1;  // the stderr file, read from where the trainer started writing
  std::string stderr_partial_;
};

}  // namespace rung::agent

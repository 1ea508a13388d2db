// coordinator/cli/child_process.h
//
// A child process of `rung run` (the coordinator, the workers): started with fork/exec, stdout
// readable line by line (or sent to a log file), stderr to a log file, killed with the parent
// (PR_SET_PDEATHSIG), stopped with SIGTERM and reaped. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung::cli {

class ChildProcess {
 public:
  // Starts `argv`. stdout goes to a pipe when `capture_stdout`, else to `log_path` like stderr.
  static StatusOr<ChildProcess> Start(const std::vector<std::string>& argv, const std::string& log_path,
                                      bool capture_stdout);
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // SIGKILLs and reaps a child still running

  // The next stdout line, waiting at most `timeout_ms`; nullopt on timeout or end of output.
  std::optional<std::string> ReadLine(int timeout_ms);
  void Signal(int signal) const;
  // Waits up to `timeout_ms` for the exit; SIGKILLs after that. Returns the exit code (128+signal).
  int Stop(int signal, int timeout_ms);
  bool Running();
  pid_t pid() const { return pid_; }

 private:
  ChildProcess() = default;
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  std::string buffer_;
  std::optional<int> exit_code_;
};

// The directory of the running executable (to find rung-coordinator, rung-worker, rung-train).
std::string ExecutableDirectory();

}  // namespace rung::cli

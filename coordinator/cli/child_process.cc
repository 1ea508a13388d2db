#include "coordinator/cli/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace rung::cli {

StatusOr<ChildProcess> ChildProcess::Start(const std::vector<std::string>& argv, const std::string& log_path,
                                           bool capture_stdout) {
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);  // less the umask
  if (log_fd < 0) return Status::Internal("cannot open " + log_path + ": " + std::strerror(errno));
  int pipe_fds[2] = {-1, -1};
  if (capture_stdout && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(log_fd);
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return Status::Internal(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);  // the parent died before prctl
    ::dup2(capture_stdout ? pipe_fds[1] : log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "rung run: cannot execute %s: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  ::close(log_fd);
  ChildProcess child;
  child.pid_ = pid;
  if (capture_stdout) {
    ::close(pipe_fds[1]);
    child.stdout_fd_ = pipe_fds[0];
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept { *this = std::move(other); }

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  std::swap(pid_, other.pid_);
  std::swap(stdout_fd_, other.stdout_fd_);
  std::swap(buffer_, other.buffer_);
  std::swap(exit_code_, other.exit_code_);
  return *this;
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !exit_code_) Stop(SIGKILL, 1000);
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

std::optional<std::string> ChildProcess::ReadLine(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (stdout_fd_ < 0) return std::nullopt;
    const int remaining = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (remaining <= 0) return std::nullopt;
    pollfd poll_fd{stdout_fd_, POLLIN, 0};
    if (::poll(&poll_fd, 1, remaining) <= 0) continue;
    char chunk[4096];
    ssize_t count = ::read(stdout_fd_, chunk, sizeof(chunk));
    if (count <= 0) {
      ::close(stdout_fd_);
      stdout_fd_ = -1;
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(count));
  }
}

void ChildProcess::Signal(int signal) const {
  if (pid_ > 0 && !exit_code_) ::kill(pid_, signal);
}

bool ChildProcess::Running() {
  if (pid_ <= 0 || exit_code_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }
  return true;
}

int ChildProcess::Stop(int signal, int timeout_ms) {
  if (pid_ <= 0) return -1;
  if (exit_code_) return *exit_code_;
  ::kill(pid_, signal);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Running()) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      exit_code_ = 128 + SIGKILL;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return *exit_code_;
}

std::string ExecutableDirectory() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : path.parent_path().string();
}

}  // namespace rung::cli

// worker/agent/trainer_process.cc
#include "worker/agent/trainer_process.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

extern char** environ;

namespace rung::agent {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

// Closes a descriptor if open and marks it closed.
void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

// Splits `buffer` after every '\n' into `lines`; keeps the unterminated rest in `buffer`.
void TakeLines(std::string* buffer, std::vector<std::string>* lines) {
  size_t start = 0;
  for (size_t newline; (newline = buffer->find('\n', start)) != std::string::npos; start = newline + 1) {
    size_t end = newline;
    if (end > start && (*buffer)[end - 1] == '\r') --end;
    lines->emplace_back(*buffer, start, end - start);
  }
  buffer->erase(0, start);
}

// CUDA_VISIBLE_DEVICES for the trial's GPU indices, which count the agent's visible devices.
std::string VisibleDevices(const std::vector<int>& gpus) {
  std::vector<std::string> parent;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && *visible != '\0') {
    std::stringstream list(visible);
    for (std::string item; std::getline(list, item, ',');) parent.push_back(item);
  }
  std::string devices;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int index = gpus[i];
    if (i > 0) devices += ',';
    devices += index >= 0 && static_cast<size_t>(index) < parent.size() ? parent[index] : std::to_string(index);
  }
  return devices;
}

// The agent's environment with the trainer's thread count and GPUs set.
std::vector<std::string> TrainerEnvironment(const TrainerLaunch& launch) {
  std::vector<std::string> environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    if (variable.rfind("OMP_NUM_THREADS=", 0) == 0 || variable.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) continue;
    environment.emplace_back(variable);
  }
  environment.push_back("OMP_NUM_THREADS=" + std::to_string(launch.threads));
  environment.push_back("CUDA_VISIBLE_DEVICES=" + VisibleDevices(launch.gpus));
  return environment;
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Writes errno to `fd` and exits: the child's way to tell Start() what went wrong before the exec.
[[noreturn]] void ChildFail(int fd) {
  const int error = errno;
  [[maybe_unused]] ssize_t ignored = ::write(fd, &error, sizeof(error));
  ::_exit(127);
}

constexpr size_t kChildStackBytes = 64 * 1024;

// What the child needs between the clone and the exec, prepared by the parent.
struct ChildSetup {
  pid_t parent;
  int null_input;
  int stdout_write;
  int stderr_write;
  int report;  // the exec-error pipe (close-on-exec)
  char** argv;
  char** envp;
};

// The child until its exec: it shares the parent's memory, so only system calls, and nothing that
// writes memory the parent owns (errno aside: the parent reads it only when the clone failed).
int RunChild(void* argument) {
  const ChildSetup& setup = *static_cast<const ChildSetup*>(argument);
  const int report = setup.report;
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ChildFail(report);
  if (::getppid() != setup.parent) ::_exit(127);  // the agent died before the prctl: nobody to train for
  ::setpgid(0, 0);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    ::sigaction(signal_number, &default_action, nullptr);  // fails harmlessly for SIGKILL, SIGSTOP
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (::dup2(setup.null_input, STDIN_FILENO) < 0 || ::dup2(setup.stdout_write, STDOUT_FILENO) < 0 ||
      ::dup2(setup.stderr_write, STDERR_FILENO) < 0) {
    ChildFail(report);
  }
  // Every other descriptor the agent holds (sockets of the gRPC channel, other trainers' pipes)
  // stays behind; the error pipe is close-on-exec. Most are O_CLOEXEC already; this catches the rest.
  if (report > STDERR_FILENO + 1) ::syscall(SYS_close_range, STDERR_FILENO + 1, report - 1, 0);
  ::syscall(SYS_close_range, report + 1, ~0U, 0);
  ::execve(setup.argv[0], setup.argv, setup.envp);
  ChildFail(report);
}

}  // namespace

std::string TrainerExit::Describe() const {
  if (signal == 0) return "exit code " + std::to_string(exit_code);
  const char* name = strsignal(signal);
  return "killed by signal " + std::to_string(signal) + (name != nullptr ? std::string(" (") + name + ")" : "");
}

StatusOr<std::unique_ptr<TrainerProcess>> TrainerProcess::Start(const TrainerLaunch& launch) {
  if (launch.trainer_path.empty()) return Status::InvalidArgument("no trainer binary given");
  if (launch.stderr_path.empty()) return Status::InvalidArgument("no stderr file given for the trainer");
  if (launch.threads < 1) return Status::InvalidArgument("a trainer needs at least one thread");

  // Everything the child needs is prepared here: before its exec it may only make system calls.
  std::vector<std::string> arguments = {launch.trainer_path, "--config",  launch.config_path,
                                        "--checkpoint-dir",  launch.checkpoint_dir,
                                        "--resume",          launch.resume.empty() ? "never" : launch.resume,
                                        "--threads",         std::to_string(launch.threads)};
  arguments.insert(arguments.end(), launch.extra_arguments.begin(), launch.extra_arguments.end());
  std::vector<std::string> environment = TrainerEnvironment(launch);
  std::vector<char*> argv = NullTerminated(arguments);
  std::vector<char*> envp = NullTerminated(environment);

  auto process = std::unique_ptr<TrainerProcess>(new TrainerProcess());
  int stderr_write = ::open(launch.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (stderr_write < 0) {
    return Status::FailedPrecondition("cannot open " + launch.stderr_path + " for the trainer's stderr: " +
                                      ErrnoText(errno));
  }
  process->stderr_fd_ = ::open(launch.stderr_path.c_str(), O_RDONLY | O_CLOEXEC);
  const off_t stderr_start = ::lseek(stderr_write, 0, SEEK_END);
  if (process->stderr_fd_ < 0 || stderr_start < 0 || ::lseek(process->stderr_fd_, stderr_start, SEEK_SET) < 0) {
    const int error = errno;
    ::close(stderr_write);
    return Status::FailedPrecondition("cannot read " + launch.stderr_path + ": " + ErrnoText(error));
  }
  const int null_input = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int stdout_pipe[2] = {-1, -1};
  int exec_error_pipe[2] = {-1, -1};
  if (null_input < 0 || ::pipe2(stdout_pipe, O_CLOEXEC) != 0 || ::pipe2(exec_error_pipe, O_CLOEXEC) != 0) {
    const int error = errno;
    for (int fd : {stderr_write, null_input, stdout_pipe[0], stdout_pipe[1], exec_error_pipe[0], exec_error_pipe[1]}) {
      if (fd >= 0) ::close(fd);
    }
    return Status::Internal("cannot create the trainer's pipes: " + ErrnoText(error));
  }

  // The child shares the agent's memory until it execs (CLONE_VM | CLONE_VFORK, as posix_spawn does):
  // no page tables to copy and no copy-on-write faults afterwards, however big the agent is. The
  // agent's thread waits meanwhile; every signal is blocked around the clone so that no handler of
  // the agent runs on the child's stack before the child has reset them.
  ChildSetup setup{::getpid(), null_input, stdout_pipe[1], stderr_write, exec_error_pipe[1], argv.data(), envp.data()};
  std::vector<char> child_stack(kChildStackBytes);
  sigset_t all_signals, agent_mask;
  sigfillset(&all_signals);
  ::pthread_sigmask(SIG_SETMASK, &all_signals, &agent_mask);
  const pid_t pid = ::clone(RunChild, child_stack.data() + child_stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD, &setup);
  const int fork_error = errno;  // meaningful only when the clone failed (the child shares this errno)
  ::pthread_sigmask(SIG_SETMASK, &agent_mask, nullptr);
  ::close(stderr_write);
  ::close(null_input);
  ::close(stdout_pipe[1]);
  ::close(exec_error_pipe[1]);
  if (pid < 0) {
    ::close(stdout_pipe[0]);
    ::close(exec_error_pipe[0]);
    return Status::Internal("cannot start the trainer process: " + ErrnoText(fork_error));
  }
  process->pid_ = pid;
  process->stdout_fd_ = stdout_pipe[0];
  process->pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));

  // The error pipe closes on a successful exec (EOF) or carries the errno of what failed.
  int child_error = 0;
  ssize_t got;
  do {
    got = ::read(exec_error_pipe[0], &child_error, sizeof(child_error));
  } while (got < 0 && errno == EINTR);
  ::close(exec_error_pipe[0]);
  if (got > 0) {
    process->Wait(std::chrono::seconds(5));
    return Status::FailedPrecondition("cannot execute " + launch.trainer_path + ": " + ErrnoText(child_error));
  }
  if (process->pidfd_ < 0) return Status::Internal("pidfd_open of the trainer failed: " + ErrnoText(errno));
  ::fcntl(process->stdout_fd_, F_SETFL, ::fcntl(process->stdout_fd_, F_GETFL) | O_NONBLOCK);
  return process;
}

TrainerProcess::~TrainerProcess() {
  if (pid_ > 0 && !exit_) {
    Signal(SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  CloseFd(&stdout_fd_);
  CloseFd(&stderr_fd_);
  CloseFd(&pidfd_);
}

bool TrainerProcess::ReadOutput(std::chrono::milliseconds timeout, TrainerOutput* output) {
  if (!stdout_ended_) {
    pollfd ready{stdout_fd_, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(std::max<int64_t>(timeout.count(), 0)));
    if (polled > 0) {
      char buffer[65536];
      for (;;) {
        const ssize_t got = ::read(stdout_fd_, buffer, sizeof(buffer));
        if (got > 0) {
          stdout_partial_.append(buffer, static_cast<size_t>(got));
          continue;
        }
        if (got < 0 && errno == EINTR) continue;
        if (got == 0) stdout_ended_ = true;  // EOF; EAGAIN: nothing more for now
        break;
      }
      TakeLines(&stdout_partial_, &output->stdout_lines);
      if (stdout_ended_ && !stdout_partial_.empty()) {
        output->stdout_lines.push_back(stdout_partial_);
        stdout_partial_.clear();
      }
    }
  }
  ReadStderr(/*flush_partial=*/stdout_ended_, output);
  return !stdout_ended_;
}

void TrainerProcess::ReadStderr(bool flush_partial, TrainerOutput* output) {
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(stderr_fd_, buffer, sizeof(buffer));
    if (got > 0) {
      stderr_partial_.append(buffer, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    break;
  }
  TakeLines(&stderr_partial_, &output->stderr_lines);
  if (flush_partial && !stderr_partial_.empty()) {
    output->stderr_lines.push_back(stderr_partial_);
    stderr_partial_.clear();
  }
}

Status TrainerProcess::Signal(int signal_number) {
  if (pidfd_ < 0) return Status::Ok();
  if (::syscall(SYS_pidfd_send_signal, pidfd_, signal_number, nullptr, 0) == 0 || errno == ESRCH) return Status::Ok();
  return Status::Internal("cannot signal the trainer (pid " + std::to_string(pid_) + "): " + ErrnoText(errno));
}

std::optional<TrainerExit> TrainerProcess::Wait(std::chrono::milliseconds timeout) {
  if (exit_) return exit_;
  if (pidfd_ >= 0) {
    pollfd exited{pidfd_, POLLIN, 0};
    if (::poll(&exited, 1, static_cast<int>(std::max<int64_t>(timeout.count(), 0))) <= 0) return std::nullopt;
  }
  int status = 0;
  pid_t reaped;
  do {
    reaped = ::waitpid(pid_, &status, pidfd_ >= 0 ? WNOHANG : 0);
  } while (reaped < 0 && errno == EINTR);
  if (reaped != pid_) return std::nullopt;
  TrainerExit exit;
  if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
  } else {
    exit.exit_code = WEXITSTATUS(status);
  }
  exit_ = exit;
  return exit_;
}

}  // namespace rung::agent

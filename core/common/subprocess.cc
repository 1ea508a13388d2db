// core/common/subprocess.cc
#include "core/common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char** environ;

namespace rung {
namespace {

using Clock = std::chrono::steady_clock;

std::string ErrnoText(int error) { return std::strerror(error); }

// A descriptor closed with its owner.
class OwnedFd {
 public:
  OwnedFd() = default;
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd() { Reset(); }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// `fd` moved to a number above 2 (close-on-exec): the child's dup2 onto 0, 1 and 2 then never
// overwrites a descriptor it still has to copy, even when the parent runs with a standard stream closed.
int AboveStandardStreams(int fd) {
  if (fd < 0 || fd > STDERR_FILENO) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
  const int error = errno;
  ::close(fd);
  errno = error;
  return moved;
}

int OpenRetrying(const char* path, int flags, unsigned mode) {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC | O_NOCTTY, mode);
  } while (fd < 0 && errno == EINTR);
  return AboveStandardStreams(fd);
}

// Milliseconds from now to `deadline` for poll(2): 0 when past, capped at INT_MAX; -1 without one.
int PollTimeout(const std::optional<Clock::time_point>& deadline) {
  if (!deadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

std::optional<Clock::time_point> DeadlineAfter(std::chrono::milliseconds timeout) {
  const auto now = Clock::now();
  if (timeout >= std::chrono::duration_cast<std::chrono::milliseconds>(Clock::time_point::max() - now)) {
    return std::nullopt;  // as good as forever
  }
  return now + std::max(timeout, std::chrono::milliseconds(0));
}

// argv[0] as execve needs it: itself when it has a '/', else the first executable regular file of
// that name in PATH (as execvp looks it up, but here, before the clone).
StatusOr<std::string> ResolveProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path_variable = std::getenv("PATH");
  const std::string_view search = path_variable != nullptr ? path_variable : "/bin:/usr/bin";
  int last_error = ENOENT;
  for (size_t start = 0; start <= search.size();) {
    size_t end = search.find(':', start);
    if (end == std::string_view::npos) end = search.size();
    std::string dir(search.substr(start, end - start));
    start = end + 1;
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    last_error = errno;
  }
  return Status::FailedPrecondition("cannot run " + name + ": " + ErrnoText(last_error));
}

// The child's environment: the parent's (unless cleared) with `overrides` replacing or adding.
StatusOr<std::vector<std::string>> ChildEnvironment(const SubprocessOptions& options) {
  std::vector<std::string> environment;
  if (!options.clear_environment) {
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) environment.emplace_back(*entry);
  }
  for (const std::string& entry : options.environment) {
    const size_t equals = entry.find('=');
    if (equals == 0 || equals == std::string::npos) {
      return Status::InvalidArgument("environment entry '" + entry + "' is not NAME=VALUE");
    }
    const std::string_view prefix(entry.data(), equals + 1);
    environment.erase(std::remove_if(environment.begin(), environment.end(),
                                     [&](const std::string& kept) { return kept.rfind(prefix, 0) == 0; }),
                      environment.end());
    environment.push_back(entry);
  }
  return environment;
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

// What went wrong in the child before its exec, sent back through the report pipe.
enum ChildStage : int { kStageSetup = 1, kStageChdir = 2, kStageExec = 3 };
struct ChildReport {
  int stage;
  int error;
};

// What the child needs between the clone and the exec, all prepared by the parent.
struct ChildSetup {
  pid_t parent;
  bool die_with_parent;
  bool new_process_group;
  int stdin_fd;   // -1: inherited
  int stdout_fd;  // -1: inherited
  int stderr_fd;  // -1: inherited (or stdout's, with stderr_to_stdout)
  bool stderr_to_stdout;
  const char* working_dir;  // nullptr: the parent's
  int report;               // the report pipe's write end (close-on-exec, above 2)
  const char* path;
  char** argv;
  char** envp;
};

[[noreturn]] void ChildFail(int report, int stage) {
  const ChildReport message{stage, errno};
  [[maybe_unused]] ssize_t ignored = ::write(report, &message, sizeof(message));
  ::_exit(127);
}

// Closes every descriptor from `first` up to `last` (close_range, or one by one before Linux 5.9).
void CloseRange(unsigned first, unsigned last) {
  if (first > last) return;
  if (::syscall(SYS_close_range, first, last, 0) == 0) return;
  rlimit limit{};
  unsigned top = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                     ? static_cast<unsigned>(std::min<rlim_t>(limit.rlim_cur, 1u << 20))
                     : 65536u;
  for (unsigned fd = first; fd <= std::min(last, top); ++fd) ::close(static_cast<int>(fd));
}

// The child until its exec. It shares the parent's memory (CLONE_VM) and the parent's thread waits
// (CLONE_VFORK), so it makes system calls only and writes no memory the parent owns (errno aside:
// the parent reads it only when the clone failed).
int RunChild(void* argument) {
  const ChildSetup& setup = *static_cast<const ChildSetup*>(argument);
  const int report = setup.report;
  if (setup.die_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) ChildFail(report, kStageSetup);
    if (::getppid() != setup.parent) ::_exit(127);  // the parent died before the prctl
  }
  if (setup.new_process_group && ::setpgid(0, 0) != 0) ChildFail(report, kStageSetup);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    ::sigaction(signal_number, &default_action, nullptr);  // fails harmlessly for SIGKILL, SIGSTOP
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Every source descriptor is above 2 and close-on-exec; its dup2 copy onto 0, 1, 2 is not.
  if (setup.stdin_fd >= 0 && ::dup2(setup.stdin_fd, STDIN_FILENO) < 0) ChildFail(report, kStageSetup);
  if (setup.stdout_fd >= 0 && ::dup2(setup.stdout_fd, STDOUT_FILENO) < 0) ChildFail(report, kStageSetup);
  if (setup.stderr_to_stdout) {
    if (::dup2(STDOUT_FILENO, STDERR_FILENO) < 0) ChildFail(report, kStageSetup);
  } else if (setup.stderr_fd >= 0 && ::dup2(setup.stderr_fd, STDERR_FILENO) < 0) {
    ChildFail(report, kStageSetup);
  }
  if (setup.working_dir != nullptr && ::chdir(setup.working_dir) != 0) ChildFail(report, kStageChdir);
  // Every other descriptor of the parent (sockets, other children's pipes) stays behind, close-on-exec
  // or not; the report pipe closes with the exec.
  CloseRange(STDERR_FILENO + 1, static_cast<unsigned>(report) - 1);
  CloseRange(static_cast<unsigned>(report) + 1, ~0U);
  ::execve(setup.path, setup.argv, setup.envp);
  ChildFail(report, kStageExec);
}

constexpr size_t kChildStackBytes = 64 * 1024;

// Opens what a standard stream of the child is redirected to; -1 (and OK) for kInherit, kStdout.
// For kPipe, `parent_end` receives the read end.
StatusOr<int> OpenRedirect(const Redirect& redirect, bool input, const char* stream_name, OwnedFd* parent_end) {
  using Kind = Redirect::Kind;
  const bool allowed = input ? (redirect.kind == Kind::kInherit || redirect.kind == Kind::kNull ||
                                redirect.kind == Kind::kFile || redirect.kind == Kind::kText)
                             : (redirect.kind != Kind::kFile && redirect.kind != Kind::kText &&
                                (redirect.kind != Kind::kStdout || std::string_view(stream_name) == "stderr"));
  if (!allowed) return Status::InvalidArgument(std::string("a redirect that ") + stream_name + " cannot take");
  int fd = -1;
  switch (redirect.kind) {
    case Kind::kInherit:
    case Kind::kStdout:
      return -1;
    case Kind::kNull:
      fd = OpenRetrying("/dev/null", input ? O_RDONLY : O_WRONLY, 0);
      break;
    case Kind::kFile:
      fd = OpenRetrying(redirect.value.c_str(), O_RDONLY, 0);
      break;
    case Kind::kAppend:
      fd = OpenRetrying(redirect.value.c_str(), O_WRONLY | O_CREAT | O_APPEND, redirect.mode);
      break;
    case Kind::kTruncate:
      fd = OpenRetrying(redirect.value.c_str(), O_WRONLY | O_CREAT | O_TRUNC, redirect.mode);
      break;
    case Kind::kText: {
      // A memory file holds the text: any size, and nothing for the parent to feed later.
      OwnedFd text(AboveStandardStreams(::memfd_create("rung-subprocess-stdin", MFD_CLOEXEC)));
      if (text.get() < 0) return Status::Internal("memfd_create for " + std::string(stream_name) + ": " + ErrnoText(errno));
      for (size_t written = 0; written < redirect.value.size();) {
        const ssize_t wrote = ::write(text.get(), redirect.value.data() + written, redirect.value.size() - written);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote < 0) return Status::Internal("writing the child's " + std::string(stream_name) + ": " + ErrnoText(errno));
        written += static_cast<size_t>(wrote);
      }
      if (::lseek(text.get(), 0, SEEK_SET) != 0) return Status::Internal("lseek: " + ErrnoText(errno));
      return text.Release();
    }
    case Kind::kPipe: {
      int ends[2] = {-1, -1};
      if (::pipe2(ends, O_CLOEXEC) != 0) return Status::Internal("pipe for " + std::string(stream_name) + ": " + ErrnoText(errno));
      OwnedFd read_end(AboveStandardStreams(ends[0]));
      OwnedFd write_end(AboveStandardStreams(ends[1]));
      if (read_end.get() < 0 || write_end.get() < 0) return Status::Internal("pipe: " + ErrnoText(errno));
      ::fcntl(read_end.get(), F_SETFL, ::fcntl(read_end.get(), F_GETFL) | O_NONBLOCK);
      parent_end->Reset(read_end.Release());
      return write_end.Release();
    }
  }
  if (fd < 0) {
    return Status::FailedPrecondition("cannot open " + (redirect.kind == Kind::kNull ? std::string("/dev/null") : redirect.value) +
                                      " for the child's " + stream_name + ": " + ErrnoText(errno));
  }
  return fd;
}

// The next line of `buffer` from `*start`, without its "\n" or "\r\n"; nullopt while it has none.
std::optional<std::string> TakeLine(std::string* buffer, size_t* start) {
  const size_t newline = buffer->find('\n', *start);
  if (newline == std::string::npos) return std::nullopt;
  size_t end = newline;
  if (end > *start && (*buffer)[end - 1] == '\r') --end;
  std::string line = buffer->substr(*start, end - *start);
  *start = newline + 1;
  if (*start == buffer->size()) {
    buffer->clear();
    *start = 0;
  }
  return line;
}

}  // namespace

std::string ExitStatus::Describe() const {
  if (signal == 0) return "exit code " + std::to_string(code);
  const char* name = ::strsignal(signal);
  return "killed by signal " + std::to_string(signal) + (name != nullptr ? std::string(" (") + name + ")" : "");
}

StatusOr<std::unique_ptr<Subprocess>> Subprocess::Start(const SubprocessOptions& options) {
  if (options.argv.empty() || options.argv[0].empty()) return Status::InvalidArgument("no program to run");
  // Everything the child needs is prepared here: before its exec it may only make system calls.
  RUNG_ASSIGN_OR_RETURN(std::string path, ResolveProgram(options.argv[0]));
  std::vector<std::string> arguments = options.argv;
  RUNG_ASSIGN_OR_RETURN(std::vector<std::string> environment, ChildEnvironment(options));
  std::vector<char*> argv = NullTerminated(arguments);
  std::vector<char*> envp = NullTerminated(environment);

  auto process = std::unique_ptr<Subprocess>(new Subprocess());
  OwnedFd stdout_read, stderr_read, unused;
  RUNG_ASSIGN_OR_RETURN(int stdin_fd, OpenRedirect(options.stdin_from, /*input=*/true, "stdin", &unused));
  OwnedFd stdin_child(stdin_fd);
  RUNG_ASSIGN_OR_RETURN(int stdout_fd, OpenRedirect(options.stdout_to, /*input=*/false, "stdout", &stdout_read));
  OwnedFd stdout_child(stdout_fd);
  RUNG_ASSIGN_OR_RETURN(int stderr_fd, OpenRedirect(options.stderr_to, /*input=*/false, "stderr", &stderr_read));
  OwnedFd stderr_child(stderr_fd);
  int report_ends[2] = {-1, -1};
  if (::pipe2(report_ends, O_CLOEXEC) != 0) return Status::Internal("pipe: " + ErrnoText(errno));
  OwnedFd report_read(AboveStandardStreams(report_ends[0]));
  OwnedFd report_write(AboveStandardStreams(report_ends[1]));
  if (report_read.get() < 0 || report_write.get() < 0) return Status::Internal("pipe: " + ErrnoText(errno));

  ChildSetup setup{::getpid(),
                   options.die_with_parent,
                   options.new_process_group,
                   stdin_child.get(),
                   stdout_child.get(),
                   stderr_child.get(),
                   options.stderr_to.kind == Redirect::Kind::kStdout,
                   options.working_dir.empty() ? nullptr : options.working_dir.c_str(),
                   report_write.get(),
                   path.c_str(),
                   argv.data(),
                   envp.data()};
  // Every signal is blocked around the clone so that no handler of the parent runs on the child's
  // stack before the child has reset them.
  std::vector<char> child_stack(kChildStackBytes);
  sigset_t all_signals, parent_mask;
  sigfillset(&all_signals);
  ::pthread_sigmask(SIG_SETMASK, &all_signals, &parent_mask);
  int pidfd = -1;
  const pid_t pid = ::clone(RunChild, child_stack.data() + child_stack.size(),
                            CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &setup, &pidfd);
  const int clone_error = errno;  // meaningful only when the clone failed (the child shares this errno)
  ::pthread_sigmask(SIG_SETMASK, &parent_mask, nullptr);
  stdin_child.Reset();
  stdout_child.Reset();
  stderr_child.Reset();
  report_write.Reset();
  if (pid < 0) return Status::Internal("cannot start " + path + ": clone: " + ErrnoText(clone_error));
  process->pid_ = pid;
  process->pidfd_ = pidfd;
  process->own_group_ = options.new_process_group;

  // The report pipe closes at a successful exec (end of file) or carries what failed.
  ChildReport report{};
  ssize_t got;
  do {
    got = ::read(report_read.get(), &report, sizeof(report));
  } while (got < 0 && errno == EINTR);
  if (got > 0) {
    process->Wait().IgnoreError();  // it has _exit(127)ed: reaped, no zombie
    if (report.stage == kStageExec) {
      return Status::FailedPrecondition("cannot run " + path + ": " + ErrnoText(report.error));
    }
    if (report.stage == kStageChdir) {
      return Status::FailedPrecondition("cannot run " + path + " in " + options.working_dir + ": " +
                                        ErrnoText(report.error));
    }
    return Status::Internal("cannot set up the child process of " + path + ": " + ErrnoText(report.error));
  }
  process->stdout_.piped = options.stdout_to.kind == Redirect::Kind::kPipe;
  process->stdout_.fd = stdout_read.Release();
  process->stderr_.piped = options.stderr_to.kind == Redirect::Kind::kPipe;
  process->stderr_.fd = stderr_read.Release();
  return process;
}

StatusOr<SubprocessResult> Subprocess::Run(const SubprocessOptions& options, std::chrono::milliseconds timeout) {
  const std::optional<Clock::time_point> deadline = DeadlineAfter(timeout);
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> child, Start(options));
  SubprocessResult result;
  for (;;) {
    StatusOr<ExitStatus> exit = child->Wait(std::chrono::milliseconds(0));
    if (exit.ok()) break;
    if (exit.status().code() != StatusCode::kDeadlineExceeded) return exit.status();
    if (deadline && Clock::now() >= *deadline) {
      child->Kill();
      result.timed_out = true;
      break;
    }
    // Output or the exit, whichever comes first. Once the child has exited, what it wrote is read
    // below; a pipe that a descendant still holds open is not waited for.
    pollfd ready[3];
    nfds_t count = 0;
    for (const PipeState* pipe : {&child->stdout_, &child->stderr_}) {
      if (pipe->fd >= 0) ready[count++] = {pipe->fd, POLLIN, 0};
    }
    ready[count++] = {child->pidfd_, POLLIN, 0};
    if (::poll(ready, count, PollTimeout(deadline)) > 0) child->Pump(std::chrono::milliseconds(0));
  }
  child->Pump(std::chrono::milliseconds(0));
  RUNG_ASSIGN_OR_RETURN(ExitStatus exit, child->Wait(std::chrono::milliseconds(0)));
  result.exit = exit;
  result.stdout_text = child->stdout_.buffer.substr(child->stdout_.start);
  result.stderr_text = child->stderr_.buffer.substr(child->stderr_.start);
  return result;
}

Subprocess::~Subprocess() {
  if (pid_ > 0 && !exit_ && wait_error_.ok()) Kill();
  for (int* fd : {&stdout_.fd, &stderr_.fd, &pidfd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void Subprocess::Pump(std::chrono::milliseconds timeout) {
  pollfd ready[2];
  nfds_t count = 0;
  for (PipeState* pipe : {&stdout_, &stderr_}) {
    if (pipe->fd >= 0) ready[count++] = {pipe->fd, POLLIN, 0};
  }
  if (count == 0) return;
  if (timeout.count() > 0) {
    const int polled = ::poll(ready, count, static_cast<int>(std::min<int64_t>(timeout.count(), INT_MAX)));
    if (polled == 0) return;  // on EINTR too the pipes are read: the caller's deadline decides
  }
  char chunk[65536];
  for (PipeState* pipe : {&stdout_, &stderr_}) {
    while (pipe->fd >= 0) {
      const ssize_t got = ::read(pipe->fd, chunk, sizeof(chunk));
      if (got > 0) {
        if (pipe->start > 0) {  // what ReadLine returned goes, once per read rather than per line
          pipe->buffer.erase(0, pipe->start);
          pipe->start = 0;
        }
        pipe->buffer.append(chunk, static_cast<size_t>(got));
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;  // nothing more for now
      ::close(pipe->fd);  // end of output (or a read error, which ends it as well)
      pipe->fd = -1;
    }
  }
}

std::optional<std::string> Subprocess::ReadLine(Stream stream, std::chrono::milliseconds timeout) {
  PipeState& pipe = Pipe(stream);
  if (!pipe.piped) return std::nullopt;
  const std::optional<Clock::time_point> deadline = DeadlineAfter(timeout);
  for (bool first = true;; first = false) {
    if (std::optional<std::string> line = TakeLine(&pipe.buffer, &pipe.start)) return line;
    if (pipe.fd < 0) {
      if (pipe.start == pipe.buffer.size()) return std::nullopt;
      std::string rest = pipe.buffer.substr(pipe.start);
      pipe.buffer.clear();
      pipe.start = 0;
      return rest;
    }
    const int left = PollTimeout(deadline);
    if (!first && left == 0) return std::nullopt;
    Pump(left < 0 ? std::chrono::milliseconds(INT_MAX) : std::chrono::milliseconds(left));
  }
}

bool Subprocess::OutputEnded(Stream stream) const {
  const PipeState& pipe = Pipe(stream);
  return !pipe.piped || (pipe.fd < 0 && pipe.start == pipe.buffer.size());
}

Status Subprocess::Signal(int signal_number) const {
  if (pidfd_ < 0) return Status::Ok();
  if (::syscall(SYS_pidfd_send_signal, pidfd_, signal_number, nullptr, 0) == 0 || errno == ESRCH) return Status::Ok();
  return Status::Internal("cannot signal process " + std::to_string(pid_) + ": " + ErrnoText(errno));
}

Status Subprocess::SignalGroup(int signal_number) const {
  if (!own_group_) return Status::FailedPrecondition("process " + std::to_string(pid_) + " has no process group of its own");
  if (pid_ <= 0 || exit_ || !wait_error_.ok()) return Status::Ok();
  if (::kill(-pid_, signal_number) == 0 || errno == ESRCH) return Status::Ok();
  return Status::Internal("cannot signal process group " + std::to_string(pid_) + ": " + ErrnoText(errno));
}

StatusOr<ExitStatus> Subprocess::Wait(std::chrono::milliseconds timeout) {
  if (exit_) return *exit_;
  if (!wait_error_.ok()) return wait_error_;
  const std::optional<Clock::time_point> deadline = DeadlineAfter(timeout);
  for (;;) {
    siginfo_t info{};
    if (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd_), &info, WEXITED | WNOHANG) != 0) {
      if (errno == EINTR) continue;
      wait_error_ = Status::Internal("cannot wait for process " + std::to_string(pid_) + ": " + ErrnoText(errno));
      return wait_error_;
    }
    if (info.si_pid != 0) {
      ExitStatus exit;
      if (info.si_code == CLD_EXITED) {
        exit.code = info.si_status;
      } else {
        exit.signal = info.si_status;  // CLD_KILLED, CLD_DUMPED
      }
      exit_ = exit;
      return exit;
    }
    const int left = PollTimeout(deadline);
    if (left == 0) return Status::DeadlineExceeded("process " + std::to_string(pid_) + " still runs");
    pollfd exited{pidfd_, POLLIN, 0};
    ::poll(&exited, 1, left);  // EINTR: the loop checks again
  }
}

StatusOr<ExitStatus> Subprocess::Wait() { return Wait(std::chrono::milliseconds::max()); }

bool Subprocess::Running() {
  if (exit_ || !wait_error_.ok() || pid_ <= 0) return false;
  return Wait(std::chrono::milliseconds(0)).status().code() == StatusCode::kDeadlineExceeded;
}

void Subprocess::Kill() {
  if (own_group_) SignalGroup(SIGKILL).IgnoreError();  // a failure leaves the child, killed next
  Signal(SIGKILL).IgnoreError();  // fails only for a pidfd that is not one: Wait() reports it
  Wait().IgnoreError();           // an error stays in wait_error_
}

StatusOr<ExitStatus> Subprocess::Stop(int signal_number, std::chrono::milliseconds grace) {
  if (exit_) return *exit_;
  RUNG_RETURN_IF_ERROR(Signal(signal_number));
  StatusOr<ExitStatus> exit = Wait(grace);
  if (exit.ok() || exit.status().code() != StatusCode::kDeadlineExceeded) return exit;
  Kill();
  return Wait(std::chrono::milliseconds(0));
}

}  // namespace rung

// core/common/subprocess.h
//
// Child processes, the one way rung starts them (rung run's coordinator and workers, rung-worker's
// trainers, gnuplot, the tests' binaries). Torch-free and gRPC-free: library rung_subprocess.
//
// Start() runs argv[0] (a path, or a name without '/' looked up in PATH) with the options below.
// What every child gets, whatever the options:
//   - it is started as posix_spawn starts one (clone with CLONE_VM | CLONE_VFORK: nothing of the
//     parent's memory is copied, however big the parent is), every signal blocked around the clone;
//   - before its exec: the default disposition and an empty mask for every signal, and every
//     descriptor above 2 closed (sockets, other children's pipes: nothing leaks into it);
//   - a failed exec (or chdir) is an error of Start() with the errno text, never a mysterious exit 127;
//   - a pidfd (CLONE_PIDFD): signals go to this child and no other, even after its pid is reused,
//     and Wait() reaps exactly it (waitid P_PIDFD), with a deadline; EINTR is retried everywhere;
//   - the destructor SIGKILLs (with its process group, when it has its own) and reaps a child still
//     running, and closes every descriptor: no zombie is left behind.
//
// Output sent to Redirect::Pipe() is read with ReadLine(); every pipe of the child is drained
// whenever any is read (into memory), so a child never blocks on a full pipe the caller is not
// reading at that moment. Run() starts, collects the pipes and waits, all in one call.
//
// Example:
//   SubprocessOptions options;
//   options.argv = {"/bin/sh", "-c", "echo ready; exec sleep 100"};
//   options.stdout_to = Redirect::Pipe();
//   options.stderr_to = Redirect::AppendTo("child.log");
//   StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Start(options);
//   std::optional<std::string> line = (*child)->ReadLine(Stream::kStdout, std::chrono::seconds(5));
//   StatusOr<ExitStatus> exit = (*child)->Stop(SIGTERM, std::chrono::seconds(10));  // killed by signal 15
//
//   SubprocessOptions echo;
//   echo.argv = {"echo", "hi"};
//   echo.stdout_to = Redirect::Pipe();
//   StatusOr<SubprocessResult> result = Subprocess::Run(echo, std::chrono::seconds(5));  // "hi\n"
//
// Thread safety: Signal() and pid() may be called from any thread while the object lives; every
// other method belongs to one thread at a time. With die_with_parent, the thread that called Start()
// must outlive the child (prctl(2): the parent-death signal follows the thread, not the process).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung {

// Where a standard stream of the child goes (stdout, stderr) or comes from (stdin).
struct Redirect {
  enum class Kind {
    kInherit,  // the parent's own
    kNull,     // /dev/null
    kPipe,     // stdout, stderr: a pipe the parent reads (Subprocess::ReadLine)
    kAppend,   // stdout, stderr: appended to a file, created if missing
    kTruncate, // stdout, stderr: a file, created or emptied
    kFile,     // stdin: read from a file
    kText,     // stdin: these bytes, then end of file (any size: they never block the parent)
    kStdout,   // stderr: wherever stdout goes (2>&1)
  };
  static Redirect Inherit() { return {Kind::kInherit, {}, 0}; }
  static Redirect Null() { return {Kind::kNull, {}, 0}; }
  static Redirect Pipe() { return {Kind::kPipe, {}, 0}; }
  // `mode` for a file that is created, less the umask.
  static Redirect AppendTo(std::string path, unsigned mode = 0666) { return {Kind::kAppend, std::move(path), mode}; }
  static Redirect TruncateTo(std::string path, unsigned mode = 0666) {
    return {Kind::kTruncate, std::move(path), mode};
  }
  static Redirect ReadFrom(std::string path) { return {Kind::kFile, std::move(path), 0}; }
  static Redirect Text(std::string text) { return {Kind::kText, std::move(text), 0}; }
  static Redirect ToStdout() { return {Kind::kStdout, {}, 0}; }

  Kind kind = Kind::kInherit;
  std::string value;  // the path, or the text of kText
  unsigned mode = 0;
};

struct SubprocessOptions {
  std::vector<std::string> argv;  // argv[0]: a path, or a name without '/' looked up in PATH
  // NAME=VALUE entries, each replacing the inherited variable of that name (or added).
  std::vector<std::string> environment;
  bool clear_environment = false;  // start from an empty environment instead of the parent's
  std::string working_dir;         // "" = the parent's
  Redirect stdin_from = Redirect::Inherit();
  Redirect stdout_to = Redirect::Inherit();
  Redirect stderr_to = Redirect::Inherit();
  // A process group of its own (setpgid(0, 0)): a terminal's Ctrl-C does not reach it, and
  // SignalGroup() reaches it and everything it started.
  bool new_process_group = false;
  // SIGKILLed when the thread that called Start() ends (PR_SET_PDEATHSIG; a parent already gone
  // by then is noticed): a child never runs on as an orphan.
  bool die_with_parent = false;
};

// How a child ended.
struct ExitStatus {
  int code = 0;    // the exit status, when it exited
  int signal = 0;  // the signal that killed it; 0 when it exited

  bool Succeeded() const { return signal == 0 && code == 0; }
  // As a shell's $?: the exit code, or 128 + the signal.
  int ShellCode() const { return signal != 0 ? 128 + signal : code; }
  // "exit code 3", or "killed by signal 9 (Killed)".
  std::string Describe() const;
};

enum class Stream { kStdout, kStderr };

// What Run() collected.
struct SubprocessResult {
  ExitStatus exit;
  std::string stdout_text;  // all of stdout, when it went to a pipe
  std::string stderr_text;  // all of stderr, when it went to a pipe
  bool timed_out = false;   // the deadline passed and the child was SIGKILLed
};

class Subprocess {
 public:
  // Starts the child. Errors: INVALID_ARGUMENT (no argv, a redirect the stream cannot take),
  // FAILED_PRECONDITION (a file cannot be opened, the program is not found or cannot be executed,
  // the working folder cannot be entered: the message names it and has the errno text), INTERNAL
  // (pipe, clone).
  static StatusOr<std::unique_ptr<Subprocess>> Start(const SubprocessOptions& options);

  // Start(), then every piped output read and the exit waited for, up to `timeout`: after that the
  // child (and its group, when it has its own) is SIGKILLed and reaped, and timed_out is set.
  // Errors: those of Start().
  static StatusOr<SubprocessResult> Run(const SubprocessOptions& options,
                                        std::chrono::milliseconds timeout = std::chrono::hours(24));

  ~Subprocess();  // SIGKILLs (its group too, when it has one) and reaps it if still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }

  // The next line of a piped stream, without its '\n' (or "\r\n"), waiting up to `timeout` for it;
  // at the stream's end the unterminated rest, if any. nullopt on timeout, at the end, or for a
  // stream that is not piped.
  std::optional<std::string> ReadLine(Stream stream, std::chrono::milliseconds timeout);
  // Whether a piped stream has ended and every line of it was returned (true for one not piped).
  bool OutputEnded(Stream stream) const;

  // Sends `signal_number` to the child. OK and no effect once it has been reaped. Any thread.
  // Errors: INTERNAL with the errno text.
  Status Signal(int signal_number) const;
  // Sends `signal_number` to the child's process group (new_process_group), the child's own members
  // and those it started. Only while the child has not been reaped (before that its pid cannot be
  // reused, so the group is this one): OK and no effect afterwards. Errors: FAILED_PRECONDITION
  // without a group of its own, INTERNAL with the errno text.
  Status SignalGroup(int signal_number) const;

  // Waits up to `timeout` for the child to exit and reaps it; after the first exit, returns it again
  // at once. Errors: DEADLINE_EXCEEDED while it still runs, INTERNAL when it cannot be waited for.
  StatusOr<ExitStatus> Wait(std::chrono::milliseconds timeout);
  // Waits for the exit however long it takes. Errors: INTERNAL when it cannot be waited for.
  StatusOr<ExitStatus> Wait();
  // Whether the child still runs (reaps it when it has exited).
  bool Running();
  // Sends `signal_number`, waits up to `grace` for the exit, then SIGKILLs it (and its group, when it
  // has its own) and reaps it; the exit either way. At once when it has exited already.
  // Errors: those of Signal() and Wait().
  StatusOr<ExitStatus> Stop(int signal_number, std::chrono::milliseconds grace);

 private:
  struct PipeState {
    int fd = -1;            // read end, non-blocking; -1 when not piped or at its end
    bool piped = false;
    std::string buffer;     // read; from `start` on not yet returned
    size_t start = 0;
  };

  Subprocess() = default;
  PipeState& Pipe(Stream stream) { return stream == Stream::kStdout ? stdout_ : stderr_; }
  const PipeState& Pipe(Stream stream) const { return stream == Stream::kStdout ? stdout_ : stderr_; }
  // Waits up to `timeout` for any pipe to have data and reads what every pipe has.
  void Pump(std::chrono::milliseconds timeout);
  // SIGKILLs the child (and its group) and reaps it.
  void Kill();

  pid_t pid_ = -1;
  int pidfd_ = -1;
  bool own_group_ = false;
  PipeState stdout_;
  PipeState stderr_;
  std::optional<ExitStatus> exit_;
  Status wait_error_;  // set when the child could not be waited for: every later Wait returns it
};

}  // namespace rung

// tests/core/common/subprocess_test.cc
//
// Subprocess with real processes (/bin/sh -c, sleep, cat): exit codes and signals, deadlines,
// output capture, stdin, environment, working folder, descriptors, process groups, reaping.
#include "core/common/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using std::chrono::milliseconds;
using std::chrono::seconds;

SubprocessOptions Program(std::vector<std::string> argv) {
  SubprocessOptions options;
  options.argv = std::move(argv);
  return options;
}

SubprocessOptions Shell(const std::string& script) { return Program({"/bin/sh", "-c", script}); }

SubprocessOptions PipedShell(const std::string& script) {
  SubprocessOptions options = Shell(script);
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  return options;
}

SubprocessResult RunOk(const SubprocessOptions& options, milliseconds timeout = seconds(30)) {
  StatusOr<SubprocessResult> result = Subprocess::Run(options, timeout);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : SubprocessResult{};
}

std::unique_ptr<Subprocess> StartOk(const SubprocessOptions& options) {
  StatusOr<std::unique_ptr<Subprocess>> child = Subprocess::Start(options);
  EXPECT_TRUE(child.ok()) << child.status().ToString();
  return child.ok() ? std::move(child).value() : nullptr;
}

// Whether `pid` is a live process (not gone, not a zombie).
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t state = text.rfind(") ");
  return state != std::string::npos && state + 2 < text.size() && text[state + 2] != 'Z' && text[state + 2] != 'X';
}

bool Eventually(const std::function<bool()>& condition, milliseconds timeout = seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return true;
}

class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = ::testing::TempDir() + "rung_subprocess_test_XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : std::string();
    EXPECT_FALSE(path_.empty()) << "mkdtemp failed";
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string FileText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// ---------------------------------------------------------------------------------- how it ended

TEST(SubprocessTest, ReportsTheExitCode) {
  SubprocessResult result = RunOk(Shell("exit 3"));
  EXPECT_EQ(result.exit.code, 3);
  EXPECT_EQ(result.exit.signal, 0);
  EXPECT_FALSE(result.exit.Succeeded());
  EXPECT_EQ(result.exit.ShellCode(), 3);
  EXPECT_EQ(result.exit.Describe(), "exit code 3");
  EXPECT_FALSE(result.timed_out);
  EXPECT_TRUE(RunOk(Shell("exit 0")).exit.Succeeded());
}

TEST(SubprocessTest, ReportsTheSignalThatKilledIt) {
  SubprocessResult result = RunOk(Shell("kill -SEGV $$"));
  EXPECT_EQ(result.exit.signal, SIGSEGV);
  EXPECT_EQ(result.exit.ShellCode(), 128 + SIGSEGV);
  EXPECT_THAT(result.exit.Describe(), HasSubstr("killed by signal 11"));
}

// --------------------------------------------------------------------------------------- output

TEST(SubprocessTest, RunCapturesStdoutAndStderrApart) {
  SubprocessResult result = RunOk(PipedShell("echo out; echo err >&2; printf tail"));
  EXPECT_EQ(result.stdout_text, "out\ntail");
  EXPECT_EQ(result.stderr_text, "err\n");
}

TEST(SubprocessTest, StderrCanFollowStdout) {
  SubprocessOptions options = Shell("echo out; echo err >&2; echo again");
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::ToStdout();
  EXPECT_EQ(RunOk(options).stdout_text, "out\nerr\nagain\n");
}

TEST(SubprocessTest, ReadsLinesInOrderWithTheUnterminatedLastOne) {
  std::unique_ptr<Subprocess> child = StartOk(PipedShell("printf 'one\\ntwo\\r\\n\\nlast'"));
  ASSERT_NE(child, nullptr);
  std::vector<std::string> lines;
  while (std::optional<std::string> line = child->ReadLine(Stream::kStdout, seconds(10))) lines.push_back(*line);
  EXPECT_THAT(lines, ElementsAre("one", "two", "", "last"));
  EXPECT_TRUE(child->OutputEnded(Stream::kStdout));
  EXPECT_TRUE(child->OutputEnded(Stream::kStderr) || !child->ReadLine(Stream::kStderr, seconds(5)));
  StatusOr<ExitStatus> exit = child->Wait(seconds(10));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_TRUE(exit->Succeeded());
}

TEST(SubprocessTest, ReadsEveryLineOfALongOutputAcrossReads) {
  std::unique_ptr<Subprocess> child = StartOk(PipedShell("seq 1 200000"));
  ASSERT_NE(child, nullptr);
  int expected = 1;
  while (std::optional<std::string> line = child->ReadLine(Stream::kStdout, seconds(30))) {
    ASSERT_EQ(*line, std::to_string(expected));
    ++expected;
  }
  EXPECT_EQ(expected, 200001);
  EXPECT_TRUE(child->OutputEnded(Stream::kStdout));
}

TEST(SubprocessTest, ReadLineWaitsNoLongerThanItsTimeout) {
  std::unique_ptr<Subprocess> child = StartOk(PipedShell("echo ready; exec sleep 100"));
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->ReadLine(Stream::kStdout, seconds(10)), std::optional<std::string>("ready"));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(child->ReadLine(Stream::kStdout, milliseconds(200)), std::nullopt);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, milliseconds(150));
  EXPECT_LT(waited, seconds(5));
  EXPECT_FALSE(child->OutputEnded(Stream::kStdout));
  EXPECT_EQ(child->ReadLine(Stream::kStdout, milliseconds(0)), std::nullopt);
  EXPECT_TRUE(child->Running());
}

TEST(SubprocessTest, AFullStderrPipeDoesNotBlockAChildWhoseStdoutIsRead) {
  // 1 MiB on stderr, far more than a pipe holds, before the stdout line that is waited for.
  std::unique_ptr<Subprocess> child = StartOk(PipedShell("head -c 1048576 /dev/zero >&2; echo done"));
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->ReadLine(Stream::kStdout, seconds(30)), std::optional<std::string>("done"));
}

TEST(SubprocessTest, ReadLineOfAStreamThatIsNotPipedIsNothing) {
  std::unique_ptr<Subprocess> child = StartOk(Shell("exit 0"));
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->ReadLine(Stream::kStdout, milliseconds(10)), std::nullopt);
  EXPECT_TRUE(child->OutputEnded(Stream::kStdout));
}

TEST(SubprocessTest, WritesToFilesAppendedOrTruncated) {
  ScratchFolder scratch;
  std::ofstream(scratch.Path("append.log")) << "before\n";
  std::ofstream(scratch.Path("truncate.log")) << "before\n";
  SubprocessOptions options = Shell("echo out; echo err >&2");
  options.stdout_to = Redirect::TruncateTo(scratch.Path("truncate.log"));
  options.stderr_to = Redirect::AppendTo(scratch.Path("append.log"));
  EXPECT_TRUE(RunOk(options).exit.Succeeded());
  EXPECT_EQ(FileText(scratch.Path("truncate.log")), "out\n");
  EXPECT_EQ(FileText(scratch.Path("append.log")), "before\nerr\n");

  options.stdout_to = Redirect::AppendTo(scratch.Path("new.log"), 0600);
  EXPECT_TRUE(RunOk(options).exit.Succeeded());
  EXPECT_EQ(FileText(scratch.Path("new.log")), "out\n");
  EXPECT_EQ(std::filesystem::status(scratch.Path("new.log")).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);

  options.stdout_to = Redirect::AppendTo(scratch.Path("no-such-folder/out.log"));
  StatusOr<SubprocessResult> missing = Subprocess::Run(options);
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("no-such-folder/out.log"));
}

// ---------------------------------------------------------------------------------------- stdin

TEST(SubprocessTest, StdinFromATextOfAnySize) {
  SubprocessOptions options;
  options.argv = {"cat"};
  options.stdin_from = Redirect::Text("hello\nworld\n");
  options.stdout_to = Redirect::Pipe();
  EXPECT_EQ(RunOk(options).stdout_text, "hello\nworld\n");

  options.argv = {"wc", "-c"};
  options.stdin_from = Redirect::Text(std::string(3 << 20, 'x'));  // more than any pipe holds
  EXPECT_EQ(std::stol(RunOk(options).stdout_text), 3L << 20);
}

TEST(SubprocessTest, StdinFromAFileOrNothing) {
  ScratchFolder scratch;
  std::ofstream(scratch.Path("in.txt")) << "from a file\n";
  SubprocessOptions options;
  options.argv = {"cat"};
  options.stdin_from = Redirect::ReadFrom(scratch.Path("in.txt"));
  options.stdout_to = Redirect::Pipe();
  EXPECT_EQ(RunOk(options).stdout_text, "from a file\n");
  options.stdin_from = Redirect::Null();
  SubprocessResult result = RunOk(options, seconds(10));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.stdout_text, "");
}

TEST(SubprocessTest, RefusesARedirectTheStreamCannotTake) {
  SubprocessOptions options = Shell("exit 0");
  options.stdin_from = Redirect::Pipe();
  EXPECT_EQ(Subprocess::Start(options).status().code(), StatusCode::kInvalidArgument);
  options = Shell("exit 0");
  options.stdout_to = Redirect::ToStdout();
  EXPECT_EQ(Subprocess::Start(options).status().code(), StatusCode::kInvalidArgument);
  options = Shell("exit 0");
  options.stdout_to = Redirect::Text("x");
  EXPECT_EQ(Subprocess::Start(options).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Subprocess::Start(SubprocessOptions{}).status().code(), StatusCode::kInvalidArgument);
}

// ------------------------------------------------------------------ environment, folder, program

TEST(SubprocessTest, EnvironmentEntriesReplaceOrAddToTheInheritedOnes) {
  ::setenv("RUNG_SUBPROCESS_TEST_KEPT", "kept", 1);
  ::setenv("RUNG_SUBPROCESS_TEST_REPLACED", "old", 1);
  SubprocessOptions options = PipedShell(
      "echo \"$RUNG_SUBPROCESS_TEST_KEPT $RUNG_SUBPROCESS_TEST_REPLACED $RUNG_SUBPROCESS_TEST_ADDED\"; "
      "env | grep -c '^RUNG_SUBPROCESS_TEST_REPLACED='");
  options.environment = {"RUNG_SUBPROCESS_TEST_REPLACED=new", "RUNG_SUBPROCESS_TEST_ADDED=added"};
  EXPECT_EQ(RunOk(options).stdout_text, "kept new added\n1\n");

  options.clear_environment = true;
  options.environment = {"ONLY=this"};
  options.argv = {"/usr/bin/env"};
  EXPECT_EQ(RunOk(options).stdout_text, "ONLY=this\n");
  ::unsetenv("RUNG_SUBPROCESS_TEST_KEPT");
  ::unsetenv("RUNG_SUBPROCESS_TEST_REPLACED");

  options.environment = {"NOT_AN_ASSIGNMENT"};
  EXPECT_EQ(Subprocess::Start(options).status().code(), StatusCode::kInvalidArgument);
}

TEST(SubprocessTest, RunsInTheGivenWorkingFolder) {
  ScratchFolder scratch;
  SubprocessOptions options = PipedShell("pwd -P");
  options.working_dir = scratch.path();
  EXPECT_EQ(RunOk(options).stdout_text, std::filesystem::canonical(scratch.path()).string() + "\n");

  options.working_dir = scratch.Path("missing");
  StatusOr<std::unique_ptr<Subprocess>> missing = Subprocess::Start(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file or directory"));
  EXPECT_THAT(missing.status().message(), HasSubstr("missing"));
}

TEST(SubprocessTest, LooksUpANameWithoutSlashInPath) {
  SubprocessOptions options;
  options.argv = {"sh", "-c", "echo found"};
  options.stdout_to = Redirect::Pipe();
  EXPECT_EQ(RunOk(options).stdout_text, "found\n");

  options.argv = {"rung-no-such-program-anywhere"};
  StatusOr<std::unique_ptr<Subprocess>> missing = Subprocess::Start(options);
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("rung-no-such-program-anywhere"));
}

TEST(SubprocessTest, AProgramThatCannotBeExecutedIsAnErrorOfStart) {
  ScratchFolder scratch;
  SubprocessOptions options;
  options.argv = {scratch.Path("missing")};
  StatusOr<std::unique_ptr<Subprocess>> missing = Subprocess::Start(options);
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(missing.status().message(), HasSubstr("No such file or directory"));

  std::ofstream(scratch.Path("not-executable")) << "#!/bin/sh\nexit 0\n";
  options.argv = {scratch.Path("not-executable")};
  StatusOr<std::unique_ptr<Subprocess>> refused = Subprocess::Start(options);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("Permission denied"));
  // The failed child was reaped: no zombie is left of it.
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

// ------------------------------------------------------------------------ what the child inherits

TEST(SubprocessTest, NoDescriptorOfTheParentLeaksIntoTheChild) {
  const int leaky = ::dup(STDOUT_FILENO);  // no close-on-exec
  ASSERT_GE(leaky, 0);
  SubprocessOptions options =
      PipedShell("for fd in " + std::to_string(leaky) + " 3 4 5 6 7 8 9; do [ -e /proc/self/fd/$fd ] && echo $fd; done; true");
  EXPECT_EQ(RunOk(options).stdout_text, "");
  ::close(leaky);
}

TEST(SubprocessTest, TheChildStartsWithDefaultSignalsAndAnEmptyMask) {
  // The parent blocks SIGTERM and ignores SIGUSR1 (as rung-worker blocks its stop signals).
  sigset_t term, previous_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &term, &previous_mask), 0);
  struct sigaction ignore {}, previous_action {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGUSR1, &ignore, &previous_action), 0);
  StatusOr<SubprocessResult> blocked = Subprocess::Run(Shell("kill -TERM $$; sleep 5; exit 0"), seconds(30));
  StatusOr<SubprocessResult> ignored = Subprocess::Run(Shell("kill -USR1 $$; sleep 5; exit 0"), seconds(30));
  ::sigaction(SIGUSR1, &previous_action, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  ASSERT_TRUE(blocked.ok()) << blocked.status().ToString();
  ASSERT_TRUE(ignored.ok()) << ignored.status().ToString();
  EXPECT_EQ(blocked->exit.signal, SIGTERM);
  EXPECT_EQ(ignored->exit.signal, SIGUSR1);
}

// ------------------------------------------------------------------------- deadlines and signals

TEST(SubprocessTest, WaitHasADeadline) {
  std::unique_ptr<Subprocess> child = StartOk(Program({"/bin/sleep", "100"}));
  ASSERT_NE(child, nullptr);
  const auto start = std::chrono::steady_clock::now();
  StatusOr<ExitStatus> running = child->Wait(milliseconds(200));
  EXPECT_EQ(running.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(150));
  EXPECT_TRUE(child->Running());
  ASSERT_TRUE(child->Signal(SIGTERM).ok());
  StatusOr<ExitStatus> exit = child->Wait(seconds(10));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->signal, SIGTERM);
  EXPECT_FALSE(child->Running());
  // The exit stays; signalling the reaped child is harmless.
  EXPECT_EQ(child->Wait(milliseconds(0))->signal, SIGTERM);
  EXPECT_TRUE(child->Signal(SIGKILL).ok());
}

TEST(SubprocessTest, StopEscalatesToSigkillAfterTheGrace) {
  std::unique_ptr<Subprocess> child =
      StartOk(PipedShell("trap '' TERM; echo ready; while :; do sleep 0.05; done"));
  ASSERT_NE(child, nullptr);
  ASSERT_EQ(child->ReadLine(Stream::kStdout, seconds(10)), std::optional<std::string>("ready"));
  StatusOr<ExitStatus> stopped = child->Stop(SIGTERM, milliseconds(300));
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  EXPECT_EQ(stopped->signal, SIGKILL);
}

TEST(SubprocessTest, StopWithinTheGraceKeepsTheChildsOwnExit) {
  std::unique_ptr<Subprocess> child = StartOk(PipedShell("trap 'exit 75' TERM; echo ready; while :; do sleep 0.02; done"));
  ASSERT_NE(child, nullptr);
  ASSERT_EQ(child->ReadLine(Stream::kStdout, seconds(10)), std::optional<std::string>("ready"));
  StatusOr<ExitStatus> stopped = child->Stop(SIGTERM, seconds(10));
  ASSERT_TRUE(stopped.ok()) << stopped.status().ToString();
  EXPECT_EQ(stopped->code, 75);
}

TEST(SubprocessTest, RunKillsAChildPastItsDeadline) {
  const auto start = std::chrono::steady_clock::now();
  SubprocessResult result = RunOk(PipedShell("echo started; exec sleep 100"), milliseconds(300));
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit.signal, SIGKILL);
  EXPECT_EQ(result.stdout_text, "started\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, seconds(10));
}

TEST(SubprocessTest, RunEndsWithTheChildEvenIfADescendantHoldsItsPipe) {
  const auto start = std::chrono::steady_clock::now();
  SubprocessResult result = RunOk(PipedShell("sleep 3 & echo done"), seconds(30));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.stdout_text, "done\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(2500));
}

// ------------------------------------------------------------------------------ process groups

TEST(SubprocessTest, AGroupOfItsOwnIsSignalledWhole) {
  SubprocessOptions options = PipedShell("sleep 100 & echo $!; wait");
  options.new_process_group = true;
  std::unique_ptr<Subprocess> child = StartOk(options);
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(::getpgid(child->pid()), child->pid());
  std::optional<std::string> line = child->ReadLine(Stream::kStdout, seconds(10));
  ASSERT_TRUE(line.has_value());
  const pid_t grandchild = std::stoi(*line);
  EXPECT_EQ(::getpgid(grandchild), child->pid());
  ASSERT_TRUE(child->SignalGroup(SIGKILL).ok());
  StatusOr<ExitStatus> exit = child->Wait(seconds(10));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->signal, SIGKILL);
  EXPECT_TRUE(Eventually([&] { return !Alive(grandchild); })) << "the group's other member survived";
  EXPECT_TRUE(child->SignalGroup(SIGKILL).ok()) << "no effect once reaped";
}

TEST(SubprocessTest, WithoutAGroupOfItsOwnItSharesTheParents) {
  std::unique_ptr<Subprocess> child = StartOk(Program({"/bin/sleep", "100"}));
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(::getpgid(child->pid()), ::getpgid(0));
  EXPECT_EQ(child->SignalGroup(SIGKILL).code(), StatusCode::kFailedPrecondition);
}

TEST(SubprocessTest, DestroyingARunningChildKillsItsGroupAndReapsIt) {
  SubprocessOptions options = PipedShell("sleep 100 & echo $!; wait");
  options.new_process_group = true;
  std::unique_ptr<Subprocess> child = StartOk(options);
  ASSERT_NE(child, nullptr);
  const pid_t pid = child->pid();
  std::optional<std::string> line = child->ReadLine(Stream::kStdout, seconds(10));
  ASSERT_TRUE(line.has_value());
  const pid_t grandchild = std::stoi(*line);
  child.reset();
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid))) << "not reaped";
  EXPECT_TRUE(Eventually([&] { return !Alive(grandchild); }));
}

TEST(SubprocessTest, DieWithParentKillsTheChildWhenTheStartingThreadEnds) {
  SubprocessOptions options = Program({"/bin/sleep", "100"});
  options.die_with_parent = true;
  std::unique_ptr<Subprocess> child;
  std::thread starter([&] { child = StartOk(options); });
  starter.join();
  ASSERT_NE(child, nullptr);
  StatusOr<ExitStatus> exit = child->Wait(seconds(10));
  ASSERT_TRUE(exit.ok()) << exit.status().ToString();
  EXPECT_EQ(exit->signal, SIGKILL);
}

}  // namespace
}  // namespace rung

// tests/coordinator/server/coordinator_binary_test.cc
//
// The rung-coordinator binary as a real process: it creates missing token files (0600), opens its
// database, prints the address it bound, answers health checks and calls, and exits 0 on SIGTERM.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <google/protobuf/util/time_util.h>

#include "coordinator/server/auth.h"
#include "proto/rung.grpc.pb.h"
#include "tests/coordinator/server/server_test_util.h"

extern char** environ;

namespace rung::server {
namespace {

using testing::CheckHealth;
using testing::LoopbackChannel;
using testing::ScratchDir;

// A child process whose stdout the test reads; killed if the test ends while it runs.
class ChildProcess {
 public:
  explicit ChildProcess(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2 failed";
      return;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    if (posix_spawn(&pid_, argv[0].c_str(), &actions, nullptr, args.data(), environ) != 0) {
      ADD_FAILURE() << "cannot start " << argv[0];
      pid_ = -1;
    }
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    stdout_ = out[0];
  }

  ~ChildProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (stdout_ >= 0) ::close(stdout_);
  }

  // The next line of the child's stdout (without '\n'), or "" after `timeout` or at its end.
  std::string ReadLine(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string line;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd ready{stdout_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (::poll(&ready, 1, static_cast<int>(std::max<int64_t>(left.count(), 0))) <= 0) break;
      char c = 0;
      if (::read(stdout_, &c, 1) != 1) break;
      if (c == '\n') return line;
      line += c;
    }
    return "";
  }

  void Signal(int signal_number) { ::kill(pid_, signal_number); }

  // Waits up to `timeout` for the child to end; its wait status, or -1 if it is still running.
  int Wait(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int stdout_ = -1;
};

mode_t FileMode(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

TEST(CoordinatorBinaryTest, PrintsItsAddressServesHealthAndExitsZeroOnSigterm) {
  ScratchDir scratch;
  const std::string user_token = scratch.Path("user.token");
  const std::string worker_token = scratch.Path("worker.token");
  ChildProcess coordinator({RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--db", scratch.Path("rung.db"),
                            "--user-token-file", user_token, "--worker-token-file", worker_token,
                            "--lease-seconds", "0.5"});

  const std::string line = coordinator.ReadLine(std::chrono::seconds(30));
  ASSERT_THAT(line, ::testing::StartsWith("listening on 127.0.0.1:"));
  const std::string address = line.substr(std::string("listening on ").size());
  EXPECT_NE(address, "127.0.0.1:0");

  // The token files did not exist: the coordinator created them, readable by their owner only.
  EXPECT_EQ(FileMode(user_token), 0600u);
  EXPECT_EQ(FileMode(worker_token), 0600u);

  grpc::Status status;
  EXPECT_EQ(CheckHealth(LoopbackChannel(address), &status), grpc::health::v1::HealthCheckResponse::SERVING);
  EXPECT_TRUE(status.ok()) << status.error_message();

  // The database is open: a worker registers, and is told the fractional lease it was started with.
  StatusOr<std::string> token = ReadTokenFile(worker_token);
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  v1::RegisterRequest request;
  request.set_worker_id("w1");
  request.set_host("localhost");
  request.set_cpu_slots(1);
  v1::RegisterResponse registered;
  status = v1::WorkerService::NewStub(LoopbackChannel(address))
               ->Register(testing::ContextWithToken(*token).get(), request, &registered);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(google::protobuf::util::TimeUtil::DurationToMilliseconds(registered.lease_duration()), 500);
  EXPECT_LT(google::protobuf::util::TimeUtil::DurationToMilliseconds(registered.heartbeat_interval()), 500);

  coordinator.Signal(SIGTERM);
  const int wait_status = coordinator.Wait(std::chrono::seconds(20));
  ASSERT_NE(wait_status, -1) << "rung-coordinator did not exit after SIGTERM";
  ASSERT_TRUE(WIFEXITED(wait_status)) << "wait status " << wait_status;
  EXPECT_EQ(WEXITSTATUS(wait_status), 0);
}

TEST(CoordinatorBinaryTest, BadArgumentsExitTwoWithoutServing) {
  ScratchDir scratch;
  ChildProcess coordinator({RUNG_COORDINATOR_BINARY, "--listen", "0.0.0.0:0", "--user-token-file",
                            scratch.Path("user.token"), "--worker-token-file", scratch.Path("worker.token")});
  EXPECT_EQ(coordinator.ReadLine(std::chrono::seconds(30)), "");
  const int wait_status = coordinator.Wait(std::chrono::seconds(20));
  ASSERT_TRUE(wait_status != -1 && WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 2);
}

}  // namespace
}  // namespace rung::server

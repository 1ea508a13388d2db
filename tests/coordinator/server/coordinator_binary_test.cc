// tests/coordinator/server/coordinator_binary_test.cc
//
// The rung-coordinator binary as a real process: it creates missing token files (0600), opens its
// database, prints the address it bound, answers health checks and calls, and exits 0 on SIGTERM
// within 2 s; a second coordinator on the same database (or a link to it) and a damaged database
// are refused with exit 1, writing nothing; an artifact root marker that is not one exits 2 naming it.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <google/protobuf/util/time_util.h>

#include "coordinator/server/auth.h"
#include "proto/protocol_version.h"
#include "proto/rung.grpc.pb.h"
#include "tests/coordinator/server/server_test_util.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::server {
namespace {

using testing::CheckHealth;
using testing::LoopbackChannel;
using testing::ScratchDir;

// A child process whose stdout the test reads (shared with the worker and system tests).
using agent::testing::ChildProcess;
using agent::testing::FileText;

mode_t PermissionBits(const std::string& path) {
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
                            "--lease-seconds", "0.5"},
                           "", scratch.Path("coordinator.log"));

  const std::string line = coordinator.ReadLine(std::chrono::seconds(30));
  ASSERT_THAT(line, ::testing::StartsWith("listening on 127.0.0.1:"));
  const std::string address = line.substr(std::string("listening on ").size());
  EXPECT_NE(address, "127.0.0.1:0");

  // The token files did not exist: the coordinator created them, readable by their owner only.
  EXPECT_EQ(PermissionBits(user_token), 0600u);
  EXPECT_EQ(PermissionBits(worker_token), 0600u);

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
  request.set_protocol_version(wire::kProtocolVersion);
  v1::RegisterResponse registered;
  status = v1::WorkerService::NewStub(LoopbackChannel(address))
               ->Register(testing::ContextWithToken(*token).get(), request, &registered);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(google::protobuf::util::TimeUtil::DurationToMilliseconds(registered.lease_duration()), 500);
  EXPECT_LT(google::protobuf::util::TimeUtil::DurationToMilliseconds(registered.heartbeat_interval()), 500);

  // A Lease long-poll in flight (nothing to lease: it would wait a minute) does not hold SIGTERM up.
  std::thread polling([&] {
    v1::LeaseRequest lease;
    lease.set_worker_id("w1");
    lease.mutable_free()->set_cpu_slots(1);
    lease.mutable_wait()->set_seconds(60);
    v1::LeaseResponse leased;
    (void)v1::WorkerService::NewStub(LoopbackChannel(address))
        ->Lease(testing::ContextWithToken(*token).get(), lease, &leased);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the poll reaches the server
  const auto signalled = std::chrono::steady_clock::now();
  coordinator.Signal(SIGTERM);
  const int wait_status = coordinator.Wait(std::chrono::seconds(20));
  const auto took = std::chrono::steady_clock::now() - signalled;
  polling.join();
  ASSERT_NE(wait_status, -1) << "rung-coordinator did not exit after SIGTERM";
  ASSERT_TRUE(WIFEXITED(wait_status)) << "wait status " << wait_status;
  EXPECT_EQ(WEXITSTATUS(wait_status), 0);
  EXPECT_LT(took, std::chrono::seconds(2)) << "SIGTERM took "
                                            << std::chrono::duration<double>(took).count() << " s";
}

// Starts rung-coordinator on `db` with the scratch folder's token files and a log named `log`.
std::unique_ptr<ChildProcess> StartCoordinator(const ScratchDir& scratch, const std::string& db,
                                               const std::string& log) {
  return std::make_unique<ChildProcess>(
      std::vector<std::string>{RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--db", db, "--user-token-file",
                               scratch.Path("user.token"), "--worker-token-file", scratch.Path("worker.token")},
      "", scratch.Path(log));
}

// Waits for a coordinator that must not start: its exit code (-1 if it did not exit).
int ExitCodeOfRefused(ChildProcess& coordinator) {
  EXPECT_EQ(coordinator.ReadLine(std::chrono::seconds(30)), "") << "it served";
  const int wait_status = coordinator.Wait(std::chrono::seconds(20));
  return wait_status != -1 && WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

TEST(CoordinatorBinaryTest, ASecondCoordinatorOnTheSameDatabaseOrALinkToItExitsOneNamingTheFirst) {
  ScratchDir scratch;
  const std::string db = scratch.Path("rung.db");
  std::unique_ptr<ChildProcess> first = StartCoordinator(scratch, db, "first.log");
  ASSERT_THAT(first->ReadLine(std::chrono::seconds(30)), ::testing::StartsWith("listening on "));
  ASSERT_EQ(::symlink(db.c_str(), scratch.Path("symlink.db").c_str()), 0);
  ASSERT_EQ(::link(db.c_str(), scratch.Path("hardlink.db").c_str()), 0);
  for (const std::string& path : {db, scratch.Path("symlink.db"), scratch.Path("hardlink.db")}) {
    SCOPED_TRACE(path);
    std::unique_ptr<ChildProcess> second = StartCoordinator(scratch, path, "second.log");
    EXPECT_EQ(ExitCodeOfRefused(*second), 1);
    EXPECT_THAT(FileText(scratch.Path("second.log")), ::testing::HasSubstr("is in use by rung-coordinator pid "));
  }
  first->Signal(SIGTERM);
  EXPECT_NE(first->Wait(std::chrono::seconds(20)), -1);
}

TEST(CoordinatorBinaryTest, ADamagedDatabaseIsRefusedWithHowToRecoverAndNoTokenFileIsWritten) {
  ScratchDir scratch;
  const std::string db = scratch.Path("damaged.db");
  {
    std::ofstream file(db);
    file << "SQLite format 3" << std::string(1, '\0') << std::string(8000, '\x7f');
  }
  std::unique_ptr<ChildProcess> coordinator = StartCoordinator(scratch, db, "coordinator.log");
  EXPECT_EQ(ExitCodeOfRefused(*coordinator), 1);
  EXPECT_THAT(FileText(scratch.Path("coordinator.log")), ::testing::HasSubstr(".recover"));
  EXPECT_FALSE(std::filesystem::exists(scratch.Path("user.token"))) << "a token file was written";
}

TEST(CoordinatorBinaryTest, AnArtifactRootMarkerThatIsNotOneExitsTwoNamingIt) {
  ScratchDir scratch;
  std::filesystem::create_directories(scratch.Path("artifacts"));
  const std::string marker = scratch.Path("artifacts/.rung-artifact-root");
  agent::testing::WriteFile(marker, "not json\n");
  ChildProcess coordinator({RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--db", scratch.Path("rung.db"),
                            "--artifact-root", scratch.Path("artifacts"), "--user-token-file", scratch.Path("user.token"),
                            "--worker-token-file", scratch.Path("worker.token")},
                           "", scratch.Path("coordinator.log"));
  EXPECT_EQ(ExitCodeOfRefused(coordinator), 2);
  EXPECT_THAT(FileText(scratch.Path("coordinator.log")),
              ::testing::HasSubstr("rung-coordinator: " + marker + " is not an artifact root marker: not JSON"));
  EXPECT_EQ(FileText(marker), "not json\n");
  EXPECT_FALSE(std::filesystem::exists(scratch.Path("user.token"))) << "a token file was written";
}

TEST(CoordinatorBinaryTest, BadArgumentsExitTwoWithoutServing) {
  ScratchDir scratch;
  ChildProcess coordinator({RUNG_COORDINATOR_BINARY, "--listen", "0.0.0.0:0", "--user-token-file",
                            scratch.Path("user.token"), "--worker-token-file", scratch.Path("worker.token")},
                           "", scratch.Path("coordinator.log"));
  EXPECT_EQ(coordinator.ReadLine(std::chrono::seconds(30)), "");
  const int wait_status = coordinator.Wait(std::chrono::seconds(20));
  ASSERT_TRUE(wait_status != -1 && WIFEXITED(wait_status));
  EXPECT_EQ(WEXITSTATUS(wait_status), 2);
}

TEST(CoordinatorBinaryTest, ABadRendezvousPortRangeExitsTwoNamingTheFlag) {
  for (const char* range : {"29999-29500", "0-10", "29500", "a-b"}) {
    ScratchDir scratch;
    ChildProcess coordinator({RUNG_COORDINATOR_BINARY, "--listen", "127.0.0.1:0", "--db", scratch.Path("rung.db"),
                              "--user-token-file", scratch.Path("user.token"), "--worker-token-file",
                              scratch.Path("worker.token"), "--rendezvous-ports", range},
                             "", scratch.Path("coordinator.log"));
    EXPECT_EQ(coordinator.ReadLine(std::chrono::seconds(30)), "") << range;
    const int wait_status = coordinator.Wait(std::chrono::seconds(20));
    ASSERT_TRUE(wait_status != -1 && WIFEXITED(wait_status)) << range;
    EXPECT_EQ(WEXITSTATUS(wait_status), 2) << range;
    EXPECT_THAT(FileText(scratch.Path("coordinator.log")), ::testing::HasSubstr("--rendezvous-ports")) << range;
  }
}

}  // namespace
}  // namespace rung::server

// tests/worker/agent/coordinator_client_test.cc
//
// CoordinatorClient against a real gRPC server on loopback: the bearer token on every call,
// retries of transient failures after their backoff (on a ManualClock), registering again with a
// coordinator that forgot the worker, and how refusals come back.
#include "worker/agent/coordinator_client.h"

#include <future>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using testing::TestCoordinator;
using ::testing::Each;
using ::testing::HasSubstr;

CoordinatorClientOptions Options(const std::string& address, const std::string& token = testing::kTestToken) {
  CoordinatorClientOptions options;
  options.address = address;
  options.token = token;
  options.call_timeout = std::chrono::seconds(5);
  options.retry_backoff = {std::chrono::milliseconds(10), std::chrono::milliseconds(50), 2.0};
  options.max_reconnect_backoff = std::chrono::milliseconds(200);
  return options;
}

v1::RegisterRequest Registration() {
  v1::RegisterRequest request;
  request.set_worker_id("node-1");
  request.set_cpu_slots(4);
  return request;
}

TEST(CoordinatorClientTest, EveryCallCarriesTheBearerTokenAndTheRegisteredWorkerId) {
  TestCoordinator coordinator;
  auto client = CoordinatorClient::Connect(Options(coordinator.Start()));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ASSERT_TRUE((*client)->Register(Registration()).ok());
  EXPECT_EQ((*client)->worker_id(), "node-1");
  v1::HeartbeatRequest heartbeat;
  heartbeat.set_trial_id(3);
  heartbeat.set_attempt(1);
  StatusOr<v1::HeartbeatResponse> answer = (*client)->Heartbeat(heartbeat);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->action(), v1::HeartbeatResponse::ACTION_CONTINUE);
  EXPECT_EQ(coordinator.heartbeats(3), 1);
  EXPECT_THAT(coordinator.authorization_headers(), Each(std::string("Bearer ") + testing::kTestToken));
}

TEST(CoordinatorClientTest, AWrongTokenIsRefusedForGoodWithTheFlagToFix) {
  TestCoordinator coordinator;
  auto client = CoordinatorClient::Connect(Options(coordinator.Start(), "not-the-worker-token-at-all"));
  ASSERT_TRUE(client.ok());
  StatusOr<v1::RegisterResponse> refused = (*client)->Register(Registration());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated);
  EXPECT_FALSE(IsTransient(refused.status()));
  EXPECT_THAT(refused.status().message(), HasSubstr("--worker-token-file"));
  EXPECT_THAT(refused.status().message(), ::testing::Not(HasSubstr("not-the-worker-token")));
  EXPECT_EQ(coordinator.authorization_headers().size(), 1u) << "not retried";
}

TEST(CoordinatorClientTest, TransientFailuresAreRetriedOnceTheirBackoffHasPassed) {
  ManualClock clock;
  TestCoordinator coordinator;
  auto client = CoordinatorClient::Connect(Options(coordinator.Start()), clock);
  ASSERT_TRUE(client.ok());
  coordinator.FailNext("Register", 2);
  std::future<StatusOr<v1::RegisterResponse>> registered =
      std::async(std::launch::async, [&] { return (*client)->Register(Registration()); });
  for (int tries = 1; tries <= 2; ++tries) {
    ASSERT_TRUE(coordinator.WaitFor([tries](const TestCoordinator& c) { return c.calls("Register") == tries; },
                                    std::chrono::seconds(10)));
    ASSERT_TRUE(clock.AwaitWaiters(1)) << "the client waits out its backoff";
    EXPECT_EQ(coordinator.calls("Register"), tries) << "no new try before the backoff has passed";
    clock.Advance(std::chrono::milliseconds(60));  // past the longest backoff (50 ms + 20% jitter)
  }
  ASSERT_EQ(registered.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  ASSERT_TRUE(registered.get().ok()) << "the third try gets through";
  EXPECT_EQ(coordinator.registrations().size(), 1u);

  coordinator.FailNext("Heartbeat", 5);
  std::future<StatusOr<v1::HeartbeatResponse>> heartbeat =
      std::async(std::launch::async, [&] { return (*client)->Heartbeat(v1::HeartbeatRequest()); });
  ASSERT_TRUE(testing::AdvanceUntil(
      clock, [&] { return heartbeat.wait_for(std::chrono::milliseconds(0)) == std::future_status::ready; }));
  StatusOr<v1::HeartbeatResponse> unavailable = heartbeat.get();
  ASSERT_FALSE(unavailable.ok());
  EXPECT_TRUE(IsTransient(unavailable.status())) << unavailable.status().ToString();
  EXPECT_THAT(unavailable.status().message(), HasSubstr("Heartbeat"));
  EXPECT_EQ(coordinator.calls("Heartbeat"), 3) << "max_tries, then the failure";
}

TEST(CoordinatorClientTest, NoCoordinatorIsTransient) {
  TestCoordinator coordinator;
  const std::string address = coordinator.Start();
  coordinator.Stop();
  auto client = CoordinatorClient::Connect(Options(address));
  ASSERT_TRUE(client.ok());
  StatusOr<v1::RegisterResponse> away = (*client)->Register(Registration());
  ASSERT_FALSE(away.ok());
  EXPECT_TRUE(IsTransient(away.status())) << away.status().ToString();
}

TEST(CoordinatorClientTest, ACoordinatorThatForgotTheWorkerIsToldAgain) {
  TestCoordinator coordinator;
  auto client = CoordinatorClient::Connect(Options(coordinator.Start()));
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Register(Registration()).ok());
  coordinator.ForgetWorkers();  // as after a restart without the worker table
  StatusOr<v1::HeartbeatResponse> answer = (*client)->Heartbeat(v1::HeartbeatRequest());
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(coordinator.registrations().size(), 2u);
  EXPECT_EQ(coordinator.registrations()[1].cpu_slots(), 4) << "the same registration again";
}

TEST(CoordinatorClientTest, AnInterruptCancelsALongPollAtOnce) {
  TestCoordinator coordinator;
  auto client = CoordinatorClient::Connect(Options(coordinator.Start()));
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Register(Registration()).ok());
  CallInterrupter interrupter;
  interrupter.Interrupt();
  StatusOr<v1::LeaseResponse> interrupted = (*client)->Lease(v1::LeaseRequest(), std::chrono::seconds(30), &interrupter);
  ASSERT_FALSE(interrupted.ok());
  EXPECT_EQ(interrupted.status().code(), StatusCode::kCancelled);
  EXPECT_FALSE(interrupter.SleepFor(std::chrono::seconds(30))) << "sleeps end at once too";
  interrupter.Reset();
  StatusOr<v1::LeaseResponse> answered = (*client)->Lease(v1::LeaseRequest(), std::chrono::milliseconds(10), &interrupter);
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  EXPECT_FALSE(answered->has_lease());
}

}  // namespace
}  // namespace rung::agent

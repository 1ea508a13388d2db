// tests/worker/agent/metric_relay_test.cc
//
// MetricRelay against a real gRPC WorkerService on loopback, on a ManualClock: batch sizes and
// delays (nothing goes before its time), sequence numbers, resending after a backoff until
// acknowledged, buffering while the coordinator is away, and fencing.
#include "worker/agent/metric_relay.h"

#include <future>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/worker/agent/agent_test_util.h"

namespace rung::agent {
namespace {

using testing::TestCoordinator;
using ::testing::ElementsAre;
using std::chrono::milliseconds;

constexpr int64_t kTrial = 5, kAttempt = 2;

class MetricRelayTest : public ::testing::Test {
 protected:
  void Connect(const std::string& address) {
    client_ = testing::ConnectRegisteredClient(address, "relay-worker", clock_);
    ASSERT_NE(client_, nullptr);
  }

  size_t Committed() const { return coordinator_.committed_batches(kTrial).size(); }

  // Waits (real time) until the coordinator has committed `count` batches of kTrial.
  bool AwaitCommitted(size_t count) {
    return coordinator_.WaitFor([count](const TestCoordinator& c) { return c.committed_batches(kTrial).size() == count; },
                                std::chrono::seconds(10));
  }

  static RelayOptions FastOptions(size_t batch_lines, std::chrono::milliseconds delay) {
    RelayOptions options;
    options.batch_lines = batch_lines;
    options.batch_delay = delay;
    options.retry_backoff = {std::chrono::milliseconds(20), std::chrono::milliseconds(100), 2.0};
    return options;
  }

  static std::string StepLine(int64_t step) {
    return R"({"type":"step","step":)" + std::to_string(step) + R"(,"train_loss":)" +
           std::to_string(1.0 / static_cast<double>(step)) + "}";
  }

  // Relays one stdout line as the agent does: the line, and the record it holds.
  static void AddLine(MetricRelay& relay, const std::string& line) {
    StatusOr<records::TrainerRecord> record = records::DecodeRecord(line);
    relay.AddStdout(line, record.ok() ? &*record : nullptr);
  }

  // The steps of a batch's step records, in order.
  static std::vector<int64_t> Steps(const v1::MetricBatch& batch) {
    std::vector<int64_t> steps;
    for (const v1::StdoutLine& line : batch.stdout()) {
      if (line.record().has_step()) steps.push_back(line.record().step().step());
    }
    return steps;
  }

  static bool HasProvenance(const v1::MetricBatch& batch) {
    for (const v1::StdoutLine& line : batch.stdout()) {
      if (line.record().has_provenance()) return true;
    }
    return false;
  }

  ManualClock clock_;
  TestCoordinator coordinator_;
  std::unique_ptr<CoordinatorClient> client_;
};

TEST_F(MetricRelayTest, BatchesEveryNLinesInSequenceAndDrainsTheRest) {
  Connect(coordinator_.Start());
  MetricRelay relay(client_.get(), kTrial, kAttempt, FastOptions(4, std::chrono::hours(1)), clock_);
  for (int64_t step = 1; step <= 10; ++step) AddLine(relay, StepLine(step));
  relay.AddStderr("a warning");
  ASSERT_TRUE(AwaitCommitted(2)) << "two full batches, at once";
  StatusOr<int64_t> last = relay.Drain();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, 3);
  EXPECT_EQ(relay.acknowledged_sequence(), 3);

  std::vector<int64_t> sequences, sizes, steps;
  for (const TestCoordinator::Batch& batch : coordinator_.committed_batches(kTrial)) {
    EXPECT_EQ(batch.attempt, kAttempt);
    EXPECT_EQ(batch.request.worker_id(), "relay-worker");
    sequences.push_back(batch.sequence);
    sizes.push_back(batch.request.batch().stdout_size() + batch.request.batch().stderr_lines_size());
    for (int64_t step : Steps(batch.request.batch())) steps.push_back(step);
  }
  EXPECT_THAT(sequences, ElementsAre(1, 2, 3));
  EXPECT_THAT(sizes, ElementsAre(4, 4, 3));
  EXPECT_THAT(steps, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
  EXPECT_THAT(coordinator_.committed_batches(kTrial).back().request.batch().stderr_lines(), ElementsAre("a warning"));
}

TEST_F(MetricRelayTest, APartialBatchGoesWhenItsOldestLineHasWaitedTheDelay) {
  Connect(coordinator_.Start());
  RelayOptions options = FastOptions(1000, milliseconds(100));
  options.provenance_delay = milliseconds(0);  // at once
  MetricRelay relay(client_.get(), kTrial, kAttempt, options, clock_);
  AddLine(relay, R"({"type":"provenance","threads":2})");
  ASSERT_TRUE(AwaitCommitted(1)) << "the provenance, without the clock moving";
  EXPECT_TRUE(HasProvenance(coordinator_.committed_batches(kTrial)[0].request.batch()));

  const Clock::TimePoint added = clock_.Now();
  AddLine(relay, StepLine(1));
  clock_.Advance(milliseconds(60));
  AddLine(relay, StepLine(2));  // the batch is due when the oldest line's delay is over
  ASSERT_TRUE(clock_.AwaitWaiter(added + milliseconds(100))) << "the sender sleeps until then";
  clock_.Advance(milliseconds(39));
  ASSERT_TRUE(clock_.AwaitWaiter(added + milliseconds(100)));
  EXPECT_EQ(Committed(), 1u) << "nothing before the delay";
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(AwaitCommitted(2));
  const v1::MetricBatch second = coordinator_.committed_batches(kTrial)[1].request.batch();
  EXPECT_FALSE(HasProvenance(second));
  EXPECT_THAT(Steps(second), ElementsAre(1, 2));
}

TEST_F(MetricRelayTest, TheProvenanceWaitsItsDelayUnlessTheAttemptEndsFirst) {
  Connect(coordinator_.Start());
  RelayOptions options = FastOptions(1000, std::chrono::hours(1));
  options.provenance_delay = milliseconds(50);
  MetricRelay relay(client_.get(), kTrial, kAttempt, options, clock_);
  const Clock::TimePoint added = clock_.Now();
  AddLine(relay, R"({"type":"provenance"})");
  AddLine(relay, StepLine(1));
  ASSERT_TRUE(clock_.AwaitWaiter(added + milliseconds(50)));
  clock_.Advance(milliseconds(49));
  ASSERT_TRUE(clock_.AwaitWaiter(added + milliseconds(50)));
  EXPECT_EQ(Committed(), 0u) << "nothing before the provenance's delay";
  clock_.Advance(milliseconds(1));
  ASSERT_TRUE(AwaitCommitted(1));
  EXPECT_EQ(coordinator_.committed_batches(kTrial)[0].request.batch().stdout_size(), 2) << "with the lines before it";

  MetricRelay quick(client_.get(), kTrial + 1, kAttempt, options, clock_);
  AddLine(quick, R"({"type":"provenance"})");
  AddLine(quick, StepLine(1));
  StatusOr<int64_t> last = quick.Drain();  // the trainer ended within the delay: sent at once
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, 1);
  ASSERT_EQ(coordinator_.committed_batches(kTrial + 1).size(), 1u);
  const v1::MetricBatch only = coordinator_.committed_batches(kTrial + 1)[0].request.batch();
  EXPECT_TRUE(HasProvenance(only));
  EXPECT_EQ(only.stdout_size(), 2);
}

TEST_F(MetricRelayTest, DrainSendsEverythingInBatchesAndNamesTheLast) {
  Connect(coordinator_.Start());
  MetricRelay relay(client_.get(), kTrial, kAttempt, FastOptions(4, std::chrono::hours(1)), clock_);
  for (int64_t step = 1; step <= 10; ++step) AddLine(relay, StepLine(step));
  StatusOr<int64_t> last = relay.Drain();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, 3);
  std::vector<int64_t> sent;
  for (const TestCoordinator::Batch& batch : coordinator_.committed_batches(kTrial)) {
    EXPECT_LE(batch.request.batch().stdout_size(), 4) << "batch_lines";
    for (int64_t step : Steps(batch.request.batch())) sent.push_back(step);
  }
  EXPECT_THAT(sent, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
}

TEST_F(MetricRelayTest, DrainWithNothingBufferedNamesTheLastBatchSent) {
  Connect(coordinator_.Start());
  MetricRelay relay(client_.get(), kTrial, kAttempt, FastOptions(1, std::chrono::hours(1)), clock_);
  AddLine(relay, StepLine(1));
  ASSERT_TRUE(AwaitCommitted(1));
  StatusOr<int64_t> last = relay.Drain();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, 1);
  EXPECT_EQ(Committed(), 1u);
}

TEST_F(MetricRelayTest, AFailedBatchIsResentUnchangedOnceItsBackoffHasPassed) {
  Connect(coordinator_.Start());
  coordinator_.FailNext("ReportMetrics", 3);
  MetricRelay relay(client_.get(), kTrial, kAttempt, FastOptions(2, std::chrono::hours(1)), clock_);
  for (int64_t step = 1; step <= 4; ++step) AddLine(relay, StepLine(step));
  for (int tries = 1; tries <= 3; ++tries) {
    ASSERT_TRUE(coordinator_.WaitFor([tries](const TestCoordinator& c) { return c.calls("ReportMetrics") == tries; },
                                     std::chrono::seconds(10)));
    ASSERT_TRUE(clock_.AwaitWaiters(1)) << "the sender waits out its backoff";
    EXPECT_EQ(coordinator_.calls("ReportMetrics"), tries) << "no new try before the backoff has passed";
    clock_.Advance(milliseconds(120));  // past the longest backoff (100 ms + 20% jitter)
  }
  StatusOr<int64_t> last = relay.Drain();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, 2);
  std::vector<TestCoordinator::Batch> batches = coordinator_.committed_batches(kTrial);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(Steps(batches[0].request.batch()), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Steps(batches[1].request.batch()), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(coordinator_.calls("ReportMetrics"), 5);
}

TEST_F(MetricRelayTest, KeepsBufferingWhileTheCoordinatorIsAwayAndCatchesUpWhenItReturns) {
  const std::string address = coordinator_.Start();
  const int port = coordinator_.port();
  Connect(address);
  MetricRelay relay(client_.get(), kTrial, kAttempt, FastOptions(3, milliseconds(50)), clock_);
  AddLine(relay, StepLine(1));
  clock_.Advance(milliseconds(50));
  ASSERT_TRUE(AwaitCommitted(1));
  coordinator_.Stop();
  for (int64_t step = 2; step <= 20; ++step) AddLine(relay, StepLine(step));
  StatusOr<int64_t> not_yet = relay.Drain(clock_.Now());
  ASSERT_FALSE(not_yet.ok());
  EXPECT_EQ(not_yet.status().code(), StatusCode::kUnavailable) << not_yet.status().ToString();
  EXPECT_TRUE(relay.status().ok()) << "an absent coordinator is no reason to stop";

  coordinator_.Start(port);  // the coordinator comes back on its address
  std::future<StatusOr<int64_t>> drained = std::async(std::launch::async, [&] { return relay.Drain(); });
  ASSERT_TRUE(testing::AdvanceUntil(clock_, [&] {
    return drained.wait_for(milliseconds(0)) == std::future_status::ready;
  })) << "the sender retries as its backoffs pass";
  StatusOr<int64_t> last = drained.get();
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  std::vector<int64_t> steps, sequences;
  for (const TestCoordinator::Batch& batch : coordinator_.committed_batches(kTrial)) {
    sequences.push_back(batch.sequence);
    for (int64_t step : Steps(batch.request.batch())) steps.push_back(step);
  }
  ASSERT_EQ(steps.size(), 20u) << "every step exactly once";
  for (int64_t step = 1; step <= 20; ++step) EXPECT_EQ(steps[step - 1], step);
  for (size_t i = 0; i < sequences.size(); ++i) EXPECT_EQ(sequences[i], static_cast<int64_t>(i + 1));
  EXPECT_EQ(*last, sequences.back());
}

TEST_F(MetricRelayTest, AFencedAttemptStopsRelayingForGood) {
  Connect(coordinator_.Start());
  coordinator_.FenceTrial(kTrial);
  MetricRelay relay(client_.get(), kTrial, kAttempt, FastOptions(1, std::chrono::hours(1)), clock_);
  AddLine(relay, StepLine(1));
  StatusOr<int64_t> fenced = relay.Drain();
  ASSERT_FALSE(fenced.ok());
  EXPECT_EQ(fenced.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(relay.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(coordinator_.committed_batches(kTrial).empty());
}

TEST_F(MetricRelayTest, AbandonEndsADrainAtOnce) {
  const std::string address = coordinator_.Start();
  Connect(address);
  coordinator_.Stop();
  MetricRelay relay(client_.get(), kTrial, kAttempt, FastOptions(1, std::chrono::hours(1)), clock_);
  AddLine(relay, StepLine(1));
  std::future<StatusOr<int64_t>> drained = std::async(std::launch::async, [&] { return relay.Drain(); });
  ASSERT_TRUE(clock_.AwaitWaiter(Clock::TimePoint::max())) << "Drain waits for an acknowledgement that cannot come";
  relay.Abandon();
  ASSERT_EQ(drained.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  StatusOr<int64_t> abandoned = drained.get();
  ASSERT_FALSE(abandoned.ok());
  EXPECT_EQ(abandoned.status().code(), StatusCode::kCancelled);
}

}  // namespace
}  // namespace rung::agent

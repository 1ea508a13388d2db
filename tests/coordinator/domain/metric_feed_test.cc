// tests/coordinator/domain/metric_feed_test.cc
//
// The metric feed: points reach the subscribers of their sweep and metric, in order; a subscriber
// that falls behind its bounded queue is told to resync instead of holding memory; Take wakes on a
// publish from another thread and on Close; a subscription ends with its object.
#include "coordinator/domain/metric_feed.h"

#include <chrono>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung {
namespace {

using namespace std::chrono_literals;

MetricPoint FeedPoint(int64_t step, const std::string& name, double value) {
  MetricPoint point;
  point.step = step;
  point.name = name;
  point.value = value;
  return point;
}

std::chrono::steady_clock::time_point Soon() { return std::chrono::steady_clock::now() + 10ms; }

TEST(MetricFeedTest, PointsReachTheSubscribersOfTheirSweepAndMetricInOrder) {
  MetricFeed feed;
  EXPECT_FALSE(feed.HasSubscribers());
  auto every = feed.Subscribe(1, {});
  auto val_only = feed.Subscribe(1, {"val_loss"});
  auto other_sweep = feed.Subscribe(2, {});
  EXPECT_TRUE(feed.HasSubscribers());
  feed.Publish(1, 7, 2, {FeedPoint(10, "train_loss", 2.5), FeedPoint(10, "val_loss", 2.6), FeedPoint(20, "train_loss", 2.1)});

  MetricFeed::Taken taken = every->Take(100, Soon());
  ASSERT_EQ(taken.arrivals.size(), 3u);
  EXPECT_FALSE(taken.resync);
  EXPECT_EQ(taken.arrivals[0].trial_id, 7);
  EXPECT_EQ(taken.arrivals[0].attempt, 2);
  EXPECT_EQ(taken.arrivals[0].point.step, 10);
  EXPECT_EQ(taken.arrivals[2].point.step, 20);

  taken = val_only->Take(100, Soon());
  ASSERT_EQ(taken.arrivals.size(), 1u);
  EXPECT_EQ(taken.arrivals[0].point.name, "val_loss");
  EXPECT_DOUBLE_EQ(taken.arrivals[0].point.value, 2.6);

  EXPECT_TRUE(other_sweep->Take(100, Soon()).arrivals.empty());
}

TEST(MetricFeedTest, TakeHandsOverAtMostWhatIsAskedAndKeepsTheRest) {
  MetricFeed feed;
  auto subscription = feed.Subscribe(1, {});
  feed.Publish(1, 1, 1, {FeedPoint(1, "a", 1), FeedPoint(2, "a", 2), FeedPoint(3, "a", 3)});
  EXPECT_EQ(subscription->Take(2, Soon()).arrivals.size(), 2u);
  MetricFeed::Taken rest = subscription->Take(2, Soon());
  ASSERT_EQ(rest.arrivals.size(), 1u);
  EXPECT_EQ(rest.arrivals[0].point.step, 3);
}

TEST(MetricFeedTest, ASlowSubscriberIsToldToResyncInsteadOfHoldingMemory) {
  MetricFeed feed;
  auto slow = feed.Subscribe(1, {}, /*capacity=*/4);
  feed.Publish(1, 1, 1, {FeedPoint(1, "a", 1), FeedPoint(2, "a", 2), FeedPoint(3, "a", 3)});
  feed.Publish(1, 1, 1, {FeedPoint(4, "a", 4), FeedPoint(5, "a", 5), FeedPoint(6, "a", 6)});  // overflows at step 5
  feed.Publish(1, 1, 1, {FeedPoint(7, "a", 7)});
  MetricFeed::Taken taken = slow->Take(100, Soon());
  EXPECT_TRUE(taken.resync);
  // Only what came after the drop.
  ASSERT_EQ(taken.arrivals.size(), 1u);
  EXPECT_EQ(taken.arrivals[0].point.step, 7);
  // The marker is given once.
  feed.Publish(1, 1, 1, {FeedPoint(8, "a", 8)});
  taken = slow->Take(100, Soon());
  EXPECT_FALSE(taken.resync);
  EXPECT_EQ(taken.arrivals.size(), 1u);
}

TEST(MetricFeedTest, ReplayedPointsAreNotFed) {
  MetricFeed feed;
  auto subscription = feed.Subscribe(1, {});
  MetricPoint replayed = FeedPoint(1, "a", 1);
  replayed.replayed = true;
  feed.Publish(1, 1, 2, {replayed, FeedPoint(2, "a", 2)});
  MetricFeed::Taken taken = subscription->Take(100, Soon());
  ASSERT_EQ(taken.arrivals.size(), 1u);
  EXPECT_EQ(taken.arrivals[0].point.step, 2);
}

TEST(MetricFeedTest, TakeWakesOnAPublishFromAnotherThread) {
  MetricFeed feed;
  auto subscription = feed.Subscribe(1, {});
  std::thread publisher([&] {
    std::this_thread::sleep_for(50ms);
    feed.Publish(1, 3, 1, {FeedPoint(5, "val_loss", 1.5)});
  });
  const auto start = std::chrono::steady_clock::now();
  MetricFeed::Taken taken = subscription->Take(100, start + 30s);
  publisher.join();
  ASSERT_EQ(taken.arrivals.size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);  // woken, not timed out
}

TEST(MetricFeedTest, CloseWakesEveryTakeForGood) {
  MetricFeed feed;
  auto subscription = feed.Subscribe(1, {});
  std::thread closer([&] {
    std::this_thread::sleep_for(50ms);
    feed.Close();
  });
  EXPECT_TRUE(subscription->Take(100, std::chrono::steady_clock::now() + 30s).closed);
  closer.join();
  EXPECT_TRUE(subscription->Take(100, std::chrono::steady_clock::now() + 30s).closed);
}

TEST(MetricFeedTest, ASubscriptionEndsWithItsObjectAndMayOutliveTheFeed) {
  std::unique_ptr<MetricFeed::Subscription> kept;
  {
    MetricFeed feed;
    {
      auto gone = feed.Subscribe(1, {});
    }
    EXPECT_FALSE(feed.HasSubscribers());
    kept = feed.Subscribe(1, {});
  }
  EXPECT_TRUE(kept->Take(1, Soon()).closed);
}

}  // namespace
}  // namespace rung

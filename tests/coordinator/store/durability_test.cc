// Durability: what was acknowledged survives a crash. Two crashes are simulated without sleeping:
// a process that dies (_exit) with a transaction open, and a power cut (the files copied, as the
// disk holds them, while the store is open and in the middle of a write). Either way the database
// opens again, every acknowledged state and metric is there, and the unacknowledged write is not.
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::Cell;
using store_testing::Managers;
using store_testing::Point;
using store_testing::PointsBatch;
using store_testing::Submission;

class DurabilityTest : public store_testing::StoreTest {
 protected:
  // Drives a sweep halfway: cell a SUCCEEDED, cell b RUNNING with 50 acknowledged points, cell c
  // PENDING. Returns false on the first error (this runs in a death test's child too).
  bool DriveHalfASweep(Managers& managers) {
    if (!managers.workers.Register({"w", "host", 8, 0}).ok()) return false;
    if (!managers.sweeps.Submit(Submission("s", {Cell("a"), Cell("b"), Cell("c")}), "user:test").ok()) return false;
    StatusOr<std::optional<Lease>> first = managers.trials.LeaseNextTrial("w", 8, 0);
    if (!first.ok() || !*first) return false;
    TrialResults results;
    results.summaries = {{"val_loss", 2.5, 10}};
    if (!managers.trials.Complete((*first)->trial_id, (*first)->attempt, results).ok()) return false;
    StatusOr<std::optional<Lease>> second = managers.trials.LeaseNextTrial("w", 8, 0);
    if (!second.ok() || !*second) return false;
    if (!managers.trials.MarkRunning((*second)->trial_id, (*second)->attempt, nullptr).ok()) return false;
    for (int64_t batch = 0; batch < 5; ++batch) {
      std::vector<MetricPoint> points;
      for (int64_t step = batch * 10; step < batch * 10 + 10; ++step) {
        points.push_back(Point(step, "train_loss", 5.0 - 0.01 * static_cast<double>(step)));
      }
      const MetricBatch sent = PointsBatch((*second)->trial_id, (*second)->attempt, batch + 1, std::move(points));
      if (!managers.trials.ReportBatch(sent).ok()) return false;
    }
    return true;
  }

  // A write that is never acknowledged, then `crash` inside the open transaction: 10 more points of
  // the running trial (id 2, attempt 1 in the fresh database) and a state it never reached.
  template <typename Crash>
  void UnacknowledgedWrite(Crash crash) {
    Status status = store_->Write([&](Tables& tables) -> Status {
      Database& db = store_internal::DatabaseOf(tables);
      for (int64_t step = 50; step < 60; ++step) {
        RUNG_RETURN_IF_ERROR(db.Execute("INSERT INTO metrics(trial_id, attempt, step, name, value, tokens, flops, "
                                        "wall_time) VALUES (2, 1, " + std::to_string(step) + ", 'train_loss', 1, 0, 0, 0)"));
      }
      RUNG_RETURN_IF_ERROR(db.Execute("UPDATE trials SET state = 'SUCCEEDED' WHERE id = 2"));
      crash();
      return Status::Aborted("rolled back after the simulated crash");
    });
    EXPECT_EQ(status.code(), StatusCode::kAborted);
  }

  // Every acknowledged state and metric of DriveHalfASweep, and nothing of UnacknowledgedWrite.
  void ExpectHalfASweep() {
    ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().FindByName("s"));
    EXPECT_EQ(sweep.state, SweepState::kActive);
    ASSERT_OK_AND_ASSIGN(std::vector<TrialRecord> listed, trials().List(sweep.id));
    ASSERT_EQ(listed.size(), 3u);
    EXPECT_EQ(listed[0].state, TrialState::kSucceeded);
    EXPECT_EQ(listed[1].state, TrialState::kRunning);
    EXPECT_EQ(listed[1].attempt, 1);
    EXPECT_EQ(listed[2].state, TrialState::kPending);
    ASSERT_OK_AND_ASSIGN(std::vector<SummaryValue> summaries, metrics().Summaries(listed[0].id));
    ASSERT_EQ(summaries.size(), 1u);
    EXPECT_DOUBLE_EQ(summaries[0].value, 2.5);
    ASSERT_OK_AND_ASSIGN(std::vector<CurvePoint> curve, metrics().Curve(listed[1].id, "train_loss"));
    ASSERT_EQ(curve.size(), 50u);
    for (const CurvePoint& point : curve) {
      EXPECT_DOUBLE_EQ(point.point.value, 5.0 - 0.01 * static_cast<double>(point.point.step));
    }
    // The store carries on from there: the running attempt reports, the pending trial leases.
    ASSERT_OK(trials().RestartReconcile());
    ASSERT_OK(trials().ReportBatch(PointsBatch(listed[1].id, 1, 6, {Point(50, "train_loss", 4.5)})));
    std::optional<Lease> next = LeaseFor("w", 8, 0);
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(next->trial_id, listed[2].id);
  }
};

TEST_F(DurabilityTest, AProcessThatDiesWithATransactionOpenLosesNothingAcknowledged) {
  Close();  // the dying process is the coordinator now
  // A death test: the statement runs in a child that is a fork of this process ("fast": the child
  // has this test's database path), and has to end with the crash point's exit code.
  GTEST_FLAG_SET(death_test_style, "fast");
  EXPECT_EXIT(
      {
        StatusOr<std::unique_ptr<Store>> store = Store::Open(DatabasePath(), clock_, Options());
        if (!store.ok()) _exit(1);
        store_ = std::move(store).value();
        Managers managers(*store_);
        if (!DriveHalfASweep(managers)) _exit(2);
        UnacknowledgedWrite([] { _exit(42); });  // dies inside the transaction: no commit, no close
        _exit(3);
      },
      ::testing::ExitedWithCode(42), "")
      << "the child failed before its crash point";

  Open();
  ExpectHalfASweep();
}

TEST_F(DurabilityTest, ACopyOfTheFilesTakenMidWriteHoldsEveryAcknowledgedWrite) {
  ASSERT_TRUE(DriveHalfASweep(*managers_));
  const std::filesystem::path copy = folder_ / "copy";
  std::filesystem::create_directories(copy);
  // The power goes out in the middle of a write: the disk holds what it holds at that moment.
  UnacknowledgedWrite([&] {
    for (const char* suffix : {"", "-wal"}) {
      const std::filesystem::path file = DatabasePath() + suffix;
      if (std::filesystem::exists(file)) {
        std::filesystem::copy_file(file, copy / ("rung.db" + std::string(suffix)));
      }
    }
  });
  Close();
  std::filesystem::remove(DatabasePath());
  std::filesystem::remove(DatabasePath() + "-wal");
  std::filesystem::remove(DatabasePath() + "-shm");
  for (const char* suffix : {"", "-wal"}) {
    const std::filesystem::path file = copy / ("rung.db" + std::string(suffix));
    if (std::filesystem::exists(file)) std::filesystem::copy_file(file, DatabasePath() + suffix);
  }

  Open();
  ExpectHalfASweep();
}

}  // namespace
}  // namespace rung

// Workers that know their allocation (allocation_fit.h): a worker with stops_at is leased only a
// trial whose next checkpoint it reaches before then, estimated from the trial's own pace, its
// cell's, or the uncalibrated CPU rate; a GPU trial with nothing measured is leased; a worker
// without stops_at leases as before; a gang rank likewise. Real database, ManualClock.
#include "coordinator/domain/allocation_fit.h"

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/domain/gang_leases.h"
#include "core/config/trial_config.h"
#include "sweeps/spec/trial_work.h"
#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using domain::AllocationFit;
using domain::Fit;
using domain::FitEstimate;
using domain::PaceSource;
using store_testing::Submission;

constexpr int64_t kTokensPerStep = 4 * 16;  // batch 4 x seq_len 16

// The shape of a small trial: its steps, checkpoint cadence, resources and model.
struct Shape {
  int64_t steps = 1000;
  int64_t checkpoint_every = 0;
  int64_t seed = 0;
  int64_t cpus = 1;  // per rank
  int64_t gpus = 0;  // per rank
  int64_t world_size = 1;
  int64_t d_model = 32;
  int64_t layers = 1;
  std::string rung_label = "r1";
};

// A one-layer trial of `steps` steps and seed `seed` on one CPU thread.
Shape Small(int64_t steps, int64_t seed = 0) {
  Shape shape;
  shape.steps = steps;
  shape.seed = seed;
  return shape;
}

// A four-layer trial of width 128 on `cpus` threads per rank: slow enough at the uncalibrated rate
// for its estimate to stand well above the start allowance.
Shape Wide(int64_t steps, int64_t cpus, int64_t world_size = 1, int64_t seed = 0) {
  Shape shape = Small(steps, seed);
  shape.cpus = cpus;
  shape.world_size = world_size;
  shape.d_model = 128;
  shape.layers = 4;
  return shape;
}

// The resolved trial config of `shape`, as a submission stores it.
TrialConfig ConfigOf(const Shape& shape) {
  const nlohmann::json json = {
      {"seed", shape.seed},
      {"data", {{"source", "builtin"}, {"seq_len", 16}}},
      {"model", {{"layers", shape.layers}, {"d_model", shape.d_model}, {"heads", 2}, {"mlp", "gelu"}}},
      {"position", {{"variant", "rope"}}},
      {"train", {{"steps", shape.steps}, {"batch_size", 4}, {"checkpoint_every", shape.checkpoint_every}}},
      {"resources", {{"cpus", shape.cpus}, {"gpus", shape.gpus}, {"world_size", shape.world_size}}}};
  StatusOr<TrialConfig> config = TrialConfigFromJson(json);
  EXPECT_TRUE(config.ok()) << config.status().ToString();
  return config.ok() ? std::move(config).value() : TrialConfig();
}

TrialCell FitCell(const std::string& identity, const Shape& shape) {
  TrialCell cell = store_testing::Cell(identity, shape.cpus * shape.world_size, shape.gpus * shape.world_size);
  cell.config = TrialConfigToJson(ConfigOf(shape));
  cell.rung_label = shape.rung_label;
  cell.seed = shape.seed;
  cell.steps = shape.steps;
  cell.tokens = shape.steps * kTokensPerStep;
  cell.world_size = shape.world_size;
  return cell;
}

// The uncalibrated estimate's seconds per step of a CPU trial of `shape`.
double UncalibratedSecondsPerStep(const Shape& shape) {
  const double threads = static_cast<double>(shape.cpus * shape.world_size);
  return TrainingFlopsPerToken(ConfigOf(shape)) * kTokensPerStep /
         (kUncalibratedFlopsPerSec * threads / kUncalibratedThreads);
}

double AllowanceSeconds() { return std::chrono::duration<double>(domain::kStartAllowance).count(); }

std::chrono::microseconds Seconds(double seconds) {
  return std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

// train_loss at each (step, wall_time).
std::vector<MetricPoint> TrainLossPoints(const std::vector<std::pair<int64_t, double>>& points) {
  std::vector<MetricPoint> batch;
  for (const auto& [step, wall_time] : points) {
    MetricPoint point = store_testing::Point(step, "train_loss", 2.0);
    point.wall_time = wall_time;
    batch.push_back(point);
  }
  return batch;
}

class AllocationFitTest : public store_testing::StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    RegisterWorker("runner");  // measures trials: no stops_at
  }

  // Registers `id` with plenty of room, stopping `left` from now (nullopt: no end known).
  void RegisterStopping(const std::string& id, std::optional<std::chrono::microseconds> left, int64_t cpus = 64,
                        int64_t gpus = 8) {
    WorkerInfo worker{id, "host-" + id, cpus, gpus};
    if (left) worker.stops_at = clock_.Now() + *left;
    ASSERT_OK(workers().Register(worker));
  }

  // The ids of the sweep's trials by index.
  std::vector<int64_t> TrialIds(int64_t sweep_id) {
    StatusOr<std::vector<TrialRecord>> listed = trials().List(sweep_id);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<int64_t> ids;
    if (listed.ok()) {
      for (const TrialRecord& trial : *listed) ids.push_back(trial.id);
    }
    return ids;
  }

  // train_loss at each (step, wall_time) of one attempt.
  struct Run {
    int64_t trial_id = 0;
    std::vector<std::pair<int64_t, double>> points;
  };

  // The runner leases the next trials (which must be those of `runs`, in order) and reports each
  // run's points in one batch; the attempts then end SUCCEEDED with `complete`, else PREEMPTED (the
  // trials are PENDING again).
  void Measure(const std::vector<Run>& runs, bool complete = false) {
    std::vector<Lease> leases;
    for (const Run& run : runs) {
      std::optional<Lease> lease = LeaseFor("runner");
      ASSERT_TRUE(lease.has_value());
      ASSERT_EQ(lease->trial_id, run.trial_id);
      leases.push_back(*lease);
    }
    for (size_t index = 0; index < runs.size(); ++index) {
      const Lease& lease = leases[index];
      const std::vector<MetricPoint> batch = TrainLossPoints(runs[index].points);
      ASSERT_OK(trials().ReportBatch(store_testing::PointsBatch(lease.trial_id, lease.attempt, 1, batch)).status());
      if (complete) {
        TrialResults results;
        results.summaries = {{"val_loss", 1.5, std::nullopt}};
        ASSERT_OK(trials().Complete(lease.trial_id, lease.attempt, results));
      } else {
        ASSERT_OK(trials().Preempted(lease.trial_id, lease.attempt, "measured"));
      }
    }
  }

  // Sweep `name` of a 1000-step trial and a 200-step one behind it, both measured to step 100 at
  // 1 s a step (the long one needs 930 s to its end, the short one 130 s); their ids.
  std::vector<int64_t> LongAndShortAtStep100(const std::string& name) {
    const std::vector<int64_t> ids =
        TrialIds(Submit(Submission(name, {FitCell("long", Small(1000)), FitCell("short", Small(200, 1))})));
    EXPECT_EQ(ids.size(), 2u);
    if (ids.size() != 2) return {0, 0};
    Measure({{ids[0], {{10, 10.0}, {100, 100.0}}}, {ids[1], {{10, 10.0}, {100, 100.0}}}});
    return ids;
  }

  // The estimate of `trial_id` for a worker stopping `left` from now.
  FitEstimate Estimate(int64_t trial_id, std::chrono::microseconds left = std::chrono::hours(1)) {
    StatusOr<FitEstimate> estimate = store_->Read([&](Tables& tables) -> StatusOr<FitEstimate> {
      RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Get(trial_id));
      AllocationFit fit(tables, tables.now() + left);
      return fit.Estimate(trial);
    });
    EXPECT_TRUE(estimate.ok()) << estimate.status().ToString();
    return estimate.ok() ? *estimate : FitEstimate();
  }

  // How `trial_id` fits a worker stopping `left` from now.
  Fit FitOf(int64_t trial_id, std::chrono::microseconds left) {
    StatusOr<Fit> fit = store_->Read([&](Tables& tables) -> StatusOr<Fit> {
      RUNG_ASSIGN_OR_RETURN(TrialRecord trial, tables.trials().Get(trial_id));
      AllocationFit allocation(tables, tables.now() + left);
      return allocation.Fits(trial);
    });
    EXPECT_TRUE(fit.ok()) << fit.status().ToString();
    return fit.ok() ? *fit : Fit::kNo;
  }

  // The trial id leased to `worker`, or 0 when nothing was.
  int64_t LeasedTo(const std::string& worker) {
    std::optional<Lease> lease = LeaseFor(worker);
    return lease ? lease->trial_id : 0;
  }
};

TEST_F(AllocationFitTest, AWorkerTakesATrialThatReachesItsOwnCheckpointBeforeOneOnlyItsStopSaves) {
  const std::vector<int64_t> ids = LongAndShortAtStep100("fit");
  EXPECT_DOUBLE_EQ(*Estimate(ids[0]).seconds, AllowanceSeconds() + 900);
  EXPECT_DOUBLE_EQ(*Estimate(ids[1]).seconds, AllowanceSeconds() + 100);
  EXPECT_EQ(FitOf(ids[0], std::chrono::minutes(10)), Fit::kTheStopsCheckpoint);
  EXPECT_EQ(FitOf(ids[1], std::chrono::minutes(10)), Fit::kItsCheckpoint);
  // 100 s: neither reaches its checkpoint, and 70 s of training is under three times a 30 s start.
  EXPECT_EQ(FitOf(ids[1], std::chrono::seconds(100)), Fit::kNo);
  RegisterStopping("brief", std::chrono::seconds(100));
  EXPECT_EQ(LeasedTo("brief"), 0);

  // 10 minutes: the short one, behind the long one in lease order, reaches its own checkpoint; then
  // the long one, which the worker's stop checkpoints.
  RegisterStopping("slurm", std::chrono::minutes(10));
  EXPECT_EQ(LeasedTo("slurm"), ids[1]);
  EXPECT_EQ(LeasedTo("slurm"), ids[0]);
}

TEST_F(AllocationFitTest, AnAttemptThatDidNotEndPreemptedResumesFromTheLastPeriodicCheckpoint) {
  Shape every_50 = Small(1000);
  every_50.checkpoint_every = 50;
  const std::vector<int64_t> ids =
      TrialIds(Submit(Submission("resume", {FitCell("every-50", every_50), FitCell("at-end", Small(1000, 1))})));
  ASSERT_EQ(ids.size(), 2u);
  // Both stored steps up to 130 at 1 s a step, and their attempts failed: no checkpoint at 130.
  std::vector<Lease> leases;
  for (int64_t trial_id : ids) {
    std::optional<Lease> lease = LeaseFor("runner");
    ASSERT_TRUE(lease.has_value());
    ASSERT_EQ(lease->trial_id, trial_id);
    leases.push_back(*lease);
  }
  for (const Lease& leased : leases) {
    const Lease* lease = &leased;
    const std::vector<MetricPoint> batch = TrainLossPoints({{10, 10.0}, {130, 130.0}});
    ASSERT_OK(trials().ReportBatch(store_testing::PointsBatch(lease->trial_id, lease->attempt, 1, batch)).status());
    ASSERT_OK(trials().Fail(lease->trial_id, lease->attempt, "trainer crashed").status());
  }
  const FitEstimate periodic = Estimate(ids[0]);
  EXPECT_EQ(periodic.progress, 100);  // its checkpoint at 100, not the 130 it stored
  EXPECT_EQ(periodic.next_checkpoint, 150);
  const FitEstimate at_end = Estimate(ids[1]);
  EXPECT_EQ(at_end.progress, 0);  // checkpoints only at a signal and its end: from the start
  EXPECT_EQ(at_end.next_checkpoint, 1000);
  EXPECT_DOUBLE_EQ(*at_end.seconds, AllowanceSeconds() + 1000);
}

TEST_F(AllocationFitTest, TheTrialsOwnNewestMeasuredPaceDecides) {
  const std::vector<int64_t> ids = TrialIds(Submit(Submission("own", {FitCell("t", Small(1000))})));
  ASSERT_EQ(ids.size(), 1u);
  // Attempt 1 stepped at 2 s a step, attempt 2 (resumed at 110) at 0.5 s a step up to step 400.
  Measure({{ids[0], {{10, 20.0}, {50, 100.0}, {100, 200.0}}}});
  Measure({{ids[0], {{110, 220.0}, {250, 290.0}, {400, 365.0}}}});
  const FitEstimate estimate = Estimate(ids[0]);
  EXPECT_EQ(estimate.source, PaceSource::kTrial);
  EXPECT_EQ(estimate.progress, 400);
  EXPECT_EQ(estimate.next_checkpoint, 1000);
  EXPECT_DOUBLE_EQ(estimate.seconds_per_step, 0.5);
  ASSERT_TRUE(estimate.seconds.has_value());
  EXPECT_DOUBLE_EQ(*estimate.seconds, AllowanceSeconds() + 600 * 0.5);  // 330 s

  EXPECT_EQ(FitOf(ids[0], std::chrono::seconds(320)), Fit::kTheStopsCheckpoint);
  EXPECT_EQ(FitOf(ids[0], std::chrono::seconds(340)), Fit::kItsCheckpoint);
  RegisterStopping("enough", std::chrono::seconds(340));
  EXPECT_EQ(LeasedTo("enough"), ids[0]);
}

TEST_F(AllocationFitTest, AFreshTrialTakesThePaceOfItsCellsNewestMeasuredAttempt) {
  const Shape shape = Small(1000);
  const Shape sibling = Small(1000, 1);
  Shape other_rung = Small(1000, 2);
  other_rung.rung_label = "r2";
  const int64_t sweep = Submit(Submission("cell", {FitCell("measured", shape)}));
  // The measured trial of the cell stepped at 0.25 s a step and finished.
  Measure({{TrialIds(sweep)[0], {{100, 25.0}, {1000, 250.0}}}}, /*complete=*/true);
  ASSERT_OK(sweeps().Submit(Submission("cell", {FitCell("measured", shape), FitCell("sibling", sibling),
                                                FitCell("other-rung", other_rung)}),
                            "user:test")
                .status());
  const std::vector<int64_t> ids = TrialIds(sweep);
  ASSERT_EQ(ids.size(), 3u);

  const FitEstimate fresh = Estimate(ids[1]);
  EXPECT_EQ(fresh.source, PaceSource::kCell);
  EXPECT_EQ(fresh.progress, 0);
  EXPECT_DOUBLE_EQ(fresh.seconds_per_step, 0.25);
  EXPECT_DOUBLE_EQ(*fresh.seconds, AllowanceSeconds() + 250);
  // Another rung is another cell: nothing measured there, the uncalibrated rate.
  EXPECT_EQ(Estimate(ids[2]).source, PaceSource::kUncalibrated);

  // 270 s: the sibling (280 s) does not reach its checkpoint; the other rung's trial, uncalibrated,
  // does, and is leased first though it comes after the sibling.
  EXPECT_EQ(FitOf(ids[1], std::chrono::seconds(270)), Fit::kTheStopsCheckpoint);
  EXPECT_EQ(FitOf(ids[1], std::chrono::seconds(290)), Fit::kItsCheckpoint);
  RegisterStopping("slurm", std::chrono::seconds(270));
  EXPECT_EQ(LeasedTo("slurm"), ids[2]);
  RegisterStopping("longer", std::chrono::seconds(290));
  EXPECT_EQ(LeasedTo("longer"), ids[1]);
}

TEST_F(AllocationFitTest, AMeasuredStartTakesThePlaceOfTheAllowance) {
  const std::vector<int64_t> ids = TrialIds(Submit(Submission("start", {FitCell("t", Small(1000))})));
  ASSERT_EQ(ids.size(), 1u);
  // Leased, then its trainer's first record 4 s later; 1 s a step up to step 100; preempted.
  std::optional<Lease> lease = LeaseFor("runner");
  ASSERT_TRUE(lease.has_value());
  clock_.Advance(std::chrono::seconds(4));
  ASSERT_OK(trials().MarkRunning(lease->trial_id, lease->attempt, nullptr));
  const std::vector<MetricPoint> batch = TrainLossPoints({{10, 10.0}, {100, 100.0}});
  ASSERT_OK(trials().ReportBatch(store_testing::PointsBatch(lease->trial_id, lease->attempt, 1, batch)).status());
  ASSERT_OK(trials().Preempted(lease->trial_id, lease->attempt, "measured"));

  const FitEstimate estimate = Estimate(ids[0]);
  EXPECT_EQ(estimate.source, PaceSource::kTrial);
  EXPECT_DOUBLE_EQ(estimate.start_seconds, 4.0);
  EXPECT_DOUBLE_EQ(*estimate.seconds, 4.0 + 900);
  EXPECT_EQ(FitOf(ids[0], std::chrono::seconds(903)), Fit::kTheStopsCheckpoint);
  EXPECT_EQ(FitOf(ids[0], std::chrono::seconds(905)), Fit::kItsCheckpoint);
  RegisterStopping("enough", std::chrono::seconds(905));
  EXPECT_EQ(LeasedTo("enough"), ids[0]);
}

TEST_F(AllocationFitTest, WithCheckpointEveryOnlyTheStepsToTheNextMultipleMustFit) {
  const Shape at_the_end = Small(1000);  // checkpoints only on a signal and at the end
  Shape every_150 = Small(1000, 1);
  every_150.checkpoint_every = 150;
  const std::vector<int64_t> ids =
      TrialIds(Submit(Submission("cadence", {FitCell("end", at_the_end), FitCell("every-150", every_150)})));
  ASSERT_EQ(ids.size(), 2u);
  // 1 s a step, at step 400.
  Measure({{ids[0], {{100, 100.0}, {400, 400.0}}}, {ids[1], {{100, 100.0}, {400, 400.0}}}});
  EXPECT_EQ(Estimate(ids[0]).next_checkpoint, 1000);  // 600 steps: 630 s
  const FitEstimate cadenced = Estimate(ids[1]);
  EXPECT_EQ(cadenced.next_checkpoint, 450);  // 50 steps: 80 s
  EXPECT_DOUBLE_EQ(*cadenced.seconds, AllowanceSeconds() + 50);

  RegisterStopping("slurm", std::chrono::seconds(100));
  EXPECT_EQ(LeasedTo("slurm"), ids[1]);
  EXPECT_EQ(LeasedTo("slurm"), 0);
}

TEST_F(AllocationFitTest, ACpuTrialWithNothingMeasuredTakesTheUncalibratedRateForItsThreads) {
  const Shape two_threads = Wide(100000, 2);
  const Shape eight_threads = Wide(100000, 8, 1, /*seed=*/1);
  const std::vector<int64_t> ids =
      TrialIds(Submit(Submission("cpu", {FitCell("two", two_threads), FitCell("eight", eight_threads)})));
  ASSERT_EQ(ids.size(), 2u);

  const double per_step = UncalibratedSecondsPerStep(two_threads);
  const FitEstimate two = Estimate(ids[0]);
  EXPECT_EQ(two.source, PaceSource::kUncalibrated);
  EXPECT_DOUBLE_EQ(two.seconds_per_step, per_step);
  EXPECT_DOUBLE_EQ(*two.seconds, AllowanceSeconds() + 100000 * per_step);
  EXPECT_GT(100000 * per_step, 60.0);  // well beyond the allowance, so the bounds below tell
  EXPECT_DOUBLE_EQ(Estimate(ids[1]).seconds_per_step, per_step / 4);  // 8 threads: four times the rate

  // Short of the 2-thread trial's estimate: only the 8-thread one fits.
  RegisterStopping("short", Seconds(AllowanceSeconds() + 100000 * per_step * 0.9));
  EXPECT_EQ(LeasedTo("short"), ids[1]);
  RegisterStopping("enough", Seconds(AllowanceSeconds() + 100000 * per_step * 1.1));
  EXPECT_EQ(LeasedTo("enough"), ids[0]);
}

TEST_F(AllocationFitTest, AGpuTrialWithNothingMeasuredIsLeasedHoweverNearTheEnd) {
  Shape gpu = Small(1'000'000);
  gpu.gpus = 1;
  const std::vector<int64_t> ids = TrialIds(Submit(Submission("gpu", {FitCell("g", gpu)})));
  ASSERT_EQ(ids.size(), 1u);
  const FitEstimate estimate = Estimate(ids[0]);
  EXPECT_EQ(estimate.source, PaceSource::kNone);
  EXPECT_FALSE(estimate.seconds.has_value());

  // Past its end a worker is leased nothing, not even a trial without an estimate.
  RegisterStopping("ended", -std::chrono::microseconds(std::chrono::seconds(1)));
  EXPECT_EQ(LeasedTo("ended"), 0);
  RegisterStopping("slurm", std::chrono::seconds(5));
  EXPECT_EQ(LeasedTo("slurm"), ids[0]);
}

TEST_F(AllocationFitTest, AWorkerWithoutStopsAtLeasesAsBeforeAndARegistrationWithoutItClearsIt) {
  const std::vector<int64_t> ids = LongAndShortAtStep100("order");

  RegisterStopping("w", std::chrono::minutes(10));
  ASSERT_OK_AND_ASSIGN(WorkerRecord registered, workers().Get("w"));
  EXPECT_TRUE(registered.info.stops_at.has_value());
  // Registered again without an end (its agent restarted outside an allocation): none is kept.
  RegisterStopping("w", std::nullopt);
  ASSERT_OK_AND_ASSIGN(registered, workers().Get("w"));
  EXPECT_FALSE(registered.info.stops_at.has_value());
  EXPECT_EQ(LeasedTo("w"), ids[0]);  // the first in order, however long
  EXPECT_EQ(LeasedTo("w"), ids[1]);
}

TEST_F(AllocationFitTest, AWorkerWithStopsAtReservesARankOnlyOfAGangThatFits) {
  const Shape long_gang = Wide(20000, 2, 2);
  Shape short_gang = Small(1000, 1);
  short_gang.cpus = 2;
  short_gang.world_size = 2;
  const double long_seconds = AllowanceSeconds() + 20000 * UncalibratedSecondsPerStep(long_gang);
  const double short_seconds = AllowanceSeconds() + 1000 * UncalibratedSecondsPerStep(short_gang);
  ASSERT_LT(short_seconds, long_seconds);
  const std::vector<int64_t> ids =
      TrialIds(Submit(Submission("gangs", {FitCell("long", long_gang), FitCell("short", short_gang)})));
  ASSERT_EQ(ids.size(), 2u);
  // Four workers of one rank each: a stops between the two gangs' estimates; the others know no end.
  RegisterStopping("a", Seconds((short_seconds + long_seconds) / 2), 2, 0);
  for (const char* worker : {"b", "c", "d"}) RegisterStopping(worker, std::nullopt, 2, 0);
  RegisterStopping("runner", std::nullopt, 1, 0);  // too small for a rank

  GangLeases gangs(*store_);
  // a passes the long gang over and reserves a rank of the short one behind it.
  ASSERT_OK_AND_ASSIGN(GangPoll a, gangs.Join("a", 2, 0));
  EXPECT_TRUE(a.reserved);
  ASSERT_OK_AND_ASSIGN(GangPoll b, gangs.Join("b", 2, 0));
  EXPECT_TRUE(b.reserved);
  ASSERT_OK_AND_ASSIGN(GangPoll c, gangs.Join("c", 2, 0));
  ASSERT_TRUE(c.formed && c.lease.has_value());
  EXPECT_EQ(c.lease->trial_id, ids[0]);  // the long gang: b and c
  ASSERT_OK_AND_ASSIGN(GangPoll d, gangs.Join("d", 2, 0));
  ASSERT_TRUE(d.formed && d.lease.has_value());
  EXPECT_EQ(d.lease->trial_id, ids[1]);  // the short one: a and d
  ASSERT_OK_AND_ASSIGN(GangPoll a_again, gangs.Poll("a"));
  ASSERT_TRUE(a_again.lease.has_value());
  EXPECT_EQ(a_again.lease->trial_id, ids[1]);
  EXPECT_EQ(a_again.lease->rank, 0);
}

}  // namespace
}  // namespace rung

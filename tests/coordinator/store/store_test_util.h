// tests/coordinator/store/store_test_util.h: a real database file in a fresh temporary folder, a
// ManualClock, the managers over it, and small builders for sweeps and reports.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coordinator/store/clock.h"
#include "coordinator/store/event_log.h"
#include "coordinator/store/metric_store.h"
#include "coordinator/store/store.h"
#include "coordinator/domain/sweep_manager.h"
#include "coordinator/domain/trial_lifecycle.h"
#include "coordinator/domain/worker_registry.h"

namespace rung::store_testing {


#define ASSERT_OK(expr)                                                                   \
  do {                                                                                    \
    const auto& rung_assert_result_ = (expr);                                             \
    ASSERT_TRUE(::rung::status_internal::StatusOf(rung_assert_result_).ok())                \
        << #expr << ": " << ::rung::status_internal::StatusOf(rung_assert_result_).ToString(); \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                                          \
  auto RUNG_STATUS_CONCAT_(rung_result_, __LINE__) = (expr);                                             \
  ASSERT_TRUE(RUNG_STATUS_CONCAT_(rung_result_, __LINE__).ok())                                          \
      << #expr << ": " << RUNG_STATUS_CONCAT_(rung_result_, __LINE__).status().ToString();               \
  lhs = std::move(RUNG_STATUS_CONCAT_(rung_result_, __LINE__)).value()

// A cell of a sweep: identity and resources are what the store looks at; the rest is carried.
inline TrialCell Cell(const std::string& identity, int64_t cpus = 1, int64_t gpus = 0) {
  TrialCell cell;
  cell.identity = identity;
  cell.config = {{"seed", 0}, {"model", {{"layers", 1}}}, {"resources", {{"cpus", cpus}, {"gpus", gpus}}}};
  cell.rung = 0;
  cell.rung_label = "r1";
  cell.variant = "rope";
  cell.seed = 0;
  cell.n_nonembedding = 1000;
  cell.n_total = 2000;
  cell.tokens = 20000;
  cell.flops = 6.0 * 1000 * 20000;
  cell.cpus = cpus;
  cell.gpus = gpus;
  cell.assignments = {{"position.variant", "rope"}};
  return cell;
}

inline SweepSubmission Submission(const std::string& name, std::vector<TrialCell> cells,
                                  PolicyConfig policy = PolicyConfig()) {
  SweepSubmission submission;
  submission.name = name;
  submission.spec_text = "name: " + name + "\n";
  submission.spec_hash = "hash-" + name + "-" + std::to_string(cells.size());
  submission.policy = policy;
  submission.baseline = {{"position.variant", "rope"}};
  submission.trials = std::move(cells);
  return submission;
}

// Batch `sequence` of the attempt, holding `points` (TrialLifecycle::ReportBatch).
inline MetricBatch PointsBatch(int64_t trial_id, int64_t attempt, int64_t sequence, std::vector<MetricPoint> points) {
  MetricBatch batch;
  batch.trial_id = trial_id;
  batch.attempt = attempt;
  batch.sequence = sequence;
  batch.points = std::move(points);
  return batch;
}

inline MetricPoint Point(int64_t step, const std::string& name, double value) {
  MetricPoint point;
  point.step = step;
  point.name = name;
  point.value = value;
  point.tokens = step * 128;
  point.flops = 6.0 * 1000 * static_cast<double>(point.tokens);
  point.wall_time = 0.01 * static_cast<double>(step);
  return point;
}

// Every manager over one Store.
struct Managers {
  explicit Managers(Store& store) : sweeps(store), trials(store), metrics(store), workers(store), events(store) {}
  SweepManager sweeps;
  TrialLifecycle trials;
  MetricStore metrics;
  WorkerRegistry workers;
  EventLog events;
};

constexpr std::chrono::seconds kLease(60);

// A store on a real file in a fresh folder, closed and reopened at will, with a ManualClock.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::path(::testing::TempDir()) / "rung-store-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    folder_ = pattern;
    Open();
  }

  void TearDown() override {
    Close();
    std::filesystem::remove_all(folder_);
  }

  StoreOptions Options() const {
    StoreOptions options;
    options.artifact_root = (folder_ / "artifacts").string();
    options.lease_duration = kLease;
    options.restart_grace = restart_grace_;
    return options;
  }

  void Open() {
    StatusOr<std::unique_ptr<Store>> store = Store::Open(DatabasePath(), clock_, Options());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    managers_ = std::make_unique<Managers>(*store_);
  }

  void Close() {
    managers_.reset();
    store_.reset();
  }

  void Reopen() {
    Close();
    Open();
  }

  std::string DatabasePath() const { return (folder_ / "rung.db").string(); }

  SweepManager& sweeps() { return managers_->sweeps; }
  TrialLifecycle& trials() { return managers_->trials; }
  MetricStore& metrics() { return managers_->metrics; }
  WorkerRegistry& workers() { return managers_->workers; }
  EventLog& events() { return managers_->events; }

  // Registers a worker with plenty of room.
  void RegisterWorker(const std::string& id, int64_t cpus = 64, int64_t gpus = 8) {
    ASSERT_OK(workers().Register({id, "host-" + id, cpus, gpus}));
  }

  // Submits and returns the sweep id.
  int64_t Submit(const SweepSubmission& submission) {
    StatusOr<SubmitResult> result = sweeps().Submit(submission, "user:test");
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? result->sweep_id : 0;
  }

  // Leases one trial for `worker` (with room for anything); empty when nothing is leasable.
  std::optional<Lease> LeaseFor(const std::string& worker, int64_t cpus = 64, int64_t gpus = 8) {
    StatusOr<std::optional<Lease>> lease = trials().LeaseNextTrial(worker, cpus, gpus);
    EXPECT_TRUE(lease.ok()) << lease.status().ToString();
    return lease.ok() ? *lease : std::nullopt;
  }

  TrialState StateOf(int64_t trial_id) {
    StatusOr<TrialRecord> trial = trials().Get(trial_id);
    EXPECT_TRUE(trial.ok()) << trial.status().ToString();
    return trial.ok() ? trial->state : TrialState::kPending;
  }

  SweepState SweepStateOf(int64_t sweep_id) {
    StatusOr<SweepRecord> sweep = sweeps().Get(sweep_id);
    EXPECT_TRUE(sweep.ok()) << sweep.status().ToString();
    return sweep.ok() ? sweep->state : SweepState::kActive;
  }

  // The trial's trial_state transitions, "FROM->TO", oldest first.
  std::vector<std::string> TrialTransitions(int64_t trial_id) {
    EventFilter filter;
    filter.trial_id = trial_id;
    StatusOr<std::vector<EventRecord>> listed = events().List(filter);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> transitions;
    if (!listed.ok()) return transitions;
    for (const EventRecord& event : *listed) {
      if (event.kind == event_kind::kTrialState) transitions.push_back(event.from_state + "->" + event.to_state);
    }
    return transitions;
  }

  std::filesystem::path folder_;
  ManualClock clock_{FromUnixMicros(1'700'000'000'000'000)};
  // StoreOptions::restart_grace of the next Open().
  std::chrono::microseconds restart_grace_ = StoreOptions().restart_grace;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Managers> managers_;
};

}  // namespace rung::store_testing

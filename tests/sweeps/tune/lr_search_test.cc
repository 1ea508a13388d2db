// The learning-rate search (sweeps/tune/lr_search.h), played against the stand-in's loss surface
// (tests/support/stand_in_trainer/loss_surface.h): every trial the plan asks for "runs" and ends
// with the surface's final loss, until the plan is complete.
#include "sweeps/tune/lr_search.h"

#include <cfloat>
#include <cmath>
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/sweeps/spec/spec_test_util.h"
#include "tests/support/stand_in_trainer/loss_surface.h"

namespace rung {
namespace {

using spec_testing::Expand;

std::string LadderSpec(const std::string& tune, const std::string& extra = "") {
  return "name: tuned\n"
         "data: {source: builtin, seq_len: 32}\n"
         "train: {steps: 20, batch_size: 4}\n"
         "ladder:\n"
         "  rungs: [{layers: 1, d_model: 32, heads: 2}, {layers: 2, d_model: 64, heads: 2},\n"
         "          {layers: 3, d_model: 128, heads: 4}, {layers: 4, d_model: 256, heads: 4}]\n"
         "sweep:\n"
         "  position.variant: [rope, nope]\n"
         "  seed: [0, 1]\n"
         "tune:\n"
         "  train.lr:\n" +
         tune + extra;
}

// Runs the search to its end: each round, every trial the plan wants and the store lacks "runs" to
// its final loss on `surface`. Returns the final plan; `rounds` counts the decisions taken.
struct Played {
  TuningPlan plan;
  std::vector<ObservedTrial> store;
  int rounds = 0;
};

Played Play(const ExpandedSweep& expanded, const stand_in::LossSurface& surface, int max_rounds = 100) {
  Played played;
  std::set<std::string> known;
  for (; played.rounds < max_rounds; ++played.rounds) {
    StatusOr<TuningPlan> plan = PlanTuning(expanded, played.store);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    if (!plan.ok()) break;
    played.plan = *plan;
    bool added = false;
    for (const PlannedTrial& trial : plan->trials) {
      if (!known.insert(trial.trial.identity).second) continue;
      added = true;
      ObservedTrial observed;
      observed.identity = trial.trial.identity;
      observed.order = static_cast<int64_t>(played.store.size());
      observed.rung_label = trial.trial.rung_label;
      observed.assignments = trial.trial.assignments;
      const double lr = trial.trial.config.train.lr;
      if (stand_in::Diverges(surface, lr)) {
        observed.outcome = TunedOutcome::kDiverged;
      } else {
        observed.outcome = TunedOutcome::kFinished;
        observed.metric = stand_in::TargetLoss(surface, lr, static_cast<double>(trial.trial.parameters.nonembedding()));
      }
      played.store.push_back(observed);
    }
    if (!added) break;
  }
  return played;
}

// The grid index whose value the surface likes best for this rung's model.
int64_t OptimalIndex(const TuneSpec& tune, const stand_in::LossSurface& surface, const TuningCellReport& cell,
                     const ExpandedSweep& expanded) {
  for (const ExpandedTrial& trial : expanded.trials) {
    if (trial.rung_label != cell.rung_label) continue;
    const double n = static_cast<double>(trial.parameters.nonembedding());
    int64_t best = tune.NearestIndex(stand_in::OptimalLearningRate(surface, n));
    // the nearest grid value on the log scale is the best (the surface is a parabola in ln lr)
    for (int64_t index : {best - 1, best + 1}) {
      if (stand_in::TargetLoss(surface, tune.ValueAt(index), n) <
          stand_in::TargetLoss(surface, tune.ValueAt(best), n)) {
        best = index;
      }
    }
    return best;
  }
  return 0;
}

// Moves the surface's optimum for the smallest rung's model onto grid index `index`.
void PutSmallestRungOptimumAt(const ExpandedSweep& expanded, int64_t index, stand_in::LossSurface* surface) {
  const double n0 = static_cast<double>(expanded.trials.front().parameters.nonembedding());
  surface->lr_ref = expanded.spec.tune.ValueAt(index) / std::pow(n0 / surface->n_ref, -surface->exponent);
}

stand_in::LossSurface Surface() {
  stand_in::LossSurface surface;
  surface.noise = 0;
  return surface;
}

TEST(LrSearch, StartsEachCellOfTheSmallestRungAtItsCentreOnTheFirstSeed) {
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n"));
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  StatusOr<TuningPlan> plan = PlanTuning(*expanded, {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  // 4 rungs x 2 variants; only the smallest rung starts: 2 cells x 3 values x 1 seed
  ASSERT_EQ(plan->cells.size(), 8u);
  ASSERT_EQ(plan->trials.size(), 6u);
  const int64_t center = expanded->spec.tune.NearestIndex(3e-3);
  std::multiset<int64_t> indices;
  for (const PlannedTrial& trial : plan->trials) {
    EXPECT_EQ(trial.trial.rung_label, "L1-d32");
    EXPECT_EQ(trial.trial.assignments["seed"], 0);
    EXPECT_DOUBLE_EQ(trial.trial.config.train.lr, expanded->spec.tune.ValueAt(trial.grid_index));
    EXPECT_EQ(trial.trial.assignments["train.lr"], trial.trial.config.train.lr);
    indices.insert(trial.grid_index);
  }
  EXPECT_EQ(indices, (std::multiset<int64_t>{center - 1, center - 1, center, center, center + 1, center + 1}));
  EXPECT_EQ(plan->cells[2].status, CellStatus::kWaiting);
  EXPECT_FALSE(plan->complete());
  // worst case: 4 rungs x 2 cells x (9 values x 1 member + 1 follower)
  EXPECT_EQ(plan->worst_case_trials, 80);
}

TEST(LrSearch, BracketsAMinimumAtTheCentreWithTheStartValuesAlone) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> probe = Expand(LadderSpec("    center: 3e-3\n    predict: none\n"));
  ASSERT_TRUE(probe.ok());
  // put each rung's optimum on its centre: centre the spec per rung on the surface's optimum
  std::string centers = "    center: {";
  for (const LadderRung& rung : probe->spec.ladder.rungs) {
    for (const ExpandedTrial& trial : probe->trials) {
      if (trial.rung_label != rung.label) continue;
      centers += rung.label + ": " +
                 std::to_string(stand_in::OptimalLearningRate(surface, static_cast<double>(trial.parameters.nonembedding()))) +
                 ", ";
      break;
    }
  }
  centers = centers.substr(0, centers.size() - 2) + "}\n";
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec(centers + "    predict: none\n"));
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  Played played = Play(*expanded, surface);
  ASSERT_TRUE(played.plan.complete());
  for (const TuningCellReport& cell : played.plan.cells) {
    EXPECT_EQ(cell.status, CellStatus::kBracketed) << cell.reason;
    EXPECT_EQ(cell.tried.size(), 3u) << cell.cell.dump();
    EXPECT_EQ(*cell.best_index, OptimalIndex(expanded->spec.tune, surface, cell, *expanded));
  }
  // 8 cells x (3 values + the second seed at the best)
  EXPECT_EQ(played.plan.trials.size(), 32u);
}

TEST(LrSearch, AnOffCentreStartWalksToTheMinimumOneValueAtATime) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n    predict: none\n"));
  ASSERT_TRUE(expanded.ok());
  const TuneSpec& tune = expanded->spec.tune;
  // the smallest rung's optimum, 4 grid steps above the centre
  PutSmallestRungOptimumAt(*expanded, tune.NearestIndex(3e-3) + 4, &surface);
  Played played = Play(*expanded, surface);
  ASSERT_TRUE(played.plan.complete());
  const TuningCellReport& cell = played.plan.cells[0];
  EXPECT_EQ(cell.rung_label, "L1-d32");
  EXPECT_EQ(cell.status, CellStatus::kBracketed);
  EXPECT_EQ(*cell.best_index, tune.NearestIndex(3e-3) + 4);
  // c-1, c, c+1, then c+2 .. c+5 one at a time: the fewest the rule allows
  EXPECT_EQ(cell.tried.size(), 7u);
  EXPECT_EQ(cell.tried.front().index, tune.NearestIndex(3e-3) - 1);
  EXPECT_EQ(cell.tried.back().index, tune.NearestIndex(3e-3) + 5);
}

TEST(LrSearch, MaxPointsClosesTheCellUnbracketedAndSaysWhichEdge) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n    predict: none\n    max_points: 5\n"));
  ASSERT_TRUE(expanded.ok());
  const TuneSpec& tune = expanded->spec.tune;
  PutSmallestRungOptimumAt(*expanded, tune.NearestIndex(3e-3) - 6, &surface);
  Played played = Play(*expanded, surface);
  const TuningCellReport& cell = played.plan.cells[0];
  EXPECT_EQ(cell.status, CellStatus::kExhausted);
  EXPECT_FALSE(cell.bracketed());
  EXPECT_EQ(cell.tried.size(), 5u);
  EXPECT_THAT(cell.reason, testing::HasSubstr("low edge"));
  EXPECT_EQ(*cell.best_index, tune.NearestIndex(3e-3) - 3);
}

TEST(LrSearch, PredictCentresEachLargerRungWithinOneGridStepOfItsOptimum) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n"));
  ASSERT_TRUE(expanded.ok());
  Played played = Play(*expanded, surface);
  ASSERT_TRUE(played.plan.complete());
  for (const TuningCellReport& cell : played.plan.cells) {
    EXPECT_EQ(cell.status, CellStatus::kBracketed) << cell.cell.dump() << " " << cell.reason;
    const int64_t optimum = OptimalIndex(expanded->spec.tune, surface, cell, *expanded);
    EXPECT_EQ(*cell.best_index, optimum);
    if (cell.rung >= 2) {
      ASSERT_TRUE(cell.center_index.has_value());
      EXPECT_LE(std::abs(*cell.center_index - optimum), 1) << cell.rung_label;
    }
  }
}

TEST(LrSearch, DivergedValuesRankLastAndCloseTheBracketOnTheHighSide) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n    predict: none\n"));
  ASSERT_TRUE(expanded.ok());
  const TuneSpec& tune = expanded->spec.tune;
  const int64_t c = tune.NearestIndex(3e-3);
  // optimum two steps above the centre, but every value above c+1 diverges
  PutSmallestRungOptimumAt(*expanded, c + 2, &surface);
  surface.diverge_above_lr = tune.ValueAt(c + 1) * 1.01;
  Played played = Play(*expanded, surface);
  const TuningCellReport& cell = played.plan.cells[0];
  EXPECT_EQ(cell.status, CellStatus::kBracketed);
  EXPECT_EQ(*cell.best_index, c + 1);
  EXPECT_EQ(cell.tried.back().state, "diverged");
  EXPECT_FALSE(cell.tried.back().metric.has_value());
}

// The published protocol: each searched rung bracketed around its own published value, at once, and
// only the rungs above `extrapolate_above` taken from the fit over the searched ones.
TEST(LrSearch, RungsWithTheirOwnCentreStartOnItAtOnceUnderPredict) {
  StatusOr<ExpandedSweep> expanded =
      Expand(LadderSpec("    center: {L1-d32: 3e-3, L2-d64: 1e-3}\n    extrapolate_above: L2-d64\n"));
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  StatusOr<TuningPlan> plan = PlanTuning(*expanded, {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const TuneSpec& tune = expanded->spec.tune;
  for (const TuningCellReport& cell : plan->cells) {
    if (cell.rung == 0 || cell.rung == 1) {
      EXPECT_EQ(cell.status, CellStatus::kSearching) << cell.rung_label << " " << cell.reason;
      ASSERT_TRUE(cell.center_index.has_value());
      EXPECT_EQ(*cell.center_index, tune.NearestIndex(cell.rung == 0 ? 3e-3 : 1e-3));
    } else {
      EXPECT_EQ(cell.status, CellStatus::kWaiting) << cell.rung_label;
    }
  }
  // Played out, the larger rungs run at the index the fit over the two searched rungs predicts.
  Played played = Play(*expanded, Surface());
  ASSERT_TRUE(played.plan.complete());
  for (const TuningCellReport& cell : played.plan.cells) {
    EXPECT_EQ(cell.status, cell.rung <= 1 ? CellStatus::kBracketed : CellStatus::kExtrapolated) << cell.rung_label;
  }
}

TEST(LrSearch, AnExtrapolatedRungTakesNoCentre) {
  StatusOr<ExpandedSweep> expanded = Expand(
      LadderSpec("    center: {L1-d32: 3e-3, L2-d64: 1e-3, L3-d128: 5e-4}\n    extrapolate_above: L2-d64\n"));
  ASSERT_FALSE(expanded.ok());
  EXPECT_THAT(expanded.status().message(),
              ::testing::HasSubstr("rung 'L3-d128' lies above extrapolate_above 'L2-d64': it is not searched"));
}

TEST(LrSearch, RungsAboveExtrapolateAboveRunEverySeedAtThePredictedIndexOnly) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n    extrapolate_above: L2-d64\n"));
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  Played played = Play(*expanded, surface);
  ASSERT_TRUE(played.plan.complete());
  for (const TuningCellReport& cell : played.plan.cells) {
    if (cell.rung <= 1) {
      EXPECT_EQ(cell.status, CellStatus::kBracketed);
      continue;
    }
    EXPECT_EQ(cell.status, CellStatus::kExtrapolated);
    ASSERT_TRUE(cell.best_value.has_value());
    EXPECT_DOUBLE_EQ(*cell.best_value, expanded->spec.tune.ValueAt(*cell.best_index));
    int64_t trials = 0;
    for (const PlannedTrial& trial : played.plan.trials) {
      if (trial.cell != cell.id) continue;
      ++trials;
      EXPECT_TRUE(trial.extrapolated);
      EXPECT_EQ(trial.grid_index, *cell.best_index);
    }
    EXPECT_EQ(trials, 2);  // both seeds, one value
  }
}

TEST(LrSearch, ReplanningTheSameStoreAsksForTheSameTrialsAndKeepsEveryOneItAskedFor) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n"));
  ASSERT_TRUE(expanded.ok());
  Played partway = Play(*expanded, surface, /*max_rounds=*/3);
  StatusOr<TuningPlan> again = PlanTuning(*expanded, partway.store);
  StatusOr<TuningPlan> once_more = PlanTuning(*expanded, partway.store);
  ASSERT_TRUE(again.ok() && once_more.ok());
  ASSERT_EQ(again->trials.size(), once_more->trials.size());
  for (size_t i = 0; i < again->trials.size(); ++i) {
    EXPECT_EQ(again->trials[i].trial.identity, once_more->trials[i].trial.identity);
  }
  std::set<std::string> planned;
  for (const PlannedTrial& trial : again->trials) planned.insert(trial.trial.identity);
  for (const ObservedTrial& trial : partway.store) EXPECT_EQ(planned.count(trial.identity), 1u);
}

TEST(LrSearch, SeedsAllScoresEachValueByTheMeanOverSeeds) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n    predict: none\n    seeds: all\n"));
  ASSERT_TRUE(expanded.ok());
  StatusOr<TuningPlan> plan = PlanTuning(*expanded, {});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->trials.size(), 8u * 3u * 2u);  // every cell, 3 values, both seeds
  EXPECT_EQ(plan->cells[0].members, 2);
  EXPECT_EQ(plan->cells[0].followers, 0);
}

TEST(LrSearch, AValueNoTrialConfigAcceptsIsAnErrorAtTheTuneBlock) {
  StatusOr<ExpandedSweep> expanded =
      Expand(LadderSpec("    center: 3e-3\n    predict: none\n"));
  ASSERT_TRUE(expanded.ok());
  ExpandedSweep broken = *expanded;
  broken.spec.tune.key = "train.beta1";
  broken.spec.tune.center = 2.0;  // beta1 must be below 1
  StatusOr<TuningPlan> plan = PlanTuning(broken, {});
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), testing::HasSubstr("tune.train.beta1"));
}

TEST(LrSearch, ANeighbourTheTrialConfigRefusesClosesTheCellAtThatEdge) {
  // beta1 must stay below 1: the values 0.58, 0.69, 0.83 get better upwards, and the next, 1.0, is refused.
  StatusOr<ExpandedSweep> expanded = Expand(
      "name: t\ndata: {source: builtin, seq_len: 32}\nmodel: {layers: 1, d_model: 16, heads: 2}\n"
      "train: {steps: 10, batch_size: 4}\n"
      "tune:\n  train.beta1: {grid: {ratio: 1.2, anchor: 1.0}, center: 0.69, predict: none}\n");
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  StatusOr<TuningPlan> first = PlanTuning(*expanded, {});
  ASSERT_TRUE(first.ok()) << first.status().message();
  std::vector<ObservedTrial> store;
  for (const PlannedTrial& trial : first->trials) {
    ObservedTrial observed;
    observed.identity = trial.trial.identity;
    observed.order = static_cast<int64_t>(store.size());
    observed.rung_label = trial.trial.rung_label;
    observed.assignments = trial.trial.assignments;
    observed.outcome = TunedOutcome::kFinished;
    observed.metric = 3.0 - trial.trial.config.train.beta1;
    store.push_back(observed);
  }
  StatusOr<TuningPlan> plan = PlanTuning(*expanded, store);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->cells.size(), 1u);
  EXPECT_EQ(plan->cells[0].status, CellStatus::kExhausted);
  EXPECT_THAT(plan->cells[0].reason, testing::HasSubstr("high edge"));
  EXPECT_THAT(plan->cells[0].reason, testing::HasSubstr("not a valid value"));
  EXPECT_TRUE(plan->complete());
}

// A two-rung ladder with the tune block `tune` (one line: "KEY: {...}").
std::string TwoRungSpec(const std::string& tune) {
  return "name: t\ndata: {source: builtin, seq_len: 32}\ntrain: {steps: 10, batch_size: 4}\n"
         "ladder:\n  rungs: [{layers: 1, d_model: 16, heads: 2}, {layers: 2, d_model: 32, heads: 2}]\n"
         "tune:\n  " + tune + "\n";
}

// Plays a search whose metric falls as the tuned value grows, to its end; every plan must succeed.
std::vector<PlannedTrial> PlayUpwards(const ExpandedSweep& expanded, double (*value_of)(const TrialConfig&),
                                      TuningPlan* last) {
  std::vector<ObservedTrial> store;
  std::set<std::string> known;
  std::vector<PlannedTrial> every;
  for (int round = 0; round < 100; ++round) {
    StatusOr<TuningPlan> plan = PlanTuning(expanded, store);
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    if (!plan.ok()) break;
    *last = *plan;
    bool added = false;
    for (const PlannedTrial& trial : plan->trials) {
      if (!known.insert(trial.trial.identity).second) continue;
      added = true;
      every.push_back(trial);
      ObservedTrial observed;
      observed.identity = trial.trial.identity;
      observed.order = static_cast<int64_t>(store.size());
      observed.rung_label = trial.trial.rung_label;
      observed.assignments = trial.trial.assignments;
      observed.outcome = TunedOutcome::kFinished;
      observed.metric = -std::log(value_of(trial.trial.config));
      store.push_back(observed);
    }
    if (!added) break;
  }
  return every;
}

TEST(LrSearch, ALargerRungPredictedOnTheEdgeASmallerClosedOnStartsWhereTheTrialConfigTakesIt) {
  // beta1 improves upwards to the last value below 1; the next rung's fit points at that edge, whose
  // neighbour above (1.0) the trial config refuses: the centre moves down one step, the plan holds.
  StatusOr<ExpandedSweep> expanded =
      Expand(TwoRungSpec("train.beta1: {grid: {ratio: 1.2, anchor: 1.0}, center: 0.58, max_points: 9}"));
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  TuningPlan plan;
  const std::vector<PlannedTrial> trials =
      PlayUpwards(*expanded, [](const TrialConfig& config) { return config.train.beta1; }, &plan);
  ASSERT_TRUE(plan.complete());
  ASSERT_EQ(plan.cells.size(), 2u);
  for (const PlannedTrial& trial : trials) EXPECT_LT(trial.trial.config.train.beta1, 1.0);
  EXPECT_EQ(plan.cells[0].status, CellStatus::kExhausted);
  EXPECT_EQ(plan.cells[1].status, CellStatus::kExhausted);
  EXPECT_EQ(*plan.cells[1].center_index, *plan.cells[0].best_index - 1);
  EXPECT_EQ(*plan.cells[1].best_index, *plan.cells[0].best_index);
}

TEST(LrSearch, ASearchThatRunsUpwardsStopsWithinFloat32AndTheTrialConfig) {
  // The loss keeps falling as lr grows: the search walks up until the trial config refuses the
  // next value (lr / (1 - beta1) past float32), never planning a value float32 lacks.
  StatusOr<ExpandedSweep> expanded =
      Expand(TwoRungSpec("train.lr: {grid: {ratio: 4, anchor: 1.0}, center: 1e36, max_points: 20}"));
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  TuningPlan plan;
  const std::vector<PlannedTrial> trials =
      PlayUpwards(*expanded, [](const TrialConfig& config) { return config.train.lr; }, &plan);
  ASSERT_TRUE(plan.complete());
  for (const PlannedTrial& trial : trials) {
    EXPECT_LE(trial.trial.config.train.lr / (1.0 - trial.trial.config.train.beta1), FLT_MAX);
    EXPECT_TRUE(trial.trial.assignments["train.lr"].is_number());
  }
  for (const TuningCellReport& cell : plan.cells) {
    EXPECT_EQ(cell.status, CellStatus::kExhausted);
    EXPECT_THAT(cell.reason, testing::HasSubstr("not a valid value"));
  }
}

TEST(LrSearch, AStartedCellReportsTheCentreItStartedAtNotTheOneItWouldStartAtNow) {
  stand_in::LossSurface surface = Surface();
  StatusOr<ExpandedSweep> expanded = Expand(LadderSpec("    center: 3e-3\n    predict: none\n"));
  ASSERT_TRUE(expanded.ok());
  const TuneSpec& tune = expanded->spec.tune;
  PutSmallestRungOptimumAt(*expanded, tune.NearestIndex(3e-3) + 4, &surface);
  Played played = Play(*expanded, surface);
  // the cell walked four steps up; it started, and says it started, on the centre
  EXPECT_EQ(*played.plan.cells[0].center_index, tune.NearestIndex(3e-3));
}

TEST(LrSearch, LineThroughFitsTheLeastSquaresLine) {
  EXPECT_DOUBLE_EQ(LineThrough({1, 2, 3}, {2, 4, 6}, 4), 8);
  EXPECT_DOUBLE_EQ(LineThrough({1}, {5}, 10), 5);
}

}  // namespace
}  // namespace rung

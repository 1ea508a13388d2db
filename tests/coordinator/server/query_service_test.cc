// tests/coordinator/server/query_service_test.cc
//
// The query side of the user service, end to end on a real server and database file: a ladder
// sweep (2 rungs x rope, nope x seeds 0, 1) whose trials report final losses chosen here, then
// QueryResults (grouping, aggregation and paired same-seed differences checked against numbers
// worked out by hand below; unknown keys), Fit (refused with too few finished ladder points,
// then computed, stored and read back with its inputs), Export (CSV and JSON lines parsed back,
// every trial present; the ladder CSV read by the fit library), ListTrials' full view, a report
// from a worker the attempt was not leased to, and the `rung` commands over them as processes
// (results, fit, fits, export --out, logs: output and exit codes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <string>
#include <tuple>
#include <vector>

#include "coordinator/store/database.h"
#include "proto/config_value.h"
#include "coordinator/domain/results_query.h"
#include "coordinator/server/user_service.h"
#include "coordinator/server/auth.h"
#include "sweeps/fit/ladder_csv.h"
#include "tests/coordinator/server/service_fixture.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::server {
namespace {

// Each group value as JSON text: "\"rope\"", "0".
std::vector<std::string> Dumped(const google::protobuf::RepeatedPtrField<v1::ConfigValue>& values) {
  std::vector<std::string> out;
  for (const v1::ConfigValue& value : values) out.push_back(wire::FromConfigValue(value).dump());
  return out;
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::SizeIs;
using testing::ContextWithToken;

// Two rungs; rope and nope; seeds 0 and 1: eight trials, rope the baseline.
std::string LadderSpec() {
  return "name: ladder\n"
         "metric: {name: val_loss, goal: minimize}\n"
         "baseline: {position.variant: rope}\n"
         "data: {source: builtin, seq_len: 16}\n"
         "model: {mlp: gelu}\n"
         "train: {batch_size: 2, steps: 10, lr: 1.0e-3}\n"
         "resources: {cpus: 1}\n"
         "ladder:\n"
         "  rungs:\n"
         "    - {layers: 1, d_model: 16, heads: 2}\n"
         "    - {layers: 2, d_model: 16, heads: 2}\n"
         "sweep:\n"
         "  position.variant: [rope, nope]\n"
         "  seed: [0, 1]\n";
}

using Cell = std::tuple<std::string, int64_t, int64_t>;  // variant, rung, seed

// The final val_loss each trial reports. (nope, rung 1, seed 1) never finishes.
const std::map<Cell, double>& Losses() {
  static const std::map<Cell, double> losses = {
      {{"rope", 0, 0}, 3.0}, {{"rope", 0, 1}, 3.2}, {{"nope", 0, 0}, 3.3}, {{"nope", 0, 1}, 3.7},
      {{"rope", 1, 0}, 2.5}, {{"rope", 1, 1}, 2.7}, {{"nope", 1, 0}, 2.9},
  };
  return losses;
}

// A CSV file's rows, each a list of fields (quoted fields with "" inside, as RFC 4180).
std::vector<std::vector<std::string>> ParseCsv(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      row.push_back(field);
      field.clear();
    } else if (c == '\n') {
      row.push_back(field);
      rows.push_back(row);
      row.clear();
      field.clear();
    } else {
      field += c;
      any = true;
    }
  }
  EXPECT_FALSE(quoted) << "an unterminated quoted field";
  EXPECT_TRUE(row.empty() && field.empty()) << "the file must end with a line break";
  return rows;
}

class QueryServiceTest : public testing::CoordinatorServiceTest {
 protected:
  void SetUp() override {
    testing::CoordinatorServiceTest::SetUp();
    sweep_id_ = Submit(LadderSpec()).sweep_id();
    ASSERT_GT(sweep_id_, 0);
    for (const v1::Trial& trial : ListTrials(sweep_id_)) {
      const nlohmann::json cell = wire::FromConfigEntries(trial.assignments());
      cells_[trial.trial_id()] = {cell["position.variant"].get<std::string>(), trial.rung(),
                                  cell["seed"].get<int64_t>()};
    }
    ASSERT_EQ(cells_.size(), 8u);
    Register("w1", 8);
  }

  // Leases every trial; runs those of `finish` to success with their loss; leaves the rest LEASED.
  void RunTrials(const std::set<Cell>& finish) {
    for (size_t i = 0; i < cells_.size(); ++i) {
      std::optional<v1::TrialLease> lease = Lease("w1");
      ASSERT_TRUE(lease.has_value());
      const Cell& cell = cells_.at(lease->trial_id());
      if (finish.count(cell) > 0) RunToSuccess("w1", *lease, Losses().at(cell));
      else leased_[cell] = *lease;
    }
  }

  std::set<Cell> Finished() const {
    std::set<Cell> cells;
    for (const auto& [cell, loss] : Losses()) cells.insert(cell);
    return cells;
  }

  grpc::Status Query(const std::vector<std::string>& group_by, v1::QueryResultsResponse* response,
                     std::vector<v1::Aggregation> aggregations = {v1::AGGREGATION_MEAN, v1::AGGREGATION_STD,
                                                                  v1::AGGREGATION_MIN, v1::AGGREGATION_COUNT}) {
    v1::QueryResultsRequest request;
    request.set_sweep_id(sweep_id_);
    for (const std::string& key : group_by) request.add_group_by(key);
    for (v1::Aggregation aggregation : aggregations) request.add_aggregations(aggregation);
    return users_->QueryResults(ContextWithToken(user_token_).get(), request, response);
  }

  grpc::Status Fit(v1::FitResponse* response) {
    v1::FitRequest request;
    request.set_sweep_id(sweep_id_);
    request.set_bootstrap(-1);  // no intervals: fast
    return users_->Fit(ContextWithToken(user_token_).get(), request, response);
  }

  std::string Export(v1::ExportTable table, v1::ExportFormat format) {
    v1::ExportRequest request;
    request.set_sweep_id(sweep_id_);
    request.set_table(table);
    request.set_format(format);
    std::unique_ptr<grpc::ClientContext> context = ContextWithToken(user_token_);
    std::unique_ptr<grpc::ClientReader<v1::ExportChunk>> stream = users_->Export(context.get(), request);
    std::string data;
    v1::ExportChunk chunk;
    while (stream->Read(&chunk)) data += chunk.data();
    grpc::Status status = stream->Finish();
    EXPECT_TRUE(status.ok()) << status.error_message();
    return data;
  }

  struct CommandRun {
    int exit_code = -1;
    std::vector<std::string> lines;  // stdout, up to its first empty line
    std::string err;
  };

  // Runs the rung binary against this coordinator with the user token.
  CommandRun Rung(std::vector<std::string> args) {
    args.insert(args.begin(), RUNG_CLI_BINARY);
    args.insert(args.end(), {"--coordinator", server_->address(), "--token-file", options_.user_token_file});
    const std::string err = scratch_.Path("rung-" + std::to_string(++commands_) + ".err");
    agent::testing::ChildProcess child(args, "", err);
    CommandRun run;
    for (std::string line = child.ReadLine(std::chrono::seconds(20)); !line.empty();
         line = child.ReadLine(std::chrono::seconds(20))) {
      run.lines.push_back(line);
    }
    const int status = child.Wait(std::chrono::seconds(20));
    run.exit_code = status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    run.err = agent::testing::FileText(err);
    return run;
  }

  int commands_ = 0;
  int64_t sweep_id_ = 0;
  std::map<int64_t, Cell> cells_;  // trial id -> cell
  std::map<Cell, v1::TrialLease> leased_;
};

TEST_F(QueryServiceTest, ResultsAreGroupedAggregatedOverSeedsAndPairedAgainstTheBaselineBySeed) {
  RunTrials(Finished());
  v1::QueryResultsResponse table;
  grpc::Status status = Query({"position.variant", "rung_label"}, &table);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(table.group_by(), ElementsAre("position.variant", "rung_label"));
  EXPECT_EQ(table.metric(), "val_loss");
  EXPECT_EQ(table.summary(), v1::METRIC_SUMMARY_FINAL);
  EXPECT_EQ(wire::FromConfigEntries(table.baseline()), (nlohmann::json{{"position.variant", "rope"}}));
  ASSERT_THAT(table.rows(), SizeIs(4));

  // By hand, from Losses(): nope sorts before rope, rungs in ladder order.
  struct Expected {
    std::string variant, label;
    double mean, sd, min;
    int64_t count, trials, pairs;
    double difference_mean, difference_sd;
  };
  const double sd_pair_01 = std::sqrt(0.02);  // two values 0.2 apart: sqrt(2 * 0.1^2 / 1)
  const std::vector<Expected> expected = {
      // nope L1: 3.3, 3.7; same-seed differences 3.3 - 3.0 = 0.3 and 3.7 - 3.2 = 0.5.
      {"nope", "L1-d16", 3.5, std::sqrt(0.08), 3.3, 2, 2, 2, 0.4, sd_pair_01},
      // nope L2: only seed 0 finished (2.9); its pair 2.9 - 2.5 = 0.4, not 2.9 minus rope's mean 2.6.
      // The sd of one value is undefined (NaN); that of one pair is 0, as rung.proto says.
      {"nope", "L2-d16", 2.9, std::nan(""), 2.9, 1, 2, 1, 0.4, 0.0},
      // rope: the baseline pairs with itself.
      {"rope", "L1-d16", 3.1, sd_pair_01, 3.0, 2, 2, 2, 0.0, 0.0},
      {"rope", "L2-d16", 2.6, sd_pair_01, 2.5, 2, 2, 2, 0.0, 0.0},
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].variant + " " + expected[i].label);
    const v1::ResultRow& row = table.rows(static_cast<int>(i));
    EXPECT_THAT(Dumped(row.group_values()),
                ElementsAre("\"" + expected[i].variant + "\"", "\"" + expected[i].label + "\""));
    ASSERT_THAT(row.values(), SizeIs(4));
    EXPECT_NEAR(row.values(0), expected[i].mean, 1e-12);
    if (std::isnan(expected[i].sd)) {
      EXPECT_TRUE(std::isnan(row.values(1))) << row.values(1);
    } else {
      EXPECT_NEAR(row.values(1), expected[i].sd, 1e-12);
    }
    EXPECT_DOUBLE_EQ(row.values(2), expected[i].min);
    EXPECT_EQ(row.values(3), static_cast<double>(expected[i].count));
    EXPECT_EQ(row.trials(), expected[i].trials);
    EXPECT_THAT(row.trial_ids(), SizeIs(expected[i].trials));
    EXPECT_EQ(row.pairs(), expected[i].pairs);
    ASSERT_TRUE(row.has_paired_difference_mean());
    EXPECT_NEAR(row.paired_difference_mean(), expected[i].difference_mean, 1e-12);
    if (row.pairs() >= 2) {
      EXPECT_NEAR(row.paired_difference_sd(), expected[i].difference_sd, 1e-12);
    } else {
      EXPECT_FALSE(row.has_paired_difference_sd()) << "no sd of a single pair";
    }
    EXPECT_GT(row.flops(), 0);
  }
  EXPECT_LT(table.rows(0).flops(), table.rows(1).flops()) << "the second rung is the bigger model";

  // Grouped by seed over everything: seed 0 has 3.0, 3.3, 2.5, 2.9; seed 1 has 3.2, 3.7, 2.7.
  ASSERT_TRUE(Query({"seed"}, &table, {v1::AGGREGATION_MEAN, v1::AGGREGATION_MEDIAN, v1::AGGREGATION_MAX}).ok());
  ASSERT_THAT(table.rows(), SizeIs(2));
  EXPECT_THAT(Dumped(table.rows(0).group_values()), ElementsAre("0"));
  EXPECT_NEAR(table.rows(0).values(0), (3.0 + 3.3 + 2.5 + 2.9) / 4, 1e-12);
  EXPECT_NEAR(table.rows(0).values(1), (2.9 + 3.0) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(table.rows(0).values(2), 3.3);
  EXPECT_NEAR(table.rows(1).values(0), (3.2 + 3.7 + 2.7) / 3, 1e-12);
  EXPECT_DOUBLE_EQ(table.rows(1).values(1), 3.2);

  // No keys: one row per trial, labelled by trial, rung and the sweep's axes; a filter keeps one
  // variant.
  ASSERT_TRUE(Query({}, &table).ok());
  EXPECT_THAT(table.rows(), SizeIs(8));
  EXPECT_THAT(table.group_by(), ElementsAre("trial", "rung_label", "position.variant", "seed"));
  const v1::ResultRow& first = table.rows(0);
  ASSERT_THAT(first.trial_ids(), SizeIs(1));
  EXPECT_EQ(wire::FromConfigValue(first.group_values(0)).dump(), std::to_string(first.trial_ids(0)));
  EXPECT_EQ(wire::FromConfigValue(first.group_values(1)).dump(), "\"L1-d16\"");
  EXPECT_TRUE(std::isnan(first.values(1))) << "the sd of one trial's value is undefined";
  v1::QueryResultsRequest filtered;
  filtered.set_sweep_id(sweep_id_);
  filtered.add_group_by("rung");
  v1::ResultFilter* filter = filtered.add_filters();
  filter->set_key("position.variant");
  filter->mutable_value()->set_text("nope");
  ASSERT_TRUE(users_->QueryResults(ContextWithToken(user_token_).get(), filtered, &table).ok());
  ASSERT_THAT(table.rows(), SizeIs(2));
  EXPECT_THAT(Dumped(table.rows(1).group_values()), ElementsAre("1"));
  EXPECT_NEAR(table.rows(0).values(0), 3.5, 1e-12);  // default aggregations: MEAN, STD, COUNT
  EXPECT_EQ(table.rows(0).values(2), 2.0);
}

TEST_F(QueryServiceTest, PairedDifferencesCarryStudentTIntervalsAndMayPairAgainstChosenTrialsOnChosenKeys) {
  RunTrials(Finished());
  const double t_975_1 = 12.706204736174698;  // SciPy: t.ppf(0.975, 1)
  const double t_950_1 = 6.313751514675041;   // t.ppf(0.95, 1)
  // The spec's baseline: nope L1's same-seed differences 0.3 and 0.5 (mean 0.4, sd 0.1 sqrt 2).
  v1::QueryResultsResponse table;
  ASSERT_TRUE(Query({"position.variant", "rung_label"}, &table).ok());
  EXPECT_DOUBLE_EQ(table.level(), 0.95);
  const v1::ResultRow& nope_l1 = table.rows(0);
  ASSERT_TRUE(nope_l1.has_paired_low() && nope_l1.has_paired_high());
  EXPECT_NEAR(nope_l1.paired_low(), 0.4 - t_975_1 * 0.1, 1e-9);
  EXPECT_NEAR(nope_l1.paired_high(), 0.4 + t_975_1 * 0.1, 1e-9);
  EXPECT_FALSE(table.rows(1).has_paired_low()) << "no interval from a single pair";

  // Against nope's trials, paired on the seed (and the rung): rope L1 is 3.0 - 3.3 and 3.2 - 3.7.
  v1::QueryResultsRequest request;
  request.set_sweep_id(sweep_id_);
  request.add_group_by("position.variant");
  request.add_group_by("rung_label");
  v1::ResultFilter* against = request.add_against();
  against->set_key("position.variant");
  against->mutable_value()->set_text("nope");
  request.add_pair_on("seed");
  request.set_level(0.90);
  grpc::Status status = users_->QueryResults(ContextWithToken(user_token_).get(), request, &table);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(wire::FromConfigEntries(table.baseline()), (nlohmann::json{{"position.variant", "nope"}}));
  EXPECT_THAT(table.pair_on(), ElementsAre("seed"));
  EXPECT_DOUBLE_EQ(table.level(), 0.90);
  ASSERT_THAT(table.rows(), SizeIs(4));
  const v1::ResultRow& rope_l1 = table.rows(2);
  EXPECT_THAT(Dumped(rope_l1.group_values()), ElementsAre("\"rope\"", "\"L1-d16\""));
  EXPECT_EQ(rope_l1.pairs(), 2);
  EXPECT_NEAR(rope_l1.paired_difference_mean(), -0.4, 1e-12);
  EXPECT_NEAR(rope_l1.paired_low(), -0.4 - t_950_1 * 0.1, 1e-9);
  EXPECT_NEAR(rope_l1.paired_high(), -0.4 + t_950_1 * 0.1, 1e-9);
  // rope L2 pairs only where nope L2 finished: seed 0, 2.5 - 2.9.
  EXPECT_EQ(table.rows(3).pairs(), 1);
  EXPECT_NEAR(table.rows(3).paired_difference_mean(), -0.4, 1e-12);

  // Two reference trials share a pair: refused, naming what tells them apart.
  request.clear_pair_on();
  request.add_pair_on("position.variant");
  status = users_->QueryResults(ContextWithToken(user_token_).get(), request, &table);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("with the same rung and pair_on values"));
  // A reference that matches nothing, an unknown pair key and a level outside (0, 1) are refused.
  request.clear_pair_on();
  against->mutable_value()->set_text("alibi");
  status = users_->QueryResults(ContextWithToken(user_token_).get(), request, &table);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("matches no trial"));
  against->mutable_value()->set_text("nope");
  request.add_pair_on("sede");
  status = users_->QueryResults(ContextWithToken(user_token_).get(), request, &table);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("pair_on: unknown key 'sede' (did you mean 'seed'?)"));
  request.clear_pair_on();
  request.set_level(1.5);
  status = users_->QueryResults(ContextWithToken(user_token_).get(), request, &table);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("level"));
}

TEST_F(QueryServiceTest, AnUnknownKeyIsInvalidArgumentNamingItAndListingTheValidKeys) {
  RunTrials(Finished());
  v1::QueryResultsResponse table;
  grpc::Status status = Query({"rung_label", "position.varient"}, &table);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("unknown key 'position.varient' (did you mean 'position.variant'?)"));
  EXPECT_THAT(status.error_message(), HasSubstr("rung_label"));
  EXPECT_THAT(status.error_message(), HasSubstr("position.variant, seed"));
  EXPECT_THAT(status.error_message(), HasSubstr("train.lr"));
  status = Query({"model.positional.variant"}, &table);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("group_by: unknown key 'model.positional.variant'"));

  v1::QueryResultsRequest request;
  request.set_sweep_id(sweep_id_);
  request.set_metric("val_los");
  status = users_->QueryResults(ContextWithToken(user_token_).get(), request, &table);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("'val_los'"));
  EXPECT_THAT(status.error_message(), HasSubstr("val_loss"));

  request.set_sweep_id(sweep_id_ + 100);
  request.clear_metric();
  EXPECT_EQ(users_->QueryResults(ContextWithToken(user_token_).get(), request, &table).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(QueryServiceTest, AResultsQueryWhoseCallIsNoLongerWantedStopsWithTheCallsStatus) {
  RunTrials(Finished());
  ResultsQuery query;
  query.sweep_id = sweep_id_;
  query.summary = MetricSummary::kBest;
  int asked = 0;
  query.keep_going = [&asked] {
    ++asked;
    return Status::DeadlineExceeded("the results query: the call's deadline passed");
  };
  StatusOr<ResultsTable> table = QueryResults(server_->coordinator(), query);
  EXPECT_EQ(table.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(asked, 1);  // at the first question: nothing after it was computed
  query.keep_going = [] { return Status::Ok(); };
  EXPECT_TRUE(QueryResults(server_->coordinator(), query).ok());
}

TEST_F(QueryServiceTest, AFitNeedsTwoFinishedBaselinePointsThenIsStoredWithItsInputs) {
  RunTrials({{"rope", 0, 0}, {"nope", 0, 0}});
  v1::FitResponse fit;
  grpc::Status refused = Fit(&fit);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr("too few finished ladder points"));
  EXPECT_THAT(refused.error_message(), HasSubstr("the baseline 'rope' has 1 finished ladder point"));
  EXPECT_THAT(refused.error_message(), HasSubstr("6 trial(s)"));
  // A baseline that no trial is: refused as such, naming the variants.
  v1::FitRequest unknown;
  unknown.set_sweep_id(sweep_id_);
  unknown.set_baseline("ropee");
  refused = users_->Fit(ContextWithToken(user_token_).get(), unknown, &fit);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("is the variant 'ropee'; its variants: nope, rope"));

  // Finish every trial but (nope, rung 1, seed 1), as the table above has them.
  for (auto& [cell, lease] : leased_) {
    if (cell != Cell{"nope", 1, 1}) RunToSuccess("w1", lease, Losses().at(cell));
  }
  grpc::Status status = Fit(&fit);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(fit.fit_id(), 0);
  ASSERT_FALSE(fit.stored().report().empty());
  std::map<std::string, const v1::FitReportRow*> piecewise;
  for (const v1::FitReportRow& row : fit.stored().report()) {
    if (row.estimator() == "piecewise" && row.role() == "estimate") piecewise[row.variant() + " " + row.label()] = &row;
  }
  ASSERT_TRUE(piecewise.count("rope L1-d16") && piecewise.count("nope L2-d16"));
  EXPECT_DOUBLE_EQ(piecewise["rope L1-d16"]->multiplier(), 1.0);
  EXPECT_NEAR(piecewise["rope L1-d16"]->loss(), 3.1, 1e-12);
  // nope at L2 reaches 2.9; rope's seed means are 3.1 at C1 and 2.6 at C2, so rope reaches 2.9 at
  // ln C = ln C1 + 0.4 (ln C2 - ln C1), and CM = that compute over nope's C2.
  ASSERT_TRUE(piecewise["nope L2-d16"]->has_multiplier()) << piecewise["nope L2-d16"]->undefined_reason();
  const double c1 = piecewise["rope L1-d16"]->compute(), c2 = piecewise["rope L2-d16"]->compute();
  EXPECT_NEAR(piecewise["nope L2-d16"]->multiplier(), std::exp(std::log(c1) + 0.4 * std::log(c2 / c1)) / c2, 1e-9);

  // Read back: the stored fit with its inputs.
  RestartServer();
  v1::ListFitsRequest list;
  list.set_sweep_id(sweep_id_);
  v1::ListFitsResponse fits;
  ASSERT_TRUE(users_->ListFits(ContextWithToken(user_token_).get(), list, &fits).ok());
  ASSERT_THAT(fits.fits(), SizeIs(1));
  const v1::StoredFit& stored = fits.fits(0);
  EXPECT_EQ(stored.fit_id(), fit.fit_id());
  EXPECT_EQ(stored.sweep_id(), sweep_id_);
  EXPECT_EQ(stored.metric(), "val_loss");
  EXPECT_EQ(stored.baseline(), "rope");
  EXPECT_THAT(stored.variant_keys(), ElementsAre("position.variant"));
  EXPECT_EQ(stored.actor(), "user:anonymous");
  EXPECT_EQ(stored.options().bootstrap(), 0);
  EXPECT_EQ(stored.options().summary(), v1::METRIC_SUMMARY_FINAL);
  EXPECT_TRUE(stored.report().empty()) << "lists leave the report out unless asked";
  ASSERT_THAT(stored.points(), SizeIs(7));
  std::map<Cell, double> used;
  for (const v1::FitPoint& point : stored.points()) {
    const Cell& cell = cells_.at(point.trial_id());
    EXPECT_EQ(point.variant(), std::get<0>(cell));
    EXPECT_EQ(point.seed(), std::get<2>(cell));
    EXPECT_GT(point.compute(), 0);
    used[cell] = point.loss();
  }
  EXPECT_EQ(used, Losses());

  list.set_fit_id(fit.fit_id());
  ASSERT_TRUE(users_->ListFits(ContextWithToken(user_token_).get(), list, &fits).ok());
  ASSERT_THAT(fits.fits(), SizeIs(1));
  EXPECT_EQ(fits.fits(0).report_size(), fit.stored().report_size());
  for (int i = 0; i < fit.stored().report_size(); ++i) {
    EXPECT_EQ(fits.fits(0).report(i).SerializeAsString(), fit.stored().report(i).SerializeAsString())
        << "row " << i << " read back from the store differs from the one computed";
  }
  EXPECT_THAT(fits.fits(0).report_text(), HasSubstr("Piecewise in ln C"));

  // A stored report that no longer reads (a key renamed by hand): asked for alone, the error names
  // the fit and the key; in a list, the fit is there without its report and says why.
  {
    StatusOr<std::unique_ptr<Database>> db = Database::Open(options_.database_path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    ASSERT_TRUE((*db)->Execute("UPDATE sweep_fits SET result = replace(result, '\"estimator\"', '\"method\"')").ok());
  }
  grpc::Status unreadable = users_->ListFits(ContextWithToken(user_token_).get(), list, &fits);
  EXPECT_EQ(unreadable.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(unreadable.error_message(), HasSubstr("'estimator' is missing"));
  list.set_fit_id(0);
  list.set_with_report(true);
  fits.Clear();
  ASSERT_TRUE(users_->ListFits(ContextWithToken(user_token_).get(), list, &fits).ok());
  ASSERT_THAT(fits.fits(), SizeIs(1));
  EXPECT_TRUE(fits.fits(0).report().empty());
  EXPECT_EQ(fits.fits(0).points_size(), 7) << "what the fit holds besides its report";
  EXPECT_THAT(fits.fits(0).report_text(), HasSubstr("does not read"));
}

TEST_F(QueryServiceTest, AViewersFitIsReturnedNotStoredOneAtATimeAndWithinItsReplicates) {
  options_.viewer_token_file = scratch_.Path("viewer.token");
  StatusOr<std::string> viewer = WriteFreshTokenFile(options_.viewer_token_file);
  ASSERT_TRUE(viewer.ok()) << viewer.status().ToString();
  RestartServer();
  RunTrials(Finished());
  v1::FitRequest request;
  request.set_sweep_id(sweep_id_);
  request.set_bootstrap(-1);
  v1::FitResponse fit;
  grpc::Status status = users_->Fit(ContextWithToken(*viewer).get(), request, &fit);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(fit.fit_id(), 0);
  EXPECT_FALSE(fit.stored().report().empty());
  EXPECT_EQ(fit.stored().actor(), "viewer:anonymous");
  EXPECT_THAT(fit.stored().report_text(), HasSubstr("Piecewise in ln C"));
  v1::ListFitsRequest list;
  list.set_sweep_id(sweep_id_);
  v1::ListFitsResponse fits;
  ASSERT_TRUE(users_->ListFits(ContextWithToken(user_token_).get(), list, &fits).ok());
  EXPECT_THAT(fits.fits(), SizeIs(0)) << "a viewer's fit grows no table";

  request.set_bootstrap(kMaxViewerBootstrap + 1);
  status = users_->Fit(ContextWithToken(*viewer).get(), request, &fit);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("at most 10000 bootstrap replicates"));

  request.set_bootstrap(-1);
  // Two viewer fits at once (each of the most replicates a viewer may ask, so they overlap): one
  // runs, the other is refused; the user token is not bounded so. Fits that did not overlap (a slow
  // start of a thread) are tried again, a few times.
  bool refused_while_running = false;
  for (int attempt = 0; attempt < 5 && !refused_while_running; ++attempt) {
    grpc::Status answers[2];
    grpc::Status by_user;
    auto viewer_fit = [&](grpc::Status* answer) {
      v1::FitRequest slow = request;
      slow.set_bootstrap(kMaxViewerBootstrap);
      v1::FitResponse slow_fit;
      *answer = users_->Fit(ContextWithToken(*viewer).get(), slow, &slow_fit);
    };
    std::thread first(viewer_fit, &answers[0]);
    std::thread second(viewer_fit, &answers[1]);
    std::thread user([&] {
      v1::FitRequest slow = request;
      slow.set_bootstrap(kMaxViewerBootstrap);
      v1::FitResponse user_fit;
      by_user = users_->Fit(ContextWithToken(user_token_).get(), slow, &user_fit);
    });
    first.join();
    second.join();
    user.join();
    EXPECT_TRUE(by_user.ok()) << by_user.error_message();
    int refused = 0;
    for (const grpc::Status& answer : answers) {
      if (answer.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        EXPECT_THAT(answer.error_message(), HasSubstr("one is running"));
        ++refused;
      } else {
        EXPECT_TRUE(answer.ok()) << answer.error_message();
      }
    }
    EXPECT_LE(refused, 1) << "one of two fits at once runs";
    refused_while_running = refused == 1;
  }
  EXPECT_TRUE(refused_while_running);
  // The slot is given back: the next viewer fit runs.
  EXPECT_TRUE(users_->Fit(ContextWithToken(*viewer).get(), request, &fit).ok());
}

TEST_F(QueryServiceTest, AFitCountsComputeAsAskedAndSaysHow) {
  RunTrials(Finished());
  v1::FitRequest request;
  request.set_sweep_id(sweep_id_);
  request.set_bootstrap(-1);
  request.set_compute("flops");
  v1::FitResponse fit;
  grpc::Status refused = users_->Fit(ContextWithToken(user_token_).get(), request, &fit);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("FitRequest.compute"));
  EXPECT_THAT(refused.error_message(), HasSubstr("nonembedding"));

  // By hand: 10 steps x 2 sequences x 16 tokens = 320 tokens. d_model 16, GELU MLP of 64, vocabulary
  // 256: a layer's matrices are 4 x 16^2 + 2 x 16 x 64 = 3072 parameters, the output head 4096.
  //   nonembedding  6 x 3072 L                      L1: 18432   L2: 36864 FLOPs a token
  //   matrix        6 x (3072 L + 4096)              L1: 43008   L2: 61440
  //   total         matrix + 6 x L x 16 x 2 x 8      L1: 44544   L2: 64512
  const std::map<std::string, std::pair<double, double>> per_token = {
      {"nonembedding", {18432, 36864}}, {"matrix", {43008, 61440}}, {"total", {44544, 64512}}};
  for (const auto& [count, flops] : per_token) {
    request.set_compute(count);
    grpc::Status status = users_->Fit(ContextWithToken(user_token_).get(), request, &fit);
    ASSERT_TRUE(status.ok()) << count << ": " << status.error_message();
    for (const v1::FitReportRow& row : fit.stored().report()) {
      const double expected = 320 * (row.label() == "L1-d16" ? flops.first : flops.second);
      EXPECT_DOUBLE_EQ(row.compute(), expected) << count << " " << row.variant() << " " << row.label();
    }
    ASSERT_FALSE(fit.stored().report().empty());
    const std::string formula = fit.stored().report(0).compute_count();
    EXPECT_THAT(formula, HasSubstr(count == "nonembedding" ? "N_nonembedding" : "N_matrix"));
    EXPECT_THAT(fit.stored().report_text(), HasSubstr("Compute in FLOPs (" + formula + ")"));
    EXPECT_EQ(fit.stored().options().compute(), count);
  }
}

TEST_F(QueryServiceTest, ExportsParseBackWithEveryTrialItsConfigProvenanceAndSummaries) {
  RunTrials(Finished());
  const std::vector<std::vector<std::string>> csv =
      ParseCsv(Export(v1::EXPORT_TABLE_TRIALS, v1::EXPORT_FORMAT_CSV));
  ASSERT_THAT(csv, SizeIs(9));  // header and eight trials
  const std::vector<std::string>& header = csv[0];
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* name : {"trial_id", "state", "rung_label", "baseline", "flops", "config.position.variant",
                           "config.seed", "config.train.lr", "provenance.commit", "summary.val_loss"}) {
    ASSERT_TRUE(column.count(name)) << name;
  }
  std::set<int64_t> seen;
  for (size_t i = 1; i < csv.size(); ++i) {
    ASSERT_THAT(csv[i], SizeIs(header.size()));
    const int64_t trial_id = std::stoll(csv[i][column["trial_id"]]);
    seen.insert(trial_id);
    const Cell& cell = cells_.at(trial_id);
    EXPECT_EQ(csv[i][column["config.position.variant"]], std::get<0>(cell));
    EXPECT_EQ(csv[i][column["baseline"]], std::get<0>(cell) == "rope" ? "true" : "false");
    if (Losses().count(cell)) {
      EXPECT_EQ(csv[i][column["state"]], "SUCCEEDED");
      EXPECT_DOUBLE_EQ(std::stod(csv[i][column["summary.val_loss"]]), Losses().at(cell));
      EXPECT_EQ(csv[i][column["provenance.commit"]], "abc123");
    } else {
      EXPECT_EQ(csv[i][column["state"]], "LEASED");
      EXPECT_EQ(csv[i][column["summary.val_loss"]], "");
    }
  }
  EXPECT_EQ(seen.size(), cells_.size());

  std::istringstream lines(Export(v1::EXPORT_TABLE_TRIALS, v1::EXPORT_FORMAT_JSONL));
  std::string line;
  seen.clear();
  while (std::getline(lines, line)) {
    const nlohmann::json row = nlohmann::json::parse(line);
    const int64_t trial_id = row["trial_id"].get<int64_t>();
    seen.insert(trial_id);
    EXPECT_EQ(row["config"]["position"]["variant"], std::get<0>(cells_.at(trial_id)));
    EXPECT_EQ(row["assignments"]["seed"], std::get<2>(cells_.at(trial_id)));
    if (Losses().count(cells_.at(trial_id))) {
      EXPECT_EQ(row["provenance"]["host"], "node7");
      EXPECT_DOUBLE_EQ(row["summaries"]["val_loss"].get<double>(), Losses().at(cells_.at(trial_id)));
    }
  }
  EXPECT_EQ(seen.size(), cells_.size());

  // The ladder CSV is what the fit library reads.
  StatusOr<fit::LadderResults> ladder =
      fit::ParseLadderCsv(Export(v1::EXPORT_TABLE_LADDER, v1::EXPORT_FORMAT_CSV), "export");
  ASSERT_TRUE(ladder.ok()) << ladder.status().ToString();
  EXPECT_THAT(ladder->runs, SizeIs(7));
  EXPECT_TRUE(ladder->has_seeds());

  // Tables not served say so.
  v1::ExportRequest request;
  request.set_sweep_id(sweep_id_);
  request.set_table(v1::EXPORT_TABLE_EVENTS);
  std::unique_ptr<grpc::ClientContext> context = ContextWithToken(user_token_);
  std::unique_ptr<grpc::ClientReader<v1::ExportChunk>> stream = users_->Export(context.get(), request);
  v1::ExportChunk chunk;
  while (stream->Read(&chunk)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(QueryServiceTest, ListTrialsInTheFullViewCarriesEveryTrialsAttempts) {
  RunTrials(Finished());
  v1::ListTrialsRequest request;
  request.set_sweep_id(sweep_id_);
  request.set_view(v1::TRIAL_VIEW_FULL);
  v1::ListTrialsResponse response;
  ASSERT_TRUE(users_->ListTrials(ContextWithToken(user_token_).get(), request, &response).ok());
  ASSERT_THAT(response.trials(), SizeIs(8));
  for (const v1::Trial& trial : response.trials()) {
    EXPECT_FALSE(trial.config().entries().empty());
    ASSERT_THAT(trial.attempts(), SizeIs(1));
    EXPECT_EQ(trial.attempts(0).worker_id(), "w1");
  }
  request.set_view(v1::TRIAL_VIEW_BASIC);
  ASSERT_TRUE(users_->ListTrials(ContextWithToken(user_token_).get(), request, &response).ok());
  EXPECT_THAT(response.trials(0).attempts(), SizeIs(0));
}

TEST_F(QueryServiceTest, AReportFromAWorkerTheAttemptWasNotLeasedToIsRefused) {
  Register("w2");
  std::optional<v1::TrialLease> lease = Lease("w1");
  ASSERT_TRUE(lease.has_value());
  ASSERT_TRUE(Report("w1", *lease, 1, {testing::ProvenanceRecord(), testing::StepRecord(5, 2.5)}).ok());

  grpc::Status report = Report("w2", *lease, 2, {testing::StepRecord(10, 1.5)});
  EXPECT_EQ(report.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(report.error_message(), HasSubstr("from worker w2 rejected: attempt 1 was leased to worker w1"));
  ExpectFencedOff("w2", *lease);
  EXPECT_EQ(GetTrial(lease->trial_id()).state(), v1::TRIAL_STATE_RUNNING);
  EXPECT_EQ(Curve(lease->trial_id(), "train_loss"), (std::map<int64_t, double>{{5, 2.5}}));

  // Reports without a worker id are refused too; the holder carries on.
  EXPECT_EQ(Report("", *lease, 2, {testing::StepRecord(10, 1.5)}).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::HeartbeatResponse beat;
  ASSERT_TRUE(Heartbeat("w1", *lease, &beat).ok());
  EXPECT_EQ(beat.action(), v1::HeartbeatResponse::ACTION_CONTINUE);
}

TEST_F(QueryServiceTest, TheRungCommandsPrintResultsFitsExportsAndLogsWithTheirExitCodes) {
  RunTrials(Finished());
  const std::string sweep = std::to_string(sweep_id_);

  CommandRun results = Rung({"results", sweep, "--group-by", "position.variant,rung_label", "--agg", "mean,count",
                             "--format", "csv"});
  ASSERT_EQ(results.exit_code, 0) << results.err;
  ASSERT_THAT(results.lines, SizeIs(5));
  EXPECT_EQ(results.lines[0],
            "position.variant,rung_label,mean,count,trials,paired_diff,paired_sd,pairs,paired_low,paired_high");
  // 0.4 +- t(0.975, 1) 0.1414 / sqrt 2 = 0.4 +- 12.706 x 0.1.
  EXPECT_EQ(results.lines[1], "nope,L1-d16,3.5,2,2,0.4,0.1414,2,-0.8706,1.671");
  EXPECT_EQ(results.lines[2], "nope,L2-d16,2.9,1,2,0.4,,1,,") << "the sd and interval of one pair are blank";
  CommandRun unknown = Rung({"results", sweep, "--group-by", "position.varient"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("did you mean 'position.variant'?"));

  CommandRun fit = Rung({"fit", sweep, "--bootstrap", "0", "--format", "json"});
  ASSERT_EQ(fit.exit_code, 0) << fit.err;
  std::string text;
  for (const std::string& line : fit.lines) text += line + "\n";
  EXPECT_TRUE(nlohmann::json::parse(text).is_array());
  CommandRun fits = Rung({"fits", sweep, "--format", "csv"});
  ASSERT_EQ(fits.exit_code, 0) << fits.err;
  ASSERT_THAT(fits.lines, SizeIs(2));
  EXPECT_THAT(fits.lines[1], HasSubstr("val_loss,rope,position.variant,7,"));
  EXPECT_EQ(Rung({"fits", sweep, "--id", "99"}).exit_code, 2);

  // --out replaces the file whole, and a failed export leaves the old one and no temporary file.
  const std::string out = scratch_.Path("export.csv");
  CommandRun exported = Rung({"export", sweep, "--out", out});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const std::string first = agent::testing::FileText(out);
  EXPECT_THAT(ParseCsv(first), SizeIs(9));
  CommandRun missing = Rung({"export", "999", "--out", out});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("sweep 999"));
  EXPECT_EQ(agent::testing::FileText(out), first);
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(out).parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find(".export.csv.tmp"), std::string::npos) << entry.path();
  }

  // rung plot of a stored sweep: the ladder figures, then each rung's validation curves.
  if (std::system("gnuplot --version > /dev/null 2>&1") == 0) {
    const std::string figures = scratch_.Path("figures");
    CommandRun plotted = Rung({"plot", sweep, "--out", figures});
    ASSERT_EQ(plotted.exit_code, 0) << plotted.err;
    for (const char* name : {"loss_vs_compute.svg", "loss_curves_L1-d16.svg", "loss_curves_L1-d16.png"}) {
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(figures) / name)) << name;
    }
    EXPECT_THAT(agent::testing::FileText(figures + "/loss_curves_L1-d16.dat"), HasSubstr("# nope seed 0"));
  }

  CommandRun logs = Rung({"logs", std::to_string(cells_.begin()->first), "--source", "event", "--format", "json"});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  ASSERT_THAT(logs.lines, SizeIs(3));  // LEASED, RUNNING, SUCCEEDED
  EXPECT_EQ(nlohmann::json::parse(logs.lines.back())["source"], "event");
  EXPECT_THAT(logs.lines.back(), HasSubstr("SUCCEEDED"));
}

// An evaluation sweep: one checkpoint evaluated at 2x and 4x its training length (T = 16) with none
// and yarn, over three YaRN c values; its trials train nothing (train.steps 0). Leased before the
// ladder's trials (priority 1).
std::string EvaluationSpec() {
  return "name: yarn-c\n"
         "metric: {name: val_loss, goal: minimize}\n"
         "data: {source: builtin, seq_len: 16}\n"
         "model: {layers: 1, d_model: 16, heads: 2, mlp: gelu}\n"
         "train: {batch_size: 2, steps: 0, init: {checkpoint: /checkpoints/base}, extrapolation_multiples: [2, 4],\n"
         "        extrapolation_methods: [none, yarn]}\n"
         "resources: {cpus: 1}\n"
         "policy: {priority: 1}\n"
         "sweep:\n"
         "  train.extrapolation_yarn_c: [0.07, 0.1, 0.2]\n";
}

// What rung-train reports for an evaluation trial of EvaluationSpec: the held-out loss at step 0 and
// its final record, the yarn losses rising with c (the 4x per-position losses rising by 0.001 a position).
std::vector<std::string> EvaluationRecords(double c) {
  nlohmann::json extrapolation = nlohmann::json::array();
  for (int multiple : {2, 4}) {
    for (const std::string method : {"none", "yarn"}) {
      const double loss = method == "none" ? 2.0 + multiple : 2.0 + 0.25 * multiple + c;
      nlohmann::json per_position = nlohmann::json::array();
      for (int position = 0; position < 16 * multiple; ++position) per_position.push_back(loss + 0.001 * position);
      extrapolation.push_back({{"multiple", multiple}, {"length", 16 * multiple}, {"method", method},
                               {"val_loss", loss}, {"val_loss_per_position", per_position}});
    }
  }
  const nlohmann::json step = {{"type", "step"}, {"step", 0}, {"tokens", 0}, {"flops", 0.0}, {"lr", 0.0},
                               {"val_loss", 2.0}};
  const nlohmann::json final_record = {{"type", "final"}, {"step", 0}, {"tokens", 0}, {"val_loss", 2.0},
                                       {"extrapolation", extrapolation}};
  return {ProvenanceRecord(), step.dump(), final_record.dump()};
}

TEST_F(QueryServiceTest, RungPlotOfAnEvaluationSweepDrawsItsEvaluationsAndSaysWhatItSkipped) {
  if (std::system("gnuplot --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "gnuplot not installed";
  const int64_t sweep = Submit(EvaluationSpec()).sweep_id();
  ASSERT_GT(sweep, 0);
  std::map<int64_t, double> c_of;  // trial id -> its c
  for (const v1::Trial& trial : ListTrials(sweep)) {
    c_of[trial.trial_id()] = wire::FromConfigEntries(trial.assignments())["train.extrapolation_yarn_c"].get<double>();
  }
  ASSERT_EQ(c_of.size(), 3u);
  for (size_t i = 0; i < c_of.size(); ++i) {
    std::optional<v1::TrialLease> lease = Lease("w1");
    ASSERT_TRUE(lease.has_value());
    ASSERT_EQ(c_of.count(lease->trial_id()), 1u) << "the evaluation trials are leased first";
    ASSERT_TRUE(Report("w1", *lease, 1, EvaluationRecords(c_of[lease->trial_id()])).ok());
    v1::CompleteResponse completed;
    ASSERT_TRUE(Complete(Completion("w1", *lease, v1::OUTCOME_SUCCEEDED, 1), &completed).ok());
    ASSERT_EQ(completed.trial_state(), v1::TRIAL_STATE_SUCCEEDED);
  }

  const std::string figures = scratch_.Path("evaluation-figures");
  CommandRun plotted = Rung({"plot", std::to_string(sweep), "--out", figures});
  ASSERT_EQ(plotted.exit_code, 0) << plotted.err;
  EXPECT_THAT(plotted.lines, ElementsAre(figures + "/loss_vs_length.svg", figures + "/loss_vs_length.png",
                                         figures + "/loss_by_position.svg", figures + "/loss_by_position.png"));
  EXPECT_THAT(plotted.err, HasSubstr("rung plot: skipped loss_vs_compute and multipliers: the sweep's 3 SUCCEEDED "
                                     "trial(s) trained nothing (evaluation trials, train.steps 0)"));
  EXPECT_THAT(plotted.err, HasSubstr("rung plot: skipped loss_curves: no SUCCEEDED trial has a validation curve"));
  // A line per c and method, from the trials' val_loss at T = 16 through 2x and 4x.
  const std::string lengths = agent::testing::FileText(figures + "/loss_vs_length.dat");
  EXPECT_THAT(lengths, HasSubstr("# extrapolation_yarn_c 0.1 (yarn)\n16 2\n32 2.6\n64 3.1\n"));
  EXPECT_THAT(lengths, HasSubstr("# extrapolation_yarn_c 0.2 (none)\n16 2\n32 4\n64 6\n"));
  EXPECT_THAT(agent::testing::FileText(figures + "/extrapolation.gp"), HasSubstr("yarn-c: loss by position at 64 tokens"));
  EXPECT_THAT(agent::testing::FileText(figures + "/loss_by_position.dat"),
              HasSubstr("# extrapolation_yarn_c 0.07 (yarn) at 64 tokens (1 position(s) a bucket)\n1 3.07\n2 3.071\n"));

  // --where draws the selected trials alone (a key repeated: any of its values), and not the ladder's.
  const std::string selected = scratch_.Path("selected-figures");
  CommandRun where = Rung({"plot", std::to_string(sweep), "--out", selected, "--where", "train.extrapolation_yarn_c=0.1",
                           "--where", "train.extrapolation_yarn_c=0.2"});
  ASSERT_EQ(where.exit_code, 0) << where.err;
  EXPECT_THAT(where.err, HasSubstr("skipped the ladder figures (loss_vs_compute, multipliers): --where selects"));
  const std::string chosen = agent::testing::FileText(selected + "/loss_vs_length.dat");
  EXPECT_THAT(chosen, HasSubstr("# extrapolation_yarn_c 0.1 (yarn)"));
  EXPECT_THAT(chosen, HasSubstr("# extrapolation_yarn_c 0.2 (none)"));
  EXPECT_THAT(chosen, Not(HasSubstr("0.07")));
  CommandRun unknown = Rung({"plot", std::to_string(sweep), "--out", selected, "--where", "label=a"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("--where: 'label' is not an axis of the sweep; its axes: "));
  CommandRun none = Rung({"plot", std::to_string(sweep), "--out", selected, "--where", "train.extrapolation_yarn_c=9"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, HasSubstr("among the trials --where selects"));

  // A sweep with nothing to draw is still refused: the ladder sweep has no SUCCEEDED trial yet.
  CommandRun refused = Rung({"plot", std::to_string(sweep_id_), "--out", scratch_.Path("nothing")});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("has no SUCCEEDED trial yet"));
}

}  // namespace
}  // namespace rung::server

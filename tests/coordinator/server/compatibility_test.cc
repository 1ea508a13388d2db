// tests/coordinator/server/compatibility_test.cc
//
// The compatibility policy of proto/rung.proto ("Compatibility"): a worker or client speaking an
// older protocol version is refused with FAILED_PRECONDITION naming both versions, before anything
// else; and the database the previous release wrote (tests/data/compat/protocol-1/rung.db, schema
// 4) opens after the migration with everything it held still served.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/store/database.h"
#include "coordinator/store/schema.h"
#include "tests/coordinator/server/service_fixture.h"

namespace rung::server::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::SizeIs;

using CompatibilityTest = CoordinatorServiceTest;

TEST_F(CompatibilityTest, AWorkerOfAnOlderProtocolIsRefusedNamingBothVersions) {
  v1::RegisterRequest request;  // protocol_version absent: version 1
  request.set_worker_id("old");
  request.set_host("host-old");
  request.set_cpu_slots(1);
  v1::RegisterResponse response;
  grpc::Status status = workers_->Register(ContextWithToken(worker_token_).get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("rung-worker speaks protocol version 1"));
  EXPECT_THAT(status.error_message(), HasSubstr("speaks version " + std::to_string(wire::kProtocolVersion)));
  EXPECT_THAT(status.error_message(), HasSubstr("upgrade rung-worker"));
  v1::ListWorkersResponse workers;
  ASSERT_TRUE(users_->ListWorkers(ContextWithToken(user_token_).get(), v1::ListWorkersRequest(), &workers).ok());
  EXPECT_THAT(workers.workers(), SizeIs(0)) << "nothing of the refused worker is stored";
}

TEST_F(CompatibilityTest, AClientOfAnOlderProtocolIsRefusedNamingBothVersions) {
  // Without the version metadata (a client of version 1).
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + user_token_);
  v1::ListSweepsResponse sweeps;
  grpc::Status status = users_->ListSweeps(&context, v1::ListSweepsRequest(), &sweeps);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("speaks protocol version 1"));
  EXPECT_THAT(status.error_message(), HasSubstr("speaks version " + std::to_string(wire::kProtocolVersion)));

  // GetServerInfo answers any client, with the version the coordinator speaks.
  grpc::ClientContext old_info;
  old_info.AddMetadata("authorization", "Bearer " + user_token_);
  v1::ServerInfo info;
  status = users_->GetServerInfo(&old_info, v1::GetServerInfoRequest(), &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(info.protocol_version(), wire::kProtocolVersion);
}

// Version 2 sent config values, configs and provenance as JSON text; its client cannot read typed ones.
TEST_F(CompatibilityTest, AClientOfThePreviousVersionIsRefusedNamingBothVersions) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + user_token_);
  context.AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion - 1));
  v1::ListSweepsResponse sweeps;
  grpc::Status status = users_->ListSweeps(&context, v1::ListSweepsRequest(), &sweeps);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr("speaks protocol version " + std::to_string(wire::kProtocolVersion - 1)));
  EXPECT_THAT(status.error_message(), HasSubstr("speaks version " + std::to_string(wire::kProtocolVersion)));
  EXPECT_THAT(status.error_message(), HasSubstr("upgrade this rung client"));
}

TEST_F(CompatibilityTest, ANewerClientIsToldToUpgradeTheCoordinator) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + user_token_);
  context.AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion + 1));
  v1::ListSweepsResponse sweeps;
  grpc::Status status = users_->ListSweeps(&context, v1::ListSweepsRequest(), &sweeps);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("upgrade the coordinator"));
}

// A database an earlier release wrote (tests/data/compat/<folder>/rung.db), copied to the scratch
// folder, under a coordinator of this one.
template <const char* kFolder>
class EarlierDatabaseTest : public CoordinatorServiceTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(LoopbackServerOptions(scratch_, &options_, &user_token_, &worker_token_));
    std::filesystem::copy_file(std::string(RUNG_SOURCE_DIR) + "/tests/data/compat/" + kFolder + "/rung.db",
                               options_.database_path, std::filesystem::copy_options::overwrite_existing);
    StartServer();
  }
};

// The previous release's database (protocol 1, schema 4).
constexpr char kProtocolOne[] = "protocol-1";
using PreviousReleaseDatabaseTest = EarlierDatabaseTest<kProtocolOne>;

TEST_F(PreviousReleaseDatabaseTest, OpensAfterTheMigrationWithEverythingItHeld) {
  v1::ListSweepsResponse sweeps;
  ASSERT_TRUE(users_->ListSweeps(ContextWithToken(user_token_).get(), v1::ListSweepsRequest(), &sweeps).ok());
  ASSERT_THAT(sweeps.sweeps(), SizeIs(1));
  const v1::Sweep& sweep = sweeps.sweeps(0);
  EXPECT_EQ(sweep.name(), "compat");
  EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_SUCCEEDED);
  EXPECT_EQ(sweep.counts().succeeded(), 2);

  v1::ListTrialsRequest list;
  list.set_sweep_id(sweep.sweep_id());
  v1::ListTrialsResponse trials;
  ASSERT_TRUE(users_->ListTrials(ContextWithToken(user_token_).get(), list, &trials).ok());
  ASSERT_THAT(trials.trials(), SizeIs(2));
  for (const v1::Trial& trial : trials.trials()) {
    EXPECT_EQ(trial.state(), v1::TRIAL_STATE_SUCCEEDED);
    EXPECT_EQ(trial.total_steps(), 30) << "the steps column the migration filled from the config";
    ASSERT_TRUE(trial.has_final_metric());
    EXPECT_GT(trial.final_metric(), 0.0);
    const std::map<int64_t, double> curve = Curve(trial.trial_id(), "val_loss");
    EXPECT_EQ(curve.size(), 3u) << "val_loss at steps 10, 20 and 30";
    EXPECT_EQ(curve.rbegin()->first, 30);
  }

  v1::QueryResultsRequest results;
  results.set_sweep_id(sweep.sweep_id());
  results.add_group_by("position.variant");
  v1::QueryResultsResponse table;
  grpc::Status status = users_->QueryResults(ContextWithToken(user_token_).get(), results, &table);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(table.rows(), SizeIs(2));

  const int64_t lerope = trials.trials(1).trial_id();
  v1::GetDiagnosticsRequest diagnostics;
  diagnostics.set_trial_id(lerope);
  v1::GetDiagnosticsResponse stored;
  ASSERT_TRUE(users_->GetDiagnostics(ContextWithToken(user_token_).get(), diagnostics, &stored).ok());
  bool attention = false;
  for (const v1::TrialDiagnostic& diagnostic : stored.diagnostics()) {
    if (diagnostic.name() != "attention") continue;
    attention = true;
    EXPECT_EQ(diagnostic.step(), 30) << "the step the migration read from the document";
    EXPECT_EQ(diagnostic.layer(), -1);
    ASSERT_TRUE(diagnostic.has_attention()) << "an earlier release's document reads as the typed payload: "
                                            << diagnostic.error();
    ASSERT_GT(diagnostic.attention().layers_size(), 0);
    // Gap counting as that release wrote it ("lengths", "mean_log_lambda", "xi_lambda_ci") reads as
    // buckets and the interval, so its figure is still drawn.
    const v1::GapCounting& gap = diagnostic.attention().layers(0).gap_counting();
    EXPECT_EQ(gap.buckets_size(), 3);
    EXPECT_EQ(gap.buckets(2).n(), 32);
    EXPECT_TRUE(gap.has_xi_lambda_ci_low() && gap.has_xi_lambda_ci_high());
    EXPECT_FALSE(gap.has_tie_share()) << "not measured then: unset, not 0";
  }
  EXPECT_TRUE(attention);
  // Every stored document of every trial of the earlier database reads as its type.
  for (const v1::Trial& trial : trials.trials()) {
    diagnostics.set_trial_id(trial.trial_id());
    stored.Clear();
    ASSERT_TRUE(users_->GetDiagnostics(ContextWithToken(user_token_).get(), diagnostics, &stored).ok());
    for (const v1::TrialDiagnostic& diagnostic : stored.diagnostics()) {
      EXPECT_TRUE(diagnostic.error().empty()) << diagnostic.name() << ": " << diagnostic.error();
      EXPECT_NE(diagnostic.document_case(), v1::TrialDiagnostic::DOCUMENT_NOT_SET) << diagnostic.name();
    }
  }

  v1::GetLearnedParametersRequest learned;
  learned.add_trial_ids(lerope);
  learned.set_kind(v1::PARAMETER_KIND_LEARNED);
  v1::GetLearnedParametersResponse parameters;
  ASSERT_TRUE(users_->GetLearnedParameters(ContextWithToken(user_token_).get(), learned, &parameters).ok());
  EXPECT_FALSE(parameters.parameters().empty()) << "LeRoPE's learned positional parameters";

  // And the sweep takes new work: resubmitting its spec with another variant adds a trial, once the
  // spec says that its diagnostics are measured as that release measured them (one batch, sequence
  // units; the defaults are now paper 004's three batches and batch units, another result).
  v1::SubmitSweepResponse resubmitted;
  const std::string spec = GetSweep(sweep.sweep_id()).spec_text();
  std::string with_nope = spec;
  with_nope.replace(with_nope.find("[rope, lerope]"), 14, "[rope, lerope, nope]");
  const std::string as_measured = "  diagnostics_sequences: 2\n";
  with_nope.insert(with_nope.find(as_measured) + as_measured.size(),
                   "  diagnostics_batches: 1\n  diagnostics_bootstrap_unit: sequence\n");
  status = TrySubmit(with_nope, "compat.yaml", &resubmitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(resubmitted.new_trial_count(), 1) << "the two old cells keep their identities and are skipped";
  status = TrySubmit(spec, "compat.yaml", &resubmitted);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(resubmitted.new_trial_count(), 2) << "at the paper's diagnostics protocol the two old cells are new";
}

// The database of the release before schema 8 (tests/data/compat/schema-7/README.md): three tuned
// and early-stopping sweeps whose trials were stopped by ASHA, by the divergence rule and by a
// non-finite loss, told apart then only by the words of their state reasons.
constexpr char kSchemaSeven[] = "schema-7";
using SchemaSevenDatabaseTest = EarlierDatabaseTest<kSchemaSeven>;

TEST_F(SchemaSevenDatabaseTest, MigratesEveryEarlyStopToItsKindAndPassesTheIntegrityCheck) {
  std::map<std::string, std::vector<v1::EarlyStop>> stopped;  // sweep name -> its early-stopped trials' kinds
  v1::ListSweepsResponse sweeps;
  ASSERT_TRUE(users_->ListSweeps(ContextWithToken(user_token_).get(), v1::ListSweepsRequest(), &sweeps).ok());
  ASSERT_THAT(sweeps.sweeps(), SizeIs(3));
  for (const v1::Sweep& sweep : sweeps.sweeps()) {
    EXPECT_EQ(sweep.state(), v1::SWEEP_STATE_SUCCEEDED) << sweep.name();
    v1::ListTrialsRequest list;
    list.set_sweep_id(sweep.sweep_id());
    v1::ListTrialsResponse trials;
    ASSERT_TRUE(users_->ListTrials(ContextWithToken(user_token_).get(), list, &trials).ok());
    for (const v1::Trial& trial : trials.trials()) {
      if (trial.state() == v1::TRIAL_STATE_EARLY_STOPPED) {
        stopped[sweep.name()].push_back(trial.early_stop());
      } else {
        EXPECT_EQ(trial.early_stop(), v1::EARLY_STOP_UNSPECIFIED) << trial.trial_id();
      }
    }
  }
  using ::testing::ElementsAre;
  EXPECT_THAT(stopped["schema7-asha"], ElementsAre(v1::EARLY_STOP_ASHA, v1::EARLY_STOP_ASHA));
  EXPECT_THAT(stopped["schema7-rising"], ElementsAre(v1::EARLY_STOP_DIVERGENCE));
  EXPECT_THAT(stopped["schema7-nonfinite"], ElementsAre(v1::EARLY_STOP_NON_FINITE));

  // The search reads the kinds: ASHA's stops rank as stopped, the non-finite value as diverged. The
  // release that ran these trials measured diagnostics on one batch of 4 sequences with sequence
  // units; paper 004's three batches of 16 with batch units are the defaults since, another result
  // and so another identity. A spec that pins the earlier protocol finds its trials again: resubmitted
  // so, each sweep adds nothing and its search sees every tried value as it was.
  for (const auto& [name, expected] : std::map<std::string, std::vector<std::string>>{
           {"schema7-asha", {"stopped_by_asha", "finished", "stopped_by_asha"}},
           {"schema7-nonfinite", {"finished", "finished", "diverged"}}}) {
    int64_t sweep_id = 0;
    for (const v1::Sweep& sweep : sweeps.sweeps()) {
      if (sweep.name() == name) sweep_id = sweep.sweep_id();
    }
    std::string pinned = GetSweep(sweep_id).spec_text();
    const std::string train = "train: {";
    ASSERT_NE(pinned.find(train), std::string::npos) << pinned;
    pinned.insert(pinned.find(train) + train.size(),
                  "diagnostics_sequences: 4, diagnostics_batches: 1, diagnostics_bootstrap_unit: sequence, ");
    v1::SubmitSweepResponse resubmitted;
    grpc::Status submitted = TrySubmit(pinned, name + ".yaml", &resubmitted);
    ASSERT_TRUE(submitted.ok()) << name << ": " << submitted.error_message();
    EXPECT_EQ(resubmitted.new_trial_count(), 0) << name;
    v1::GetTuningRequest request;
    request.set_sweep_id(sweep_id);
    v1::GetTuningResponse tuning;
    ASSERT_TRUE(users_->GetTuning(ContextWithToken(user_token_).get(), request, &tuning).ok()) << name;
    ASSERT_EQ(tuning.cells_size(), 1) << name;
    std::vector<std::string> states;
    for (const v1::TunedValue& value : tuning.cells(0).tried()) states.push_back(value.state());
    EXPECT_EQ(states, expected) << name;
  }

  users_.reset();
  workers_.reset();
  server_.reset();  // the coordinator stops and its database closes
  StatusOr<std::unique_ptr<Database>> db = Database::Open(options_.database_path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  StatusOr<int64_t> version = (*db)->UserVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, LatestSchemaVersion());
  StatusOr<Statement> integrity = (*db)->Prepare("PRAGMA integrity_check");
  ASSERT_TRUE(integrity.ok()) << integrity.status().ToString();
  StatusOr<bool> row = integrity->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(integrity->ColumnText(0), "ok");
  StatusOr<int64_t> orphans = (*db)->QueryInt64("SELECT COUNT(*) FROM pragma_foreign_key_check");
  ASSERT_TRUE(orphans.ok()) << orphans.status().ToString();
  EXPECT_EQ(*orphans, 0);
}

}  // namespace
}  // namespace rung::server::testing

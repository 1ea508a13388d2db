// The database layer and the schema: WAL and durability settings, statements and transactions,
// the latest schema created and reopened, forward migrations (v1 -> v2, v2 -> v3, v6 -> v7 and
// v9 -> v10 with data), a newer database refused.
#include "coordinator/store/schema.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "coordinator/store/database.h"
#include "coordinator/store/fit_store.h"
#include "tests/coordinator/store/store_test_util.h"

namespace rung {
namespace {

using store_testing::StoreTest;

// An ACTIVE sweep 'old' as every schema version stores it.
constexpr char kOldSweepRow[] =
    "INSERT INTO sweeps(name, spec_text, spec_hash, state, policy, baseline, created_at, updated_at) "
    "VALUES ('old', 'name: old', 'h', 'ACTIVE', '{}', '{}', 1, 1);";

class SchemaTest : public StoreTest {
 protected:
  // A second, raw connection to the same file.
  std::unique_ptr<Database> Raw() {
    StatusOr<std::unique_ptr<Database>> db = Database::Open(DatabasePath());
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(db).value() : nullptr;
  }

  // The store closed and its file made anew at schema `version` (the first `version` migrations),
  // open raw for a test to write the rows of that version; drop it before Open() migrates the rest.
  std::unique_ptr<Database> FreshAtVersion(int64_t version) {
    Close();
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(DatabasePath() + suffix);
    std::unique_ptr<Database> db = Raw();
    if (!db) return nullptr;
    const std::vector<SchemaMigration> up_to(SchemaMigrations().begin(), SchemaMigrations().begin() + version);
    const Status migrated = MigrateSchema(*db, up_to);
    EXPECT_TRUE(migrated.ok()) << migrated.ToString();
    StatusOr<int64_t> reached = db->UserVersion();
    EXPECT_TRUE(reached.ok() && *reached == version) << "schema version " << version << " was not reached";
    return migrated.ok() ? std::move(db) : nullptr;
  }

  std::string Text(Database& db, const std::string& sql) {
    StatusOr<Statement> statement = db.Prepare(sql);
    EXPECT_TRUE(statement.ok()) << statement.status().ToString();
    if (!statement.ok()) return "";
    StatusOr<bool> row = statement->Step();
    EXPECT_TRUE(row.ok() && *row) << sql;
    return row.ok() && *row ? statement->ColumnText(0) : "";
  }
};

TEST_F(SchemaTest, CreatesTheLatestVersionWithEveryTableAndTheDurabilitySettings) {
  std::unique_ptr<Database> db = Raw();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, 10);
  EXPECT_EQ(LatestSchemaVersion(), 10);
  EXPECT_EQ(Text(*db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(Text(*db, "PRAGMA synchronous"), "2");  // FULL
  EXPECT_EQ(Text(*db, "PRAGMA foreign_keys"), "1");
  for (const char* table : {"sweeps", "trials", "attempts", "workers", "metrics", "summaries", "learned_params",
                            "diagnostics", "fits", "events", "tags", "logs", "sweep_fits", "gang_reservations",
                            "attempt_ranks", "worker_endings"}) {
    ASSERT_OK_AND_ASSIGN(int64_t count,
                         db->QueryInt64(std::string("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = '") +
                                        table + "'"));
    EXPECT_EQ(count, 1) << table;
  }
  for (const char* index : {"trials_by_sweep_state", "trials_by_state_priority", "attempts_by_state_lease",
                            "sweep_fits_by_sweep", "worker_endings_by_worker", "worker_endings_by_attempt"}) {
    ASSERT_OK_AND_ASSIGN(int64_t count,
                         db->QueryInt64(std::string("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name = '") +
                                        index + "'"));
    EXPECT_EQ(count, 1) << index;
  }
}

TEST_F(SchemaTest, ReopeningKeepsTheVersionAndTheData) {
  const int64_t sweep_id = Submit(store_testing::Submission("kept", {store_testing::Cell("a")}));
  Reopen();
  std::unique_ptr<Database> db = Raw();
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, LatestSchemaVersion());
  ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().Get(sweep_id));
  EXPECT_EQ(sweep.name, "kept");
}

TEST_F(SchemaTest, AVersionOneDatabaseMigratesKeepingItsData) {
  {
    std::unique_ptr<Database> db = FreshAtVersion(1);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Execute(std::string(kOldSweepRow) +
                          "INSERT INTO workers(id, host, cpus, gpus, registered_at, last_seen_at) "
                          "VALUES ('w', 'h', 1, 0, 1, 1);"));
  }
  Open();
  ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().FindByName("old"));
  EXPECT_EQ(sweep.metric.name, "val_loss");
  EXPECT_EQ(sweep.spec_file_name, "");
  ASSERT_OK_AND_ASSIGN(WorkerRecord worker, workers().Get("w"));
  EXPECT_TRUE(worker.info.details.is_object());
  std::unique_ptr<Database> db = Raw();
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, LatestSchemaVersion());
}

TEST_F(SchemaTest, AVersionTwoDatabaseFileMigratesToThreeKeepingItsDataAndStoresFits) {
  {
    std::unique_ptr<Database> db = FreshAtVersion(2);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Execute(
        "INSERT INTO sweeps(name, spec_text, spec_hash, state, policy, baseline, created_at, updated_at, "
        "spec_file_name, metric_name) VALUES ('v2', 'name: v2', 'h', 'SUCCEEDED', '{}', '{}', 1, 1, 'v2.yaml', "
        "'val_loss');"));
    ASSERT_OK_AND_ASSIGN(int64_t fits_table,
                         db->QueryInt64("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sweep_fits'"));
    ASSERT_EQ(fits_table, 0);
  }
  Open();  // the store migrates on open
  std::unique_ptr<Database> db = Raw();
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, LatestSchemaVersion());
  ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().FindByName("v2"));
  EXPECT_EQ(sweep.spec_file_name, "v2.yaml");
  EXPECT_EQ(sweep.state, SweepState::kSucceeded);

  // The new table takes a fit of the old sweep.
  FitStore fits(*store_);
  FitRecord fit;
  fit.sweep_id = sweep.id;
  fit.actor = "user:test";
  fit.metric = "val_loss";
  fit.baseline = "rope";
  fit.variant_keys = {"position.variant"};
  fit.result = nlohmann::json::array();
  ASSERT_OK_AND_ASSIGN(FitRecord saved, fits.Save(fit));
  ASSERT_OK_AND_ASSIGN(int64_t rows, db->QueryInt64("SELECT COUNT(*) FROM sweep_fits"));
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(saved.id, 1);
}

TEST_F(SchemaTest, AVersionSixDatabaseMigratesToSevenWhereTrialsAndAttemptsMayEndEarlyStopped) {
  {
    std::unique_ptr<Database> db = FreshAtVersion(6);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Execute(std::string(kOldSweepRow) +
                          "INSERT INTO trials(sweep_id, trial_index, identity, config_json, state, rung, "
                          "rung_label, variant, seed, n_nonembedding, n_total, tokens, flops, cpus, gpus, priority, "
                          "assignments, created_at, updated_at) VALUES (1, 0, 'id0', '{}', 'RUNNING', 0, 'L1', "
                          "'rope', 0, 1, 1, 1, 1.0, 1, 0, 0, '{}', 1, 1);"));
    // Version 6 refuses the new state.
    EXPECT_FALSE(db->Execute("UPDATE trials SET state = 'EARLY_STOPPED'").ok());
  }
  Open();
  std::unique_ptr<Database> db = Raw();
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, LatestSchemaVersion());
  ASSERT_OK(db->Execute("UPDATE trials SET state = 'EARLY_STOPPED'"));
  EXPECT_FALSE(db->Execute("UPDATE trials SET state = 'STOPPED'").ok()) << "the check still holds";
  ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().FindByName("old"));
  EXPECT_EQ(sweep.tuning, "");
  EXPECT_EQ(Text(*db, "PRAGMA integrity_check"), "ok");
}

TEST_F(SchemaTest, AVersionNineDatabaseMigratesToTenKeepingItsWorkersWithoutAnEnd) {
  {
    std::unique_ptr<Database> db = FreshAtVersion(9);
    ASSERT_NE(db, nullptr);
    ASSERT_OK(db->Execute(std::string(kOldSweepRow) +
                          "INSERT INTO workers(id, host, cpus, gpus, registered_at, last_seen_at, details) "
                          "VALUES ('w', 'node-w', 8, 1, 1, 2, '{\"name\": \"job-7\"}');"));
  }
  Open();
  std::unique_ptr<Database> db = Raw();
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, LatestSchemaVersion());
  ASSERT_OK_AND_ASSIGN(SweepRecord sweep, sweeps().FindByName("old"));
  EXPECT_EQ(sweep.state, SweepState::kActive);
  ASSERT_OK_AND_ASSIGN(WorkerRecord worker, workers().Get("w"));
  EXPECT_EQ(worker.info.host, "node-w");
  EXPECT_EQ(worker.info.cpus, 8);
  EXPECT_EQ(worker.info.details.value("name", ""), "job-7");
  EXPECT_EQ(worker.last_seen_at, FromUnixMicros(2));
  EXPECT_FALSE(worker.info.stops_at.has_value());  // no end known

  // The new column takes a registration's end, and a registration without one clears it.
  const Timestamp stops_at = clock_.Now() + std::chrono::hours(4);
  WorkerInfo registering{"w", "node-w", 8, 1};
  registering.stops_at = stops_at;
  ASSERT_OK(workers().Register(registering));
  ASSERT_OK_AND_ASSIGN(worker, workers().Get("w"));
  EXPECT_EQ(worker.info.stops_at, std::optional<Timestamp>(stops_at));
  ASSERT_OK(workers().Register({"w", "node-w", 8, 1}));
  ASSERT_OK_AND_ASSIGN(worker, workers().Get("w"));
  EXPECT_FALSE(worker.info.stops_at.has_value());
  EXPECT_EQ(Text(*db, "PRAGMA integrity_check"), "ok");
}

TEST_F(SchemaTest, RefusesADatabaseNewerThanThisBuild) {
  const int64_t newer = LatestSchemaVersion() + 1;
  Close();
  {
    std::unique_ptr<Database> db = Raw();
    ASSERT_OK(db->Execute("PRAGMA user_version = " + std::to_string(newer)));
  }
  StatusOr<std::unique_ptr<Store>> store = Store::Open(DatabasePath(), clock_, Options());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("schema version " + std::to_string(newer)), std::string::npos)
      << store.status().message();
  // Left as it was: the refusal wrote nothing.
  std::unique_ptr<Database> db = Raw();
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, newer);
}

TEST_F(SchemaTest, AppliesLaterMigrationsInOrderAndRollsBackOneThatFails) {
  std::unique_ptr<Database> db = Raw();
  std::vector<SchemaMigration> migrations = SchemaMigrations();
  const int64_t latest = LatestSchemaVersion();
  migrations.push_back({latest + 1, "a column", "ALTER TABLE sweeps ADD COLUMN owner TEXT;"});
  migrations.push_back(
      {latest + 2, "broken", "CREATE TABLE half_done(x INTEGER); INSERT INTO no_such_table VALUES (1);"});
  Status migrated = MigrateSchema(*db, migrations);
  ASSERT_FALSE(migrated.ok());
  EXPECT_NE(migrated.message().find("version " + std::to_string(latest + 2) + " (broken)"), std::string::npos)
      << migrated.message();
  ASSERT_OK_AND_ASSIGN(int64_t version, db->UserVersion());
  EXPECT_EQ(version, latest + 1);  // the column applied, the broken one rolled back whole
  ASSERT_OK_AND_ASSIGN(int64_t half_done,
                       db->QueryInt64("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'half_done'"));
  EXPECT_EQ(half_done, 0);
  ASSERT_OK(db->Execute("SELECT owner FROM sweeps"));

  migrations.back().sql = "CREATE TABLE half_done(x INTEGER);";
  ASSERT_OK(MigrateSchema(*db, migrations));
  ASSERT_OK_AND_ASSIGN(version, db->UserVersion());
  EXPECT_EQ(version, latest + 2);
}

TEST_F(SchemaTest, TransactionRollsBackUnlessCommittedAndErrorsCarrySqliteMessages) {
  std::unique_ptr<Database> db = Raw();
  {
    ASSERT_OK_AND_ASSIGN(Transaction transaction, Transaction::Begin(*db, TransactionMode::kImmediate));
    ASSERT_OK(db->Execute("INSERT INTO workers(id, host, cpus, gpus, registered_at, last_seen_at) "
                          "VALUES ('w', 'h', 1, 0, 0, 0)"));
  }  // destroyed without Commit
  ASSERT_OK_AND_ASSIGN(int64_t workers, db->QueryInt64("SELECT COUNT(*) FROM workers"));
  EXPECT_EQ(workers, 0);

  StatusOr<Statement> bad = db->Prepare("SELECT nope FROM workers");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("no such column: nope"), std::string::npos) << bad.status().message();

  // Foreign keys are enforced: an attempt needs its trial.
  Status orphan = db->Execute("INSERT INTO attempts(trial_id, attempt, worker_id, state, leased_at, lease_expires_at, "
                              "checkpoint_dir) VALUES (99, 1, 'w', 'LEASED', 0, 0, '/tmp')");
  EXPECT_EQ(orphan.code(), StatusCode::kFailedPrecondition) << orphan.ToString();
  EXPECT_NE(orphan.message().find("FOREIGN KEY"), std::string::npos) << orphan.message();
}

TEST_F(SchemaTest, StatementBindsAndReadsEveryType) {
  std::unique_ptr<Database> db = Raw();
  ASSERT_OK_AND_ASSIGN(Statement select, db->Prepare("SELECT ?, ?, ?, ?, ?"));
  select.BindAll(int64_t{1} << 40, 2.5, "text", std::optional<double>(), nullptr);
  ASSERT_OK_AND_ASSIGN(bool row, select.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(select.ColumnInt64(0), int64_t{1} << 40);
  EXPECT_DOUBLE_EQ(select.ColumnDouble(1), 2.5);
  EXPECT_EQ(select.ColumnText(2), "text");
  EXPECT_FALSE(select.ColumnOptionalDouble(3).has_value());
  EXPECT_TRUE(select.ColumnIsNull(4));

  ASSERT_OK_AND_ASSIGN(Statement one, db->Prepare("SELECT ?"));
  one.Bind(5, 1);  // out of range: the error surfaces at Step
  StatusOr<bool> stepped = one.Step();
  ASSERT_FALSE(stepped.ok());
  EXPECT_EQ(stepped.status().code(), StatusCode::kInvalidArgument) << stepped.status().ToString();
}

}  // namespace
}  // namespace rung

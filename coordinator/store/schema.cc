#include "coordinator/store/schema.h"

namespace rung {
namespace {

// Version 1. Times are INTEGER microseconds since the Unix epoch; JSON columns hold TEXT. SCHEMA.md
// documents every column; keep the two in step.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE sweeps (
  id          INTEGER PRIMARY KEY,
  name        TEXT    NOT NULL UNIQUE,
  spec_text   TEXT    NOT NULL,
  spec_hash   TEXT    NOT NULL,
  state       TEXT    NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'CANCELLED', 'FAILED', 'SUCCEEDED')),
  policy      TEXT    NOT NULL,
  baseline    TEXT    NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

CREATE TABLE workers (
  id            TEXT    PRIMARY KEY,
  host          TEXT    NOT NULL,
  cpus          INTEGER NOT NULL,
  gpus          INTEGER NOT NULL,
  registered_at INTEGER NOT NULL,
  last_seen_at  INTEGER NOT NULL
);

CREATE TABLE trials (
  id             INTEGER PRIMARY KEY,
  sweep_id       INTEGER NOT NULL REFERENCES sweeps(id),
  trial_index    INTEGER NOT NULL,
  identity       TEXT    NOT NULL,
  config_json    TEXT    NOT NULL,
  state          TEXT    NOT NULL CHECK (state IN ('PENDING', 'LEASED', 'RUNNING', 'SUCCEEDED', 'FAILED',
                                                   'PREEMPTED', 'STALE', 'CANCELLED')),
  attempt        INTEGER NOT NULL DEFAULT 0,
  rung           INTEGER NOT NULL,
  rung_label     TEXT    NOT NULL,
  variant        TEXT    NOT NULL,
  xi             REAL,
  seed           INTEGER NOT NULL,
  n_nonembedding INTEGER NOT NULL,
  n_total        INTEGER NOT NULL,
  tokens         INTEGER NOT NULL,
  flops          REAL    NOT NULL,
  cpus           INTEGER NOT NULL,
  gpus           INTEGER NOT NULL,
  priority       INTEGER NOT NULL,
  failures       INTEGER NOT NULL DEFAULT 0,
  assignments    TEXT    NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  UNIQUE (sweep_id, trial_index),
  UNIQUE (sweep_id, identity)
);
CREATE INDEX trials_by_sweep_state ON trials(sweep_id, state);
CREATE INDEX trials_by_state_priority ON trials(state, priority DESC, id);

CREATE TABLE attempts (
  trial_id         INTEGER NOT NULL REFERENCES trials(id),
  attempt          INTEGER NOT NULL,
  worker_id        TEXT    NOT NULL REFERENCES workers(id),
  state            TEXT    NOT NULL CHECK (state IN ('LEASED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'PREEMPTED',
                                                     'STALE', 'CANCELLED')),
  leased_at        INTEGER NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  checkpoint_dir   TEXT    NOT NULL,
  provenance       TEXT,
  started_at       INTEGER,
  ended_at         INTEGER,
  exit_reason      TEXT,
  report_digest    TEXT,
  PRIMARY KEY (trial_id, attempt)
);
CREATE INDEX attempts_by_state_lease ON attempts(state, lease_expires_at);

CREATE TABLE metrics (
  trial_id  INTEGER NOT NULL,
  attempt   INTEGER NOT NULL,
  step      INTEGER NOT NULL,
  name      TEXT    NOT NULL,
  value     REAL,
  tokens    INTEGER NOT NULL,
  flops     REAL    NOT NULL,
  wall_time REAL    NOT NULL,
  PRIMARY KEY (trial_id, name, step, attempt),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt)
) WITHOUT ROWID;

CREATE TABLE summaries (
  trial_id INTEGER NOT NULL REFERENCES trials(id),
  name     TEXT    NOT NULL,
  value    REAL,
  step     INTEGER,
  attempt  INTEGER NOT NULL,
  PRIMARY KEY (trial_id, name)
) WITHOUT ROWID;

CREATE TABLE learned_params (
  trial_id INTEGER NOT NULL,
  attempt  INTEGER NOT NULL,
  step     INTEGER NOT NULL,
  name     TEXT    NOT NULL,
  layer    INTEGER NOT NULL,
  head     INTEGER NOT NULL,
  idx      INTEGER NOT NULL,
  value    REAL,
  PRIMARY KEY (trial_id, attempt, step, name, layer, head, idx),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt)
) WITHOUT ROWID;

CREATE TABLE diagnostics (
  trial_id INTEGER NOT NULL,
  attempt  INTEGER NOT NULL,
  name     TEXT    NOT NULL,
  json     TEXT    NOT NULL,
  PRIMARY KEY (trial_id, attempt, name),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt)
) WITHOUT ROWID;

CREATE TABLE fits (
  id         INTEGER PRIMARY KEY,
  sweep_id   INTEGER NOT NULL REFERENCES sweeps(id),
  method     TEXT    NOT NULL,
  inputs     TEXT    NOT NULL,
  result     TEXT    NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX fits_by_sweep ON fits(sweep_id, id);

CREATE TABLE events (
  id         INTEGER PRIMARY KEY,
  at         INTEGER NOT NULL,
  sweep_id   INTEGER REFERENCES sweeps(id),
  trial_id   INTEGER REFERENCES trials(id),
  attempt    INTEGER,
  kind       TEXT    NOT NULL,
  from_state TEXT,
  to_state   TEXT,
  actor      TEXT    NOT NULL,
  reason     TEXT    NOT NULL
);
CREATE INDEX events_by_sweep ON events(sweep_id, id);
CREATE INDEX events_by_trial ON events(trial_id, id);

CREATE TABLE tags (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id),
  key      TEXT    NOT NULL,
  value    TEXT    NOT NULL,
  PRIMARY KEY (sweep_id, key)
) WITHOUT ROWID;
)sql";

// Version 2: what the gRPC services show and check. Sweeps keep the spec's file name, description
// and metric; attempts count their committed metric batches (ReportMetrics sequence numbers);
// learned parameters keep their tensor's shape; workers keep what they said about themselves; logs
// hold every line an attempt's worker relayed.
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE sweeps ADD COLUMN spec_file_name TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN description    TEXT NOT NULL DEFAULT '';
ALTER TABLE sweeps ADD COLUMN metric_name    TEXT NOT NULL DEFAULT 'val_loss';
ALTER TABLE sweeps ADD COLUMN metric_goal    TEXT NOT NULL DEFAULT 'minimize';

ALTER TABLE attempts ADD COLUMN batches INTEGER NOT NULL DEFAULT 0;

ALTER TABLE learned_params ADD COLUMN shape TEXT;

ALTER TABLE workers ADD COLUMN details TEXT NOT NULL DEFAULT '{}';

CREATE TABLE logs (
  trial_id INTEGER NOT NULL,
  attempt  INTEGER NOT NULL,
  batch    INTEGER NOT NULL,
  line     INTEGER NOT NULL,
  source   TEXT    NOT NULL CHECK (source IN ('record', 'stderr')),
  at       INTEGER NOT NULL,
  text     TEXT    NOT NULL,
  PRIMARY KEY (trial_id, attempt, batch, line),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt)
) WITHOUT ROWID;
)sql";

// Version 3: every compute-multiplier fit the coordinator computed (UserService.Fit), with its inputs:
// the ladder points it used (one per finished trial), the baseline, the estimator options, and the
// report. Supersedes the v1 `fits` table, which nothing ever wrote (kept so no file loses rows).
constexpr char kSchemaV3[] = R"sql(
CREATE TABLE sweep_fits (
  id           INTEGER PRIMARY KEY,
  sweep_id     INTEGER NOT NULL REFERENCES sweeps(id),
  created_at   INTEGER NOT NULL,
  actor        TEXT    NOT NULL,
  metric       TEXT    NOT NULL,
  baseline     TEXT    NOT NULL,
  variant_keys TEXT    NOT NULL,
  options      TEXT    NOT NULL,
  points       TEXT    NOT NULL,
  result       TEXT    NOT NULL,
  result_text  TEXT    NOT NULL
);
CREATE INDEX sweep_fits_by_sweep ON sweep_fits(sweep_id, id);
)sql";

// Version 4: data-parallel gangs across workers (gang_leases.h). A trial whose ranks fit no single
// worker is reserved rank by rank as fitting workers poll (gang_reservations, released when the gang
// does not fill in time); once full, one attempt is leased to all of them, one attempt_ranks row per
// rank with its worker, its own lease expiry and the rendezvous address.
constexpr char kSchemaV4[] = R"sql(
CREATE TABLE gang_reservations (
  trial_id    INTEGER NOT NULL REFERENCES trials(id),
  worker_id   TEXT    NOT NULL REFERENCES workers(id),
  reserved_at INTEGER NOT NULL,
  polled_at   INTEGER NOT NULL,
  PRIMARY KEY (trial_id, worker_id)
);
CREATE INDEX gang_reservations_by_worker ON gang_reservations(worker_id);

CREATE TABLE attempt_ranks (
  trial_id         INTEGER NOT NULL,
  attempt          INTEGER NOT NULL,
  rank             INTEGER NOT NULL,
  worker_id        TEXT    NOT NULL REFERENCES workers(id),
  rendezvous       TEXT    NOT NULL,
  lease_expires_at INTEGER NOT NULL,
  delivered_at     INTEGER,
  ended_at         INTEGER,
  PRIMARY KEY (trial_id, attempt, rank),
  UNIQUE (trial_id, attempt, worker_id),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt)
);
CREATE INDEX attempt_ranks_by_worker ON attempt_ranks(worker_id, delivered_at);
)sql";

// Version 5: the record contract (core/records/trainer_records.h). Trials keep their run's steps and
// world size as columns (what leases and views read, instead of digging in config_json); a
// diagnostic is keyed by where it was measured (step, layer, head) as well as its name, so a trial
// keeps one per training milestone. Existing diagnostics take the step their document names.
constexpr char kSchemaV5[] = R"sql(
ALTER TABLE trials ADD COLUMN steps      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE trials ADD COLUMN world_size INTEGER NOT NULL DEFAULT 1;
UPDATE trials SET
  steps      = COALESCE(CAST(json_extract(config_json, '$.train.steps') AS INTEGER), 0),
  world_size = MAX(1, COALESCE(CAST(json_extract(config_json, '$.resources.world_size') AS INTEGER), 1));

CREATE TABLE diagnostics_v5 (
  trial_id INTEGER NOT NULL,
  attempt  INTEGER NOT NULL,
  name     TEXT    NOT NULL,
  step     INTEGER NOT NULL,
  layer    INTEGER NOT NULL,
  head     INTEGER NOT NULL,
  json     TEXT    NOT NULL,
  PRIMARY KEY (trial_id, attempt, name, step, layer, head),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt)
) WITHOUT ROWID;
INSERT INTO diagnostics_v5(trial_id, attempt, name, step, layer, head, json)
  SELECT trial_id, attempt, name,
         CASE WHEN json_valid(json) THEN COALESCE(CAST(json_extract(json, '$.step') AS INTEGER), 0) ELSE 0 END,
         -1, -1, json
  FROM diagnostics;
DROP TABLE diagnostics;
ALTER TABLE diagnostics_v5 RENAME TO diagnostics;
)sql";

// Version 6: worker quarantine (coordinator/domain/worker_quarantine.h). Every attempt ending a worker
// reported, in the order reported, with its exit code and whether the quarantine rule lays it at the
// worker's door; a worker quarantined for a run of such failures keeps when and why until a release
// or its restart.
constexpr char kSchemaV6[] = R"sql(
CREATE TABLE worker_endings (
  id           INTEGER PRIMARY KEY,
  worker_id    TEXT    NOT NULL REFERENCES workers(id),
  trial_id     INTEGER NOT NULL,
  attempt      INTEGER NOT NULL,
  ended_at     INTEGER NOT NULL,
  outcome      TEXT    NOT NULL CHECK (outcome IN ('SUCCEEDED', 'FAILED', 'PREEMPTED')),
  exit_code    INTEGER NOT NULL,
  worker_fault INTEGER NOT NULL CHECK (worker_fault IN (0, 1)),
  refunded     INTEGER NOT NULL DEFAULT 0 CHECK (refunded IN (0, 1)),
  FOREIGN KEY (trial_id, attempt) REFERENCES attempts(trial_id, attempt)
);
CREATE INDEX worker_endings_by_worker ON worker_endings(worker_id, id);
CREATE INDEX worker_endings_by_attempt ON worker_endings(trial_id, attempt);

ALTER TABLE workers ADD COLUMN quarantined_at    INTEGER;
ALTER TABLE workers ADD COLUMN quarantine_reason TEXT NOT NULL DEFAULT '';
)sql";

// Version 7: learning-rate search and early stopping (coordinator/domain/sweep_tuner.h). A sweep
// keeps the state of its search; trials and attempts can end EARLY_STOPPED.
constexpr char kSchemaV7[] = R"sql(
ALTER TABLE sweeps ADD COLUMN tuning TEXT NOT NULL DEFAULT '';
)sql";

// Version 7's second half: EARLY_STOPPED joins the states the CHECK constraints of trials and
// attempts allow. Widening a CHECK changes nothing stored, so, as SQLite documents for such changes
// ("Making Other Kinds Of Table Schema Changes"), the tables' SQL text is edited in place and the
// schema version bumped, instead of copying both tables (attempts is referenced by every metric).
Status AllowEarlyStopped(Database& db) {
  RUNG_ASSIGN_OR_RETURN(int64_t schema_version, db.QueryInt64("PRAGMA schema_version"));
  RUNG_RETURN_IF_ERROR(db.Execute("PRAGMA writable_schema = ON"));
  Status edited = db.Execute(
      "UPDATE sqlite_schema SET sql = replace(sql, '''CANCELLED'')', '''CANCELLED'', ''EARLY_STOPPED'')') "
      "WHERE type = 'table' AND name IN ('trials', 'attempts') AND sql NOT LIKE '%EARLY_STOPPED%'");
  if (edited.ok()) edited = db.Execute("PRAGMA schema_version = " + std::to_string(schema_version + 1));
  const Status reset = db.Execute("PRAGMA writable_schema = OFF");
  RUNG_RETURN_IF_ERROR(edited);
  RUNG_RETURN_IF_ERROR(reset);
  RUNG_ASSIGN_OR_RETURN(int64_t widened,
                        db.QueryInt64("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND "
                                      "name IN ('trials', 'attempts') AND sql LIKE '%''EARLY_STOPPED''%'"));
  if (widened != 2) return Status::Internal("could not add EARLY_STOPPED to the state checks of trials and attempts");
  return Status::Ok();
}

// Version 8: why a trial was stopped early, as a value (EarlyStop) instead of the prefix of its state
// reason. Trials stopped before it take theirs from the reason of their newest state change, the one
// place it was written: "asha: ...", "non_finite: ...", or else the divergence rule.
constexpr char kSchemaV8[] = R"sql(
ALTER TABLE trials ADD COLUMN early_stop TEXT
  CHECK (early_stop IS NULL OR early_stop IN ('asha', 'divergence', 'non_finite'));
UPDATE trials SET early_stop = (
  SELECT CASE WHEN reason LIKE 'asha: %' THEN 'asha'
              WHEN reason LIKE 'non_finite: %' THEN 'non_finite'
              ELSE 'divergence' END  -- no reason at all falls here too
  FROM (SELECT (SELECT reason FROM events WHERE events.trial_id = trials.id
                  AND events.kind IN ('trial_state', 'trial_waiting') ORDER BY events.id DESC LIMIT 1) AS reason))
WHERE state = 'EARLY_STOPPED';
)sql";

// Version 9: a sweep's precision aim (coordinator/domain/sweep_tuner.h): "" without one, "aiming"
// while it may add seeds, then how it closed.
constexpr char kSchemaV9[] = R"sql(
ALTER TABLE sweeps ADD COLUMN precision TEXT NOT NULL DEFAULT '';
)sql";

// Version 10: when a worker stops by itself (its allocation's end less the margin it keeps to
// checkpoint), as it registered it; NULL: no end is known. The lease broker leases such a worker
// only trials whose next checkpoint it can reach before then (coordinator/domain/allocation_fit.h).
constexpr char kSchemaV10[] = R"sql(
ALTER TABLE workers ADD COLUMN stops_at INTEGER;
)sql";

}  // namespace

const std::vector<SchemaMigration>& SchemaMigrations() {
  static const std::vector<SchemaMigration> migrations = {
      {1, "sweeps, trials, attempts, workers, metrics, summaries, learned parameters, diagnostics, fits, events, tags",
       kSchemaV1},
      {2,
       "sweeps' file name, description and metric; attempts' batch count; learned parameters' shape; "
       "workers' details; logs",
       kSchemaV2},
      {3, "sweep_fits: compute-multiplier fits with their inputs", kSchemaV3},
      {4, "gang_reservations, attempt_ranks: data-parallel trials leased to several workers", kSchemaV4},
      {5, "trials' steps and world size; diagnostics keyed by step, layer and head", kSchemaV5},
      {6, "worker_endings, workers' quarantine: a worker whose attempts keep failing stops leasing", kSchemaV6},
      {7, "sweeps' tuning state; trials and attempts may end EARLY_STOPPED", kSchemaV7, AllowEarlyStopped},
      {8, "trials' early_stop: why the coordinator stopped a trial early", kSchemaV8},
      {9, "sweeps' precision: the state of a precision-aimed sweep", kSchemaV9},
      {10, "workers' stops_at: when a worker stops by itself (its allocation's end)", kSchemaV10},
  };
  return migrations;
}

int64_t LatestSchemaVersion() { return SchemaMigrations().back().version; }

Status MigrateSchema(Database& db) { return MigrateSchema(db, SchemaMigrations()); }

Status MigrateSchema(Database& db, const std::vector<SchemaMigration>& migrations) {
  const int64_t latest = migrations.empty() ? 0 : migrations.back().version;
  while (true) {
    // The version is read inside the transaction that applies the next step, so two processes
    // opening the same fresh file cannot both apply it.
    RUNG_ASSIGN_OR_RETURN(Transaction transaction, Transaction::Begin(db, TransactionMode::kImmediate));
    RUNG_ASSIGN_OR_RETURN(int64_t version, db.UserVersion());
    if (version < 0) {
      return Status::DataLoss("database " + db.path() + " has schema version " + std::to_string(version) +
                              ": not a rung database");
    }
    if (version > latest) {
      return Status::FailedPrecondition("database " + db.path() + " has schema version " + std::to_string(version) +
                                        ", newer than this build's " + std::to_string(latest) +
                                        ": open it with a newer rung");
    }
    if (version == latest) return transaction.Commit();
    const SchemaMigration& next = migrations[version];  // versions are 1..N: migration k has index k-1
    if (next.version != version + 1) {
      return Status::Internal("schema migrations out of order: expected version " + std::to_string(version + 1) +
                              ", found " + std::to_string(next.version));
    }
    Status applied = db.Execute(next.sql);
    if (!applied.ok()) {
      return Status(applied.code(), "schema migration to version " + std::to_string(next.version) + " (" +
                                        next.description + ") failed: " + applied.message());
    }
    if (next.code) {
      applied = next.code(db);
      if (!applied.ok()) {
        return Status(applied.code(), "schema migration to version " + std::to_string(next.version) + " (" +
                                          next.description + ") failed: " + applied.message());
      }
    }
    RUNG_RETURN_IF_ERROR(db.Execute("PRAGMA user_version = " + std::to_string(next.version)));
    RUNG_RETURN_IF_ERROR(transaction.Commit());
  }
}

}  // namespace rung

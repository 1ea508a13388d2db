// coordinator/store/store_types.h
//
// The values the coordinator's store reads and writes: sweep and trial states, and one record type
// per table (SCHEMA.md documents the tables). Plain values; the managers (sweep_manager.h,
// trial_lifecycle.h, metric_store.h, worker_registry.h, event_log.h) fill and consume them.
//
// Trial lifecycle (docs/design.md):
//   PENDING -> LEASED -> RUNNING -> SUCCEEDED | FAILED | PREEMPTED | STALE | CANCELLED | EARLY_STOPPED
// PREEMPTED and STALE are passed through on the way back to PENDING (each recorded as an event and
// kept as the attempt's state); FAILED is passed through the same way while retries remain.
// SUCCEEDED, FAILED (for good) and CANCELLED are terminal until a user retries or resubmits;
// EARLY_STOPPED (the coordinator stopped it: early_stop_spec.h, or a non-finite loss in a tuned
// sweep) is terminal for good: never retried, never a failure.
//
// Thread safety: values, no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/store/clock.h"
#include "core/common/status.h"
#include "sweeps/spec/sweep_spec.h"

namespace rung {

enum class SweepState { kActive, kPaused, kCancelled, kFailed, kSucceeded };

// Trial states; an attempt's state is one of them too (never PENDING).
enum class TrialState {
  kPending,
  kLeased,
  kRunning,
  kSucceeded,
  kFailed,
  kPreempted,
  kStale,
  kCancelled,
  kEarlyStopped,
};

// Why the coordinator stopped a trial early (TrialState::kEarlyStopped; the spec's early_stop block,
// or a tuned sweep's non-finite loss).
enum class EarlyStop {
  kAsha,        // successive halving ranked it out at a rung of training
  kDivergence,  // its evaluation rose past the divergence factor
  kNonFinite,   // its loss was not finite in a tuned sweep (a result about the value tried)
};

// The names stored in the database ("ACTIVE", "PENDING", ...; "asha", "divergence", "non_finite").
const char* SweepStateName(SweepState state);
const char* TrialStateName(TrialState state);
const char* EarlyStopName(EarlyStop why);
// INVALID_ARGUMENT for a name that is not a state.
StatusOr<SweepState> ParseSweepState(std::string_view name);
StatusOr<TrialState> ParseTrialState(std::string_view name);
StatusOr<EarlyStop> ParseEarlyStop(std::string_view name);

// LEASED or RUNNING: an attempt holds a lease.
inline bool IsLive(TrialState state) { return state == TrialState::kLeased || state == TrialState::kRunning; }
// SUCCEEDED, FAILED, CANCELLED or EARLY_STOPPED: nothing will run until a user retries or resubmits.
inline bool IsTerminal(TrialState state) {
  return state == TrialState::kSucceeded || state == TrialState::kFailed || state == TrialState::kCancelled ||
         state == TrialState::kEarlyStopped;
}

// ------------------------------------------------------------------------------------------ sweeps

struct SweepRecord {
  int64_t id = 0;
  std::string name;
  std::string spec_text;
  std::string spec_hash;
  std::string spec_file_name;  // the file name given at submission (diagnostics name it)
  std::string description;     // the spec's description
  MetricSpec metric;           // the spec's metric: what results tables and fits read
  SweepState state = SweepState::kActive;
  PolicyConfig policy;
  nlohmann::json baseline = nlohmann::json::object();
  Timestamp created_at;
  Timestamp updated_at;
  // The spec's search (sweep_tuner.h): "" without a tune block, "searching" while the search may
  // add trials (the sweep cannot finish), "complete" once every tuning cell is closed.
  std::string tuning;
  // The spec's precision aim (sweep_tuner.h, sweeps/fit/precision_aim.h): "" without a precision
  // block, "aiming" while it may add seeds (the sweep cannot finish), then how it closed: "met",
  // "budget" or "no_fit".
  std::string precision;
};

// One cell of a sweep as the expansion produced it (trial_cells.h builds these from an
// ExpandedSweep): what to train and the numbers the results tables group by.
struct TrialCell {
  std::string identity;  // hex SHA-256 of everything that changes the result (trial_identity.h)
  nlohmann::json config = nlohmann::json::object();  // the resolved trial config rung-train reads
  int64_t rung = 0;
  std::string rung_label;
  std::string variant;        // position.variant
  std::optional<double> xi;   // inverse_temperature.xi where the form reads it
  int64_t seed = 0;
  int64_t n_nonembedding = 0;
  int64_t n_total = 0;
  int64_t tokens = 0;         // training tokens D
  double flops = 0;           // 6 N_nonembedding D
  int64_t cpus = 1;           // what a worker must have free to lease it
  int64_t gpus = 0;
  int64_t steps = 0;          // optimizer steps of the run (train.steps)
  int64_t world_size = 1;     // data-parallel ranks (resources.world_size)
  nlohmann::json assignments = nlohmann::json::object();  // axis key -> this cell's value
};

// A spec submitted to run (SweepManager::Submit).
struct SweepSubmission {
  std::string name;  // letters, digits, '-', '_', '.'; names the checkpoint folder too
  std::string spec_text;
  std::string spec_hash;
  std::string spec_file_name;
  std::string description;
  MetricSpec metric;
  PolicyConfig policy;
  nlohmann::json baseline = nlohmann::json::object();
  std::string tuning;  // SweepRecord::tuning
  // With a search: the key it tunes. A resubmission keeps every trial of the sweep whose assignments
  // hold it (the search added them) even when `trials` does not list it.
  std::string tuned_key;
  // SweepRecord::precision ("aiming" with a precision block). A resubmission keeps every trial of the
  // sweep whose cell but its seed is still submitted: the seeds the aim added.
  std::string precision;
  std::vector<TrialCell> trials;
};

// ------------------------------------------------------------------------------------------ trials

struct TrialRecord {
  int64_t id = 0;
  int64_t sweep_id = 0;
  int64_t trial_index = 0;  // stable per sweep: 0, 1, ... in order of first submission
  TrialState state = TrialState::kPending;
  int64_t attempt = 0;      // the newest attempt; 0 before the first lease
  int64_t priority = 0;
  int64_t failures = 0;     // FAILED attempts since the trial was last (re)queued by a user
  std::optional<EarlyStop> early_stop;  // why it was stopped early; set with kEarlyStopped only
  Timestamp created_at;
  Timestamp updated_at;
  TrialCell cell;
};

// What a submission did, by trial identity.
struct SubmitResult {
  int64_t sweep_id = 0;
  bool created = false;                       // false: a sweep of that name existed (resubmission)
  std::vector<std::string> added;             // new cells, PENDING
  std::vector<std::string> skipped_succeeded; // already SUCCEEDED: not rerun
  std::vector<std::string> requeued;          // were FAILED or CANCELLED: PENDING again
  std::vector<std::string> unchanged;         // still PENDING, LEASED or RUNNING from before
  std::vector<std::string> removed;           // in the sweep, not in this spec (unfinished ones CANCELLED)
  std::vector<std::string> duplicates;        // given more than once in this submission: stored once
  // identity -> trial id, for every cell of the submission (in a preview, ids of new trials are
  // those they would get).
  std::map<std::string, int64_t> trial_ids;
  // The trials behind `removed`, as they were before the submission (configs, for what changed).
  std::vector<TrialRecord> removed_trials;
};

struct AttemptRecord {
  int64_t trial_id = 0;
  int64_t attempt = 0;
  std::string worker_id;
  TrialState state = TrialState::kLeased;
  Timestamp leased_at;
  Timestamp lease_expires_at;
  std::string checkpoint_dir;
  std::string provenance_json;  // the trainer's provenance record as stored; "" until the worker reported it
  std::optional<Timestamp> started_at;
  std::optional<Timestamp> ended_at;
  std::string exit_reason;
  int64_t batches = 0;  // metric batches committed: 1..batches (ReportBatch)
};

// An earlier attempt of a leased trial, whose checkpoints the new attempt may resume from.
struct PreviousAttempt {
  int64_t attempt = 0;
  TrialState state = TrialState::kStale;
  std::string checkpoint_dir;
};

// What a worker gets with a lease.
struct Lease {
  int64_t trial_id = 0;
  int64_t sweep_id = 0;
  std::string sweep_name;
  int64_t trial_index = 0;
  int64_t attempt = 0;
  std::string config_json;  // the resolved trial config, as stored
  std::string checkpoint_dir;  // <artifact_root>/<sweep name>/<trial_index>/attempt-<attempt>
  // Earlier attempts, newest first: resume from the first whose folder holds a checkpoint.
  std::vector<PreviousAttempt> resume_from;
  Timestamp lease_expires_at;
  int64_t cpus = 0;  // what the trial takes of the worker's resources (a gang rank: one rank's)
  int64_t gpus = 0;
  int64_t total_steps = 0;  // optimizer steps of the run (train.steps)
  int64_t world_size = 1;   // the trial's data-parallel ranks
  // A gang lease (a data-parallel trial leased to several workers, gang_leases.h): this worker's
  // rank and rank 0's rendezvous "host:port". An empty rendezvous for an ordinary lease (the worker
  // runs every rank itself).
  int64_t rank = 0;
  std::string rendezvous;
};

struct HeartbeatReply {
  Timestamp lease_expires_at;
  bool cancel = false;  // the trial was cancelled or stopped early: stop the trainer, report nothing more
  std::string reason;   // for cancel: who cancelled or stopped it, and why
};

struct AttemptKey {
  int64_t trial_id = 0;
  int64_t attempt = 0;
  bool operator==(const AttemptKey& other) const { return trial_id == other.trial_id && attempt == other.attempt; }
};

// ------------------------------------------------------------------------------------- results

// One metric value of one step. A non-finite value is stored as SQL NULL and read back as NaN.
struct MetricPoint {
  int64_t step = 0;
  std::string name;
  double value = 0;
  int64_t tokens = 0;     // training tokens seen up to this step
  double flops = 0;       // 6 N D up to this step
  double wall_time = 0;   // seconds of training up to this step, as the worker measured them
  // A value an earlier attempt's trainer printed, printed again by an attempt that resumed from its
  // checkpoint: stored only where no attempt of the trial has a value of `name` at `step`.
  bool replayed = false;
  // Measured on the validation data at an evaluation step (val_loss, ...), not during training. Said
  // by the trainer's step record (records::ForEachStepMetric); not stored: a batch's points carry it.
  bool evaluation = false;
};

// A point of a trial's curve and the attempt it was taken from.
struct CurvePoint {
  MetricPoint point;
  int64_t attempt = 0;
};

// A final or best value of a trial (val_loss, best_val_loss, tokens_per_sec, ...).
struct SummaryValue {
  std::string name;
  double value = 0;
  std::optional<int64_t> step;
};

// One element of a learned positional parameter; layer and head are -1 where they do not apply.
// trainer_records.h maps whole tensors to elements and back.
struct LearnedParamValue {
  int64_t step = 0;
  std::string name;
  int64_t layer = -1;
  int64_t head = -1;
  int64_t index = 0;
  double value = 0;
  // The shape of the tensor the element belongs to; nullopt where it was not recorded.
  std::optional<std::vector<int64_t>> shape;
};

// A diagnostic document, keyed by its name and where it was measured (several per trial and name:
// one per training milestone).
struct Diagnostic {
  std::string name;
  nlohmann::json value;
  int64_t step = 0;
  int64_t layer = -1;  // -1: not about one layer
  int64_t head = -1;   // -1: not about one head
};

// What a trainer's final and diagnostics records report (record_rows.h), carried by the metric
// batch that holds them.
struct TrialResults {
  std::vector<SummaryValue> summaries;
  std::vector<LearnedParamValue> learned_params;
  std::vector<Diagnostic> diagnostics;
  bool empty() const { return summaries.empty() && learned_params.empty() && diagnostics.empty(); }
};

// Where a line of an attempt's output came from.
enum class LogSource { kRecord, kStderr };
const char* LogSourceName(LogSource source);  // "record", "stderr"

// One line of an attempt's output as its worker relayed it.
struct LogLine {
  LogSource source = LogSource::kRecord;
  std::string text;  // without the newline
};

// A stored line: LogLine with where it sits.
struct StoredLogLine {
  int64_t attempt = 0;
  int64_t batch = 0;  // the metric batch that carried it
  int64_t line = 0;   // its position in the batch
  Timestamp at;       // when the batch was committed
  LogLine log;
};

// One batch of a live attempt's output (TrialLifecycle::ReportBatch).
struct MetricBatch {
  std::string worker_id;              // the reporting worker: must hold the attempt ("" = not checked)
  int64_t trial_id = 0;
  int64_t attempt = 0;
  int64_t sequence = 0;               // 1, 2, ... per attempt
  std::vector<MetricPoint> points;
  std::string provenance_json;        // the trainer's provenance record (valid JSON text), or ""
  TrialResults results;               // from its final and diagnostics records, if any
  std::vector<LogLine> lines;         // every line, verbatim
};

struct BatchAck {
  int64_t acknowledged_sequence = 0;  // every batch up to this one is committed
  bool duplicate = false;             // this batch had been committed before
};

// How an attempt ended, as its worker reported it (TrialLifecycle::EndAttempt).
struct AttemptEnding {
  std::string worker_id;                         // the reporting worker: must hold the attempt ("" = not checked)
  TrialState outcome = TrialState::kSucceeded;  // kSucceeded, kFailed or kPreempted
  std::string reason;                            // for kFailed and kPreempted
  int64_t last_batch_sequence = 0;               // batches 1..this must be committed first
  int exit_code = 0;                             // the trainer's (-signal when killed, 127: could not start)
};

struct EndingAck {
  TrialState trial_state = TrialState::kSucceeded;  // after the report (PENDING when it will retry)
  bool duplicate = false;                           // the same report had been applied before
};

// -------------------------------------------------------------------------------- workers, events

struct WorkerInfo {
  std::string id;
  std::string host;
  int64_t cpus = 0;
  int64_t gpus = 0;
  // What else the worker said about itself (name, labels, GPU devices, build commit, pid): shown,
  // never interpreted by the store.
  nlohmann::json details = nlohmann::json::object();
  // When the worker stops by itself (its allocation's end less the margin it keeps to checkpoint),
  // as its latest registration said; nullopt: no end is known. Leases follow it
  // (coordinator/domain/allocation_fit.h).
  std::optional<Timestamp> stops_at;
};

struct WorkerRecord {
  WorkerInfo info;
  Timestamp registered_at;
  Timestamp last_seen_at;
  std::optional<Timestamp> quarantined_at;  // set: it leases nothing (worker_quarantine.h)
  std::string quarantine_reason;            // why, while quarantined
  std::vector<int64_t> live_trial_ids;  // trials it holds leases of (WorkerRegistry fills it)
};

// An attempt ending one worker reported (the worker_endings table; worker_quarantine.h).
struct WorkerEnding {
  int64_t id = 0;  // the order of reporting (assigned on insert)
  std::string worker_id;
  int64_t trial_id = 0;
  int64_t attempt = 0;
  Timestamp ended_at;
  TrialState outcome = TrialState::kSucceeded;  // kSucceeded, kFailed or kPreempted
  int exit_code = 0;
  bool worker_fault = false;  // the quarantine rule counts it against the worker
  bool refunded = false;      // a quarantine took it off its trial's failures
};

// ------------------------------------------------------------------------------------- overviews

// A sweep with what the user API shows about it (overviews.h).
struct SweepOverview {
  SweepRecord sweep;
  std::map<TrialState, int64_t> counts;  // states with no trial are left out
  int64_t total_trials = 0;
  double total_flops = 0;     // sum of 6 N D over its trials
  double finished_flops = 0;  // the same over SUCCEEDED trials
  std::string state_reason;   // the reason of its newest state change (or submission)
  std::optional<Timestamp> finished_at;  // when it became SUCCEEDED, FAILED or CANCELLED
};

// A trial with what the user API shows about it (overviews.h).
struct TrialOverview {
  TrialRecord trial;
  std::optional<AttemptRecord> attempt;    // the newest attempt, if leased ever
  std::string state_reason;                // the reason of its newest state change
  std::optional<int64_t> latest_step;      // newest step of train_loss or the sweep's metric
  std::optional<double> latest_metric;     // newest value of the sweep's metric
  std::optional<double> final_metric;      // the sweep's metric among its summaries
  std::optional<Timestamp> first_leased_at;
  std::optional<Timestamp> finished_at;    // when it became SUCCEEDED, FAILED or CANCELLED
};

struct EventRecord {
  int64_t id = 0;
  Timestamp at;
  std::optional<int64_t> sweep_id;
  std::optional<int64_t> trial_id;
  std::optional<int64_t> attempt;
  std::string kind;        // event_log.h lists the kinds
  std::string from_state;  // empty where no state changed
  std::string to_state;
  std::string actor;       // "user:<name>", "worker:<id>", "coordinator"
  std::string reason;
};

}  // namespace rung

// coordinator/store/store_types.h
//
// The values the coordinator's store reads and writes: sweep and trial states, and one record type
// per table (SCHEMA.md documents the tables). Plain values; the managers (sweep_manager.h,
// trial_lifecycle.h, metric_store.h, worker_registry.h, event_log.h) fill and consume them.
//
// Trial lifecycle (design.md):
//   PENDING -> LEASED -> RUNNING -> SUCCEEDED | FAILED | PREEMPTED | STALE | CANCELLED
// PREEMPTED and STALE are passed through on the way back to PENDING (each recorded as an event and
// kept as the attempt's state); FAILED is passed through the same way while retries remain.
// SUCCEEDED, FAILED (for good) and CANCELLED are terminal until a user retries or resubmits.
//
// Thread safety: values, no shared state.
#pragma once

#include <cstdint>
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
enum class TrialState { kPending, kLeased, kRunning, kSucceeded, kFailed, kPreempted, kStale, kCancelled };

// The names stored in the database ("ACTIVE", "PENDING", ...).
const char* SweepStateName(SweepState state);
const char* TrialStateName(TrialState state);
// INVALID_ARGUMENT for a name that is not a state.
StatusOr<SweepState> ParseSweepState(std::string_view name);
StatusOr<TrialState> ParseTrialState(std::string_view name);

// LEASED or RUNNING: an attempt holds a lease.
inline bool IsLive(TrialState state) { return state == TrialState::kLeased || state == TrialState::kRunning; }
// SUCCEEDED, FAILED or CANCELLED: nothing will run until a user retries or resubmits.
inline bool IsTerminal(TrialState state) {
  return state == TrialState::kSucceeded || state == TrialState::kFailed || state == TrialState::kCancelled;
}

// ------------------------------------------------------------------------------------------ sweeps

struct SweepRecord {
  int64_t id = 0;
  std::string name;
  std::string spec_text;
  std::string spec_hash;
  SweepState state = SweepState::kActive;
  PolicyConfig policy;
  nlohmann::json baseline = nlohmann::json::object();
  Timestamp created_at;
  Timestamp updated_at;
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
  nlohmann::json assignments = nlohmann::json::object();  // axis key -> this cell's value
};

// A spec submitted to run (SweepManager::Submit).
struct SweepSubmission {
  std::string name;  // letters, digits, '-', '_', '.'; names the checkpoint folder too
  std::string spec_text;
  std::string spec_hash;
  PolicyConfig policy;
  nlohmann::json baseline = nlohmann::json::object();
  std::vector<TrialCell> trials;
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
  Timestamp created_at;
  Timestamp updated_at;
  TrialCell cell;
};

struct AttemptRecord {
  int64_t trial_id = 0;
  int64_t attempt = 0;
  std::string worker_id;
  TrialState state = TrialState::kLeased;
  Timestamp leased_at;
  Timestamp lease_expires_at;
  std::string checkpoint_dir;
  nlohmann::json provenance;  // null until the worker reported it
  std::optional<Timestamp> started_at;
  std::optional<Timestamp> ended_at;
  std::string exit_reason;
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
  nlohmann::json config;
  std::string checkpoint_dir;  // <artifact_root>/<sweep name>/<trial_index>/attempt-<attempt>
  // Earlier attempts, newest first: resume from the first whose folder holds a checkpoint.
  std::vector<PreviousAttempt> resume_from;
  Timestamp lease_expires_at;
};

struct HeartbeatReply {
  Timestamp lease_expires_at;
  bool cancel = false;  // the trial was cancelled: stop the trainer, report nothing more
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
struct LearnedParamValue {
  int64_t step = 0;
  std::string name;
  int64_t layer = -1;
  int64_t head = -1;
  int64_t index = 0;
  double value = 0;
};

struct Diagnostic {
  std::string name;
  nlohmann::json value;
};

// What a successful attempt reports with its completion.
struct TrialResults {
  std::vector<SummaryValue> summaries;
  std::vector<LearnedParamValue> learned_params;
  std::vector<Diagnostic> diagnostics;
};

// -------------------------------------------------------------------------------- workers, events

struct WorkerInfo {
  std::string id;
  std::string host;
  int64_t cpus = 0;
  int64_t gpus = 0;
};

struct WorkerRecord {
  WorkerInfo info;
  Timestamp registered_at;
  Timestamp last_seen_at;
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

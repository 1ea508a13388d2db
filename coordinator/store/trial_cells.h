// coordinator/store/trial_cells.h
//
// The bridge from a spec's expansion (sweeps/spec/expansion.h) to what the store submits: one
// TrialCell per expanded trial, and the SweepSubmission of a whole expanded spec.
//
// Resources: a cell needs resources.cpus x world_size CPU slots and resources.gpus x world_size GPUs
// on one worker (both are per process; a data-parallel trial runs world_size processes).
// xi is recorded only for the inverse-temperature forms that read it (log_power, qwen).
//
// Example:
//   StatusOr<ExpandedSweep> expanded = ExpandSweepSpecText(text, path);
//   if (!expanded.ok()) return expanded.status();
//   StatusOr<SubmitResult> result = sweeps.Submit(MakeSubmission(*expanded, text), "user:ada");
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "coordinator/store/store_types.h"
#include "sweeps/spec/expansion.h"

namespace rung {

TrialCell MakeTrialCell(const ExpandedTrial& trial);

// Name, description, metric, policy and baseline from the spec (and, with a tune block, the search
// open: tuning "searching", tuned_key its key); spec_hash is the SHA-256 of
// `spec_text`; `spec_file_name` is the name the spec was submitted under.
SweepSubmission MakeSubmission(const ExpandedSweep& expanded, const std::string& spec_text,
                               const std::string& spec_file_name = "");
// The same, taking each trial's config and assignments instead of copying them (a 10,000-trial
// spec's JSON trees are most of a submission's cost): `expanded`'s config_json and assignments are
// left moved from (null); the cells hold them, in the same order as expanded.trials.
SweepSubmission MakeSubmission(ExpandedSweep&& expanded, const std::string& spec_text,
                               const std::string& spec_file_name = "");

}  // namespace rung

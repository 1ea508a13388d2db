// coordinator/server/source_trials.h
//
// Runs that start from another trial's checkpoint (context extension with the backbone
// frozen, learned frequencies frozen into a fresh run). A spec names the source trial in
// `train.init.from_trial` (a default or an axis value):
//   "<sweep name>/<trial index>"   e.g. "cpu-ladder/64" (`rung trials` prints indices)
//   "<sweep name>/KEY=VALUE,..."   the trial of that sweep whose keys (a sweep axis as the spec names
//                                  it, a label, or a dotted config key) hold those values (JSON, else a
//                                  string) and whose seed is the starting trial's, unless seed is one
//                                  of the keys: "models/label=rope" starts seed 2 from seed 2's model
//   "id:<identity prefix>"         at least 6 hex digits of the trial's identity (`rung validate`)
// At submission the coordinator resolves each name to the checkpoint folder of the source's
// SUCCEEDED attempt (under the artifact root every worker shares) and writes it into the cell's
// `train.init.checkpoint`; rung-train starts from the newest checkpoint there (its final one).
// The trial identity does not depend on the folder: it is computed from the name.
//
// Contract: a name that matches no trial, several trials, or a trial that has not SUCCEEDED is an
// error of the spec at the location of the value (file:line:col); nothing of the expansion is
// changed then.
#pragma once

#include <string>

#include "coordinator/domain/sweep_manager.h"
#include "coordinator/domain/trial_lifecycle.h"
#include "sweeps/spec/expansion.h"

namespace rung::server {

// Resolves every cell's train.init.from_trial in `expanded`. INVALID_ARGUMENT listing every name
// that does not resolve, one spec error per line (spec_diagnostics.h); other codes for store errors.
Status ResolveSourceTrials(const std::string& spec_text, const std::string& file_name, const SweepManager& sweeps,
                           const TrialLifecycle& trials, ExpandedSweep* expanded);

}  // namespace rung::server

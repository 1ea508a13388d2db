// coordinator/cli/sweep_tables.h
//
// The tables of sweeps and trials that several `rung` commands print (sweeps, cancel, pause,
// resume: PrintSweeps; trials, show, submit --dry-run: PrintTrials), and the names they print
// states with. Formats: "table" (aligned, rounded numbers), "csv" (exact numbers), "json" (one
// object per row, the message as proto3 JSON).
#pragma once

#include <string>
#include <vector>

#include "proto/rung.pb.h"

namespace rung::cli {

// An enum value's name without its prefix: ("SWEEP_STATE_RUNNING", "SWEEP_STATE_") -> "RUNNING".
std::string EnumText(const std::string& enum_name, const std::string& prefix);
std::string SweepStateName(rung::v1::SweepState state);  // "RUNNING"
std::string TrialStateName(rung::v1::TrialState state);  // "SUCCEEDED"

// A trial's cell: position.variant = "rope", seed = 0 -> "position.variant=rope seed=0".
std::string CellText(const google::protobuf::RepeatedPtrField<rung::v1::ConfigEntry>& assignments);

// One row per sweep: id, name, state, trial counts, total 6ND.
void PrintSweeps(const std::vector<rung::v1::Sweep>& sweeps, const std::string& format);

// One row per trial: id (blank for a dry run's), index, rung, cell, state, attempt, step, final or
// latest metric, worker, reason.
void PrintTrials(const std::vector<rung::v1::Trial>& trials, const std::string& format);

}  // namespace rung::cli

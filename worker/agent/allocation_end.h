// worker/agent/allocation_end.h
//
// When this worker's allocation ends (a SLURM job's time limit, or a time the operator names), so
// that the worker stops by itself before it: it registers stops_at = end - margin (the coordinator
// leases it only trials whose next checkpoint fits before then) and at stops_at shuts down as on
// SIGTERM (agent.h). rung-worker takes the end from, in order:
//   1. --until TIME;
//   2. under SLURM (SLURM_JOB_ID set): SLURM_JOB_END_TIME (unix seconds, set by newer SLURM), else
//      the one line of `squeue -h -j $SLURM_JOB_ID -o %e` (SLURM 22.05 sets no such variable);
//   3. nothing: no end, the worker runs until it is signalled.
// A squeue that is missing, fails, times out or knows no end is not an error: the worker runs
// without an end, and the lookup says why in a note for the log.
//
// Times are read as squeue prints them: YYYY-MM-DDTHH:MM:SS in local time (this process's TZ),
// optionally followed by Z or an offset +HH:MM / -HH:MM; or unix seconds (digits only). They are
// written back (WallTimeText) in local time with the offset, a form ParseWallTime reads.
//
// Example:
//   StatusOr<AllocationEnd> end = AllocationEndFromUntil("2026-12-06T14:00:00");  // "--until 2026-..."
//   SlurmAllocationLookup slurm = FindSlurmAllocationEnd(ThisProcessEnvironment(), &Subprocess::Run);
//   for (const std::string& note : slurm.notes) AgentLog(note);
//   Status fits = CheckStopsAfter(*slurm.end, std::chrono::seconds(180), std::chrono::system_clock::now());
//
// Thread safety: reentrant; the local-time functions read the process's time zone (TZ must not
// change meanwhile). FindSlurmAllocationEnd runs its command on the calling thread.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace rung::agent {

using WallTime = std::chrono::system_clock::time_point;

// An allocation's end and where it was learnt.
struct AllocationEnd {
  WallTime at;
  // For people: "--until 2026-12-06T14:00:00", "SLURM_JOB_END_TIME of SLURM job 42",
  // "squeue for SLURM job 42".
  std::string source;
};

// A time as --until takes it (above), whole seconds, from 1970 to 2250. Errors: INVALID_ARGUMENT
// quoting `text` and saying the forms taken.
StatusOr<WallTime> ParseWallTime(const std::string& text);

// One line of `squeue -o %e`, blanks around it ignored: nullopt when it says there is no end (N/A,
// Unknown, NONE, INVALID, any case, or nothing). Errors: those of ParseWallTime.
StatusOr<std::optional<WallTime>> ParseSqueueEndTime(const std::string& line);

// "2026-12-06T14:00:00+01:00": local time (whole seconds) and its offset, "Z" where it is UTC.
std::string WallTimeText(WallTime time);

// The end `rung-worker --until TEXT` names. Errors: INVALID_ARGUMENT naming --until and TEXT.
StatusOr<AllocationEnd> AllocationEndFromUntil(const std::string& text);

// Environment variables by name: what a lookup reads instead of getenv, so that tests choose them.
using Environment = std::map<std::string, std::string>;
// This process's environment.
Environment ThisProcessEnvironment();

// Runs a command to its end or until `timeout` passes; Subprocess::Run is the real one.
using CommandRunner = std::function<StatusOr<SubprocessResult>(const SubprocessOptions&, std::chrono::milliseconds)>;

inline constexpr std::chrono::seconds kSqueueTimeout{5};

// What FindSlurmAllocationEnd learnt.
struct SlurmAllocationLookup {
  std::optional<AllocationEnd> end;  // nullopt: not under SLURM, or no end known
  // Lines for the log, each complete: why no end is known under SLURM (squeue missing, failing, or
  // saying N/A), or a SLURM_JOB_END_TIME that was not unix seconds. Empty when all went well.
  std::vector<std::string> notes;
};

// The end of the SLURM job this process runs in (2. above), from `environment` (SLURM_JOB_ID,
// SLURM_JOB_END_TIME) and, when that does not say, `squeue` run by `run` (with SLURM_TIME_FORMAT=
// standard, so that a user's own format does not change what it prints) for up to `timeout`.
// Not under SLURM: no end, no note, nothing run. Never an error (see notes).
SlurmAllocationLookup FindSlurmAllocationEnd(const Environment& environment, const CommandRunner& run,
                                             std::chrono::milliseconds timeout = kSqueueTimeout);

// When the worker stops by itself: `margin` before the end.
WallTime StopsAt(const AllocationEnd& end, std::chrono::milliseconds margin);

// OK when StopsAt(end, margin) is after `now`. Errors: INVALID_ARGUMENT naming the end's source (for
// --until: the flag and its value), the end, and --end-margin when the end is not past but within it.
Status CheckStopsAfter(const AllocationEnd& end, std::chrono::milliseconds margin, WallTime now);

// rung-worker's startup line about it: "allocation ends at 2026-12-06T14:00:00+01:00 (squeue for
// SLURM job 42): stops by itself at 2026-12-06T13:57:00+01:00, 180 s before".
std::string DescribeStop(const AllocationEnd& end, std::chrono::milliseconds margin);

// The reason of the shutdown at StopsAt, as PREEMPTED reports carry it: "allocation ends at
// 2026-12-06T14:00:00+01:00 (squeue for SLURM job 42): stopping 180 s before it".
std::string StopReason(const AllocationEnd& end, std::chrono::milliseconds margin);

}  // namespace rung::agent

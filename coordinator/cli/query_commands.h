// coordinator/cli/query_commands.h
//
// The `rung` commands that read a sweep's results off a coordinator (never its database):
//   results SWEEP [--group-by K,..] [--metric M] [--agg mean,std,min,max,median,count]
//                 [--summary final|best|last] [--where KEY=VALUE]...
//       a results table: trials grouped by keys (trial, rung_label, rung, seed, a sweep axis, any
//       dotted key of the trial config; without --group-by one row per trial, labelled by trial,
//       rung_label and the sweep's axes), one value of the metric per trial aggregated per group,
//       and the paired same-seed difference against the sweep's baseline (UserService.QueryResults).
//       An undefined aggregate (the std of one value, anything of no value; paired_sd of one pair)
//       is blank in the table and CSV and null in JSON. An unknown metric or key is exit 2, naming
//       what there is.
//   export SWEEP [--format csv|json|jsonl] [--table trials|ladder] [--out FILE]
//       every trial's config (flattened into config.<key> columns in CSV), provenance and
//       summaries; --out is written to a temporary file beside FILE, synced, then renamed over it,
//       so FILE is either the old file or the whole new one, with the mode the umask gives a new
//       file (UserService.Export). A refused export (unknown sweep, the ladder as JSON) writes
//       nothing to stdout or FILE.
//   fits SWEEP [--id N]
//       the fits `rung fit SWEEP` stored on the coordinator, newest first; --id N: one fit's report
//       (table, or --format json) or its input ladder points (--format csv) (UserService.ListFits)
//   tune SWEEP
//       the sweep's learning-rate search: per tuning cell the values tried, their metric and state,
//       the best, bracketed or not and why, the next rung's predicted centre (UserService.GetTuning)
//   logs TRIAL [--follow] [--attempt N] [--tail N] [--source record,stderr,event]
//       a trial's record lines, trainer stderr and state changes; --follow keeps printing new lines
//       until the trial finishes (UserService.GetLogs). --format json prints one object per line.
//       --tail 0 prints no old line (with --follow: only new ones); a negative --tail or --attempt,
//       or an attempt the trial does not have, is exit 2.
// Options that take a list take it comma-separated or repeated (--group-by a,b = --group-by a
// --group-by b), except --where: its values are JSON, which has commas of its own.
// Each prints a human table by default and --format json|csv for scripts; exit codes in
// exit_codes.h (0 ok, 1 failure, 2 bad input or unknown id, 3 coordinator unreachable, 4 token).
#pragma once

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "proto/rung.pb.h"

namespace rung::cli {

void AddQueryCommands(CLI::App& app, int* exit_code);

// A sweep's search as `rung tune` prints it (format: table, json or csv).
void PrintTuning(const rung::v1::GetTuningResponse& response, const std::string& format, std::ostream& out);

}  // namespace rung::cli

// coordinator/server/sweep_export.h
//
// UserService.Export: one table of a sweep as a file, CSV (a header line) or JSON lines, written
// in chunks of whole lines so that a large sweep never sits in memory at once (trials are read a
// page at a time).
//
//   TRIALS  one row per trial: trial_id, index, state, rung, rung_label, baseline, identity, attempt,
//           worker_id, seed, parameters_nonembedding, parameters_total, tokens, flops; then its
//           resolved config, the provenance of its newest attempt that reported one (commit,
//           library versions, BLAS, threads, host, ...) and its summaries (final val_loss,
//           train_tokens_per_sec, wall_sec, ...). JSON lines nest them as objects "config",
//           "provenance", "summaries" (and "assignments", the cell's axis values); CSV flattens them
//           into columns "config.<dotted key>", "provenance.<dotted key>" (without the provenance's
//           own copy of the config), "summary.<name>" (the union over the sweep's trials, sorted;
//           empty where a trial has none; arrays as JSON).
//   LADDER  the ladder CSV `rung fit --from-csv` reads (sweep_fitter.h); CSV only.
// METRICS, LEARNED_PARAMETERS and EVENTS are not served yet (UNIMPLEMENTED).
//
// Thread safety: reads the store (thread-safe); no state of its own.
#pragma once

#include <functional>
#include <string>

#include "coordinator/domain/coordinator.h"
#include "proto/rung.pb.h"

namespace rung::server {

// TRIALS (and UNSPECIFIED) and LADDER; the service answers UNIMPLEMENTED for the others.
bool IsServedExportTable(v1::ExportTable table);

// Writes the table through `write` (whole lines; returns false when the reader went away, which
// ends the export with ABORTED). Errors: NOT_FOUND (sweep), INVALID_ARGUMENT (sweep_id missing,
// LADDER as JSON lines, a table not served).
Status ExportSweep(Coordinator& coordinator, const v1::ExportRequest& request,
                   const std::function<bool(const std::string&)>& write);

// A CSV field: as it is, or quoted ("" inside) when it holds a comma, a quote or a line break.
std::string CsvField(const std::string& text);

}  // namespace rung::server

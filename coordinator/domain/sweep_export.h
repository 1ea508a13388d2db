// coordinator/domain/sweep_export.h
//
// One table of a sweep as a file, CSV (a header line) or JSON lines, written in chunks of whole
// lines so that a large sweep never sits in memory at once (trials are read a page at a time);
// what UserService.Export streams (the service converts the request and answers UNIMPLEMENTED for
// the tables not served here).
//
//   kTrials  one row per trial: trial_id, index, state, rung, rung_label, baseline, identity,
//            attempt, worker_id, seed, parameters_nonembedding, parameters_total, tokens, flops;
//            then its resolved config, the provenance of its newest attempt that reported one
//            (commit, library versions, BLAS, threads, host, ...) and its summaries (final
//            val_loss, train_tokens_per_sec, wall_sec, ...). JSON lines nest them as objects
//            "config", "provenance", "summaries" (and "assignments", the cell's axis values); CSV
//            flattens them into columns "config.<dotted key>", "provenance.<dotted key>" (without
//            the provenance's own copy of the config), "summary.<name>" (the union over the
//            sweep's trials, sorted; empty where a trial has none; arrays as JSON).
//   kLadder  the ladder CSV `rung fit --from-csv` reads (sweep_fits.h); CSV only.
//
// Thread safety: reads the store (thread-safe); no state of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "coordinator/domain/coordinator.h"

namespace rung {

enum class ExportTable { kTrials, kLadder };
enum class ExportFormat { kCsv, kJsonLines };

// Writes the table through `write` (whole lines; returns false when the reader went away, which
// ends the export with CANCELLED). Errors: NOT_FOUND (sweep), INVALID_ARGUMENT (sweep_id missing,
// the ladder as JSON lines).
Status ExportSweep(Coordinator& coordinator, int64_t sweep_id, ExportTable table, ExportFormat format,
                   const std::function<bool(const std::string&)>& write);

}  // namespace rung

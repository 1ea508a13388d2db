// sweeps/fit/ladder_csv.h
//
// Reads a ladder trained anywhere from CSV, for `rung fit --from-csv` and `rung plot --from-csv`.
//
// Format: a header line naming the columns, then one run per line.
//   variant,label,compute,loss[,seed][,seconds][,n,d]   (any order; names are case-insensitive)
//   rope,r1,1.16e12,2.104,0,41.5
// compute: training FLOPs (6 * N_nonembedding * D, docs/science.md section 5); loss: nats; seed: an
// integer; seconds: wall-clock training time; n and d: the model's parameters and training tokens
// (together; with them `rung fit` also predicts multipliers from fitted L(N, D), law_report.h). Blank lines and lines starting with '#' are skipped;
// fields may be quoted ("a,b"; "" inside quotes is a quote); whitespace around fields is ignored.
//
// Example:
//   StatusOr<LadderResults> ladder = ReadLadderCsv("sweeps/examples/ladder-example.csv");
//   if (!ladder.ok()) { std::cerr << ladder.status().message() << "\n"; return 2; }
//
// Errors are INVALID_ARGUMENT (NOT_FOUND for a missing file) and name the file, the line and the
// column: "ladder.csv:7: column 'loss': 'n/a' is not a number". Every problem is listed (up to 20),
// including those ValidateLadderResults finds (duplicates, inconsistent compute).
#pragma once

#include <string>
#include <string_view>

#include "core/common/status.h"
#include "sweeps/fit/ladder_results.h"

namespace rung::fit {

// Parses CSV text; `source` names it in messages and becomes LadderResults::source.
StatusOr<LadderResults> ParseLadderCsv(std::string_view text, const std::string& source);

// Reads and parses a file.
StatusOr<LadderResults> ReadLadderCsv(const std::string& path);

}  // namespace rung::fit

// sweeps/fit/law_runs.h
//
// The input of the scaling-law fits (chinchilla_law.h, law_report.h, isoflop_profile.h): finished
// training runs, each with its model size N, its training tokens D and its final loss, by variant
// (positional method) and seed. From a CSV file (ReadLawRunsCsv) or a sweep's stored trials.
//
// CSV: a header naming the columns, then one run per line (csv_records.h for quoting and comments):
//   n,d,loss[,variant][,seed]           (any order; names are case-insensitive)
//   9472,4.1e6,2.384,rope,0
// n: parameters (rung counts non-embedding parameters: docs/science.md section 5); d: training
// tokens; loss: the metric in its own unit (nats for val_loss, bits per byte for val_bpb: LawRuns
// says which, the CSV cannot). Without a variant column every run is variant "all".
//
// Example:
//   StatusOr<LawRuns> runs = ReadLawRunsCsv("laws.csv");
//   if (!runs.ok()) { std::cerr << runs.status().message() << "\n"; return 2; }
//
// Errors are INVALID_ARGUMENT naming the file and line (NOT_FOUND for a missing file): "laws.csv:7:
// loss must be a positive number, got -1". Thread safety: values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "sweeps/fit/ladder_results.h"

namespace rung::fit {

// One finished training run of a scaling-law study.
struct LawRun {
  std::string variant;          // e.g. "rope"
  double n = 0;                 // parameters, > 0
  double d = 0;                 // training tokens, > 0
  double loss = 0;              // > 0, in LawRuns::metric's unit
  std::optional<int64_t> seed;  // set on every run or on none
  std::string origin;           // where the run came from, for messages ("laws.csv:7", "trial 12")

  // Training compute as the laws count it: 6 N D.
  double compute() const { return 6.0 * n * d; }
};

struct LawRuns {
  std::string source;  // file or sweep name
  std::string metric;  // "val_loss" (nats) unless said otherwise
  std::vector<LawRun> runs;

  bool has_seeds() const { return !runs.empty() && runs.front().seed.has_value(); }
  // Variants in order of first appearance.
  std::vector<std::string> Variants() const;
  // The runs of one variant.
  std::vector<LawRun> Of(const std::string& variant) const;
};

// The loss's unit, as the output says it: "bits per byte" for val_bpb, "nats" otherwise.
std::string LossUnit(const std::string& metric);

// Checks what the fits rely on; INVALID_ARGUMENT naming each offending run's origin (up to 20):
// finite n, d and loss > 0, a non-empty variant, seeds on every run or on none, no two runs with the
// same (variant, n, d, seed).
Status ValidateLawRuns(const LawRuns& runs);

// Parses CSV text; `source` names it in messages and becomes LawRuns::source.
StatusOr<LawRuns> ParseLawRunsCsv(std::string_view text, const std::string& source);
StatusOr<LawRuns> ReadLawRunsCsv(const std::string& path);

// The independent units a bootstrap of law runs resamples (law_report.h, isoflop_profile.h): the seeds
// where the runs have several (a drawn seed brings every run of it), else the runs.
struct LawUnits {
  bool by_seed = false;
  std::vector<int64_t> seeds;  // every seed of the runs, ascending
  int fewest = 0;              // the seeds, or the runs of the variant with fewest
};
LawUnits LawUnitsOf(const std::vector<LawRun>& runs, const std::vector<std::string>& variants);

// One bootstrap draw of `seeds` with replacement: how many times each drawn seed was drawn.
std::map<int64_t, double> DrawSeeds(const std::vector<int64_t>& seeds, std::mt19937_64& generator);

// The runs of a ladder whose runs carry N and D (LadderRun::parameters, tokens); FAILED_PRECONDITION
// naming the first run without them.
StatusOr<LawRuns> LawRunsOfLadder(const LadderResults& ladder, const std::string& metric);

}  // namespace rung::fit

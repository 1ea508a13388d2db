// coordinator/domain/sweep_laws.h
//
// Scaling laws (sweeps/fit/law_report.h) of a stored sweep's finished trials: what UserService.GetLaws
// answers and `rung laws SWEEP` prints. Computed on every call, not stored.
//
// The runs: every SUCCEEDED trial with a finite value of the metric (its final value), as the
// multiplier fits take them (sweep_fits.h, BuildLadder), each with N = its FLOPs / (6 D) (the
// non-embedding parameters, rung's count) and D = its training tokens. Variants are named by
// LawsRequest::variant_keys, by default every sweep axis but seed and the axes that set the token count
// (train.tokens, train.steps: a sweep over token budgets is one variant's grid). The baseline of the
// predicted multipliers: LawsRequest::baseline, or the variant the spec's baseline selects when it
// selects one, else none (no multipliers, said in a note).
//
// Errors: NOT_FOUND (sweep); INVALID_ARGUMENT (bad options, an unknown baseline or variant key);
// FAILED_PRECONDITION (no finished run, runs that cannot identify L(N, D), a fit that does not
// converge), each saying how many trials are unfinished.
//
// Example:
//   LawsRequest request;
//   request.sweep_id = 3;
//   RUNG_ASSIGN_OR_RETURN(SweepLaws laws, FitSweepLaws(coordinator, request));
//
// Thread safety: reads the store (thread-safe); no state of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/domain/coordinator.h"
#include "sweeps/fit/law_report.h"

namespace rung {

struct LawsRequest {
  int64_t sweep_id = 0;
  std::string metric;                     // "": the sweep's metric
  std::vector<std::string> variant_keys;  // empty: the default (see above)
  fit::LawOptions law;                    // its baseline "": the spec's
};

struct SweepLaws {
  fit::LawReport report;
  int64_t unfinished = 0;  // trials left out: not SUCCEEDED, or without a value
};

StatusOr<SweepLaws> FitSweepLaws(Coordinator& coordinator, const LawsRequest& request);

}  // namespace rung

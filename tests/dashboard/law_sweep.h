// tests/dashboard/law_sweep.h
//
// The sweeps the dashboard's scaling-law tests read (GetLaws through /api/sweeps/ID/laws and the
// sweep page's Scaling laws panel), built only through the coordinator's public gRPC API: SubmitSweep
// as a user, then a worker "laws" that registers, leases every trial of the sweep and reports, as
// rung-train would, its provenance, one step and a final record whose val_loss is a known law's:
//
//   L(N, D) = E_v + A / N^alpha + B / D^beta, times exp(0.003 sin(7 ln N + 3 ln D))  (a fixed wobble,
//   so that the fit has residuals), with N = the trial's flops / (6 tokens) and D = its tokens, as
//   GetLaws reads them; rope (the baseline) E 2.0, lerope E 1.97 (kLawTruth).
//
//   kIsoflopLawSpec     "dashboard-laws": an IsoFLOP grid, 4 sizes (L1-d16 .. L2-d32, N 3k to 25k) x
//                       3 budgets (3e9, 1e10, 3e10) x rope, lerope: 12 distinct (N, D) per variant, 3
//                       token counts per size, so the laws, the rollout (the largest size held out)
//                       and the IsoFLOP profiles (the law's optimum, 5k to 15k, inside the sizes at
//                       every budget) all have what they need.
//   kOneTokenCountSpec  "dashboard-no-laws": a ladder of 5 sizes at 20 tokens per parameter: enough
//                       points, but each size ran one token count, so GetLaws answers
//                       FAILED_PRECONDITION saying so.
//
// Nothing else may be waiting for a lease while one is played (the worker takes what it is given,
// and a trial of another sweep is an error).
//
// Example:
//   StatusOr<int64_t> sweep = PlayLawSweep(address, user_token_file, worker_token_file, kIsoflopLawSpec);
//
// Thread safety: one call at a time per coordinator.
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"

namespace rung::dashboard::testing {

struct LawTruth {
  double e_rope = 2.0, e_lerope = 1.97;
  double a = 10.0, alpha = 0.34;
  double b = 20.0, beta = 0.3;
  double wobble = 0.003;
};
inline constexpr LawTruth kLawTruth;

extern const char kIsoflopLawSpec[];
extern const char kOneTokenCountSpec[];

// The played loss of a trial of `variant` ("rope" or "lerope") at N, D.
double LawLoss(const std::string& variant, double n, double d);

// Submits `spec` and plays every one of its trials to SUCCEEDED (above); the sweep's id. Errors: a
// failed call (named), a leased trial of another sweep.
StatusOr<int64_t> PlayLawSweep(const std::string& address, const std::string& user_token_file,
                               const std::string& worker_token_file, const std::string& spec);

}  // namespace rung::dashboard::testing

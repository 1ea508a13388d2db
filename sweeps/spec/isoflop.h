// sweeps/spec/isoflop.h
//
// An IsoFLOP grid's arithmetic (the ladder's `isoflop_budgets`, ladder.h): the budget as a label
// writes it, and the whole number of optimizer steps that brings a trial's training FLOPs nearest a
// budget. The FLOPs are counted exactly as the expansion records them (ExpandedTrial::flops, the
// trials.flops column, sweeps/fit/compute_count.h's nonembedding count):
//
//   flops(steps) = 6 N_nonembedding x (steps x batch_size x grad_accum x seq_len)
//
// computed in double in that order, so the FLOPs judged here are the FLOPs stored.
//
// Example:
//   IsoflopSteps steps = NearestIsoflopSteps(3e11, CountFlopsPerToken(model).nonembedding,
//                                            TokensPerStep(train, seq_len));
//   if (!steps.within_tolerance) ...;  // steps.flops and steps.relative_error say how near it came
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace rung {

// The most budgets one ladder may list (each multiplies the model sizes into rungs).
inline constexpr size_t kMaxIsoflopBudgets = 64;
// How far a trial's FLOPs may lie from its budget, relative to the budget.
inline constexpr double kIsoflopTolerance = 0.01;

// The budget as a rung label's suffix writes it: the shortest mantissa that reads back as the same
// double, an exponent without "+" or leading zeros ("3e11", "1.5e11", "1e12", "2.5e-3"). Distinct
// budgets give distinct texts. REQUIRES: `budget` finite and > 0.
std::string CompactBudgetText(double budget);

struct IsoflopSteps {
  int64_t steps = 0;               // >= 1
  double flops = 0;                // the trial's FLOPs at `steps`, as recorded
  double relative_error = 0;       // (flops - budget) / budget
  bool within_tolerance = false;   // |relative_error| <= kIsoflopTolerance
  bool at_token_limit = false;     // the budget needs more steps than int64 counts tokens for
};

// The whole number of steps (>= 1, with steps x tokens_per_step within int64) whose FLOPs lie
// nearest `budget`. REQUIRES: budget finite and > 0, flops_per_token > 0, tokens_per_step > 0.
IsoflopSteps NearestIsoflopSteps(double budget, double flops_per_token, int64_t tokens_per_step);

}  // namespace rung

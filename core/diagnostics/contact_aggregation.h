// core/diagnostics/contact_aggregation.h
//
// The aggregation protocol of paper 004, section 4.5.1 (docs/science.md section 7), torch-free.
//
// A row is one unscaled score row (one layer, head, sequence and query position) with its contact triple
// (Lambda, alpha, Delta) from CountGaps. A row is a tie, and left out, when N(0) >= 2 or
// log10 Lambda > 5. A cell is the set of rows of one trained model at one evaluation setting (or one
// checkpoint); each row belongs to a unit, (evaluation batch, layer, head) as paper 004 has it
// (appendix B.2: its rows pooled over the batch's sequences), or (sequence, layer, head), and has its
// length n (the keys it sees). For each n of the grid, R(n) pools every non-tied row of length n over all units; the bucket
// means mean_{R(n)} log X for X in {Lambda, alpha, Delta} are regressed by ordinary least squares on
// log log n, and the slopes are xi_Lambda, xi_alpha and xi_Delta. Each slope's interval is half the
// interquartile range of `bootstrap` replicates that resample the units with replacement (each unit
// brings all its rows), seeded by `seed`; the tie share is reported beside.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostics/score_statistics.h"

namespace rung {

// The bootstrap units a caller may group rows into (the name the record and train.diagnostics_bootstrap_unit use).
inline constexpr char kBootstrapUnitBatch[] = "batch";
inline constexpr char kBootstrapUnitSequence[] = "sequence";

// log10 Lambda above which a row counts as a tie (paper 004 section 4.5.1).
inline constexpr double kTieLog10Lambda = 5.0;

// True for a row the aggregation leaves out: a tied maximum, or log10 Lambda > kTieLog10Lambda.
bool IsAggregationTie(const GapCount& count);

struct ContactRow {
  int64_t unit = 0;  // any id; rows with the same id are one unit (a batch or a sequence, in one layer and head)
  GapCount count;    // from CountGaps; count.n is the row's length
};

struct ContactSlope {
  double xi = 0.0;         // OLS slope of the bucket mean of log X on log log n
  double intercept = 0.0;
  double half_iqr = 0.0;   // half the interquartile range of the bootstrap slopes (0 without replicates)
};

// One grid length of a cell.
struct ContactBucket {
  int64_t n = 0;
  int64_t rows = 0;  // non-tied rows pooled into the bucket
  int64_t ties = 0;
  double mean_log_lambda = 0.0, mean_log_alpha = 0.0, mean_log_delta = 0.0;  // NaN without rows
};

struct ContactFit {
  std::vector<ContactBucket> buckets;  // one per distinct n, ascending, including buckets of ties only
  int64_t units = 0;
  int64_t rows = 0, ties = 0;          // over the whole cell
  bool fitted = false;                 // at least two buckets with rows
  ContactSlope lambda, alpha, delta;
  double TieShare() const { return rows + ties > 0 ? static_cast<double>(ties) / static_cast<double>(rows + ties) : 0.0; }
};

// The protocol above over `rows` (any order). REQUIRES: bootstrap >= 0.
ContactFit FitContactExponents(const std::vector<ContactRow>& rows, int bootstrap, uint64_t seed);

// The n-grid of a cell evaluated at length `evaluated_length`: the requested lengths (each >= 2) that
// do not exceed it, ascending and distinct; where that leaves fewer than 4, the geometric points
// evaluated_length / 8, / 4, / 2 and evaluated_length (rounded, at least 2, distinct: fewer than 4 below
// a length of 16, none below 2), with `fallback` set and `warning` saying why.
struct DiagnosticGrid {
  std::vector<int64_t> lengths;
  bool fallback = false;
  std::string warning;
};
DiagnosticGrid ChooseDiagnosticGrid(const std::vector<int64_t>& requested, int64_t evaluated_length);

// The paper's grid at an evaluation length of 1024.
inline const std::vector<int64_t>& PaperDiagnosticLengths() {
  static const std::vector<int64_t> lengths = {64, 128, 256, 512, 768, 1024};
  return lengths;
}

}  // namespace rung

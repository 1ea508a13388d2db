// core/diagnostics/synthetic_score_rows.h
//
// Score rows whose contact triples have closed forms (docs/science.md section 7), counted into the rows
// of contact_aggregation.h, so that anyone can check gap counting and the aggregation on inputs with a
// known answer (`rung diag --synthetic`):
//   simplex   one score 0 and n - 1 scores -gap: Lambda = ln n / gap, alpha = 1, Delta = gap, hence
//             xi_Lambda = 1, xi_alpha = 0, xi_Delta = 0 exactly;
//   gaussian  i.i.d. standard normal scores: xi_Lambda near 0.6 for n in 64..1024 (0.5 asymptotically).
// Every row is its own unit. Rows are a pure function of (kind, lengths, rows_per_length, gap, seed)
// with one standard library (std::normal_distribution's draws are the library's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostics/contact_aggregation.h"

namespace rung {

// REQUIRES: kind is "simplex" or "gaussian"; every length >= 2; rows_per_length >= 1; gap > 0.
std::vector<ContactRow> SyntheticContactRows(const std::string& kind, const std::vector<int64_t>& lengths,
                                             int64_t rows_per_length, double gap, uint64_t seed);

}  // namespace rung

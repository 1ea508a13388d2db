// coordinator/cli/paper003_closed_forms.h
//
// `rung diag --closed-form 003`: paper 003's closed forms (core/diagnostics/failure_mode_closed_forms.h)
// as the paper's tables, computed here (no coordinator, no trial):
//   table3    Table 3: the smallest M per base with Eq. 5 >= the threshold, and as the paper prints
//             it (an integer below 10^5, three digits and a power of ten above: "2.65 × 10^5")
//   inversion Eq. 5 (Theorem 5) and C.1's normal approximation with integer lambda, per (M, B)
//             (Figure 3(b)'s curves)
//   lambda    lambda(M) and the normal approximation of S(m) over [0, M) (Eqs. 2-4), per (M, B)
//   table4    Table 4: position aliasing of a single pair of distances per (M, B), one column per
//             precision, then the expectations columns "N p ± sd"; cells printed as the paper prints
//             them (Python's format(x, '.2') and '.1': "0.057", "3e+04 ± 2e+02")
//   theorem6  the chance that a random distance has an aliasing partner (Figure 3(c))
//   theorem8  token aliasing per (M, B) and precision, and its limit 2^(1-f) sqrt(h / (2 pi))
// The JSON of every row names the paper's table, row and column; values are numbers, the printed
// forms strings beside them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rung::cli {

struct ClosedFormOptions {
  std::string paper = "003";
  int64_t head_dim = 128;       // d; h = d / 2 = 64 as the paper's tables
  std::vector<double> bases;    // empty: each table's own (Table 3: 1e4..1e8; the others 1e4, 1e5, 1e6)
  std::vector<int64_t> lengths; // empty: Table 4's 1024, 4096, 16384, 32768, 65536
  double threshold = 0.3;
  std::vector<std::string> precisions = {"bf16", "fp16", "fp32"};
  bool cap_lambda = false;      // lambda(M) at most h (the paper's tables do not cap it)
  std::string table;            // table3 | inversion | lambda | table4 | theorem6 | theorem8 | all ("" = all)
  std::string format = "table";
};

// Validates the options (a message on stderr, kUsage) and prints the tables; the exit code.
int RunPaper003ClosedForms(const ClosedFormOptions& options);

// The tables --table accepts with --closed-form.
const std::vector<std::string>& ClosedFormTableNames();

}  // namespace rung::cli

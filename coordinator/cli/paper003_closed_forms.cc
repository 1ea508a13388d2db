#include "coordinator/cli/paper003_closed_forms.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/text_table.h"
#include "core/common/python_float_format.h"
#include "core/diagnostics/failure_mode_closed_forms.h"
#include "core/diagnostics/failure_modes.h"

namespace rung::cli {
namespace {

using nlohmann::json;

const std::vector<double> kTable3Bases = {1e4, 1e5, 1e6, 1e7, 1e8};
const std::vector<double> kTable4Bases = {1e4, 1e5, 1e6};
const std::vector<int64_t> kTable4Lengths = {1024, 4096, 16384, 32768, 65536};

// A base or length as a whole number where it is one ("10000", "1000000"), else 6 digits.
std::string Whole(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);
    return buffer;
  }
  return Number(value, 10);
}

// Table 3's style: the integer below 10^5, three significant digits times a power of ten above.
std::string AsTable3Prints(double length) {
  if (!std::isfinite(length)) return "-";
  if (length < 1e5) return Whole(length);
  const int exponent = static_cast<int>(std::floor(std::log10(length)));
  char mantissa[32];
  std::snprintf(mantissa, sizeof(mantissa), "%.2f", length / std::pow(10.0, exponent));
  return std::string(mantissa) + " × 10^" + std::to_string(exponent);
}

struct PrecisionColumn {
  std::string name;
  int fraction_bits;
};

// The --precision names in the paper's order (bf16, fp16, fp32), with their fraction bits.
std::vector<PrecisionColumn> Columns(const std::vector<std::string>& names) {
  std::vector<PrecisionColumn> columns;
  for (Precision precision : {Precision::kBf16, Precision::kFp16, Precision::kFp32}) {
    for (const std::string& name : names) {
      if (name == PrecisionName(precision)) {
        columns.push_back({name, FractionBits(precision)});
        break;
      }
    }
  }
  return columns;
}

struct Grid {
  int64_t pairs;
  std::vector<double> table3_bases;
  std::vector<double> bases;
  std::vector<int64_t> lengths;
  std::vector<PrecisionColumn> precisions;
  bool cap;
  double threshold;
};

// The paper's name of a row, "Table 4, M = 1024, B = 10000".
std::string RowName(const std::string& table, int64_t length, double base) {
  return table + ", M = " + std::to_string(length) + ", B = " + Whole(base);
}

TextTable Table3(const Grid& grid) {
  TextTable table({"B", "M", "as printed", "eq5 at M", "eq5 at M-1"});
  for (double base : grid.table3_bases) {
    const double length = SmallestInversionLength(grid.pairs, base, grid.threshold);
    const bool integer = std::isfinite(length) && length <= 9007199254740992.0;
    const double at = integer ? PositionInversionLowerBound(static_cast<int64_t>(length), grid.pairs, base) : NAN;
    const double before =
        integer && length > 2 ? PositionInversionLowerBound(static_cast<int64_t>(length) - 1, grid.pairs, base) : NAN;
    const std::string printed = AsTable3Prints(length);
    table.AddRow({Whole(base), integer ? Whole(length) : Number(length, 4), printed, Number(at, 10),
                  NumberOrBlank(before, 10)},
                 {{"paper", "Table 3, B = " + Whole(base)},
                  {"base", base},
                  {"smallest_length", NumberOrNull(length)},
                  {"integer", integer},
                  {"printed", printed},
                  {"threshold", grid.threshold},
                  {"eq5_at_length", NumberOrNull(at)},
                  {"eq5_below_length", NumberOrNull(before)}});
  }
  return table;
}

TextTable InversionTable(const Grid& grid) {
  TextTable table({"M", "B", "lambda(M)", "lambda(M/2)", "eq5 bound", "normal (integer lambda)"});
  for (int64_t length : grid.lengths) {
    for (double base : grid.bases) {
      const int64_t whole = FastPairCount(length, grid.pairs, base, grid.cap);
      const int64_t half = FastPairCount(length / 2, grid.pairs, base, grid.cap);
      const double bound = PositionInversionLowerBound(length, grid.pairs, base);
      const double normal = PositionInversionNormal(length, grid.pairs, base, grid.cap);
      table.AddRow({std::to_string(length), Whole(base), std::to_string(whole), std::to_string(half), Number(bound, 4),
                    NumberOrBlank(normal, 4)},
                   {{"paper", RowName("Eq. 5 (Theorem 5)", length, base)},
                    {"length", length},
                    {"base", base},
                    {"lambda", whole},
                    {"lambda_half", half},
                    {"eq5_lower_bound", NumberOrNull(bound)},
                    {"normal_integer_lambda", NumberOrNull(normal)}});
    }
  }
  return table;
}

TextTable LambdaTable(const Grid& grid) {
  TextTable table({"M", "B", "h log_B M", "lambda(M)", "mean <=", "sd", "note"});
  for (int64_t length : grid.lengths) {
    for (double base : grid.bases) {
      const double boundary = FastPairBoundary(length, grid.pairs, base);
      const RopeProductNormal normal = RopeProductNormalAt(length, grid.pairs, base, grid.cap);
      const std::string note =
          boundary > static_cast<double>(grid.pairs)
              ? (grid.cap ? "capped at h (M > B)" : "lambda > h: M > B, past the natural context length (not capped, as the paper)")
              : "";
      table.AddRow({std::to_string(length), Whole(base), Number(boundary, 4), std::to_string(normal.fast_pairs),
                    Number(normal.mean_bound, 4), Number(normal.sd, 4), note},
                   {{"paper", RowName("Eqs. 2-4", length, base)},
                    {"length", length},
                    {"base", base},
                    {"h_log_base_length", boundary},
                    {"lambda", normal.fast_pairs},
                    {"mean_bound", normal.mean_bound},
                    {"sd", normal.sd},
                    {"note", note}});
    }
  }
  return table;
}

TextTable Table4(const Grid& grid) {
  std::vector<std::string> columns = {"M", "B"};
  for (const PrecisionColumn& column : grid.precisions) columns.push_back(column.name);
  for (const PrecisionColumn& column : grid.precisions) columns.push_back("expectations " + column.name);
  TextTable table(columns);
  for (int64_t length : grid.lengths) {
    for (double base : grid.bases) {
      std::vector<std::string> probabilities, expectations;
      json row = {{"paper", RowName("Table 4", length, base)}, {"length", length}, {"base", base}};
      for (const PrecisionColumn& column : grid.precisions) {
        const SinglePairAliasing aliasing = SinglePairAliasingAt(length, grid.pairs, base, column.fraction_bits, grid.cap);
        const std::string probability = PythonGeneralFormat(aliasing.probability, 2);
        const std::string expectation = PythonGeneralFormat(aliasing.expected_pairs, 2) + " ± " +
                                        PythonGeneralFormat(aliasing.expected_pairs_sd, 1);
        probabilities.push_back(probability);
        expectations.push_back(expectation);
        row[column.name] = {{"epsilon", AliasingResolution(grid.pairs, column.fraction_bits)},
                            {"probability", NumberOrNull(aliasing.probability)},
                            {"probability_printed", probability},
                            {"expected_pairs", NumberOrNull(aliasing.expected_pairs)},
                            {"expected_pairs_sd", NumberOrNull(aliasing.expected_pairs_sd)},
                            {"expectations_printed", expectation}};
      }
      std::vector<std::string> cells = {std::to_string(length), Whole(base)};
      cells.insert(cells.end(), probabilities.begin(), probabilities.end());
      cells.insert(cells.end(), expectations.begin(), expectations.end());
      table.AddRow(cells, row);
    }
  }
  return table;
}

// One value per (M, B) and precision: Theorem 6's chance or Theorem 8's approximation.
template <typename Value>
TextTable PerPrecisionTable(const Grid& grid, const std::string& paper, const std::string& field, Value value) {
  std::vector<std::string> columns = {"M", "B"};
  for (const PrecisionColumn& column : grid.precisions) columns.push_back(column.name);
  TextTable table(columns);
  for (int64_t length : grid.lengths) {
    for (double base : grid.bases) {
      std::vector<std::string> cells = {std::to_string(length), Whole(base)};
      json row = {{"paper", RowName(paper, length, base)}, {"length", length}, {"base", base}};
      for (const PrecisionColumn& column : grid.precisions) {
        const double x = value(length, base, column.fraction_bits);
        cells.push_back(NumberOrBlank(x, 4));
        row[column.name] = {{field, NumberOrNull(x)}};
      }
      table.AddRow(cells, row);
    }
  }
  return table;
}

TextTable Theorem8Limits(const Grid& grid) {
  TextTable table({"precision", "f", "limit 2^(1-f) sqrt(h / 2 pi)"});
  for (const PrecisionColumn& column : grid.precisions) {
    const double limit = TokenAliasingLimit(grid.pairs, column.fraction_bits);
    table.AddRow({column.name, std::to_string(column.fraction_bits), Number(limit, 4)},
                 {{"paper", "Theorem 8's limit at lambda = h, " + column.name},
                  {"precision", column.name},
                  {"fraction_bits", column.fraction_bits},
                  {"limit", limit}});
  }
  return table;
}

// The sections in order: name, heading, table.
struct Section {
  std::string name;
  std::string heading;
  TextTable table;
};

std::vector<Section> Sections(const Grid& grid) {
  const std::string h = std::to_string(grid.pairs);
  std::vector<Section> sections;
  sections.push_back({"table3",
                      "Table 3 (appendix C.1): the smallest M with Eq. 5 >= " + Number(grid.threshold, 6) + ", h = " + h,
                      Table3(grid)});
  sections.push_back({"inversion",
                      "Position inversion (appendix C.1, Figure 3(b)): Eq. 5's bound Phi(-ln 2 sqrt(h / (ln B (ln M - "
                      "ln 2 / 2)))) and the normal approximation with integer lambda, a_n = 1, zero phases",
                      InversionTable(grid)});
  sections.push_back({"lambda",
                      "lambda(M) = ceil(h log_B M), the pairs that turn at least a radian over [0, M), and S(m) ~ N(mu, "
                      "sigma^2) over [0, M) with a_n = 1 (Eqs. 2-4): mu <= h - lambda, sigma = sqrt(lambda / 2)",
                      LambdaTable(grid)});
  sections.push_back({"table4",
                      "Table 4 (appendix C.2): Prob. of positional aliasing for a single pair when a = 1, epsilon = 2^-f "
                      "max(sqrt(d), h); expectations: aliasing pairs among the M (M - 1) / 2, N p ± sqrt(N p (1 - p))",
                      Table4(grid)});
  sections.push_back({"theorem6",
                      "Theorem 6 (Figure 3(c)): the chance that a random distance has an aliasing partner, 1 - (1 - p)^(M - 1)",
                      PerPrecisionTable(grid, "Theorem 6", "distance_has_alias", [&](int64_t length, double base, int f) {
                        return SinglePairAliasingAt(length, grid.pairs, base, f, grid.cap).distance_has_alias;
                      })});
  sections.push_back({"theorem8",
                      "Theorem 8 (appendix C.4): token aliasing, 2 2^-f (h / sqrt(lambda)) pdf(h / sqrt(lambda) - "
                      "sqrt(lambda)), a = 1; past M = B an uncapped lambda exceeds h and the value falls again (--cap-lambda holds it at "
                      "the limit)",
                      PerPrecisionTable(grid, "Theorem 8", "token_aliasing", [&](int64_t length, double base, int f) {
                        return TokenAliasingApproximation(length, grid.pairs, base, f, grid.cap);
                      })});
  sections.push_back({"theorem8_limit", "Theorem 8's limit at lambda = h (the text: up to 5% at h = 64 and bf16)",
                      Theorem8Limits(grid)});
  return sections;
}

}  // namespace

const std::vector<std::string>& ClosedFormTableNames() {
  static const std::vector<std::string> names = {"table3", "inversion", "lambda", "table4", "theorem6", "theorem8", "all"};
  return names;
}

int RunPaper003ClosedForms(const ClosedFormOptions& options) {
  if (options.head_dim % 2 != 0) {
    std::cerr << "rung diag: --head-dim " << options.head_dim << " is odd; RoPE rotates pairs (h = d / 2)\n";
    return kUsage;
  }
  if (!(options.threshold > 0.0 && options.threshold < 0.5)) {
    std::cerr << "rung diag: --threshold " << options.threshold
              << " must be in (0, 0.5): Eq. 5 stays below 1/2 at every M, so Table 3 has no M for 1/2 or more\n";
    return kUsage;
  }
  const bool all = options.table.empty() || options.table == "all";
  if (all && options.format == "csv") {
    std::cerr << "rung diag: --format csv needs one --table (table3, inversion, lambda, table4, theorem6 or theorem8)\n";
    return kUsage;
  }
  Grid grid;
  grid.pairs = options.head_dim / 2;
  grid.table3_bases = options.bases.empty() ? kTable3Bases : options.bases;
  grid.bases = options.bases.empty() ? kTable4Bases : options.bases;
  grid.lengths = options.lengths.empty() ? kTable4Lengths : options.lengths;
  grid.precisions = Columns(options.precisions);
  grid.cap = options.cap_lambda;
  grid.threshold = options.threshold;
  // The sections asked for: every one, or the one named (Theorem 8 with its limit, but in CSV, which
  // holds one table).
  const auto wanted = [&](const Section& section) {
    return all || section.name == options.table ||
           (options.table == "theorem8" && section.name == "theorem8_limit" && options.format != "csv");
  };
  const std::vector<Section> sections = Sections(grid);
  if (options.format == "json") {
    json tables = json::object();
    for (const Section& section : sections) {
      if (wanted(section)) tables[section.name] = section.table.Json();
    }
    std::cout << json{{"closed_form", options.paper},
                      {"head_dim", options.head_dim},
                      {"pairs", grid.pairs},
                      {"amplitudes", 1},
                      {"cap_lambda", grid.cap},
                      {"tables", tables}}
                     .dump(2)
              << "\n";
    return kOk;
  }
  if (options.format == "table") {
    std::cout << "Paper 003's closed forms (appendices B and C), computed: head dimension d = " << options.head_dim
              << " (h = " << grid.pairs << " rotary pairs), unit amplitudes, lambda(M) "
              << (grid.cap ? "capped at h" : "not capped at h (as the paper's tables)") << "\n\n";
  }
  for (const Section& section : sections) {
    if (!wanted(section)) continue;
    if (options.format == "table") std::cout << section.heading << "\n";
    section.table.Print(std::cout, options.format);
    if (options.format == "table") std::cout << "\n";
  }
  return kOk;
}

}  // namespace rung::cli

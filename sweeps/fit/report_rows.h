// sweeps/fit/report_rows.h
//
// The rows of a compute-multiplier report as `rung fit --format json` writes them: one ReportRow per
// (variant, ladder point, estimator) and one per E of the sensitivity grid (role "e_sensitivity"),
// each row carrying what it needs of the report around it (baseline, compute count, the variant's
// fitted law, the bootstrap's unit and seed, the tuned value). The one typed form of a fit's result:
// the coordinator stores it as JSON (ReportRowToJson), sends it typed (proto/rung.proto, FitReportRow,
// the same fields under the same names) and the CLI and the dashboard read it as a type.
//
// JSON form: the keys of the fields, in their order here; `multiplier` and `loss_sd` are always
// written (null when undefined; loss_sd is undefined with one seed), every other std::optional and
// empty string is left out, and so are nested objects that are unset. ReportRowFromJson reads that
// form back, field for field (ReportRowToJson(ReportRowFromJson(json)) == json); a document without
// variant, label, compute, loss, estimator or role, or with a key of the wrong JSON type, is an error
// naming the key. Keys it does not know are ignored.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "sweeps/fit/compute_multipliers.h"

namespace rung::fit {

// Mean and spread over seeds of a per-seed quantity (SeedStats as reported).
struct ReportSeedStats {
  int64_t n = 0;          // seeds with a value
  int64_t undefined = 0;  // seeds where it was undefined
  double mean = 0;
  std::optional<double> sd;  // undefined with fewer than two
};

// The variant's own power law in the row's mode: L = A C^-alpha + E = A_at_c_ref (C / c_ref)^-alpha + E.
struct ReportLaw {
  double A = 0;
  double A_at_c_ref = 0;
  double c_ref = 1;
  double alpha = 0;
  double E = 0;
  double rmse = 0;  // nats
};

// An interval of the multiplier and what it rests on (compute_multipliers.h, "Intervals"). Fits
// stored before constructions were named have a percentile bootstrap with unit "seeds" or "runs"
// and no construction.
struct ReportInterval {
  double level = 0.95;
  double low = 0;
  double high = 0;
  int64_t replicates = 0;    // bootstrap: defined replicates behind it; 0 for t
  std::string unit;          // what was counted as independent: "seeds" or "runs"
  uint64_t seed = 0;         // bootstrap: its generator's seed
  std::string construction;  // "jackknife gap t" or "percentile bootstrap" ("jackknife t", "t": stored earlier)
  int64_t units = 0;         // how many independent units it rests on
  std::optional<double> df;  // t: degrees of freedom
};

// One ladder label's share of a seed interval's variance (GapStratum as reported).
struct ReportGapStratum {
  std::string label;
  int64_t seeds = 0;    // the label's seeds left out one at a time (units)
  double variance = 0;  // V_l at the row's estimate, nats^2
};

struct ReportRow {
  std::string variant;
  std::string label;
  double compute = 0;         // C_var, FLOPs
  std::string compute_count;  // how compute was counted, e.g. "6 N_nonembedding D"; "" when given
  double loss = 0;            // seed-mean loss
  std::string estimator;      // EstimatorName
  std::optional<double> multiplier;  // CM; unset when undefined (see undefined_reason)
  std::string role;                  // "estimate" or "e_sensitivity"
  std::string baseline;              // the baseline variant
  int64_t seeds = 1;
  std::optional<double> loss_sd;  // over seeds; unset with one seed
  std::optional<double> seconds;  // seed-mean wall-clock seconds
  std::optional<double> e;        // power laws: the E of the baseline's fit behind the row
  std::optional<double> baseline_compute;
  std::string how;               // piecewise: where the baseline was read
  std::string undefined_reason;  // why the multiplier is undefined
  std::optional<ReportLaw> fit;  // power-law estimates: the variant's own fit
  std::optional<double> fit_rmse;
  std::optional<double> baseline_fit_rmse;
  std::optional<double> baseline_fit_alpha;
  std::optional<ReportSeedStats> paired_multiplier;
  std::optional<ReportSeedStats> loss_gap;
  std::optional<ReportInterval> interval;
  std::string interval_note;  // why there is no interval
  std::vector<ReportGapStratum> gap_strata;  // seed intervals: the gap's variance by label; written when non-empty
  std::optional<double> p_value;  // t: two-sided p of CM = 1
  std::optional<double> p_holm;   // p_value, Holm-adjusted over the estimator's rows
  std::optional<double> wallclock_multiplier;
  std::string wallclock_undefined_reason;
  // Tuned sweeps: the tuned value the point's runs used and how it was chosen.
  std::optional<double> lr;
  bool lr_bracketed = false;
  bool lr_extrapolated = false;
  std::string lr_status;
};

// Every row of the report: its estimates, then its E-sensitivity rows.
std::vector<ReportRow> ReportRows(const MultiplierReport& report);

nlohmann::ordered_json ReportRowToJson(const ReportRow& row);
// A JSON array of rows (what ReportToJson writes, and the coordinator stores).
nlohmann::ordered_json ReportRowsToJson(const std::vector<ReportRow>& rows);

// INVALID_ARGUMENT naming the key (and the row's index for an array).
StatusOr<ReportRow> ReportRowFromJson(const nlohmann::json& json);
StatusOr<std::vector<ReportRow>> ReportRowsFromJson(const nlohmann::json& json);

}  // namespace rung::fit

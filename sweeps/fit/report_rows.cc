// sweeps/fit/report_rows.cc
#include "sweeps/fit/report_rows.h"

#include "sweeps/fit/report_format.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

namespace rung::fit {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

ReportSeedStats StatsOf(const SeedStats& stats) {
  ReportSeedStats out;
  out.n = stats.n;
  out.undefined = stats.undefined;
  out.mean = stats.mean;
  if (stats.n > 1) out.sd = stats.sd;
  return out;
}

ReportRow RowOf(const MultiplierRow& row, const MultiplierReport& report, const std::string& role) {
  ReportRow out;
  out.variant = row.variant;
  out.label = row.label;
  out.compute = row.compute;
  out.compute_count = report.compute_count;
  out.loss = row.loss;
  out.estimator = EstimatorName(row.estimator);
  out.multiplier = row.multiplier;
  out.role = role;
  out.baseline = report.baseline;
  out.seeds = row.seeds;
  if (row.seeds > 1) out.loss_sd = row.loss_sd;
  out.seconds = row.seconds;
  out.e = row.e;
  out.baseline_compute = row.baseline_compute;
  out.how = row.how;
  out.undefined_reason = row.why;
  if (IsPowerLaw(row.estimator) && role == "estimate") {
    const EMode mode = row.estimator == Estimator::kPowerLawSharedE  ? EMode::kShared
                       : row.estimator == Estimator::kPowerLawFixedE ? EMode::kFixed
                                                                     : EMode::kFree;
    for (const FitSummary& summary : report.fits) {
      if (summary.variant != row.variant || summary.mode != mode || !summary.fit) continue;
      const PowerLaw& law = summary.fit->law;
      out.fit = ReportLaw{law.A(), std::exp(law.log_a), law.c_ref, law.alpha, law.e, summary.fit->rmse};
    }
  }
  out.fit_rmse = row.fit_rmse;
  out.baseline_fit_rmse = row.baseline_fit_rmse;
  out.baseline_fit_alpha = row.baseline_fit_alpha;
  if (row.paired_multiplier) out.paired_multiplier = StatsOf(*row.paired_multiplier);
  if (row.loss_gap) out.loss_gap = StatsOf(*row.loss_gap);
  if (row.interval) {
    const Interval& interval = *row.interval;
    const bool bootstrap = interval.construction == "percentile bootstrap";
    out.interval = ReportInterval{interval.level,   interval.low,           interval.high,
                                  interval.replicates, interval.unit,       bootstrap ? report.bootstrap_seed : 0,
                                  interval.construction, interval.units,    interval.df};
  }
  out.interval_note = row.interval_note;
  for (const GapStratum& stratum : row.gap_strata) {
    out.gap_strata.push_back({stratum.label, stratum.seeds, stratum.variance});
  }
  out.p_value = row.p_value;
  out.p_holm = row.p_holm;
  out.wallclock_multiplier = row.wallclock_multiplier;
  out.wallclock_undefined_reason = row.wallclock_why;
  if (const TunedPoint* tuned = report.TunedAt(row.variant, row.label)) {
    out.lr = tuned->value;
    out.lr_bracketed = tuned->status == "bracketed";
    out.lr_extrapolated = tuned->status == "extrapolated";
    out.lr_status = tuned->status;
  }
  return out;
}

ordered_json StatsJson(const ReportSeedStats& stats) {
  return ordered_json{{"n", stats.n},
                      {"undefined", stats.undefined},
                      {"mean", stats.mean},
                      {"sd", stats.sd ? ordered_json(*stats.sd) : ordered_json(nullptr)}};
}

// Reads the keys of one JSON object into typed values; the first problem is kept, naming its key.
class FieldReader {
 public:
  explicit FieldReader(const json& object) : object_(object) {}

  template <class T>
  void Required(const char* key, T* out) {
    if (!object_.contains(key)) return Fail(key, "is missing");
    Read(key, object_[key], out);
  }
  // Absent and null leave `out` as it is.
  template <class T>
  void Optional(const char* key, T* out) {
    if (!object_.contains(key) || object_[key].is_null()) return;
    Read(key, object_[key], out);
  }
  template <class T>
  void Optional(const char* key, std::optional<T>* out) {
    if (!object_.contains(key) || object_[key].is_null()) return;
    T value{};
    Read(key, object_[key], &value);
    *out = value;
  }
  const Status& status() const { return status_; }

 private:
  void Fail(const std::string& key, const std::string& what) {
    if (status_.ok()) status_ = Status::InvalidArgument("'" + key + "' " + what);
  }
  void Read(const std::string& key, const json& value, std::string* out) {
    if (!value.is_string()) return Fail(key, "must be a string");
    *out = value.get<std::string>();
  }
  void Read(const std::string& key, const json& value, double* out) {
    if (!value.is_number()) return Fail(key, "must be a number");
    *out = value.get<double>();
  }
  void Read(const std::string& key, const json& value, int64_t* out) {
    if (!value.is_number_integer()) return Fail(key, "must be an integer");
    *out = value.get<int64_t>();
  }
  void Read(const std::string& key, const json& value, uint64_t* out) {
    if (!value.is_number_unsigned()) return Fail(key, "must be a non-negative integer");
    *out = value.get<uint64_t>();
  }
  void Read(const std::string& key, const json& value, bool* out) {
    if (!value.is_boolean()) return Fail(key, "must be true or false");
    *out = value.get<bool>();
  }
  void Read(const std::string& key, const json& value, ReportSeedStats* out) {
    if (!value.is_object()) return Fail(key, "must be an object");
    FieldReader inner(value);
    inner.Required("n", &out->n);
    inner.Optional("undefined", &out->undefined);
    inner.Required("mean", &out->mean);
    inner.Optional("sd", &out->sd);
    Nested(key, inner);
  }
  void Read(const std::string& key, const json& value, ReportLaw* out) {
    if (!value.is_object()) return Fail(key, "must be an object");
    FieldReader inner(value);
    inner.Required("A", &out->A);
    inner.Required("A_at_c_ref", &out->A_at_c_ref);
    inner.Required("c_ref", &out->c_ref);
    inner.Required("alpha", &out->alpha);
    inner.Required("E", &out->E);
    inner.Required("rmse", &out->rmse);
    Nested(key, inner);
  }
  void Read(const std::string& key, const json& value, ReportInterval* out) {
    if (!value.is_object()) return Fail(key, "must be an object");
    FieldReader inner(value);
    inner.Required("level", &out->level);
    inner.Required("low", &out->low);
    inner.Required("high", &out->high);
    inner.Required("replicates", &out->replicates);
    inner.Optional("unit", &out->unit);
    inner.Optional("seed", &out->seed);
    inner.Optional("construction", &out->construction);
    inner.Optional("units", &out->units);
    inner.Optional("df", &out->df);
    Nested(key, inner);
  }
  void Read(const std::string& key, const json& value, std::vector<ReportGapStratum>* out) {
    if (!value.is_array()) return Fail(key, "must be an array");
    for (const json& element : value) {
      if (!element.is_object()) return Fail(key, "must be an array of objects");
      FieldReader inner(element);
      ReportGapStratum stratum;
      inner.Required("label", &stratum.label);
      inner.Required("seeds", &stratum.seeds);
      inner.Required("variance", &stratum.variance);
      Nested(key, inner);
      out->push_back(std::move(stratum));
    }
  }
  void Nested(const std::string& key, const FieldReader& inner) {
    if (!inner.status().ok() && status_.ok()) {
      status_ = Status::InvalidArgument("'" + key + "': " + inner.status().message());
    }
  }

  const json& object_;
  Status status_;
};

std::string PredictedLabel(const PredictedMultiplier& row) {
  return !row.label.empty() ? row.label : "C=" + FormatCompute(row.compute);
}

ReportRow RowOf(const PredictedMultiplier& row, const MultiplierReport& report) {
  ReportRow out;
  out.variant = row.variant;
  out.label = PredictedLabel(row);
  out.compute = row.compute;
  out.compute_count = report.compute_count;
  out.loss = row.loss;
  out.estimator = "law_" + row.allocation;
  out.multiplier = row.multiplier;
  out.role = "predicted";
  out.baseline = report.baseline;
  out.seeds = 0;
  char where[96];
  std::snprintf(where, sizeof(where), "L(N, D) at N %.4g, D %.4g", row.n, row.d);
  out.how = std::string(where) + (row.extrapolated ? ", extrapolated beyond the runs" : "");
  out.undefined_reason = row.multiplier ? "" : row.why;
  if (row.interval) {
    const IntervalBasis& basis = report.predicted_basis;
    out.interval = ReportInterval{report.predicted_level, row.interval->low, row.interval->high, basis.used,
                                  basis.unit, report.bootstrap_seed, basis.construction, basis.units, std::nullopt};
  } else if (row.multiplier) {
    out.interval_note = !row.why.empty() ? row.why : report.predicted_basis.why;
  }
  return out;
}

}  // namespace

std::vector<ReportRow> ReportRows(const MultiplierReport& report) {
  std::vector<ReportRow> rows;
  rows.reserve(report.rows.size() + report.e_sensitivity.size() + report.predicted.size());
  for (const MultiplierRow& row : report.rows) rows.push_back(RowOf(row, report, "estimate"));
  for (const MultiplierRow& row : report.e_sensitivity) rows.push_back(RowOf(row, report, "e_sensitivity"));
  for (const PredictedMultiplier& row : report.predicted) rows.push_back(RowOf(row, report));
  return rows;
}

ordered_json ReportRowToJson(const ReportRow& row) {
  ordered_json out;
  out["variant"] = row.variant;
  out["label"] = row.label;
  out["compute"] = row.compute;
  if (!row.compute_count.empty()) out["compute_count"] = row.compute_count;
  out["loss"] = row.loss;
  out["estimator"] = row.estimator;
  out["multiplier"] = row.multiplier ? ordered_json(*row.multiplier) : ordered_json(nullptr);
  out["role"] = row.role;
  out["baseline"] = row.baseline;
  out["seeds"] = row.seeds;
  out["loss_sd"] = row.loss_sd ? ordered_json(*row.loss_sd) : ordered_json(nullptr);
  if (row.seconds) out["seconds"] = *row.seconds;
  if (row.e) out["e"] = *row.e;
  if (row.baseline_compute) out["baseline_compute"] = *row.baseline_compute;
  if (!row.how.empty()) out["how"] = row.how;
  if (!row.undefined_reason.empty()) out["undefined_reason"] = row.undefined_reason;
  if (row.fit) {
    out["fit"] = ordered_json{{"A", row.fit->A},     {"A_at_c_ref", row.fit->A_at_c_ref}, {"c_ref", row.fit->c_ref},
                              {"alpha", row.fit->alpha}, {"E", row.fit->E},                  {"rmse", row.fit->rmse}};
  }
  if (row.fit_rmse) out["fit_rmse"] = *row.fit_rmse;
  if (row.baseline_fit_rmse) out["baseline_fit_rmse"] = *row.baseline_fit_rmse;
  if (row.baseline_fit_alpha) out["baseline_fit_alpha"] = *row.baseline_fit_alpha;
  if (row.paired_multiplier) out["paired_multiplier"] = StatsJson(*row.paired_multiplier);
  if (row.loss_gap) out["loss_gap"] = StatsJson(*row.loss_gap);
  if (row.interval) {
    ordered_json interval = {{"level", row.interval->level},
                             {"low", row.interval->low},
                             {"high", row.interval->high},
                             {"replicates", row.interval->replicates},
                             {"unit", row.interval->unit},
                             {"seed", row.interval->seed}};
    if (!row.interval->construction.empty()) interval["construction"] = row.interval->construction;
    if (row.interval->units > 0) interval["units"] = row.interval->units;
    if (row.interval->df) interval["df"] = *row.interval->df;
    out["interval"] = interval;
  }
  if (!row.interval_note.empty()) out["interval_note"] = row.interval_note;
  if (!row.gap_strata.empty()) {
    ordered_json strata = ordered_json::array();
    for (const ReportGapStratum& stratum : row.gap_strata) {
      strata.push_back(
          ordered_json{{"label", stratum.label}, {"seeds", stratum.seeds}, {"variance", stratum.variance}});
    }
    out["gap_strata"] = strata;
  }
  if (row.p_value) out["p_value"] = *row.p_value;
  if (row.p_holm) out["p_holm"] = *row.p_holm;
  if (row.wallclock_multiplier) out["wallclock_multiplier"] = *row.wallclock_multiplier;
  if (!row.wallclock_undefined_reason.empty()) out["wallclock_undefined_reason"] = row.wallclock_undefined_reason;
  if (row.lr) {
    out["lr"] = *row.lr;
    out["lr_bracketed"] = row.lr_bracketed;
    out["lr_extrapolated"] = row.lr_extrapolated;
    out["lr_status"] = row.lr_status;
  }
  return out;
}

ordered_json ReportRowsToJson(const std::vector<ReportRow>& rows) {
  ordered_json out = ordered_json::array();
  for (const ReportRow& row : rows) out.push_back(ReportRowToJson(row));
  return out;
}

StatusOr<ReportRow> ReportRowFromJson(const json& document) {
  if (!document.is_object()) return Status::InvalidArgument("a report row must be a JSON object");
  ReportRow row;
  FieldReader read(document);
  read.Required("variant", &row.variant);
  read.Required("label", &row.label);
  read.Required("compute", &row.compute);
  read.Optional("compute_count", &row.compute_count);
  read.Required("loss", &row.loss);
  read.Required("estimator", &row.estimator);
  read.Optional("multiplier", &row.multiplier);
  read.Required("role", &row.role);
  read.Optional("baseline", &row.baseline);
  read.Optional("seeds", &row.seeds);
  read.Optional("loss_sd", &row.loss_sd);
  read.Optional("seconds", &row.seconds);
  read.Optional("e", &row.e);
  read.Optional("baseline_compute", &row.baseline_compute);
  read.Optional("how", &row.how);
  read.Optional("undefined_reason", &row.undefined_reason);
  read.Optional("fit", &row.fit);
  read.Optional("fit_rmse", &row.fit_rmse);
  read.Optional("baseline_fit_rmse", &row.baseline_fit_rmse);
  read.Optional("baseline_fit_alpha", &row.baseline_fit_alpha);
  read.Optional("paired_multiplier", &row.paired_multiplier);
  read.Optional("loss_gap", &row.loss_gap);
  read.Optional("interval", &row.interval);
  read.Optional("interval_note", &row.interval_note);
  read.Optional("gap_strata", &row.gap_strata);
  read.Optional("p_value", &row.p_value);
  read.Optional("p_holm", &row.p_holm);
  read.Optional("wallclock_multiplier", &row.wallclock_multiplier);
  read.Optional("wallclock_undefined_reason", &row.wallclock_undefined_reason);
  read.Optional("lr", &row.lr);
  read.Optional("lr_bracketed", &row.lr_bracketed);
  read.Optional("lr_extrapolated", &row.lr_extrapolated);
  read.Optional("lr_status", &row.lr_status);
  if (!read.status().ok()) return read.status();
  return row;
}

StatusOr<std::vector<ReportRow>> ReportRowsFromJson(const json& document) {
  if (!document.is_array()) return Status::InvalidArgument("a report must be a JSON array of rows");
  std::vector<ReportRow> rows;
  rows.reserve(document.size());
  for (size_t index = 0; index < document.size(); ++index) {
    StatusOr<ReportRow> row = ReportRowFromJson(document[index]);
    if (!row.ok()) return Status::InvalidArgument("row " + std::to_string(index) + ": " + row.status().message());
    rows.push_back(std::move(row).value());
  }
  return rows;
}

}  // namespace rung::fit

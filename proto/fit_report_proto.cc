// proto/fit_report_proto.cc
#include "proto/fit_report_proto.h"

namespace rung::wire {
namespace {

v1::FitSeedStats ToProto(const fit::ReportSeedStats& stats) {
  v1::FitSeedStats out;
  out.set_n(stats.n);
  out.set_undefined(stats.undefined);
  out.set_mean(stats.mean);
  if (stats.sd) out.set_sd(*stats.sd);
  return out;
}

fit::ReportSeedStats FromProto(const v1::FitSeedStats& stats) {
  fit::ReportSeedStats out;
  out.n = stats.n();
  out.undefined = stats.undefined();
  out.mean = stats.mean();
  if (stats.has_sd()) out.sd = stats.sd();
  return out;
}

}  // namespace

v1::FitReportRow ToProto(const fit::ReportRow& row) {
  v1::FitReportRow out;
  out.set_variant(row.variant);
  out.set_label(row.label);
  out.set_compute(row.compute);
  out.set_compute_count(row.compute_count);
  out.set_loss(row.loss);
  out.set_estimator(row.estimator);
  if (row.multiplier) out.set_multiplier(*row.multiplier);
  out.set_role(row.role);
  out.set_baseline(row.baseline);
  out.set_seeds(row.seeds);
  if (row.loss_sd) out.set_loss_sd(*row.loss_sd);
  if (row.seconds) out.set_seconds(*row.seconds);
  if (row.e) out.set_e(*row.e);
  if (row.baseline_compute) out.set_baseline_compute(*row.baseline_compute);
  out.set_how(row.how);
  out.set_undefined_reason(row.undefined_reason);
  if (row.fit) {
    v1::FitLaw* law = out.mutable_fit();
    law->set_a(row.fit->A);
    law->set_a_at_c_ref(row.fit->A_at_c_ref);
    law->set_c_ref(row.fit->c_ref);
    law->set_alpha(row.fit->alpha);
    law->set_e(row.fit->E);
    law->set_rmse(row.fit->rmse);
  }
  if (row.fit_rmse) out.set_fit_rmse(*row.fit_rmse);
  if (row.baseline_fit_rmse) out.set_baseline_fit_rmse(*row.baseline_fit_rmse);
  if (row.baseline_fit_alpha) out.set_baseline_fit_alpha(*row.baseline_fit_alpha);
  if (row.paired_multiplier) *out.mutable_paired_multiplier() = ToProto(*row.paired_multiplier);
  if (row.loss_gap) *out.mutable_loss_gap() = ToProto(*row.loss_gap);
  if (row.interval) {
    v1::FitInterval* interval = out.mutable_interval();
    interval->set_level(row.interval->level);
    interval->set_low(row.interval->low);
    interval->set_high(row.interval->high);
    interval->set_replicates(row.interval->replicates);
    interval->set_unit(row.interval->unit);
    interval->set_seed(row.interval->seed);
    interval->set_construction(row.interval->construction);
    interval->set_units(row.interval->units);
    if (row.interval->df) interval->set_df(*row.interval->df);
  }
  out.set_interval_note(row.interval_note);
  for (const fit::ReportGapStratum& stratum : row.gap_strata) {
    v1::FitGapStratum* added = out.add_gap_strata();
    added->set_label(stratum.label);
    added->set_seeds(stratum.seeds);
    added->set_variance(stratum.variance);
  }
  if (row.p_value) out.set_p_value(*row.p_value);
  if (row.p_holm) out.set_p_holm(*row.p_holm);
  if (row.wallclock_multiplier) out.set_wallclock_multiplier(*row.wallclock_multiplier);
  out.set_wallclock_undefined_reason(row.wallclock_undefined_reason);
  if (row.lr) out.set_lr(*row.lr);
  out.set_lr_bracketed(row.lr_bracketed);
  out.set_lr_extrapolated(row.lr_extrapolated);
  out.set_lr_status(row.lr_status);
  return out;
}

fit::ReportRow FromProto(const v1::FitReportRow& row) {
  fit::ReportRow out;
  out.variant = row.variant();
  out.label = row.label();
  out.compute = row.compute();
  out.compute_count = row.compute_count();
  out.loss = row.loss();
  out.estimator = row.estimator();
  if (row.has_multiplier()) out.multiplier = row.multiplier();
  out.role = row.role();
  out.baseline = row.baseline();
  out.seeds = row.seeds();
  if (row.has_loss_sd()) out.loss_sd = row.loss_sd();
  if (row.has_seconds()) out.seconds = row.seconds();
  if (row.has_e()) out.e = row.e();
  if (row.has_baseline_compute()) out.baseline_compute = row.baseline_compute();
  out.how = row.how();
  out.undefined_reason = row.undefined_reason();
  if (row.has_fit()) {
    const v1::FitLaw& law = row.fit();
    out.fit = fit::ReportLaw{law.a(), law.a_at_c_ref(), law.c_ref(), law.alpha(), law.e(), law.rmse()};
  }
  if (row.has_fit_rmse()) out.fit_rmse = row.fit_rmse();
  if (row.has_baseline_fit_rmse()) out.baseline_fit_rmse = row.baseline_fit_rmse();
  if (row.has_baseline_fit_alpha()) out.baseline_fit_alpha = row.baseline_fit_alpha();
  if (row.has_paired_multiplier()) out.paired_multiplier = FromProto(row.paired_multiplier());
  if (row.has_loss_gap()) out.loss_gap = FromProto(row.loss_gap());
  if (row.has_interval()) {
    const v1::FitInterval& interval = row.interval();
    out.interval = fit::ReportInterval{interval.level(),
                                       interval.low(),
                                       interval.high(),
                                       interval.replicates(),
                                       interval.unit(),
                                       interval.seed(),
                                       interval.construction(),
                                       interval.units(),
                                       interval.has_df() ? std::optional<double>(interval.df()) : std::nullopt};
  }
  out.interval_note = row.interval_note();
  for (const v1::FitGapStratum& stratum : row.gap_strata()) {
    out.gap_strata.push_back({stratum.label(), stratum.seeds(), stratum.variance()});
  }
  if (row.has_p_value()) out.p_value = row.p_value();
  if (row.has_p_holm()) out.p_holm = row.p_holm();
  if (row.has_wallclock_multiplier()) out.wallclock_multiplier = row.wallclock_multiplier();
  out.wallclock_undefined_reason = row.wallclock_undefined_reason();
  if (row.has_lr()) out.lr = row.lr();
  out.lr_bracketed = row.lr_bracketed();
  out.lr_extrapolated = row.lr_extrapolated();
  out.lr_status = row.lr_status();
  return out;
}

}  // namespace rung::wire

#include "proto/law_report_proto.h"

namespace rung::wire {
namespace {

void SetRange(const std::optional<fit::Range>& range, v1::LawRange* out) {
  out->set_low(range->low);
  out->set_high(range->high);
}

template <typename Message>
std::optional<fit::Range> RangeOf(bool has, const Message& range) {
  if (!has) return std::nullopt;
  return fit::Range{range.low(), range.high()};
}

void ToProto(const fit::IntervalBasis& basis, v1::LawIntervalBasis* out) {
  out->set_construction(basis.construction);
  out->set_unit(basis.unit);
  out->set_units(basis.units);
  out->set_replicates(basis.replicates);
  out->set_used(basis.used);
  out->set_why(basis.why);
}

fit::IntervalBasis FromProto(const v1::LawIntervalBasis& basis) {
  return {basis.construction(), basis.unit(), basis.units(), basis.replicates(), basis.used(), basis.why()};
}

}  // namespace

v1::LawReport ToProto(const fit::LawReport& report) {
  v1::LawReport out;
  out.set_source(report.source);
  out.set_metric(report.metric);
  out.set_unit(report.unit);
  out.set_huber_delta(report.fit_options.huber_delta);
  out.set_sharing(fit::LawSharingName(report.fit_options.sharing));
  out.set_grid_points(report.grid_points);
  out.set_lbfgs_starts(report.fit_options.lbfgs_starts);
  out.set_starts(report.starts);
  out.set_converged_starts(report.converged_starts);
  out.set_objective(report.objective);
  out.set_level(report.level);
  out.set_seed(report.seed);
  for (const fit::VariantLaw& variant : report.variants) {
    v1::VariantLaw* row = out.add_variants();
    row->set_variant(variant.variant);
    row->set_e(variant.law.e);
    row->set_a(variant.law.a);
    row->set_b(variant.law.b);
    row->set_alpha(variant.law.alpha);
    row->set_beta(variant.law.beta);
    const fit::LawParameterIntervals& ci = variant.intervals;
    if (ci.e) SetRange(ci.e, row->mutable_e_interval());
    if (ci.a) SetRange(ci.a, row->mutable_a_interval());
    if (ci.b) SetRange(ci.b, row->mutable_b_interval());
    if (ci.alpha) SetRange(ci.alpha, row->mutable_alpha_interval());
    if (ci.beta) SetRange(ci.beta, row->mutable_beta_interval());
    if (ci.n_exponent) SetRange(ci.n_exponent, row->mutable_n_exponent_interval());
    if (ci.d_exponent) SetRange(ci.d_exponent, row->mutable_d_exponent_interval());
    row->set_rmse(variant.rmse);
    row->set_points(variant.points);
    if (variant.n_exponent) row->set_n_exponent(*variant.n_exponent);
    if (variant.d_exponent) row->set_d_exponent(*variant.d_exponent);
  }
  for (const fit::LawFittedRun& run : report.runs) {
    v1::LawFittedRun* row = out.add_runs();
    row->set_variant(run.variant);
    row->set_origin(run.origin);
    row->set_n(run.n);
    row->set_d(run.d);
    row->set_loss(run.loss);
    row->set_fitted(run.fitted);
  }
  ToProto(report.parameter_basis, out.mutable_parameter_basis());
  ToProto(report.prediction_basis, out.mutable_prediction_basis());
  out.set_baseline(report.baseline);
  out.set_tokens_per_param(report.tokens_per_param);
  for (const fit::PredictedMultiplier& multiplier : report.multipliers) {
    v1::PredictedMultiplier* row = out.add_multipliers();
    row->set_variant(multiplier.variant);
    row->set_compute(multiplier.compute);
    row->set_allocation(multiplier.allocation);
    row->set_n(multiplier.n);
    row->set_d(multiplier.d);
    if (multiplier.multiplier) row->set_multiplier(*multiplier.multiplier);
    if (multiplier.interval) SetRange(multiplier.interval, row->mutable_interval());
    row->set_extrapolated(multiplier.extrapolated);
    row->set_why(multiplier.why);
  }
  if (report.rollout) {
    const fit::Rollout& rollout = *report.rollout;
    v1::LawRollout* row = out.mutable_rollout();
    for (double n : rollout.held_out_n) row->add_held_out_n(n);
    for (const fit::RolloutPoint& point : rollout.points) {
      v1::RolloutPoint* one = row->add_points();
      one->set_variant(point.variant);
      one->set_origin(point.origin);
      one->set_n(point.n);
      one->set_d(point.d);
      one->set_loss(point.loss);
      one->set_predicted(point.predicted);
      if (point.interval) SetRange(point.interval, one->mutable_interval());
      one->set_inside(point.inside);
    }
    row->set_mean_abs_error(rollout.mean_abs_error);
    row->set_mean_relative_error(rollout.mean_relative_error);
    row->set_inside(rollout.inside);
    ToProto(rollout.basis, row->mutable_basis());
    row->set_why(rollout.why);
  }
  if (report.isoflop) {
    const fit::IsoflopReport& iso = *report.isoflop;
    v1::IsoflopProfiles* row = out.mutable_isoflop();
    row->set_tolerance(iso.tolerance);
    for (const fit::IsoflopVariant& variant : iso.variants) {
      v1::IsoflopVariant* one = row->add_variants();
      one->set_variant(variant.variant);
      for (const fit::IsoflopBudget& budget : variant.budgets) {
        v1::IsoflopBudget* b = one->add_budgets();
        b->set_compute(budget.compute);
        b->set_runs(budget.runs);
        b->set_sizes(budget.sizes);
        for (double c : budget.parabola) b->add_parabola(c);
        if (budget.n_opt) b->set_n_opt(*budget.n_opt);
        if (budget.d_opt) b->set_d_opt(*budget.d_opt);
        if (budget.loss_opt) b->set_loss_opt(*budget.loss_opt);
        if (budget.n_opt_low) {
          b->mutable_n_opt_interval()->set_low(*budget.n_opt_low);
          b->mutable_n_opt_interval()->set_high(*budget.n_opt_high);
        }
        b->set_why(budget.why);
      }
      if (variant.g) one->set_g(*variant.g);
      if (variant.a) one->set_a(*variant.a);
      if (variant.g_d) one->set_g_d(*variant.g_d);
      if (variant.b) one->set_b(*variant.b);
      if (variant.a_low) {
        one->mutable_a_interval()->set_low(*variant.a_low);
        one->mutable_a_interval()->set_high(*variant.a_high);
      }
      one->set_why(variant.why);
    }
    row->set_construction(iso.construction);
    row->set_unit(iso.unit);
    row->set_units(iso.units);
    row->set_replicates(iso.replicates);
    row->set_used(iso.used);
    row->set_intervals_why(iso.intervals_why);
  }
  out.set_isoflop_why(report.isoflop_why);
  for (const std::string& note : report.notes) out.add_notes(note);
  return out;
}

fit::LawReport FromProto(const v1::LawReport& report) {
  fit::LawReport out;
  out.source = report.source();
  out.metric = report.metric();
  out.unit = report.unit();
  out.fit_options.huber_delta = report.huber_delta();
  StatusOr<fit::LawSharing> sharing = fit::ParseLawSharing(report.sharing());
  out.fit_options.sharing = sharing.ok() ? *sharing : fit::LawSharing::kNone;
  out.fit_options.lbfgs_starts = report.lbfgs_starts();
  out.grid_points = report.grid_points();
  out.starts = report.starts();
  out.converged_starts = report.converged_starts();
  out.objective = report.objective();
  out.level = report.level();
  out.seed = report.seed();
  for (const v1::VariantLaw& row : report.variants()) {
    fit::VariantLaw variant;
    variant.variant = row.variant();
    variant.law = {row.e(), row.a(), row.b(), row.alpha(), row.beta()};
    variant.intervals.e = RangeOf(row.has_e_interval(), row.e_interval());
    variant.intervals.a = RangeOf(row.has_a_interval(), row.a_interval());
    variant.intervals.b = RangeOf(row.has_b_interval(), row.b_interval());
    variant.intervals.alpha = RangeOf(row.has_alpha_interval(), row.alpha_interval());
    variant.intervals.beta = RangeOf(row.has_beta_interval(), row.beta_interval());
    variant.intervals.n_exponent = RangeOf(row.has_n_exponent_interval(), row.n_exponent_interval());
    variant.intervals.d_exponent = RangeOf(row.has_d_exponent_interval(), row.d_exponent_interval());
    variant.rmse = row.rmse();
    variant.points = row.points();
    if (row.has_n_exponent()) variant.n_exponent = row.n_exponent();
    if (row.has_d_exponent()) variant.d_exponent = row.d_exponent();
    out.variants.push_back(variant);
  }
  for (const v1::LawFittedRun& row : report.runs()) {
    out.runs.push_back({row.variant(), row.origin(), row.n(), row.d(), row.loss(), row.fitted()});
  }
  out.parameter_basis = FromProto(report.parameter_basis());
  out.prediction_basis = FromProto(report.prediction_basis());
  out.baseline = report.baseline();
  out.tokens_per_param = report.tokens_per_param();
  for (const v1::PredictedMultiplier& row : report.multipliers()) {
    fit::PredictedMultiplier multiplier;
    multiplier.variant = row.variant();
    multiplier.compute = row.compute();
    multiplier.allocation = row.allocation();
    multiplier.n = row.n();
    multiplier.d = row.d();
    if (row.has_multiplier()) multiplier.multiplier = row.multiplier();
    multiplier.interval = RangeOf(row.has_interval(), row.interval());
    multiplier.extrapolated = row.extrapolated();
    multiplier.why = row.why();
    out.multipliers.push_back(multiplier);
  }
  if (report.has_rollout()) {
    const v1::LawRollout& row = report.rollout();
    fit::Rollout rollout;
    rollout.held_out_n.assign(row.held_out_n().begin(), row.held_out_n().end());
    for (const v1::RolloutPoint& one : row.points()) {
      rollout.points.push_back({one.variant(), one.origin(), one.n(), one.d(), one.loss(), one.predicted(),
                                RangeOf(one.has_interval(), one.interval()), one.inside()});
    }
    rollout.mean_abs_error = row.mean_abs_error();
    rollout.mean_relative_error = row.mean_relative_error();
    rollout.inside = row.inside();
    rollout.basis = FromProto(row.basis());
    rollout.why = row.why();
    out.rollout = rollout;
  }
  if (report.has_isoflop()) {
    const v1::IsoflopProfiles& row = report.isoflop();
    fit::IsoflopReport iso;
    iso.tolerance = row.tolerance();
    for (const v1::IsoflopVariant& one : row.variants()) {
      fit::IsoflopVariant variant;
      variant.variant = one.variant();
      for (const v1::IsoflopBudget& b : one.budgets()) {
        fit::IsoflopBudget budget;
        budget.compute = b.compute();
        budget.runs = b.runs();
        budget.sizes = b.sizes();
        budget.parabola.assign(b.parabola().begin(), b.parabola().end());
        if (b.has_n_opt()) budget.n_opt = b.n_opt();
        if (b.has_d_opt()) budget.d_opt = b.d_opt();
        if (b.has_loss_opt()) budget.loss_opt = b.loss_opt();
        if (b.has_n_opt_interval()) {
          budget.n_opt_low = b.n_opt_interval().low();
          budget.n_opt_high = b.n_opt_interval().high();
        }
        budget.why = b.why();
        variant.budgets.push_back(budget);
      }
      if (one.has_g()) variant.g = one.g();
      if (one.has_a()) variant.a = one.a();
      if (one.has_g_d()) variant.g_d = one.g_d();
      if (one.has_b()) variant.b = one.b();
      if (one.has_a_interval()) {
        variant.a_low = one.a_interval().low();
        variant.a_high = one.a_interval().high();
      }
      variant.why = one.why();
      iso.variants.push_back(variant);
    }
    iso.construction = row.construction();
    iso.unit = row.unit();
    iso.units = row.units();
    iso.replicates = row.replicates();
    iso.used = row.used();
    iso.intervals_why = row.intervals_why();
    out.isoflop = iso;
  }
  out.isoflop_why = report.isoflop_why();
  out.notes.assign(report.notes().begin(), report.notes().end());
  return out;
}

}  // namespace rung::wire

// coordinator/domain/sweep_curves.cc
#include "coordinator/domain/sweep_curves.h"

#include <algorithm>
#include <set>

#include "coordinator/domain/curve_downsampling.h"

namespace rung {
namespace {

double AxisValue(const CurvePoint& point, CurveAxis axis) {
  switch (axis) {
    case CurveAxis::kTokens: return static_cast<double>(point.point.tokens);
    case CurveAxis::kFlops: return point.point.flops;
    case CurveAxis::kWallTime: return point.point.wall_time;
    case CurveAxis::kStep: break;
  }
  return static_cast<double>(point.point.step);
}

SweepCurve Downsample(const TrialCurve& curve, CurveAxis axis, size_t max_points) {
  std::vector<double> values;
  values.reserve(curve.points.size());
  for (const CurvePoint& point : curve.points) values.push_back(point.point.value);
  SweepCurve shown;
  shown.trial_id = curve.trial_id;
  shown.name = curve.name;
  shown.stored_points = static_cast<int64_t>(curve.points.size());
  for (size_t index : MinMaxBucketIndices(values, max_points)) {
    const CurvePoint& point = curve.points[index];
    shown.steps.push_back(point.point.step);
    shown.x.push_back(AxisValue(point, axis));
    shown.values.push_back(point.point.value);
  }
  return shown;
}

}  // namespace

StatusOr<std::vector<SweepCurve>> ReadSweepCurves(Coordinator& coordinator, const CurvesQuery& query) {
  std::vector<std::string> names = query.names;
  if (names.empty()) {
    RUNG_ASSIGN_OR_RETURN(SweepRecord sweep, coordinator.sweeps().Get(query.sweep_id));
    names.push_back(sweep.metric.name.empty() ? "val_loss" : sweep.metric.name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<int64_t> trial_ids = query.trial_ids;
  std::sort(trial_ids.begin(), trial_ids.end());
  trial_ids.erase(std::unique(trial_ids.begin(), trial_ids.end()), trial_ids.end());
  const size_t max_points = std::clamp(query.max_points, kMinDownsampledPoints, kMaxCurvePoints);

  std::vector<SweepCurve> curves;
  std::set<std::string> drawn;  // names with at least one curve
  RUNG_RETURN_IF_ERROR(coordinator.metrics().ForEachSweepCurve(
      query.sweep_id, names, trial_ids, [&](TrialCurve&& curve) -> Status {
        drawn.insert(curve.name);
        curves.push_back(Downsample(curve, query.x_axis, max_points));
        return Status::Ok();
      }));
  if (drawn.size() == names.size()) return curves;
  // A name without a curve: one the sweep reported otherwise (a summary), or not yet (nothing
  // reported), or a mistake. Only this rare case reads every name of the sweep.
  RUNG_ASSIGN_OR_RETURN(std::vector<std::string> reported, coordinator.results().MetricNames(query.sweep_id));
  if (reported.empty()) return curves;
  for (const std::string& name : names) {
    if (drawn.count(name) > 0 || std::find(reported.begin(), reported.end(), name) != reported.end()) continue;
    std::string known;
    for (const std::string& each : reported) known += (known.empty() ? "" : ", ") + each;
    return Status::InvalidArgument("names: no trial of sweep " + std::to_string(query.sweep_id) +
                                   " reported a metric '" + name + "'; its trials reported: " + known);
  }
  return curves;
}

}  // namespace rung

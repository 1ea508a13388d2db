// coordinator/domain/sweep_curves.h
//
// Curves of many trials of one sweep at once, ready to draw (what UserService.GetCurves answers;
// the service converts): for each trial (all of the sweep's, or those asked for) and each metric
// asked for (default: the sweep's metric), its points by step, every attempt joined as GetMetrics
// joins them (the newest attempt's value of a step wins), against the x axis asked for, and
// downsampled to at most max_points by min/max per bucket (curve_downsampling.h). The store reads
// the sweep in one query (MetricStore::ForEachSweepCurve) and each curve is downsampled as it
// arrives, so memory holds the downsampled curves only.
//
// A metric that no trial of the sweep reported (neither a curve nor a summary) is INVALID_ARGUMENT,
// listing the names the sweep's trials reported, unless the sweep reported nothing yet (a sweep
// just submitted: its curves are empty, not an error).
//
// Example:
//   CurvesQuery query;
//   query.sweep_id = 1;
//   query.x_axis = CurveAxis::kFlops;
//   RUNG_ASSIGN_OR_RETURN(std::vector<SweepCurve> curves, ReadSweepCurves(coordinator, query));
//
// Thread safety: reads the store (thread-safe); no state of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/domain/coordinator.h"
#include "core/common/status.h"

namespace rung {

// The points per curve when a query names none, and the most a query gets.
inline constexpr size_t kDefaultCurvePoints = 1000;
inline constexpr size_t kMaxCurvePoints = 5000;

enum class CurveAxis { kStep, kTokens, kFlops, kWallTime };

struct CurvesQuery {
  int64_t sweep_id = 0;
  std::vector<std::string> names;   // empty: the sweep's metric
  std::vector<int64_t> trial_ids;   // empty: every trial of the sweep
  CurveAxis x_axis = CurveAxis::kStep;
  size_t max_points = kDefaultCurvePoints;  // per curve; taken into [kMinDownsampledPoints, kMaxCurvePoints]
};

// One metric of one trial, downsampled: three parallel arrays, by step.
struct SweepCurve {
  int64_t trial_id = 0;
  std::string name;
  std::vector<int64_t> steps;
  std::vector<double> x;       // the query's axis
  std::vector<double> values;  // NaN for a non-finite value
  int64_t stored_points = 0;   // before downsampling
};

// By trial id then name. Errors: NOT_FOUND (no such sweep), INVALID_ARGUMENT (a trial of another
// sweep, an unknown metric: see above), the store's.
StatusOr<std::vector<SweepCurve>> ReadSweepCurves(Coordinator& coordinator, const CurvesQuery& query);

}  // namespace rung

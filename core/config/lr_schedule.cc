#include "core/config/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace rung {

double LearningRateMultiplier(const ScheduleConfig& schedule, int64_t step, int64_t total_steps) {
  const double floor_fraction = schedule.final_lr_fraction;
  int64_t warmup = std::min(schedule.warmup_steps, std::max<int64_t>(total_steps - 1, 0));
  if (step < warmup) return static_cast<double>(step + 1) / static_cast<double>(warmup + 1);
  if (schedule.name == "constant") return 1.0;
  if (schedule.name == "wsd") {
    int64_t decay_steps = static_cast<int64_t>(std::ceil(schedule.decay_fraction * total_steps));
    int64_t decay_start = std::max(warmup, total_steps - decay_steps);
    if (step < decay_start) return 1.0;
    double span = static_cast<double>(std::max<int64_t>(total_steps - 1 - decay_start, 1));
    double progress = std::min(1.0, static_cast<double>(step - decay_start) / span);
    return 1.0 - (1.0 - floor_fraction) * progress;
  }
  // cosine from the peak at the end of warmup to floor_fraction at the last step
  double span = static_cast<double>(std::max<int64_t>(total_steps - 1 - warmup, 1));
  double progress = std::min(1.0, static_cast<double>(step - warmup) / span);
  return floor_fraction + (1.0 - floor_fraction) * 0.5 * (1.0 + std::cos(M_PI * progress));
}

}  // namespace rung

// core/config/lr_schedule.h
//
// Learning-rate multiplier (relative to the peak) at an optimizer step, for the schedules of
// docs/science.md section 4: linear warmup then cosine to final_lr_fraction, warmup-stable-decay (linear
// decay over the last decay_fraction of steps), or constant after warmup. Torch-free and pure.
#pragma once

#include <cstdint>

#include "core/config/train_config.h"

namespace rung {

// REQUIRES: 0 <= step < total_steps. Step 0 is the first optimizer step.
double LearningRateMultiplier(const ScheduleConfig& schedule, int64_t step, int64_t total_steps);

}  // namespace rung

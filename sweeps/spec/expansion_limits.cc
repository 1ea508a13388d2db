#include "sweeps/spec/expansion_limits.h"

namespace rung {

std::string TrialLimitText(const ExpansionLimits& limits) {
  return "more than the limit of " + std::to_string(limits.max_trials) + " trials (raise it with " + limits.raise_with +
         ")";
}

}  // namespace rung

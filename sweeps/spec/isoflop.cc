#include "sweeps/spec/isoflop.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace rung {

std::string CompactBudgetText(double budget) {
  char text[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*e", digits - 1, budget);
    if (std::strtod(text, nullptr) == budget) break;
  }
  // "1.50000e+11" -> mantissa "1.5", exponent "11".
  std::string written(text);
  const size_t e = written.find('e');
  std::string mantissa = written.substr(0, e);
  if (mantissa.find('.') != std::string::npos) {
    mantissa.erase(mantissa.find_last_not_of('0') + 1);
    if (mantissa.back() == '.') mantissa.pop_back();
  }
  const long exponent = std::strtol(written.c_str() + e + 1, nullptr, 10);
  return mantissa + "e" + std::to_string(exponent);
}

IsoflopSteps NearestIsoflopSteps(double budget, double flops_per_token, int64_t tokens_per_step) {
  const int64_t max_steps = std::numeric_limits<int64_t>::max() / tokens_per_step;
  // The FLOPs the expansion records for `steps` (sweeps/spec/expansion.cc, SetResolvedConfig).
  const auto flops_at = [&](int64_t steps) { return flops_per_token * static_cast<double>(steps * tokens_per_step); };
  const double wanted = budget / (flops_per_token * static_cast<double>(tokens_per_step));
  IsoflopSteps best;
  int64_t low = max_steps;
  if (wanted < static_cast<double>(max_steps)) {
    low = std::min<int64_t>(max_steps, static_cast<int64_t>(std::floor(wanted)));
  } else {
    best.at_token_limit = true;
  }
  // The whole numbers around the quotient (its rounding may lie one off either way).
  const int64_t first = std::max<int64_t>(1, low - 1);
  const int64_t last = low > max_steps - 2 ? max_steps : low + 2;
  for (int64_t steps = first; steps <= last; ++steps) {
    const double flops = flops_at(steps);
    const double distance = std::fabs(flops - budget), best_distance = std::fabs(best.flops - budget);
    // Far from the budget the distances round alike: then the step count on the budget's side nearer it.
    if (best.steps == 0 || distance < best_distance ||
        (distance == best_distance && (flops < budget ? flops > best.flops : flops < best.flops))) {
      best.steps = steps;
      best.flops = flops;
    }
    if (steps == max_steps) break;  // ++steps would pass int64's end
  }
  best.relative_error = (best.flops - budget) / budget;
  best.within_tolerance = std::fabs(best.relative_error) <= kIsoflopTolerance;
  return best;
}

}  // namespace rung

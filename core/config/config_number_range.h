// core/config/config_number_range.h
//
// The one range check for the numbers of a trial config. rung-train holds every real-valued key in
// float32 (LibTorch's parameters, optimiser state and scalars), so a real is accepted only when float32
// holds it: 0, or a magnitude in [FLT_MIN, FLT_MAX] (about 1.18e-38 .. 3.40e38). A larger one would
// overflow where LibTorch converts it; a smaller non-zero one would flush to 0 or lose its precision.
// Counts are int64: an integer written beyond int64 (9,223,372,036,854,775,807) is refused, never
// wrapped. JsonFieldReader applies these to every numeric key as the document is read, and the tune
// block's search keeps to the same range (sweeps/spec/tune_spec.h), so no value outside it reaches a
// trainer.
//
// Thread safety: constants and pure functions.
#pragma once

#include <cfloat>
#include <string>

namespace rung {

inline constexpr double kMaxConfigReal = FLT_MAX;
inline constexpr double kMinConfigRealMagnitude = FLT_MIN;

// "" when float32 holds `value` (see above); else why not, e.g. "1e+39 is outside float32's range
// (magnitude at most 3.4028235e+38): rung-train holds this value as a float32". NaN and infinities
// are refused.
std::string ConfigRealRangeProblem(double value);

// A real for messages: the shortest text that reads back to the same double, as JSON writes it
// ("0.003", "1e+39"), and "infinity", "-infinity" or "NaN" where JSON would write null.
std::string ConfigNumberText(double value);

}  // namespace rung

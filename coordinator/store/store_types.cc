#include "coordinator/store/store_types.h"

#include <array>
#include <utility>

namespace rung {
namespace {

constexpr std::array<std::pair<SweepState, const char*>, 5> kSweepStateNames = {{
    {SweepState::kActive, "ACTIVE"},
    {SweepState::kPaused, "PAUSED"},
    {SweepState::kCancelled, "CANCELLED"},
    {SweepState::kFailed, "FAILED"},
    {SweepState::kSucceeded, "SUCCEEDED"},
}};

constexpr std::array<std::pair<TrialState, const char*>, 9> kTrialStateNames = {{
    {TrialState::kPending, "PENDING"},
    {TrialState::kLeased, "LEASED"},
    {TrialState::kRunning, "RUNNING"},
    {TrialState::kSucceeded, "SUCCEEDED"},
    {TrialState::kFailed, "FAILED"},
    {TrialState::kPreempted, "PREEMPTED"},
    {TrialState::kStale, "STALE"},
    {TrialState::kCancelled, "CANCELLED"},
    {TrialState::kEarlyStopped, "EARLY_STOPPED"},
}};

constexpr std::array<std::pair<EarlyStop, const char*>, 3> kEarlyStopNames = {{
    {EarlyStop::kAsha, "asha"},
    {EarlyStop::kDivergence, "divergence"},
    {EarlyStop::kNonFinite, "non_finite"},
}};

template <typename State, size_t N>
const char* NameOf(const std::array<std::pair<State, const char*>, N>& names, State state) {
  for (const auto& [candidate, name] : names) {
    if (candidate == state) return name;
  }
  return "UNKNOWN";
}

template <typename State, size_t N>
StatusOr<State> Parse(const std::array<std::pair<State, const char*>, N>& names, std::string_view text,
                      const char* what) {
  for (const auto& [state, name] : names) {
    if (text == name) return state;
  }
  return Status::InvalidArgument("unknown " + std::string(what) + " state '" + std::string(text) + "'");
}

}  // namespace

const char* SweepStateName(SweepState state) { return NameOf(kSweepStateNames, state); }
const char* TrialStateName(TrialState state) { return NameOf(kTrialStateNames, state); }
StatusOr<SweepState> ParseSweepState(std::string_view name) { return Parse(kSweepStateNames, name, "sweep"); }
StatusOr<TrialState> ParseTrialState(std::string_view name) { return Parse(kTrialStateNames, name, "trial"); }
const char* EarlyStopName(EarlyStop why) { return NameOf(kEarlyStopNames, why); }
StatusOr<EarlyStop> ParseEarlyStop(std::string_view name) { return Parse(kEarlyStopNames, name, "early-stop"); }

const char* LogSourceName(LogSource source) { return source == LogSource::kStderr ? "stderr" : "record"; }

}  // namespace rung

// coordinator/server/followers.cc
#include "coordinator/server/followers.h"

#include <google/protobuf/util/time_util.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "coordinator/server/proto_convert.h"
#include "coordinator/server/rpc_support.h"

namespace rung::server {
namespace {

bool IsFinished(SweepState state) {
  return state == SweepState::kSucceeded || state == SweepState::kFailed || state == SweepState::kCancelled;
}

// Waits for the next change after `*seen` (or kCancelCheck). False when the follower should stop:
// the caller left (`*status` stays OK) or the coordinator shuts down (`*status` UNAVAILABLE).
bool AwaitChange(Coordinator& coordinator, uint64_t* seen, const std::function<bool()>& cancelled, bool* changed,
                 Status* status) {
  const uint64_t now = coordinator.signals().changes().WaitForChange(*seen, std::chrono::steady_clock::now() + kCancelCheck);
  if (coordinator.signals().changes().closed()) {
    *status = Status::Unavailable("the coordinator is shutting down; follow again on the restarted one");
    return false;
  }
  if (cancelled && cancelled()) return false;
  *changed = now != *seen;
  *seen = now;
  return true;
}

// The sweep and its trials as users see them.
struct SweepView {
  SweepState state = SweepState::kActive;
  v1::Sweep sweep;
  std::vector<v1::Trial> trials;
};

StatusOr<SweepView> ReadSweep(Coordinator& coordinator, int64_t sweep_id) {
  RUNG_ASSIGN_OR_RETURN(SweepOverview sweep, coordinator.overviews().Sweep(sweep_id));
  TrialFilter all;
  all.limit = std::numeric_limits<int64_t>::max();
  RUNG_ASSIGN_OR_RETURN(std::vector<TrialOverview> trials, coordinator.overviews().Trials(sweep_id, all));
  SweepView view;
  view.state = sweep.sweep.state;
  view.sweep = ToProtoSweep(sweep, /*with_spec_text=*/false);
  for (const TrialOverview& trial : trials) {
    view.trials.push_back(ToProtoTrial(trial, sweep.sweep.baseline, /*full=*/false));
  }
  return view;
}

v1::LogEntry EventEntry(const EventRecord& event) {
  v1::LogEntry entry;
  entry.set_source(v1::LogEntry::SOURCE_EVENT);
  entry.set_attempt(event.attempt.value_or(0));
  *entry.mutable_time() = ToProtoTime(event.at);
  std::string text = event.kind;
  if (!event.from_state.empty() || !event.to_state.empty()) text += " " + event.from_state + " -> " + event.to_state;
  text += ": " + event.reason + " (" + event.actor + ")";
  entry.set_text(text);
  return entry;
}

v1::LogEntry LineEntry(const StoredLogLine& line) {
  v1::LogEntry entry;
  entry.set_source(line.log.source == LogSource::kStderr ? v1::LogEntry::SOURCE_STDERR : v1::LogEntry::SOURCE_RECORD);
  entry.set_attempt(line.attempt);
  *entry.mutable_time() = ToProtoTime(line.at);
  entry.set_text(line.log.text);
  return entry;
}

// Keeps the last `tail` entries of each source (all when tail <= 0), in their order.
std::vector<v1::LogEntry> Tail(std::vector<v1::LogEntry> entries, int32_t tail) {
  if (tail <= 0) return entries;
  std::map<int, int64_t> left;  // source -> entries of it still to skip
  for (const v1::LogEntry& entry : entries) ++left[entry.source()];
  for (auto& [source, count] : left) count = std::max<int64_t>(0, count - tail);
  std::vector<v1::LogEntry> kept;
  for (v1::LogEntry& entry : entries) {
    int64_t& skip = left[entry.source()];
    if (skip > 0) {
      --skip;
      continue;
    }
    kept.push_back(std::move(entry));
  }
  return kept;
}

// Where a log follower has read up to.
struct LogCursor {
  int64_t attempt = 0;  // the newest (attempt, batch) of lines read
  int64_t batch = 0;
  int64_t event_id = 0;  // the newest event read
};

StatusOr<std::vector<v1::LogEntry>> ReadLogs(Coordinator& coordinator, const v1::GetLogsRequest& request,
                                             LogCursor* cursor) {
  const bool all = !request.include_records() && !request.include_stderr() && !request.include_events();
  std::vector<v1::LogEntry> entries;
  LogFilter filter;
  filter.attempt = request.attempt();
  filter.after_attempt = cursor->attempt;
  filter.after_batch = cursor->batch;
  RUNG_ASSIGN_OR_RETURN(std::vector<StoredLogLine> lines, coordinator.metrics().Logs(request.trial_id(), filter));
  for (const StoredLogLine& line : lines) {
    cursor->attempt = line.attempt;
    cursor->batch = line.batch;
    const bool wanted = all || (line.log.source == LogSource::kStderr ? request.include_stderr()
                                                                       : request.include_records());
    if (wanted) entries.push_back(LineEntry(line));
  }
  EventFilter events;
  events.trial_id = request.trial_id();
  events.after_id = cursor->event_id;
  events.limit = std::numeric_limits<int64_t>::max();
  RUNG_ASSIGN_OR_RETURN(std::vector<EventRecord> listed, coordinator.events().List(events));
  for (const EventRecord& event : listed) {
    cursor->event_id = event.id;
    const bool attempt_ok = request.attempt() == 0 || event.attempt.value_or(0) == request.attempt();
    if ((all || request.include_events()) && attempt_ok) entries.push_back(EventEntry(event));
  }
  std::stable_sort(entries.begin(), entries.end(), [](const v1::LogEntry& a, const v1::LogEntry& b) {
    return google::protobuf::util::TimeUtil::TimestampToMicroseconds(a.time()) <
           google::protobuf::util::TimeUtil::TimestampToMicroseconds(b.time());
  });
  return entries;
}

}  // namespace

Status FollowSweep(Coordinator& coordinator, int64_t sweep_id, const Sink<v1::SweepUpdate>& send,
                   const std::function<bool()>& cancelled) {
  uint64_t seen = coordinator.signals().changes().generation();
  RUNG_ASSIGN_OR_RETURN(SweepView view, ReadSweep(coordinator, sweep_id));
  v1::SweepUpdate snapshot;
  *snapshot.mutable_time() = ToTimestamp(std::chrono::system_clock::now());
  *snapshot.mutable_sweep() = view.sweep;
  snapshot.set_snapshot(true);
  std::map<int64_t, std::string> shown;  // trial id -> what was sent of it
  for (const v1::Trial& trial : view.trials) {
    shown[trial.trial_id()] = trial.SerializeAsString();
    *snapshot.add_trials() = trial;
  }
  if (!send(snapshot)) return Status::Ok();
  std::string shown_sweep = view.sweep.SerializeAsString();
  SweepState state = view.state;
  Status status;
  while (!IsFinished(state)) {
    bool changed = false;
    if (!AwaitChange(coordinator, &seen, cancelled, &changed, &status)) return status;
    if (!changed) continue;
    RUNG_ASSIGN_OR_RETURN(view, ReadSweep(coordinator, sweep_id));
    state = view.state;
    v1::SweepUpdate update;
    for (const v1::Trial& trial : view.trials) {
      std::string now = trial.SerializeAsString();
      if (shown[trial.trial_id()] == now) continue;
      shown[trial.trial_id()] = std::move(now);
      *update.add_trials() = trial;
    }
    std::string sweep_now = view.sweep.SerializeAsString();
    if (update.trials_size() == 0 && sweep_now == shown_sweep) continue;
    shown_sweep = std::move(sweep_now);
    *update.mutable_time() = ToTimestamp(std::chrono::system_clock::now());
    *update.mutable_sweep() = view.sweep;
    if (!send(update)) return Status::Ok();
  }
  return Status::Ok();
}

namespace {

// INVALID_ARGUMENT for a negative attempt or tail; NOT_FOUND for an unknown trial, or an attempt
// the trial does not have (naming the ones it has).
Status CheckLogsRequest(Coordinator& coordinator, const v1::GetLogsRequest& request) {
  if (request.tail() < 0) {
    return Status::InvalidArgument("GetLogsRequest.tail " + std::to_string(request.tail()) +
                                   " is negative (> 0: the last lines of each source; 0: every line)");
  }
  if (request.attempt() < 0) {
    return Status::InvalidArgument("GetLogsRequest.attempt " + std::to_string(request.attempt()) +
                                   " is negative (attempts count from 1; 0: every attempt)");
  }
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, coordinator.trials().Get(request.trial_id()));
  if (request.attempt() == 0) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(std::vector<AttemptRecord> attempts, coordinator.trials().Attempts(request.trial_id()));
  std::string listed;
  for (const AttemptRecord& attempt : attempts) {
    if (attempt.attempt == request.attempt()) return Status::Ok();
    listed += (listed.empty() ? "" : ", ") + std::to_string(attempt.attempt);
  }
  return Status::NotFound("trial " + std::to_string(request.trial_id()) + " has no attempt " +
                          std::to_string(request.attempt()) +
                          (listed.empty() ? " (it has not been leased yet)" : " (its attempts: " + listed + ")"));
}

}  // namespace

Status FollowLogs(Coordinator& coordinator, const v1::GetLogsRequest& request, const Sink<v1::LogEntry>& send,
                  const std::function<bool()>& cancelled) {
  RUNG_RETURN_IF_ERROR(CheckLogsRequest(coordinator, request));
  uint64_t seen = coordinator.signals().changes().generation();
  LogCursor cursor;
  RUNG_ASSIGN_OR_RETURN(std::vector<v1::LogEntry> entries, ReadLogs(coordinator, request, &cursor));
  for (const v1::LogEntry& entry : Tail(std::move(entries), request.tail())) {
    if (!send(entry)) return Status::Ok();
  }
  Status status;
  while (request.follow()) {
    RUNG_ASSIGN_OR_RETURN(TrialRecord trial, coordinator.trials().Get(request.trial_id()));
    const bool finished = IsTerminal(trial.state);
    if (!finished) {
      bool changed = false;
      if (!AwaitChange(coordinator, &seen, cancelled, &changed, &status)) return status;
      if (!changed) continue;
    }
    // After the trial finished, one more read: the lines committed before it ended.
    RUNG_ASSIGN_OR_RETURN(entries, ReadLogs(coordinator, request, &cursor));
    for (const v1::LogEntry& entry : entries) {
      if (!send(entry)) return Status::Ok();
    }
    if (finished) break;
  }
  return Status::Ok();
}

Status FollowMetrics(Coordinator& coordinator, const v1::StreamMetricsRequest& request,
                     const Sink<v1::MetricArrivals>& send, const std::function<bool()>& cancelled,
                     size_t queue_capacity) {
  if (request.sweep_id() <= 0) {
    return Status::InvalidArgument("StreamMetricsRequest.sweep_id is required (a positive id)");
  }
  RUNG_ASSIGN_OR_RETURN(std::vector<std::string> names,
                        MetricNamesFromProto(request.names(), "StreamMetricsRequest.names"));
  RUNG_RETURN_IF_ERROR(coordinator.sweeps().Get(request.sweep_id()).status());
  std::unique_ptr<MetricFeed::Subscription> subscription =
      coordinator.metric_feed().Subscribe(request.sweep_id(), std::move(names), queue_capacity);
  v1::MetricArrivals subscribed;
  *subscribed.mutable_time() = ToTimestamp(std::chrono::system_clock::now());
  subscribed.set_subscribed(true);
  if (!send(subscribed)) return Status::Ok();
  while (true) {
    MetricFeed::Taken taken =
        subscription->Take(kMaxArrivalsPerMessage, std::chrono::steady_clock::now() + kCancelCheck);
    if (taken.closed || coordinator.signals().changes().closed()) {
      return Status::Unavailable("the coordinator is shutting down; follow again on the restarted one");
    }
    if (cancelled && cancelled()) return Status::Ok();
    if (taken.arrivals.empty() && !taken.resync) continue;
    v1::MetricArrivals message;
    *message.mutable_time() = ToTimestamp(std::chrono::system_clock::now());
    message.set_resync(taken.resync);
    for (const MetricArrival& arrival : taken.arrivals) {
      v1::MetricArrival* shown = message.add_arrivals();
      shown->set_trial_id(arrival.trial_id);
      shown->set_name(arrival.point.name);
      *shown->mutable_point() = ToProtoMetricPoint(arrival.point, arrival.attempt);
    }
    if (!send(message)) return Status::Ok();
  }
}

}  // namespace rung::server

// coordinator/server/followers.h
//
// The two server streams of UserService, as loops over the store that sleep on the coordinator's
// "changes" notifier between looks (never polling faster than something changes; waking at least
// every kCancelCheck to notice a caller that went away):
//   FollowSweep  StreamSweepUpdates: a snapshot of the sweep and all its trials, then an update
//                with the sweep and the trials that changed after every change, until the update
//                that shows the sweep SUCCEEDED, FAILED or CANCELLED.
//   FollowLogs   GetLogs: a trial's relayed record lines, stderr lines and state transitions
//                (events), oldest first, optionally only the last `tail` of each source; with
//                follow, new lines as they are committed, until the trial is SUCCEEDED, FAILED or
//                CANCELLED.
//   FollowMetrics StreamMetrics: a first message saying the subscription to the sweep's metric
//                feed (coordinator/domain/metric_feed.h) is live, then the points committed after
//                it, in messages of at most kMaxArrivalsPerMessage, or a resync marker when this
//                follower fell behind its bounded queue; until the caller leaves.
// A Sink returns false when the caller is gone; the loop then ends with OK.
//
// Example:
//   Status status = FollowSweep(coordinator, sweep_id,
//                               [&](const v1::SweepUpdate& update) { return writer->Write(update); },
//                               [&] { return context->IsCancelled(); });
//
// Thread safety: reentrant; any number of followers run at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>

#include "coordinator/domain/coordinator.h"
#include "core/common/status.h"
#include "proto/rung.pb.h"

namespace rung::server {

inline constexpr std::chrono::seconds kCancelCheck{1};
inline constexpr size_t kMaxArrivalsPerMessage = 1000;

template <typename Message>
using Sink = std::function<bool(const Message&)>;

// Errors: NOT_FOUND (no such sweep), UNAVAILABLE (the coordinator shuts down), the store's.
Status FollowSweep(Coordinator& coordinator, int64_t sweep_id, const Sink<v1::SweepUpdate>& send,
                   const std::function<bool()>& cancelled);

// Errors: NOT_FOUND (no such trial, or an attempt it does not have: the message names the ones it
// has), INVALID_ARGUMENT (a negative tail or attempt), UNAVAILABLE (the coordinator shuts down),
// the store's.
Status FollowLogs(Coordinator& coordinator, const v1::GetLogsRequest& request, const Sink<v1::LogEntry>& send,
                  const std::function<bool()>& cancelled);

// Errors: NOT_FOUND (no such sweep), INVALID_ARGUMENT (a missing sweep id, bad names:
// MetricNamesFromProto), UNAVAILABLE (the coordinator shuts down). `queue_capacity`: the points
// this follower's queue holds before it is told to resync.
Status FollowMetrics(Coordinator& coordinator, const v1::StreamMetricsRequest& request,
                     const Sink<v1::MetricArrivals>& send, const std::function<bool()>& cancelled,
                     size_t queue_capacity = MetricFeed::kDefaultCapacity);

}  // namespace rung::server

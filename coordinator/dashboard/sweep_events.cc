#include "coordinator/dashboard/sweep_events.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "coordinator/client/message_json.h"

namespace rung::dashboard {
namespace {

// Updates waiting for a slow page beyond this are dropped oldest first; the page re-reads what it
// shows on the next update anyway.
constexpr size_t kMaxQueuedMessages = 256;

std::string Message(const std::string& event, const nlohmann::json& data) {
  return "event: " + event + "\ndata: " + data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n\n";
}

}  // namespace

SweepEvents::SweepEvents(client::CoordinatorConnection& connection, int64_t sweep_id, const std::string& metric)
    : context_(connection.StreamContext()), metrics_context_(connection.StreamContext()) {
  follower_ = std::thread([this, &connection, sweep_id] { Follow(connection, sweep_id); });
  if (!metric.empty()) {
    metrics_follower_ =
        std::thread([this, &connection, sweep_id, metric] { FollowMetrics(connection, sweep_id, metric); });
  }
}

SweepEvents::~SweepEvents() {
  context_->TryCancel();
  metrics_context_->TryCancel();
  follower_.join();
  if (metrics_follower_.joinable()) metrics_follower_.join();
}

void SweepEvents::Push(std::string message) {
  std::lock_guard<std::mutex> lock(mutex_);
  messages_.push_back(std::move(message));
  while (messages_.size() > kMaxQueuedMessages) messages_.pop_front();
  arrived_.notify_one();
}

void SweepEvents::FollowMetrics(client::CoordinatorConnection& connection, int64_t sweep_id, const std::string& metric) {
  v1::StreamMetricsRequest request;
  request.set_sweep_id(sweep_id);
  request.add_names(metric);
  std::unique_ptr<grpc::ClientReader<v1::MetricArrivals>> reader =
      connection.user().StreamMetrics(metrics_context_.get(), request);
  v1::MetricArrivals arrivals;
  while (reader->Read(&arrivals)) {
    if (arrivals.subscribed()) continue;
    nlohmann::json points = nlohmann::json::array();
    for (const v1::MetricArrival& arrival : arrivals.arrivals()) {
      const v1::MetricPoint& point = arrival.point();
      points.push_back({arrival.trial_id(), point.step(), point.tokens(), point.flops(), point.wall_time(),
                        std::isfinite(point.value()) ? nlohmann::json(point.value()) : nlohmann::json(nullptr)});
    }
    Push(Message("metrics", {{"metric", metric}, {"arrivals", points}, {"resync", arrivals.resync()}}));
  }
  (void)reader->Finish();  // the sweep's updates say when it ends; a failed feed only slows the curves
}

void SweepEvents::Follow(client::CoordinatorConnection& connection, int64_t sweep_id) {
  v1::StreamSweepUpdatesRequest request;
  request.set_sweep_id(sweep_id);
  std::unique_ptr<grpc::ClientReader<v1::SweepUpdate>> reader = connection.user().StreamSweepUpdates(context_.get(), request);
  v1::SweepUpdate update;
  while (reader->Read(&update)) Push(Message("update", client::ToJson(update)));
  grpc::Status status = reader->Finish();
  std::lock_guard<std::mutex> lock(mutex_);
  if (status.ok()) {
    messages_.push_back(Message("end", {{"sweep_id", sweep_id}}));
  } else if (status.error_code() != grpc::StatusCode::CANCELLED) {
    messages_.push_back(Message("error", {{"error", "coordinator: " + status.error_message()}}));
  }
  ended_ = true;
  arrived_.notify_one();
}

std::optional<std::string> SweepEvents::Next(std::chrono::milliseconds wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  arrived_.wait_for(lock, wait, [this] { return !messages_.empty() || ended_; });
  if (!messages_.empty()) {
    std::string message = std::move(messages_.front());
    messages_.pop_front();
    return message;
  }
  if (ended_) return std::nullopt;
  return std::string(": keep-alive\n\n");
}

}  // namespace rung::dashboard

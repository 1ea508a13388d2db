#include "coordinator/dashboard/sweep_events.h"

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"

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

SweepEvents::SweepEvents(cli::CoordinatorConnection& connection, int64_t sweep_id)
    : context_(connection.StreamContext()) {
  follower_ = std::thread([this, &connection, sweep_id] { Follow(connection, sweep_id); });
}

SweepEvents::~SweepEvents() {
  context_->TryCancel();
  follower_.join();
}

void SweepEvents::Follow(cli::CoordinatorConnection& connection, int64_t sweep_id) {
  v1::StreamSweepUpdatesRequest request;
  request.set_sweep_id(sweep_id);
  std::unique_ptr<grpc::ClientReader<v1::SweepUpdate>> reader = connection.user().StreamSweepUpdates(context_.get(), request);
  v1::SweepUpdate update;
  while (reader->Read(&update)) {
    std::string message = Message("update", cli::ToJson(update));
    std::lock_guard<std::mutex> lock(mutex_);
    messages_.push_back(std::move(message));
    while (messages_.size() > kMaxQueuedMessages) messages_.pop_front();
    arrived_.notify_one();
  }
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

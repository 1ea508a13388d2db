// worker/agent/metric_relay.cc
#include "worker/agent/metric_relay.h"

#include <algorithm>

#include "worker/agent/log.h"

namespace rung::agent {

MetricRelay::MetricRelay(CoordinatorClient* client, int64_t trial_id, int64_t attempt, RelayOptions options,
                         const Clock& clock)
    : client_(client),
      trial_id_(trial_id),
      attempt_(attempt),
      options_(options),
      clock_(clock),
      interrupter_(clock),
      sender_([this] { SendLoop(); }) {}

MetricRelay::~MetricRelay() {
  Abandon();
  sender_.join();
}

void MetricRelay::AddStdout(std::string line, const records::TrainerRecord* record) {
  Line entry;
  entry.is_stdout = true;
  if (record != nullptr) {  // sent typed; its text stays in the attempt's records.jsonl
    entry.record = wire::ToProto(*record);
    entry.provenance = std::holds_alternative<records::ProvenanceRecord>(*record);
    entry.bytes = entry.record->ByteSizeLong();
  } else {
    entry.bytes = line.size();
    entry.text = std::move(line);
  }
  Add(std::move(entry));
}

void MetricRelay::AddStderr(std::string line) {
  Line entry;
  entry.is_stdout = false;
  entry.bytes = line.size();
  entry.text = std::move(line);
  Add(std::move(entry));
}

void MetricRelay::Add(Line line) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (abandoned_ || !terminal_.ok()) return;
  line.added = clock_.Now();
  if (line.provenance) ++buffered_provenance_;
  buffered_bytes_ += line.bytes;
  const bool provenance = line.provenance;
  buffer_.push_back(std::move(line));
  // The sender sleeps until the oldest line's batch is due; a later line changes that only when it
  // fills a batch or is the provenance (due sooner). Waking it for every line costs a context
  // switch per line.
  const bool full = buffer_.size() >= options_.batch_lines || buffered_bytes_ > options_.max_batch_bytes;
  if (buffer_.size() == 1 || full || provenance) ChangedLocked();
}

void MetricRelay::ChangedLocked() {
  ++changes_;
  changed_.notify_all();
}

StatusOr<int64_t> MetricRelay::Drain(Clock::TimePoint deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  draining_ = true;
  ChangedLocked();
  RUNG_RETURN_IF_ERROR(WaitLocked(lock, deadline, [this] { return buffer_.empty() && !in_flight_; }));
  return last_sequence_;
}

Status MetricRelay::WaitLocked(std::unique_lock<std::mutex>& lock, Clock::TimePoint deadline,
                               const std::function<bool()>& sent) {
  if (!clock_.WaitUntil(changed_, lock, deadline, [&] { return abandoned_ || !terminal_.ok() || sent(); })) {
    return Status::Unavailable("metrics of trial " + std::to_string(trial_id_) + " attempt " +
                               std::to_string(attempt_) + " not acknowledged yet: " +
                               std::to_string(buffer_.size()) + " lines buffered");
  }
  if (!terminal_.ok()) return terminal_;
  if (abandoned_) return Status::Cancelled("metric relay abandoned");
  return Status::Ok();
}

void MetricRelay::Abandon() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_ = true;
    ChangedLocked();
  }
  interrupter_.Interrupt();
}

Status MetricRelay::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return terminal_;
}

int64_t MetricRelay::acknowledged_sequence() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return acknowledged_;
}

bool MetricRelay::BatchDue(Clock::TimePoint now, Clock::TimePoint* when) const {
  if (buffer_.empty()) {
    *when = Clock::TimePoint::max();
    return false;
  }
  if (draining_ || buffer_.size() >= options_.batch_lines) return true;
  *when = buffer_.front().added + options_.batch_delay;
  if (buffered_provenance_ > 0) {
    for (const Line& line : buffer_) {
      if (!line.provenance) continue;
      *when = std::min(*when, line.added + options_.provenance_delay);
      break;
    }
  }
  return now >= *when;
}

v1::ReportMetricsRequest MetricRelay::CutBatch() {
  v1::ReportMetricsRequest request;
  request.set_trial_id(trial_id_);
  request.set_attempt(attempt_);
  v1::MetricBatch* batch = request.mutable_batch();
  batch->set_sequence(++last_sequence_);
  size_t lines = 0, bytes = 0;
  while (!buffer_.empty() && (lines == 0 || (lines < options_.batch_lines &&
                                             bytes + buffer_.front().bytes <= options_.max_batch_bytes))) {
    Line& line = buffer_.front();
    if (line.is_stdout) {
      if (line.provenance) --buffered_provenance_;
      if (line.record) {
        *batch->add_stdout()->mutable_record() = std::move(*line.record);
      } else {
        batch->add_stdout()->set_text(std::move(line.text));
      }
    } else {
      batch->add_stderr_lines(std::move(line.text));
    }
    bytes += line.bytes;
    buffered_bytes_ -= line.bytes;
    ++lines;
    buffer_.pop_front();
  }
  return request;
}

void MetricRelay::SendLoop() {
  Backoff backoff(options_.retry_backoff);
  bool reported_outage = false;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (abandoned_ || !terminal_.ok()) return;
    if (!in_flight_) {
      Clock::TimePoint when;
      if (!BatchDue(clock_.Now(), &when)) {
        const uint64_t seen = changes_;
        clock_.WaitUntil(changed_, lock, when, [&] { return changes_ != seen; });
        continue;
      }
      in_flight_ = CutBatch();
    }
    const v1::ReportMetricsRequest request = *in_flight_;
    lock.unlock();
    StatusOr<v1::ReportMetricsResponse> response = client_->ReportMetrics(request, &interrupter_);
    lock.lock();
    if (response.ok()) {
      if (reported_outage) AgentLog("trial " + std::to_string(trial_id_) + ": metrics reach the coordinator again");
      reported_outage = false;
      backoff.Reset();
      acknowledged_ = request.batch().sequence();
      in_flight_.reset();
      ChangedLocked();
      continue;
    }
    const Status& status = response.status();
    if (status.code() == StatusCode::kCancelled) continue;  // Abandon(): the loop ends above
    if (IsTransient(status)) {
      if (!reported_outage) {
        AgentLog("trial " + std::to_string(trial_id_) + ": " + status.message() + "; buffering metrics");
      }
      reported_outage = true;
      clock_.WaitFor(changed_, lock, backoff.Next(), [this] { return abandoned_; });
      continue;
    }
    AgentLog("trial " + std::to_string(trial_id_) + " attempt " + std::to_string(attempt_) +
             ": metrics refused for good: " + status.message());
    terminal_ = status;
    buffer_.clear();
    in_flight_.reset();
    ChangedLocked();
  }
}

}  // namespace rung::agent

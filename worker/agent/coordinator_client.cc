// worker/agent/coordinator_client.cc
#include "worker/agent/coordinator_client.h"

#include <algorithm>
#include <cstdlib>

#include <google/protobuf/util/time_util.h>

#include "core/common/network_address.h"
#include "proto/grpc_status.h"
#include "worker/agent/log.h"

namespace rung::agent {
namespace {

// The rung::Status for a failed call of `method`: the coordinator's code and message, the method
// and the code's name in front (see the header).
Status CallStatus(const char* method, const grpc::Status& status, bool interrupted) {
  if (status.ok()) return Status::Ok();
  if (interrupted && status.error_code() == grpc::StatusCode::CANCELLED) {
    return Status::Cancelled(std::string(method) + ": interrupted");
  }
  const Status converted = FromGrpcStatus(status);
  std::string message = std::string(method) + ": " + converted.message() + " (" + StatusCodeName(converted.code()) + ")";
  if (converted.code() == StatusCode::kUnauthenticated || converted.code() == StatusCode::kPermissionDenied) {
    message += "; the coordinator refused the worker token: pass the file of its --worker-token-file as "
               "--worker-token-file";
  }
  return Status(converted.code(), std::move(message));
}

}  // namespace

void PollReconnectsPromptly() {
  ::setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", std::to_string(kBackupPollMilliseconds).c_str(),
           /*overwrite=*/0);
}

bool IsTransient(const Status& status) {
  switch (status.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kResourceExhausted:
    case StatusCode::kAborted:
    case StatusCode::kUnknown: return true;
    default: return false;
  }
}

// ------------------------------------------------------------------------------ CallInterrupter

void CallInterrupter::Interrupt() {
  std::lock_guard<std::mutex> lock(mutex_);
  interrupted_ = true;
  for (grpc::ClientContext* context : active_) context->TryCancel();
  wake_.notify_all();
}

void CallInterrupter::Reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  interrupted_ = false;
}

bool CallInterrupter::interrupted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return interrupted_;
}

bool CallInterrupter::SleepFor(std::chrono::milliseconds duration) {
  std::unique_lock<std::mutex> lock(mutex_);
  return !clock_.WaitFor(wake_, lock, duration, [this] { return interrupted_; });
}

bool CallInterrupter::Attach(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (interrupted_) return false;
  active_.insert(context);
  return true;
}

void CallInterrupter::Detach(grpc::ClientContext* context) {
  std::lock_guard<std::mutex> lock(mutex_);
  active_.erase(context);
}

// ----------------------------------------------------------------------------- CoordinatorClient

StatusOr<std::unique_ptr<CoordinatorClient>> CoordinatorClient::Connect(const CoordinatorClientOptions& options,
                                                                        const Clock& clock) {
  if (options.address.empty()) return Status::InvalidArgument("no coordinator address: pass --coordinator HOST:PORT");
  if (options.token.empty()) return Status::InvalidArgument("no worker token: pass --worker-token-file FILE");
  if (options.tls_root_pem.empty() && !IsLoopbackAddress(options.address)) {
    return Status::InvalidArgument("coordinator " + options.address +
                                   " is not on this machine: connect with TLS (--tls-ca FILE), or the worker "
                                   "token would cross the network in the clear");
  }
  return std::unique_ptr<CoordinatorClient>(new CoordinatorClient(options, clock));
}

CoordinatorClient::CoordinatorClient(const CoordinatorClientOptions& options, const Clock& clock)
    : options_(options), clock_(clock) {
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!options.tls_root_pem.empty()) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.tls_root_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments arguments;
  const int reconnect_ms = static_cast<int>(options.max_reconnect_backoff.count());
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(reconnect_ms, 100));
  arguments.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, std::min(reconnect_ms, 100));
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, reconnect_ms);
  channel_ = grpc::CreateCustomChannel(options.address, credentials, arguments);
  stub_ = v1::WorkerService::NewStub(channel_);
}

std::string CoordinatorClient::worker_id() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return worker_id_;
}

v1::RegisterResponse CoordinatorClient::last_registration() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_registration_;
}

template <typename Request, typename Response>
Status CoordinatorClient::CallOnce(const char* method, Rpc<Request, Response> rpc, const Request& request,
                                   std::chrono::milliseconds timeout, CallInterrupter* interrupter,
                                   Response* response) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + options_.token);
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  if (interrupter != nullptr && !interrupter->Attach(&context)) {
    return Status::Cancelled(std::string(method) + ": interrupted");
  }
  const grpc::Status status = ((*stub_).*rpc)(&context, request, response);
  bool interrupted = false;
  if (interrupter != nullptr) {
    interrupter->Detach(&context);
    interrupted = interrupter->interrupted();
  }
  return CallStatus(method, status, interrupted);
}

template <typename Request, typename Response>
StatusOr<Response> CoordinatorClient::Call(const char* method, Rpc<Request, Response> rpc, const Request& request,
                                           std::chrono::milliseconds timeout, CallInterrupter* interrupter,
                                           bool reregister) {
  Backoff backoff(options_.retry_backoff);
  for (int attempt = 1;; ++attempt) {
    Response response;
    Status status = CallOnce(method, rpc, request, timeout, interrupter, &response);
    if (status.ok()) return response;
    if (status.code() == StatusCode::kNotFound && reregister) {
      std::optional<v1::RegisterRequest> registration;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        registration = registration_;
      }
      if (registration) {
        AgentLog(status.message() + "; registering again");
        RUNG_RETURN_IF_ERROR(Register(*registration, interrupter));
        return Call(method, rpc, request, timeout, interrupter, /*reregister=*/false);
      }
    }
    if (!IsTransient(status) || attempt >= options_.max_tries) return status;
    const std::chrono::milliseconds delay = backoff.Next();
    if (interrupter != nullptr) {
      if (!interrupter->SleepFor(delay)) return Status::Cancelled(std::string(method) + ": interrupted");
    } else {
      clock_.SleepFor(delay);
    }
  }
}

StatusOr<v1::RegisterResponse> CoordinatorClient::Register(const v1::RegisterRequest& request,
                                                           CallInterrupter* interrupter) {
  StatusOr<v1::RegisterResponse> response =
      Call("Register", &v1::WorkerService::Stub::Register, request, options_.call_timeout, interrupter, false);
  if (response.ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    registration_ = request;
    registration_->set_worker_id(response->worker_id());
    worker_id_ = response->worker_id();
    last_registration_ = *response;
  }
  return response;
}

StatusOr<v1::LeaseResponse> CoordinatorClient::Lease(v1::LeaseRequest request, std::chrono::milliseconds wait,
                                                     CallInterrupter* interrupter) {
  request.set_worker_id(worker_id());
  *request.mutable_wait() = google::protobuf::util::TimeUtil::MillisecondsToDuration(wait.count());
  return Call("Lease", &v1::WorkerService::Stub::Lease, request, wait + options_.call_timeout, interrupter, true);
}

StatusOr<v1::HeartbeatResponse> CoordinatorClient::Heartbeat(v1::HeartbeatRequest request,
                                                             CallInterrupter* interrupter) {
  request.set_worker_id(worker_id());
  return Call("Heartbeat", &v1::WorkerService::Stub::Heartbeat, request, options_.call_timeout, interrupter, true);
}

StatusOr<v1::ReportMetricsResponse> CoordinatorClient::ReportMetrics(v1::ReportMetricsRequest request,
                                                                     CallInterrupter* interrupter) {
  request.set_worker_id(worker_id());
  return Call("ReportMetrics", &v1::WorkerService::Stub::ReportMetrics, request, options_.call_timeout, interrupter,
              true);
}

StatusOr<v1::CompleteResponse> CoordinatorClient::Complete(v1::CompleteRequest request, CallInterrupter* interrupter) {
  request.set_worker_id(worker_id());
  return Call("Complete", &v1::WorkerService::Stub::Complete, request, options_.call_timeout, interrupter, true);
}

}  // namespace rung::agent

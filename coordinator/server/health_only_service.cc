// coordinator/server/health_only_service.cc
#include "coordinator/server/health_only_service.h"

namespace rung::server {

grpc::Status HealthOnlyService::Check(grpc::ServerContext* /*context*/,
                                      const grpc::health::v1::HealthCheckRequest* request,
                                      grpc::health::v1::HealthCheckResponse* response) {
  if (!request->service().empty()) {
    return {grpc::StatusCode::NOT_FOUND, "this listener reports the whole server only (service \"\")"};
  }
  response->set_status(serving_ ? grpc::health::v1::HealthCheckResponse::SERVING
                                : grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  return grpc::Status::OK;
}

void HealthOnlyService::SetServingStatus(const std::string& service_name, bool serving) {
  if (service_name.empty()) SetServingStatus(serving);
}

void HealthOnlyService::SetServingStatus(bool serving) {
  if (!shut_down_) serving_ = serving;
}

void HealthOnlyService::Shutdown() {
  shut_down_ = true;
  serving_ = false;
}

}  // namespace rung::server

// coordinator/server/health_only_service.h
//
// grpc.health.v1.Health for the plaintext health-only listener (--health-listen): Check answers
// SERVING for the whole server (service "") until Shutdown, NOT_SERVING afterwards, NOT_FOUND for
// any other service name; Watch is UNIMPLEMENTED. It is that listener's health-check service too
// (grpc::HealthCheckServiceInterface, handed to its builder), so gRPC adds no default one, and it is
// the listener's only service: no reflection, no list of services, no token, no data.
//
// Thread safety: thread-safe (an atomic flag).
#pragma once

#include <atomic>
#include <string>

#include <grpcpp/health_check_service_interface.h>

#include "proto/grpc/health/v1/health.grpc.pb.h"

namespace rung::server {

class HealthOnlyService final : public grpc::health::v1::Health::Service, public grpc::HealthCheckServiceInterface {
 public:
  grpc::Status Check(grpc::ServerContext* context, const grpc::health::v1::HealthCheckRequest* request,
                     grpc::health::v1::HealthCheckResponse* response) override;

  void SetServingStatus(const std::string& service_name, bool serving) override;
  void SetServingStatus(bool serving) override;
  void Shutdown() override;

 private:
  std::atomic<bool> serving_{true};
  std::atomic<bool> shut_down_{false};
};

}  // namespace rung::server

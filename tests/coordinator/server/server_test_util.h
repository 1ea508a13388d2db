// tests/coordinator/server/server_test_util.h
//
// What the server tests share: a scratch folder, token files and the options of a loopback server
// over them, client calls that carry a bearer token, the standard health check, and the list of
// services server reflection reports.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "coordinator/server/server_options.h"
#include "proto/grpc/health/v1/health.grpc.pb.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::server::testing {

// The scratch folder the agent and system tests use too.
using ::rung::agent::testing::ScratchDir;

// Sets `options` for a coordinator on 127.0.0.1 port 0 over scratch's rung.db, and writes fresh user
// and worker token files in `scratch` (their tokens go to `user_token` and `worker_token`). False
// where either token file could not be written.
bool LoopbackServerOptions(const ScratchDir& scratch, ServerOptions* options, std::string* user_token,
                           std::string* worker_token);

// A client context with a 10 s deadline, this build's protocol version and, unless `token` is empty,
// `authorization: Bearer <token>`.
std::unique_ptr<grpc::ClientContext> ContextWithToken(const std::string& token);

// A plaintext channel to a coordinator on loopback.
std::shared_ptr<grpc::Channel> LoopbackChannel(const std::string& address);

// grpc.health.v1.Health/Check for the whole server (service ""), without a token. Returns the
// serving status, or sets `status` to the call's error.
grpc::health::v1::HealthCheckResponse::ServingStatus CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                                               grpc::Status* status);

// The service names server reflection (grpc.reflection.v1alpha) lists, asked without a token. The
// call's status goes to `answer` when given; otherwise it is expected to be OK.
std::vector<std::string> ReflectedServices(const std::shared_ptr<grpc::Channel>& channel,
                                           grpc::Status* answer = nullptr);

}  // namespace rung::server::testing

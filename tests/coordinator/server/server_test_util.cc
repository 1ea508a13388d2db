// tests/coordinator/server/server_test_util.cc
#include "tests/coordinator/server/server_test_util.h"

#include "proto/protocol_version.h"

#include <grpcpp/generic/generic_stub.h>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include "coordinator/server/auth.h"

namespace rung::server::testing {

bool LoopbackServerOptions(const ScratchDir& scratch, ServerOptions* options, std::string* user_token,
                           std::string* worker_token) {
  options->listen_address = "127.0.0.1:0";
  options->database_path = scratch.Path("rung.db");
  options->user_token_file = scratch.Path("user.token");
  options->worker_token_file = scratch.Path("worker.token");
  StatusOr<std::string> user = WriteFreshTokenFile(options->user_token_file);
  StatusOr<std::string> worker = WriteFreshTokenFile(options->worker_token_file);
  if (!user.ok() || !worker.ok()) return false;
  *user_token = *user;
  *worker_token = *worker;
  return true;
}

std::unique_ptr<grpc::ClientContext> ContextWithToken(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
  context->AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
  return context;
}

std::shared_ptr<grpc::Channel> LoopbackChannel(const std::string& address) {
  return grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
}

grpc::health::v1::HealthCheckResponse::ServingStatus CheckHealth(const std::shared_ptr<grpc::Channel>& channel,
                                                               grpc::Status* status) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  *status = stub->Check(ContextWithToken("").get(), request, &response);
  return response.status();
}

namespace {

// Field numbers of grpc/reflection/v1alpha/reflection.proto. Debian ships the reflection service but
// not its .proto, and its generated messages live inside libgrpc++_reflection, so the exchange is
// spelled out in wire format here rather than compiled from a second copy of the file.
constexpr int kRequestListServices = 7;    // ServerReflectionRequest.list_services (string)
constexpr int kResponseListServices = 6;   // ServerReflectionResponse.list_services_response
constexpr int kListServiceResponseService = 1;  // ListServiceResponse.service (repeated)
constexpr int kServiceResponseName = 1;    // ServiceResponse.name

// The length-delimited fields numbered `number` of a serialized message.
std::vector<std::string> LengthDelimitedFields(const std::string& bytes, int number) {
  google::protobuf::UnknownFieldSet fields;
  EXPECT_TRUE(fields.ParseFromString(bytes));
  std::vector<std::string> values;
  for (int i = 0; i < fields.field_count(); ++i) {
    const google::protobuf::UnknownField& field = fields.field(i);
    if (field.number() == number && field.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      values.push_back(field.length_delimited());
    }
  }
  return values;
}

void* Tag(intptr_t id) { return reinterpret_cast<void*>(id); }

}  // namespace

std::vector<std::string> ReflectedServices(const std::shared_ptr<grpc::Channel>& channel, grpc::Status* answer) {
  // One request and one response on the bidi-streaming ServerReflectionInfo, with the generic stub.
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue queue;
  std::unique_ptr<grpc::ClientContext> context = ContextWithToken("");
  auto call = stub.PrepareCall(context.get(), "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &queue);
  auto await = [&queue](intptr_t id) {
    void* tag = nullptr;
    bool ok = false;
    EXPECT_TRUE(queue.Next(&tag, &ok));
    EXPECT_EQ(tag, Tag(id));
    return ok;
  };

  std::string request;
  request.push_back(static_cast<char>(kRequestListServices << 3 | 2));  // length-delimited
  request.push_back(0);                                                   // empty string
  grpc::Slice slice(request);
  grpc::ByteBuffer request_buffer(&slice, 1);
  grpc::ByteBuffer response_buffer;
  grpc::Status status;

  call->StartCall(Tag(1));
  EXPECT_TRUE(await(1));
  // A server without reflection may end the call before the request is written: then only the
  // status counts (`answer`).
  call->Write(request_buffer, Tag(2));
  const bool written = await(2);
  call->WritesDone(Tag(3));
  const bool done = await(3);
  if (answer == nullptr) EXPECT_TRUE(written && done);
  call->Read(&response_buffer, Tag(4));
  const bool got_response = await(4);
  call->Finish(&status, Tag(5));
  EXPECT_TRUE(await(5));
  queue.Shutdown();
  if (answer != nullptr) {
    *answer = status;
  } else {
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  if (!got_response) return {};

  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(response_buffer.Dump(&slices).ok());
  std::string response;
  for (const grpc::Slice& piece : slices) response.append(reinterpret_cast<const char*>(piece.begin()), piece.size());

  std::vector<std::string> names;
  for (const std::string& list : LengthDelimitedFields(response, kResponseListServices)) {
    for (const std::string& service : LengthDelimitedFields(list, kListServiceResponseService)) {
      for (const std::string& name : LengthDelimitedFields(service, kServiceResponseName)) names.push_back(name);
    }
  }
  return names;
}

}  // namespace rung::server::testing

// tests/cli/golden_fixture.cc: the server and the user's calls of the golden fixture (the worker's
// are in golden_population.cc).
#include "tests/cli/golden_fixture.h"

#include "proto/protocol_version.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include <grpcpp/grpcpp.h>

#include "coordinator/server/auth.h"

namespace rung::cli::testing {
namespace {

std::unique_ptr<grpc::ClientContext> UserContext(const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  context->AddMetadata("authorization", "Bearer " + token);
  context->AddMetadata("rung-user", "golden");
  context->AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
  return context;
}

StatusOr<std::string> ReadSpec(const std::string& name) {
  const std::string path = std::string(RUNG_SOURCE_DIR) + "/tests/cli/fixture/" + name;
  std::ifstream stream(path);
  if (!stream) return Status::NotFound("cannot read " + path);
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

Status Failed(const std::string& step, const grpc::Status& status) {
  return Status::Internal("golden fixture: " + step + ": " + status.error_message());
}

}  // namespace

StatusOr<std::unique_ptr<GoldenCoordinator>> GoldenCoordinator::Start() {
  std::unique_ptr<GoldenCoordinator> coordinator(new GoldenCoordinator());
  RUNG_RETURN_IF_ERROR(coordinator->Build());
  return coordinator;
}

GoldenCoordinator::~GoldenCoordinator() {
  users_.reset();
  workers_.reset();
  if (server_) server_->Shutdown(std::chrono::milliseconds(100));
  server_.reset();
}

Status GoldenCoordinator::Build() {
  scratch_path_ = scratch_.path().string();
  options_.listen_address = "127.0.0.1:0";
  options_.database_path = scratch_.Path("rung.db");
  options_.user_token_file = scratch_.Path("user.token");
  options_.worker_token_file = scratch_.Path("worker.token");
  // Long enough that nothing expires while the fixture's clock moves (the reaper thread runs).
  options_.lease_duration = std::chrono::hours(1);
  RUNG_ASSIGN_OR_RETURN(user_token_, server::WriteFreshTokenFile(options_.user_token_file));
  RUNG_ASSIGN_OR_RETURN(worker_token_, server::WriteFreshTokenFile(options_.worker_token_file));
  RUNG_ASSIGN_OR_RETURN(server_, server::CoordinatorServer::Start(options_, &clock_));
  std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(server_->address(), grpc::InsecureChannelCredentials());
  users_ = v1::UserService::NewStub(channel);
  workers_ = v1::WorkerService::NewStub(channel);

  // 1. The main sweep.
  RUNG_ASSIGN_OR_RETURN(const std::string ladder, ReadSpec("ladder.yaml"));
  v1::SubmitSweepRequest submit;
  submit.set_spec_text(ladder);
  submit.set_spec_file_name("tests/cli/fixture/ladder.yaml");
  v1::SubmitSweepResponse submitted;
  grpc::Status status = users_->SubmitSweep(UserContext(user_token_).get(), submit, &submitted);
  if (!status.ok()) return Failed("submitting ladder.yaml", status);
  clock_.Advance(std::chrono::seconds(10));

  // 2. Its worker.
  RUNG_RETURN_IF_ERROR(PopulateGoldenSweep(*workers_, worker_token_, clock_, submitted.sweep_id()));
  clock_.Advance(std::chrono::seconds(10));

  // 3. The second sweep, submitted after the worker stopped asking for work.
  RUNG_ASSIGN_OR_RETURN(const std::string second, ReadSpec("second.yaml"));
  submit.set_spec_text(second);
  submit.set_spec_file_name("tests/cli/fixture/second.yaml");
  v1::SubmitSweepResponse second_submitted;
  status = users_->SubmitSweep(UserContext(user_token_).get(), submit, &second_submitted);
  if (!status.ok()) return Failed("submitting second.yaml", status);
  clock_.Advance(std::chrono::seconds(10));

  // 4. A stored fit of the main sweep.
  v1::FitRequest fit;
  fit.set_sweep_id(submitted.sweep_id());
  fit.set_bootstrap(200);
  fit.set_seed(7);
  v1::FitResponse fitted;
  status = users_->Fit(UserContext(user_token_).get(), fit, &fitted);
  if (!status.ok()) return Failed("fitting sweep " + std::to_string(submitted.sweep_id()), status);
  clock_.Advance(std::chrono::seconds(10));
  return Status::Ok();
}

}  // namespace rung::cli::testing

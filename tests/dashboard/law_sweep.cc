// tests/dashboard/law_sweep.cc: PlayLawSweep (law_sweep.h), a user's SubmitSweep and a worker's
// Register, Lease, ReportMetrics and Complete, as rung-worker relays rung-train's records.
#include "tests/dashboard/law_sweep.h"

#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "core/common/token_file.h"
#include "proto/protocol_version.h"
#include "proto/rung.grpc.pb.h"
#include "proto/trainer_record_proto.h"

namespace rung::dashboard::testing {

const char kIsoflopLawSpec[] = R"(name: dashboard-laws
description: an IsoFLOP grid whose runs a known L(N, D) plays, for the dashboard's Scaling laws panel
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 16}
model: {mlp: gelu}
train: {batch_size: 2, lr: 1.0e-3}
resources: {cpus: 1}
policy: {max_retries: 0, max_failed: 4, priority: 1}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
    - {layers: 2, d_model: 16, heads: 2}
    - {layers: 1, d_model: 32, heads: 2}
    - {layers: 2, d_model: 32, heads: 2}
  isoflop_budgets: [3.0e9, 1.0e10, 3.0e10]
sweep:
  position.variant: [rope, lerope]
  seed: [0]
)";

const char kOneTokenCountSpec[] = R"(name: dashboard-no-laws
description: a ladder whose sizes each ran one token count (20 per parameter), so no scaling laws
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 16}
model: {mlp: gelu}
train: {batch_size: 2, lr: 1.0e-3}
resources: {cpus: 1}
policy: {max_retries: 0, max_failed: 4, priority: 1}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
    - {layers: 2, d_model: 16, heads: 2}
    - {layers: 1, d_model: 32, heads: 2}
    - {layers: 2, d_model: 32, heads: 2}
    - {layers: 3, d_model: 32, heads: 2}
  tokens_per_param: 20
  param_count: nonembedding
sweep:
  position.variant: [rope, lerope]
  seed: [0]
)";

double LawLoss(const std::string& variant, double n, double d) {
  const LawTruth& t = kLawTruth;
  const double e = variant == "rope" ? t.e_rope : t.e_lerope;
  const double law = e + t.a / std::pow(n, t.alpha) + t.b / std::pow(d, t.beta);
  return law * std::exp(t.wobble * std::sin(7 * std::log(n) + 3 * std::log(d)));
}

StatusOr<int64_t> PlayLawSweep(const std::string& address, const std::string& user_token_file,
                               const std::string& worker_token_file, const std::string& spec) {
  using nlohmann::json;
  RUNG_ASSIGN_OR_RETURN(const std::string user_token, ReadBearerTokenFile(user_token_file));
  RUNG_ASSIGN_OR_RETURN(const std::string worker_token, ReadBearerTokenFile(worker_token_file));
  std::shared_ptr<grpc::Channel> channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  std::unique_ptr<v1::UserService::Stub> users = v1::UserService::NewStub(channel);
  std::unique_ptr<v1::WorkerService::Stub> workers = v1::WorkerService::NewStub(channel);
  auto context = [](const std::string& token) {
    auto made = std::make_unique<grpc::ClientContext>();
    made->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    made->AddMetadata("authorization", "Bearer " + token);
    made->AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
    return made;
  };
  auto failed = [](const std::string& what, const grpc::Status& status) {
    return Status::Internal("law sweep: " + what + ": " + status.error_message());
  };

  v1::SubmitSweepRequest submit;
  submit.set_spec_text(spec);
  submit.set_spec_file_name("laws.yaml");
  v1::SubmitSweepResponse submitted;
  grpc::Status status = users->SubmitSweep(context(user_token).get(), submit, &submitted);
  if (!status.ok()) return failed("submitting", status);
  const int64_t sweep_id = submitted.sweep_id();

  // Each trial's N, D and variant, as GetLaws reads them (the baseline is rope).
  struct Cell {
    double n = 0, d = 0;
    std::string variant;
    int64_t steps = 0;
  };
  std::map<int64_t, Cell> cells;
  v1::ListTrialsRequest list;
  list.set_sweep_id(sweep_id);
  do {
    v1::ListTrialsResponse page;
    status = users->ListTrials(context(user_token).get(), list, &page);
    if (!status.ok()) return failed("listing trials", status);
    for (const v1::Trial& trial : page.trials()) {
      const double d = static_cast<double>(trial.tokens());
      cells[trial.trial_id()] = {trial.flops() / (6.0 * d), d, trial.baseline() ? "rope" : "lerope", trial.total_steps()};
    }
    list.set_page_token(page.next_page_token());
  } while (!list.page_token().empty());

  v1::RegisterRequest register_request;
  register_request.set_worker_id("laws");
  register_request.set_host("laws-host");
  register_request.set_cpu_slots(1);
  register_request.set_build_commit("laws0000");
  register_request.set_protocol_version(wire::kProtocolVersion);
  v1::RegisterResponse registered;
  status = workers->Register(context(worker_token).get(), register_request, &registered);
  if (!status.ok()) return failed("registering worker laws", status);

  for (size_t played = 0; played < cells.size(); ++played) {
    v1::LeaseRequest lease_request;
    lease_request.set_worker_id("laws");
    lease_request.mutable_free()->set_cpu_slots(1);
    v1::LeaseResponse leased;
    status = workers->Lease(context(worker_token).get(), lease_request, &leased);
    if (!status.ok()) return failed("leasing", status);
    if (!leased.has_lease()) {
      return Status::Internal("law sweep: nothing to lease after " + std::to_string(played) + " of " +
                              std::to_string(cells.size()) + " trials");
    }
    const v1::TrialLease& lease = leased.lease();
    auto cell = cells.find(lease.trial_id());
    if (lease.sweep_id() != sweep_id || cell == cells.end()) {
      return Status::Internal("law sweep: worker laws leased trial " + std::to_string(lease.trial_id()) +
                              " of sweep " + std::to_string(lease.sweep_id()) + ", not one of sweep " +
                              std::to_string(sweep_id));
    }
    const Cell& c = cell->second;
    const double loss = LawLoss(c.variant, c.n, c.d);
    const int64_t tokens = static_cast<int64_t>(c.d);
    const std::vector<std::string> lines = {
        json{{"type", "provenance"}, {"commit", "laws0000"}, {"host", "laws-host"}, {"start_step", 0}}.dump(),
        json{{"type", "step"}, {"step", c.steps}, {"tokens", tokens}, {"flops", 6.0 * c.n * c.d}, {"lr", 0.001},
             {"train_loss", loss - 0.05}, {"val_loss", loss}, {"grad_norm", 0.5}, {"tokens_per_sec", 1000.0},
             {"elapsed_sec", 1.0}}
            .dump(),
        json{{"type", "final"}, {"step", c.steps}, {"tokens", tokens}, {"flops", 6.0 * c.n * c.d}, {"val_loss", loss},
             {"train_loss", loss - 0.05}, {"train_tokens_per_sec", 1000.0}, {"wall_sec", 1.0}}
            .dump()};
    v1::ReportMetricsRequest report;
    report.set_worker_id("laws");
    report.set_trial_id(lease.trial_id());
    report.set_attempt(lease.attempt());
    v1::MetricBatch* batch = report.mutable_batch();
    batch->set_sequence(1);
    for (const std::string& line : lines) wire::AddStdoutLine(line, batch);
    v1::ReportMetricsResponse reported;
    status = workers->ReportMetrics(context(worker_token).get(), report, &reported);
    if (!status.ok()) return failed("reporting trial " + std::to_string(lease.trial_id()), status);
    v1::CompleteRequest complete;
    complete.set_worker_id("laws");
    complete.set_trial_id(lease.trial_id());
    complete.set_attempt(lease.attempt());
    complete.set_outcome(v1::OUTCOME_SUCCEEDED);
    complete.set_last_batch_sequence(1);
    v1::CompleteResponse completed;
    status = workers->Complete(context(worker_token).get(), complete, &completed);
    if (!status.ok()) return failed("completing trial " + std::to_string(lease.trial_id()), status);
  }
  return sweep_id;
}

}  // namespace rung::dashboard::testing

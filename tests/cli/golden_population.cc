// tests/cli/golden_population.cc: PopulateGoldenSweep (golden_fixture.h), the worker's side of the
// CLI golden fixture: the only code of the fixture that speaks the worker wire format. It relays
// rung-train's record lines as rung-worker does: each line decoded once by the agent's own
// AttemptRecords into its typed record, sent with the line as log text.
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <google/protobuf/util/time_util.h>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include "proto/config_value.h"
#include "tests/cli/golden_fixture.h"
#include "proto/protocol_version.h"
#include "proto/trainer_record_proto.h"
#include "worker/agent/attempt_records.h"

namespace rung::cli::testing {

Status PopulateGoldenSweep(v1::WorkerService::Stub& workers, const std::string& worker_token, ManualClock& clock,
                           int64_t sweep_id) {
  using nlohmann::json;
  auto context = [&worker_token] {
    auto made = std::make_unique<grpc::ClientContext>();
    made->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    made->AddMetadata("authorization", "Bearer " + worker_token);
    made->AddMetadata(wire::kProtocolVersionMetadata, std::to_string(wire::kProtocolVersion));
    return made;
  };
  auto failed = [](const std::string& what, const grpc::Status& status) {
    return Status::Internal("golden fixture: " + what + ": " + status.error_message());
  };
  auto tick = [&clock](int seconds) { clock.Advance(std::chrono::seconds(seconds)); };

  // Two workers: w1 runs everything; w2 (with a GPU, in an allocation that ends in 4 hours) stays idle.
  for (const auto& [worker_id, cpus] : std::vector<std::pair<std::string, int>>{{"w1", 8}, {"w2", 4}}) {
    v1::RegisterRequest request;
    request.set_worker_id(worker_id);
    request.set_host("node-" + worker_id);
    request.set_cpu_slots(cpus);
    request.set_build_commit("golden0000");
    request.set_blas_kernel(worker_id == "w1" ? "Cooperlake (rung)" : "SkylakeX (openblas)");
    request.set_pid(4000 + cpus);
    request.set_protocol_version(wire::kProtocolVersion);
    (*request.mutable_labels())["rack"] = worker_id == "w1" ? "a" : "b";
    if (worker_id == "w2") {
      v1::GpuDevice* gpu = request.add_gpus();
      gpu->set_index(0);
      gpu->set_name("Golden GPU");
      gpu->set_memory_bytes(int64_t{16} << 30);
      *request.mutable_stops_at() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(
          ToUnixMicros(clock.Now() + std::chrono::hours(4)));
    }
    v1::RegisterResponse response;
    grpc::Status status = workers.Register(context().get(), request, &response);
    if (!status.ok()) return failed("registering " + worker_id, status);
    tick(1);
  }

  // What each cell does: (variant, layers, seed) -> its final val_loss; the two absent cells are
  // the RUNNING one (lerope, 2 layers, seed 0) and the one PREEMPTED then FAILED (lerope, 2, 1).
  using Cell = std::tuple<std::string, int64_t, int64_t>;
  const std::map<Cell, double> final_loss = {
      {{"rope", 1, 0}, 3.00},   {{"rope", 1, 1}, 3.10},   {{"rope", 2, 0}, 2.50},
      {{"rope", 2, 1}, 2.62},   {{"lerope", 1, 0}, 2.90}, {{"lerope", 1, 1}, 3.02},
  };
  const Cell running = {"lerope", 2, 0}, failing = {"lerope", 2, 1};
  const Cell with_diagnostics = {"lerope", 1, 0};
  const Cell with_indexing = {"rope", 2, 1};  // its probe: paper 003's indexing task, not the pass key

  // rung-train's records (core/train/trainer.h) for a trial of `layers` layers of d_model 16:
  // N = 12 d^2 per layer, 32 tokens per step (batch 2 x 16).
  auto flops_per_token = [](int64_t layers) { return 6.0 * 12 * 16 * 16 * static_cast<double>(layers); };
  // (rung-train's provenance also holds the resolved config; the fixture leaves it out, so that the
  // goldens do not repeat every config key.)
  auto provenance = [](int64_t start_step) {
    return json{{"type", "provenance"},
                {"commit", "golden0000"},
                {"torch_version", "2.1.2"},
                {"blas", {{"library_path", "/usr/lib/libopenblas.so.0"}, {"threading", "openmp"}, {"optimized", true}}},
                {"threads", 1},
                {"host", "node-w1"},
                {"device", "cpu"},
                {"data", {{"source", "builtin"}, {"sha256", std::string(64, 'a')}}},
                {"steps", 10},
                {"tokens_per_step", 32},
                {"start_step", start_step},
                {"resumed_from", start_step > 0 ? json("attempt-1/checkpoint-5") : json()},
                {"world_size", 1}}
        .dump();
  };
  auto step_record = [&](int64_t step, int64_t layers, double train_loss, std::optional<double> val_loss) {
    json record = {{"type", "step"},
                   {"step", step},
                   {"tokens", step * 32},
                   {"flops", flops_per_token(layers) * static_cast<double>(step * 32)},
                   {"lr", 0.001},
                   {"train_loss", train_loss},
                   {"grad_norm", 0.5},
                   {"positional_grad_norm", 0.05},
                   {"tokens_per_sec", 1000.0},
                   {"elapsed_sec", 0.25 * static_cast<double>(step)}};
    if (val_loss) record["val_loss"] = *val_loss;
    return record.dump();
  };
  auto final_record = [&](const std::string& variant, int64_t layers, double loss, bool indexing) {
    json frequencies = json::array();
    for (int64_t layer = 0; layer < layers; ++layer) {
      json values = json::array();
      for (int pair = 0; pair < 4; ++pair) {  // head_dim 8: 4 pairs; RoPE's theta = 10000^(-f/4)
        const double rope = std::pow(10000.0, -pair / 4.0);
        values.push_back(variant == "lerope" ? rope * (1.0 + 0.1 * (pair + 1) + 0.05 * layer) : rope);
      }
      frequencies.push_back({{"name", "layer_" + std::to_string(layer)}, {"shape", {1, 4}}, {"values", values}});
    }
    json parameters = json::array();
    if (variant == "lerope") {
      parameters.push_back(
          {{"name", "positional.lerope_log_scale"}, {"shape", {4}}, {"values", {0.095, 0.182, 0.262, 0.336}}});
    }
    // A pass-key probe at 16 tokens (within T) and 32 (beyond: with no extension and with YaRN), needle
    // depths 0 and 1, four keys each.
    json probe = json::array();
    for (const auto& [length, method] : {std::pair<int, const char*>{16, "none"}, {32, "none"}, {32, "yarn"}}) {
      for (double depth : {0.0, 1.0}) {
        const int correct = length == 16 ? 4 : std::string(method) == "yarn" ? 3 - static_cast<int>(depth) : 1;
        probe.push_back({{"probe", "passkey"}, {"length", length}, {"depth", depth}, {"method", method},
                         {"score", "decode"}, {"tokenizer", "bytes"}, {"instances", 4}, {"correct", correct}, {"accuracy", correct / 4.0}});
      }
    }
    if (indexing) {
      // Lists of 1 and 2 elements within T = 16 (2 lists x 2 queries each), scored by choice.
      probe = json::array();
      for (const auto& [elements, correct, sd] : {std::tuple<int, int, double>{1, 4, 0.0}, {2, 3, 0.25}}) {
        probe.push_back({{"probe", "indexing"}, {"length", 12 + elements}, {"depth", -1.0}, {"method", "none"},
                         {"score", "choice"}, {"tokenizer", "bytes"}, {"instances", 4}, {"correct", correct},
                         {"accuracy", correct / 4.0}, {"elements", elements}, {"lists", 2}, {"accuracy_sd", sd},
                         {"mean_tokens", 11.5 + elements}, {"chance", 0.25},
                         {"position_blind", elements == 1 ? 1.0 : 0.75}});
      }
    }
    return json{{"type", "final"},
                {"step", 10},
                {"tokens", 320},
                {"flops", flops_per_token(layers) * 320},
                {"val_loss", loss},
                {"train_loss", loss - 0.125},
                {"val_loss_per_position", {loss + 0.5, loss + 0.25, loss, loss - 0.25}},
                {"positional_parameters", parameters},
                {"frequencies", frequencies},
                {"extrapolation",
                 {{{"multiple", 2}, {"length", 32}, {"method", "none"}, {"val_loss", loss + 0.375},
                   {"val_loss_back_half", loss + 0.5}},
                  {{"multiple", 2}, {"length", 32}, {"method", "yarn"}, {"val_loss", loss + 0.125}}}},
                {"probe", probe},
                {"train_tokens_per_sec", 1250.0},
                {"wall_sec", 2.5 * static_cast<double>(layers)},
                {"peak_rss_bytes", 104857600}}
        .dump();
  };
  // A head's failure modes at M = 8 and 16 in two precisions.
  auto failure_modes = [](int head) {
    json entries = json::array();
    for (int length : {8, 16}) {
      for (const char* precision : {"bf16", "fp32"}) {
        const bool bf16 = std::string(precision) == "bf16";
        entries.push_back({{"length", length},
                           {"precision", precision},
                           {"samples", 4},
                           {"position_inversion", 0.25 + 0.125 * head},
                           {"position_inversion_deviation", 0.25},
                           {"position_aliasing_fraction", bf16 ? 0.125 * length / 8 : 0.0},
                           {"position_aliasing_pairs", bf16 ? length / 8 : 0},
                           {"token_inversion", 0.5},
                           {"token_aliasing", bf16 ? 1.0 : 0.0}});
      }
    }
    return entries;
  };
  // The attention diagnostics of a milestone: `scale` moves the exponents so that two milestones differ;
  // a `multiple` (> 0) measures them at that multiple of T under `method`, as train.diagnostics_multiples.
  auto diagnostics_record = [&failure_modes](int64_t step, const std::string& milestone, double scale,
                                             int64_t multiple = 0, const std::string& method = "") {
    json layers = json::array();
    for (int layer = 0; layer < 1; ++layer) {
      json heads = json::array();
      for (int head = 0; head < 2; ++head) {
        json effective = json::array();
        for (int position = 1; position <= 16; ++position) effective.push_back(1.0 + 0.5 * position * (head + 1) / 2.0);
        heads.push_back({{"head", head},
                         {"effective_length_by_position", effective},
                         {"pair_usage", {0.4, 0.3, 0.2, 0.1}},
                         {"pair_usage_cv", 0.5 + 0.125 * head},
                         {"dominant_pair", head},
                         {"dominant_wavelength", 6.25 * (head + 1)},
                         {"dominant_wavelength_over_training_length", 0.390625 * (head + 1)},
                         {"effective_base", 9000.0 + 500.0 * head},
                         {"failure_modes", failure_modes(head)}});
      }
      json buckets = json::array();
      for (int n : {2, 4, 8, 16}) {
        buckets.push_back({{"n", n}, {"rows", 6}, {"ties", n == 2 ? 2 : 0}, {"mean_log_lambda", 0.125 * n * scale},
                           {"mean_log_alpha", -0.25}, {"mean_log_delta", -0.5}});
      }
      json gap = {{"at_training_length",
                   {{"n", 16}, {"rows", 64}, {"ties", 0}, {"lambda_mean", 2.5}, {"alpha_mean", 0.75}, {"delta_mean", 0.5}}},
                  {"buckets", buckets},
                  {"units", 8},
                  {"rows", 24},
                  {"ties", 2},
                  {"tie_share", 0.0769},
                  {"xi_lambda", 0.625 * scale},
                  {"xi_lambda_half_iqr", 0.0625},
                  {"xi_alpha", -0.125},
                  {"xi_alpha_half_iqr", 0.03125},
                  {"xi_delta", -0.25},
                  {"xi_delta_half_iqr", 0.046875},
                  {"softmax_regime",
                   {{{"beta_over_lambda", 0.5}, {"normalised_entropy", 0.875}, {"max_weight", 0.25}, {"top_two_gap", 0.125}},
                    {{"beta_over_lambda", 2.0}, {"normalised_entropy", 0.375}, {"max_weight", 0.75}, {"top_two_gap", 0.5}}}}};
      layers.push_back({{"layer", layer}, {"heads", heads}, {"gap_counting", gap}});
    }
    const json pooled = {{"units", 8},         {"rows", 24},         {"ties", 2},
                         {"tie_share", 0.0769}, {"xi_lambda", 0.625 * scale}, {"xi_lambda_half_iqr", 0.0625},
                         {"xi_alpha", -0.125},  {"xi_alpha_half_iqr", 0.03125},  {"xi_delta", -0.25},
                         {"xi_delta_half_iqr", 0.046875}};
    const json temperature = {
        {"xi_beta_grid",
         {{"fitted", true}, {"xi", 0.5 * scale}, {"standard_error", 0.015625}, {"points", 4}, {"skipped", 0}}},
        {"xi_beta_trim",
         {{"fitted", true},
          {"xi", 0.4375 * scale},
          {"standard_error", 0.0078125},
          {"points", 15},
          {"skipped", 0},
          {"trim", 2}}}};
    json payload = {{"length", 16},       {"renyi_order", 2.0}, {"layers", layers},
                    {"pooled", pooled},   {"grid", {2, 4, 8, 16}}, {"grid_fallback", true},
                    {"warning", "0 of the requested lengths lie in [2, 16]; the fit uses 4 geometric points from 16/8 to 16 instead (not the paper's grid)"},
                    {"milestone", milestone}, {"inverse_temperature", temperature}};
    if (multiple > 0) {
      payload["length"] = 16 * multiple;
      payload["multiple"] = multiple;
      payload["method"] = method;
      payload["grid"] = {8 * multiple, 16 * multiple};
      payload["grid_fallback"] = false;
      payload.erase("warning");
      payload.erase("inverse_temperature");
    }
    const std::string kind = multiple > 0 ? "attention_beyond" : "attention";
    return json{{"type", "diagnostics"}, {"kind", kind}, {"step", step}, {"milestone", milestone}, {kind, payload}}.dump();
  };
  // A needle-in-a-haystack grid of 3 depths x 2 distractor counts at 1x and 2x.
  auto niah_grid_record = [] {
    json grids = json::array();
    for (int multiple : {1, 2}) {
      grids.push_back({{"multiple", multiple},
                       {"length", 16 * multiple},
                       {"method", "none"},
                       {"accuracy", {{1.0, 0.75}, {0.875, 0.5}, {1.0 / multiple, 0.25}}},
                       {"placed", {{0.0, 1.0}, {0.0, 1.0}, {0.0, 1.0}}}});
    }
    const json payload = {{"depths", {0.0, 0.5, 1.0}}, {"distractors", {0, 1}}, {"instances", 8}, {"grids", grids}};
    return json{{"type", "diagnostics"}, {"kind", "niah_grid"}, {"step", 10}, {"milestone", "end"}, {"niah_grid", payload}}
        .dump();
  };

  // One attempt's batches as rung-worker sends them: each line as log text and, when it is a trainer
  // record, typed.
  struct Attempt {
    v1::TrialLease lease;
    agent::AttemptRecords records;
    int64_t sequence = 0;
  };
  auto report = [&](Attempt& attempt, const std::vector<std::string>& lines,
                    const std::vector<std::string>& stderr_lines) -> Status {
    v1::ReportMetricsRequest request;
    request.set_worker_id("w1");
    request.set_trial_id(attempt.lease.trial_id());
    request.set_attempt(attempt.lease.attempt());
    v1::MetricBatch* batch = request.mutable_batch();
    batch->set_sequence(++attempt.sequence);
    for (const std::string& line : lines) {
      attempt.records.Add(line);
      wire::AddStdoutLine(line, batch);
    }
    if (attempt.records.undecodable_lines() > 0) {
      return Status::Internal("golden fixture: a record line does not decode: " + attempt.records.first_decode_error());
    }
    for (const std::string& line : stderr_lines) batch->add_stderr_lines(line);
    v1::ReportMetricsResponse response;
    grpc::Status status = workers.ReportMetrics(context().get(), request, &response);
    tick(5);
    if (!status.ok()) return failed("reporting trial " + std::to_string(attempt.lease.trial_id()), status);
    return Status::Ok();
  };
  auto complete = [&](Attempt& attempt, v1::AttemptOutcome outcome, const std::string& reason,
                      int exit_code) -> Status {
    v1::CompleteRequest request;
    request.set_worker_id("w1");
    request.set_trial_id(attempt.lease.trial_id());
    request.set_attempt(attempt.lease.attempt());
    request.set_outcome(outcome);
    request.set_reason(reason);
    request.set_exit_code(exit_code);
    request.set_last_batch_sequence(attempt.sequence);
    v1::CompleteResponse response;
    grpc::Status status = workers.Complete(context().get(), request, &response);
    tick(2);
    if (!status.ok()) return failed("completing trial " + std::to_string(attempt.lease.trial_id()), status);
    return Status::Ok();
  };

  // Lease until nothing is left for w1, running each trial as its cell says.
  for (int leases = 0; leases < 20; ++leases) {
    v1::LeaseRequest request;
    request.set_worker_id("w1");
    request.mutable_free()->set_cpu_slots(8);
    v1::LeaseResponse response;
    grpc::Status status = workers.Lease(context().get(), request, &response);
    if (!status.ok()) return failed("leasing", status);
    if (!response.has_lease()) return Status::Ok();
    tick(1);
    Attempt attempt;
    attempt.lease = response.lease();
    if (attempt.lease.sweep_id() != sweep_id) {
      return Status::Internal("golden fixture: w1 leased trial " + std::to_string(attempt.lease.trial_id()) +
                              " of sweep " + std::to_string(attempt.lease.sweep_id()));
    }
    const json config = wire::FromConfigObject(attempt.lease.config());
    const Cell cell = {config["position"]["variant"].get<std::string>(), config["model"]["layers"].get<int64_t>(),
                       config["seed"].get<int64_t>()};
    const int64_t layers = std::get<1>(cell);
    const std::vector<std::string> threads = {"rung-train: BLAS openblas (openmp), 1 thread"};
    if (cell == running) {  // provenance and a first step, then nothing more
      RUNG_RETURN_IF_ERROR(report(attempt, {provenance(0), step_record(5, layers, 3.75, 3.5)}, threads));
      continue;
    }
    if (cell == failing && attempt.lease.attempt() == 1) {  // preempted after step 5 with a checkpoint
      RUNG_RETURN_IF_ERROR(report(attempt, {provenance(0), step_record(5, layers, 3.8, 3.55)}, threads));
      const std::string checkpoint = attempt.lease.checkpoint_dir() + "/checkpoint-5";
      RUNG_RETURN_IF_ERROR(report(
          attempt,
          {json{{"type", "checkpoint"}, {"step", 5}, {"path", checkpoint}}.dump(),
           json{{"type", "preempted"}, {"step", 5}, {"signal", 15}, {"checkpoint", checkpoint}}.dump()},
          {"rung-train: SIGTERM: checkpoint written, stopping"}));
      RUNG_RETURN_IF_ERROR(complete(attempt, v1::OUTCOME_PREEMPTED, "SIGTERM", 75));
      continue;
    }
    if (cell == failing) {  // the resumed attempt: a non-finite loss at step 7
      RUNG_RETURN_IF_ERROR(report(attempt,
                                  {provenance(5),
                                   json{{"type", "error"}, {"step", 7}, {"reason", "non-finite training loss at step 7"}}.dump()},
                                  {"rung-train: non-finite training loss at step 7 (train_loss nan)"}));
      RUNG_RETURN_IF_ERROR(complete(attempt, v1::OUTCOME_FAILED, "non-finite training loss at step 7", 3));
      continue;
    }
    const double loss = final_loss.at(cell);
    std::vector<std::string> first = {provenance(0), step_record(5, layers, loss + 0.625, loss + 0.5)};
    if (cell == with_diagnostics) first.push_back(diagnostics_record(5, "frac 0.5", 0.5));
    RUNG_RETURN_IF_ERROR(report(attempt, first, threads));
    std::vector<std::string> last = {step_record(10, layers, loss - 0.125, loss)};
    if (cell == with_diagnostics) {
      last.push_back(diagnostics_record(10, "end", 1.0));
      last.push_back(diagnostics_record(10, "end", 1.5, 2, "dynamic_ntk"));
      last.push_back(niah_grid_record());
      last.push_back(json{{"type", "diagnostics"},
                          {"kind", "band_ablation"},
                          {"step", 10},
                          {"milestone", "end"},
                          {"band_ablation",
                           {{"sequences", 4},
                            {"loss", 2.5},
                            {"pairs",
                             {{{"pair", 0}, {"rope_theta", 1.0}, {"loss", 2.625}, {"delta", 0.125}, {"zeroed_loss", 3.25},
                               {"zeroed_delta", 0.75}},
                              {{"pair", 1}, {"rope_theta", 0.1}, {"loss", 2.5}, {"delta", 0.0}, {"zeroed_loss", 2.5625},
                               {"zeroed_delta", 0.0625}}}}}}}
                         .dump());
      last.push_back(json{{"type", "diagnostics"},
                          {"kind", "head_influence"},
                          {"step", 10},
                          {"milestone", "end"},
                          {"head_influence",
                           {{"sequences", 4},
                            {"length", 16},
                            {"loss", 2.5},
                            {"frequency_unit", "kv_group"},
                            {"scale_unit", "head"},
                            {"heads",
                             {{{"layer", 0}, {"head", 0}, {"all", 0.25}, {"frequency", 0.125}, {"scale", 0.0625}},
                              {{"layer", 0}, {"head", 1}, {"all", 0.0}, {"frequency", 0.0}, {"scale", 0.0}}}}}}}
                         .dump());
    }
    last.push_back(final_record(std::get<0>(cell), layers, loss, cell == with_indexing));
    RUNG_RETURN_IF_ERROR(report(attempt, last, {}));
    RUNG_RETURN_IF_ERROR(complete(attempt, v1::OUTCOME_SUCCEEDED, "", 0));
  }
  return Status::Internal("golden fixture: w1 was still leasing after 20 leases");
}

}  // namespace rung::cli::testing

#include "core/train/trainer.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <variant>

#include <nlohmann/json.hpp>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "core/common/provenance.h"
#include "core/config/lr_schedule.h"
#include "core/config/model_arithmetic.h"
#include "core/data/batch_source.h"
#include "core/model/attention.h"
#include "core/diagnostics/attention_diagnostics.h"
#include "core/model/length_extension.h"
#include "core/model/transformer.h"
#include "core/records/trainer_records.h"
#include "core/train/checkpoint.h"
#include "core/train/data_parallel.h"
#include "core/train/flat_adamw.h"
#include "core/train/runtime.h"

namespace rung {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kCheckpointFormat = 1;
// Steps at the start of a process left out of train_tokens_per_sec (first-touch allocation, thread
// pool start-up: the first few steps here run several times slower).
constexpr int64_t kWarmupSteps = 5;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

void Emit(std::ostream& out, const records::TrainerRecord& record) {
  out << records::EncodeRecord(record) << '\n' << std::flush;
}

// The parts of a trial that must match for a checkpoint to be resumed (cadence may differ).
json ResumeIdentity(const TrialConfig& trial) {
  json identity = TrialConfigToJson(trial);
  for (const char* key : {"eval_every", "eval_batches", "log_every", "checkpoint_every", "keep_checkpoints"}) {
    identity["train"].erase(key);
  }
  identity.erase("resources");
  return identity;
}

struct Batch {
  torch::Tensor inputs, targets, mask;  // mask undefined when every position counts
  torch::Tensor doc_start;              // DocumentStarts of inputs; undefined without cross_doc_mask
};

// The input token at which attention starts a new document (data.cross_doc_mask), or -1 for plain
// causal attention.
int64_t CrossDocumentMaskToken(const DataConfig& data) { return data.cross_doc_mask ? DocumentStartToken(data) : -1; }

// bf16 autocast on CUDA for the forward passes of a scope (train.precision: bf16). Matrix products
// run in bf16; positional parameters, angles and the loss stay fp32.
class AutocastScope {
 public:
  explicit AutocastScope(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, true);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
#else
    at::autocast::set_enabled(true);
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
#endif
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
    at::autocast::set_autocast_enabled(at::kCUDA, false);
#else
    at::autocast::set_enabled(false);
#endif
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_;
};

bool UsesAutocast(const TrialConfig& trial) { return trial.train.precision == "bf16" && trial.train.device == "cuda"; }

Batch ToTensors(const TokenBatch& batch, const torch::Device& device, int64_t document_start_token) {
  auto to_long = [&](const std::vector<int32_t>& values) {
    return torch::from_blob(const_cast<int32_t*>(values.data()), {batch.batch_size, batch.seq_len}, torch::kInt)
        .to(device, torch::kLong);
  };
  Batch out{to_long(batch.inputs), to_long(batch.targets), {}, {}};
  if (document_start_token >= 0) out.doc_start = DocumentStarts(out.inputs, document_start_token);
  if (!batch.loss_mask.empty()) {
    out.mask = torch::from_blob(const_cast<float*>(batch.loss_mask.data()), {batch.batch_size, batch.seq_len},
                                torch::kFloat)
                   .to(device, /*non_blocking=*/false, /*copy=*/true);
  }
  return out;
}

// Per-token cross-entropy [B, T] in fp32.
torch::Tensor TokenLosses(const torch::Tensor& logits, const torch::Tensor& targets) {
  const int64_t vocab = logits.size(-1);
  return torch::nn::functional::cross_entropy(
             logits.reshape({-1, vocab}).to(torch::kFloat), targets.reshape({-1}),
             torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone))
      .view(targets.sizes());
}

torch::Tensor MeanLoss(const torch::Tensor& logits, const Batch& batch) {
  if (!batch.mask.defined()) {
    const int64_t vocab = logits.size(-1);
    return torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}), batch.targets.reshape({-1}));
  }
  return (TokenLosses(logits, batch.targets) * batch.mask).sum() / batch.mask.sum().clamp_min(1.0);
}

// This rank's share of a data-parallel batch: rows [rank * B / W, (rank + 1) * B / W).
Batch ShardOf(const Batch& batch, int rank, int world_size) {
  const int64_t rows = batch.inputs.size(0) / world_size;
  auto rows_of = [&](const torch::Tensor& tensor) {
    return tensor.defined() ? tensor.narrow(0, rank * rows, rows) : tensor;
  };
  return {rows_of(batch.inputs), rows_of(batch.targets), rows_of(batch.mask), rows_of(batch.doc_start)};
}

// A shard's part of the global batch's mean loss: its summed (masked) token losses over the global
// batch's count of counted targets. Summed over the ranks, values and gradients are MeanLoss's.
torch::Tensor ShardLoss(const torch::Tensor& logits, const Batch& shard, double global_count) {
  if (!shard.mask.defined()) {
    const int64_t vocab = logits.size(-1);
    return torch::nn::functional::cross_entropy(
               logits.reshape({-1, vocab}), shard.targets.reshape({-1}),
               torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)) /
           global_count;
  }
  return (TokenLosses(logits, shard.targets) * shard.mask).sum() / global_count;
}

struct Evaluation {
  double loss = 0.0;
  double accuracy = -1.0;                // only for sources with a loss mask (answer accuracy)
  std::vector<double> loss_per_position; // mean loss at each position over counted targets
};

// Validation loss over train.eval_batches batches of `batch_size` sequences of `time` positions
// (the training shape unless evaluating beyond the training length).
Evaluation Evaluate(Transformer& model, const BatchSource& source, const TrialConfig& trial,
                    const torch::Device& device, int64_t time, int64_t batch_size) {
  torch::NoGradGuard no_grad;
  model->eval();
  torch::Tensor loss_sum = torch::zeros({time}, torch::kDouble);
  torch::Tensor count = torch::zeros({time}, torch::kDouble);
  double correct = 0.0, answers = 0.0;
  bool masked = false;
  const int64_t document_start_token = CrossDocumentMaskToken(trial.data);
  for (int64_t index = 0; index < trial.train.eval_batches; ++index) {
    Batch batch = ToTensors(source.Batch(Split::kValidation, index, batch_size, time), device,
                            document_start_token);
    torch::Tensor logits;
    {
      AutocastScope autocast(UsesAutocast(trial));
      logits = model->forward(batch.inputs, batch.doc_start).to(torch::kFloat);
    }
    torch::Tensor losses = TokenLosses(logits, batch.targets);
    torch::Tensor weight = batch.mask.defined() ? batch.mask : torch::ones_like(losses);
    loss_sum += (losses * weight).sum(0).to(torch::kCPU, torch::kDouble);
    count += weight.sum(0).to(torch::kCPU, torch::kDouble);
    if (batch.mask.defined()) {
      masked = true;
      torch::Tensor hits = (logits.argmax(-1) == batch.targets).to(torch::kFloat) * batch.mask;
      correct += hits.sum().item<double>();
      answers += batch.mask.sum().item<double>();
    }
  }
  model->train();
  Evaluation evaluation;
  evaluation.loss = (loss_sum.sum() / count.sum().clamp_min(1.0)).item<double>();
  torch::Tensor per_position = loss_sum / count.clamp_min(1.0);
  evaluation.loss_per_position.resize(time);
  for (int64_t position = 0; position < time; ++position) {
    evaluation.loss_per_position[position] = count[position].item<double>() > 0 ? per_position[position].item<double>()
                                                                                : std::nan("");
  }
  if (masked) evaluation.accuracy = answers > 0 ? correct / answers : 0.0;
  return evaluation;
}

records::Tensor TensorRecord(const std::string& name, const torch::Tensor& tensor) {
  torch::Tensor flat = tensor.detach().to(torch::kCPU, torch::kDouble).contiguous().view({-1});
  std::vector<double> values(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
  return {name, tensor.sizes().vec(), std::move(values)};
}

std::vector<records::Tensor> PositionalParameters(Transformer& model) {
  std::vector<records::Tensor> params;
  for (const auto& item : model->named_parameters(/*recurse=*/true)) {
    const std::string& name = item.key();
    if (name.rfind("positional.", 0) == 0 || name.rfind("inverse_temperature.", 0) == 0) {
      params.push_back(TensorRecord(name, item.value()));
    }
  }
  return params;
}

std::vector<records::Tensor> Frequencies(Transformer& model) {
  torch::NoGradGuard no_grad;
  std::vector<records::Tensor> layers;
  if (!model->config().position.rotary()) return layers;
  for (int64_t layer = 0; layer < model->config().layers; ++layer) {
    layers.push_back(TensorRecord("layer_" + std::to_string(layer), model->positional()->Frequencies(layer)));
  }
  return layers;
}

// Validation beyond the training length: every multiple x method of train.extrapolation_*.
std::vector<records::ExtrapolationResult> EvaluateBeyondTrainingLength(Transformer& model, const BatchSource& source,
                                                                      const TrialConfig& trial,
                                                                      const torch::Device& device) {
  std::vector<records::ExtrapolationResult> results;
  const int64_t trained = trial.data.seq_len;
  for (int64_t multiple : trial.train.extrapolation_multiples) {
    for (const std::string& method : trial.train.extrapolation_methods) {
      if (multiple == 1 && method != "none") continue;  // extensions change nothing at the training length
      LengthExtension extension{method, static_cast<double>(multiple), static_cast<double>(trained)};
      model->positional()->set_length_extension(extension);
      // Same tokens per batch as training: attention memory grows with the square of the length.
      const int64_t batch_size = std::max<int64_t>(1, trial.train.batch_size / multiple);
      Evaluation evaluation = Evaluate(model, source, trial, device, trained * multiple, batch_size);
      records::ExtrapolationResult result;
      result.multiple = multiple;
      result.length = trained * multiple;
      result.method = method;
      result.val_loss = evaluation.loss;
      result.val_loss_per_position = std::move(evaluation.loss_per_position);
      if (evaluation.accuracy >= 0) result.val_accuracy = evaluation.accuracy;
      results.push_back(std::move(result));
    }
  }
  model->positional()->set_length_extension(LengthExtension{});
  return results;
}

class TrialRun {
 public:
  TrialRun(const TrialConfig& trial, const TrainerOptions& options) : trial_(trial), options_(options) {}
  StatusOr<TrainOutcome> Run();

 private:
  Status Setup();
  Status Resume(const std::string& path);
  Status InitializeFrom(const InitConfig& init);
  Status SaveCheckpoint(const std::string& reason);
  // Joins the data-parallel group and gives every rank rank 0's state (a world of one: nothing).
  Status JoinGroup();
  // Prints a record: every record on rank 0, only error records on the other ranks.
  void Record(const records::TrainerRecord& record);
  // The error record of a non-finite loss or gradient, and the status the run ends with.
  Status NonFinite(const std::string& what);
  bool lead() const { return options_.rank == 0; }
  records::StepRecord StepRecord(double loss, const std::vector<double>& norms, double lr_multiplier);
  records::ProvenanceRecord Provenance() const;
  // The end of a run: the diagnostics record, then the final record.
  void EmitDiagnosticsAndFinal(const Evaluation& evaluation, double train_loss, Clock::time_point run_start);

  const TrialConfig& trial_;
  const TrainerOptions& options_;
  torch::Device device_ = torch::kCPU;
  std::unique_ptr<BatchSource> source_;
  Transformer model_{nullptr};
  std::unique_ptr<FlatAdamW> optimizer_;
  std::unique_ptr<DataParallelGroup> group_;
  int world_size_ = 1;
  FlopsPerToken flops_per_token_;
  int64_t step_ = 0;        // optimizer steps completed
  int64_t data_index_ = 0;  // training batches drawn
  int64_t tokens_ = 0;      // training tokens consumed
  std::string resumed_from_;
  // Step records since the checkpoint before the newest one, stored in each checkpoint and printed
  // again after a resume: a worker killed outright loses the lines it had not sent yet, and the
  // attempt that resumes from the checkpoint would otherwise never report those steps.
  std::deque<records::StepRecord> recent_steps_;
  int64_t last_checkpoint_step_ = -1;
  double train_seconds_ = 0.0;
  double steady_seconds_ = 0.0;  // training time after the warm-up steps of this process
  int64_t steady_tokens_ = 0;
  int64_t tokens_at_last_log_ = 0;
  double seconds_at_last_log_ = 0.0;
};

Status TrialRun::Setup() {
  if (trial_.train.device == "cuda") {
    if (!torch::cuda::is_available()) return Status::FailedPrecondition("train.device is cuda but no CUDA device is available");
    device_ = torch::Device(torch::kCUDA, 0);
  }
  world_size_ = static_cast<int>(trial_.resources.world_size);
  DataParallelOptions parallel;
  parallel.rank = options_.rank;
  parallel.world_size = world_size_;
  parallel.rendezvous = options_.rendezvous;
  RUNG_ASSIGN_OR_RETURN(group_, DataParallelGroup::Connect(parallel, device_));
  torch::manual_seed(trial_.seed);
  RUNG_ASSIGN_OR_RETURN(source_, MakeBatchSource(trial_.data, trial_.seed));
  if (source_->vocab_size() > trial_.model.vocab_size) {
    return Status::InvalidArgument("data emits " + std::to_string(source_->vocab_size()) +
                                   " token ids but model.vocab_size is " + std::to_string(trial_.model.vocab_size));
  }
  model_ = Transformer(trial_.model);
  model_->to(device_);
  flops_per_token_ = CountFlopsPerToken(trial_.model);

  const TrainConfig& train = trial_.train;
  const PositionConfig& position = trial_.model.position;
  ParameterGroups groups = model_->parameter_groups();
  auto freeze = [](std::vector<torch::Tensor>& params) {
    for (auto& param : params) param.set_requires_grad(false);
    params.clear();
  };
  if (train.freeze_backbone) {
    freeze(groups.decay);
    freeze(groups.no_decay);
  }
  if (position.freeze) {
    freeze(groups.positional);
    freeze(groups.positional_freq);
  }
  std::vector<FlatGroupSpec> specs = {
      {"decay", groups.decay, 1.0, train.weight_decay, 0},
      {"no_decay", groups.no_decay, 1.0, 0.0, 0},
      {"positional", groups.positional, position.lr_mult, 0.0, 1},
      {"positional_freq", groups.positional_freq, position.lr_mult * position.adarope.freq_lr_mult, 0.0, 1},
  };
  FlatAdamWOptions adam;
  adam.lr = train.lr;
  adam.beta1 = train.beta1;
  adam.beta2 = train.beta2;
  adam.eps = train.eps;
  adam.independent_weight_decay = train.weight_decay_mode == "independent";
  adam.clip_max_norm = {train.clip, position.clip};
  optimizer_ = std::make_unique<FlatAdamW>(std::move(specs), adam);

  std::string resume_path;
  if (options_.resume == "auto") {
    std::vector<std::string> existing = ListCheckpoints(options_.checkpoint_dir);
    if (!options_.checkpoint_dir.empty() && !existing.empty()) resume_path = existing.back();
  } else if (options_.resume != "never") {
    resume_path = options_.resume;
  }
  if (!lead()) {
    // Rank 0 resumes or initialises; JoinGroup hands its state to this rank.
  } else if (!resume_path.empty()) {
    RUNG_RETURN_IF_ERROR(Resume(resume_path));
  } else if (!trial_.train.init.checkpoint.empty()) {
    RUNG_RETURN_IF_ERROR(InitializeFrom(trial_.train.init));
  } else if (!trial_.train.init.from_trial.empty()) {
    return Status::InvalidArgument("train.init.from_trial '" + trial_.train.init.from_trial +
                                   "' is resolved by the coordinator (rung submit / rung run); to run this "
                                   "config directly, set train.init.checkpoint to that trial's checkpoint");
  }
  return JoinGroup();
}

Status TrialRun::JoinGroup() {
  if (world_size_ == 1) return Status::Ok();
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> state = optimizer_->StateBuffers();
  // Parameters outside the optimizer (frozen ones) may come from a checkpoint too.
  for (const auto& item : model_->named_parameters(true)) {
    if (!item.value().requires_grad()) state.push_back(item.value());
  }
  torch::Tensor position =
      torch::tensor({step_, data_index_, tokens_, optimizer_->step_count()}, torch::TensorOptions(torch::kLong));
  state.push_back(position.to(device_));
  RUNG_RETURN_IF_ERROR(group_->Broadcast(state));
  torch::Tensor received = state.back().to(torch::kCPU);
  step_ = received[0].item<int64_t>();
  data_index_ = received[1].item<int64_t>();
  tokens_ = received[2].item<int64_t>();
  optimizer_->set_step_count(received[3].item<int64_t>());
  return Status::Ok();
}

void TrialRun::Record(const records::TrainerRecord& record) {
  const bool error = std::holds_alternative<records::ErrorRecord>(record);
  if (lead() || error) Emit(*options_.records, record);
  // Only a run that checkpoints has somewhere to keep them (and trims them at each checkpoint).
  if (const auto* step = std::get_if<records::StepRecord>(&record); step && lead() && !options_.checkpoint_dir.empty()) {
    recent_steps_.push_back(*step);
  }
}

Status TrialRun::NonFinite(const std::string& what) {
  const std::string reason = what + " at step " + std::to_string(step_ + 1);
  records::ErrorRecord error;
  error.step = step_ + 1;
  error.reason = reason;
  Record(error);
  return Status::Aborted(reason);
}

Status TrialRun::Resume(const std::string& path) {
  if (!std::filesystem::exists(path)) return Status::NotFound("checkpoint " + path + " does not exist");
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    c10::IValue meta_value;
    archive.read("meta", meta_value);
    json meta = json::parse(meta_value.toStringRef());
    if (meta.value("format", 0) != kCheckpointFormat) {
      return Status::FailedPrecondition("checkpoint " + path + " has an unknown format");
    }
    std::string difference = FirstIdentityDifference(meta.at("identity"), ResumeIdentity(trial_));
    if (!difference.empty()) {
      return Status::FailedPrecondition("checkpoint " + path + " was written by a different trial config (differs at " +
                                        difference + ")");
    }
    torch::NoGradGuard no_grad;
    for (auto& item : model_->named_parameters(true)) {
      torch::Tensor value;
      archive.read("model/" + item.key(), value);
      item.value().copy_(value);
    }
    optimizer_->Load(archive);
    torch::Tensor rng;
    archive.read("rng/cpu", rng);
    at::Generator generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng);
    step_ = meta.at("step").get<int64_t>();
    data_index_ = meta.at("data_index").get<int64_t>();
    tokens_ = meta.at("tokens").get<int64_t>();
    recent_steps_.clear();
    if (meta.contains("records") && meta["records"].is_array()) {
      // Each an encoded step record; checkpoints of earlier releases hold the records' JSON objects.
      for (const json& entry : meta["records"]) {
        StatusOr<records::TrainerRecord> record = records::DecodeRecord(entry.is_string() ? entry.get<std::string>() : entry.dump());
        if (!record.ok()) return Status::DataLoss("checkpoint " + path + " remembers a step record it cannot read: " + record.status().message());
        if (const auto* step = std::get_if<records::StepRecord>(&*record)) recent_steps_.push_back(*step);
      }
    }
    last_checkpoint_step_ = step_;
  } catch (const std::exception& error) {
    return Status::DataLoss("cannot read checkpoint " + path + ": " + error.what());
  }
  resumed_from_ = path;
  return Status::Ok();
}

// Copies parameters from another run's checkpoint: every parameter of the chosen kind must exist
// there with the same shape (a context extension changes the sequence length, not the shapes).
Status TrialRun::InitializeFrom(const InitConfig& source) {
  InitConfig init = source;
  if (!std::filesystem::exists(init.checkpoint)) {
    return Status::NotFound("train.init.checkpoint " + init.checkpoint + " does not exist");
  }
  if (std::filesystem::is_directory(init.checkpoint)) {  // a trial's checkpoint folder: its newest
    std::vector<std::string> checkpoints = ListCheckpoints(init.checkpoint);
    if (checkpoints.empty()) {
      return Status::NotFound("train.init.checkpoint " + init.checkpoint + " is a folder without checkpoints");
    }
    init.checkpoint = checkpoints.back();
  }
  auto is_positional = [](const std::string& name) {
    return name.rfind("positional.", 0) == 0 || name.rfind("inverse_temperature.", 0) == 0;
  };
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(init.checkpoint);
    torch::NoGradGuard no_grad;
    int64_t copied = 0;
    for (auto& item : model_->named_parameters(true)) {
      const bool positional = is_positional(item.key());
      if ((init.parameters == "positional" && !positional) || (init.parameters == "backbone" && positional)) continue;
      torch::Tensor value;
      if (!archive.try_read("model/" + item.key(), value)) {
        return Status::FailedPrecondition("train.init.checkpoint " + init.checkpoint + " has no parameter " + item.key() +
                                          " (a different variant or shape?)");
      }
      if (value.sizes() != item.value().sizes()) {
        return Status::FailedPrecondition("train.init.checkpoint: parameter " + item.key() + " has shape " +
                                          c10::str(value.sizes()) + " there and " + c10::str(item.value().sizes()) +
                                          " here");
      }
      item.value().copy_(value);
      ++copied;
    }
    if (copied == 0) {
      return Status::FailedPrecondition("train.init: no " + init.parameters + " parameters to copy from " + init.checkpoint);
    }
  } catch (const std::exception& error) {
    return Status::DataLoss("cannot read train.init.checkpoint " + init.checkpoint + ": " + error.what());
  }
  return Status::Ok();
}

Status TrialRun::SaveCheckpoint(const std::string& reason) {
  if (options_.checkpoint_dir.empty() || !lead()) return Status::Ok();
  json remembered = json::array();
  for (const records::StepRecord& step : recent_steps_) remembered.push_back(records::EncodeRecord(step));
  json meta = {{"format", kCheckpointFormat}, {"step", step_}, {"data_index", data_index_}, {"tokens", tokens_},
               {"identity", ResumeIdentity(trial_)}, {"records", std::move(remembered)}};
  Status status = WriteCheckpointAtomically(
      options_.checkpoint_dir, step_, trial_.train.keep_checkpoints, [&](const std::string& temp_path) -> Status {
        try {
          torch::serialize::OutputArchive archive;
          archive.write("meta", c10::IValue(meta.dump()));
          for (const auto& item : model_->named_parameters(true)) archive.write("model/" + item.key(), item.value());
          optimizer_->Save(archive);
          archive.write("rng/cpu", at::detail::getDefaultCPUGenerator().get_state());
          archive.save_to(temp_path);
        } catch (const std::exception& error) {
          return Status::Internal(std::string("writing checkpoint: ") + error.what());
        }
        return Status::Ok();
      });
  RUNG_RETURN_IF_ERROR(status);
  while (!recent_steps_.empty() && recent_steps_.front().step <= last_checkpoint_step_) {
    recent_steps_.pop_front();  // keep the steps since the previous checkpoint: the next one stores two windows
  }
  last_checkpoint_step_ = step_;
  records::CheckpointRecord published;
  published.step = step_;
  published.path = CheckpointPath(options_.checkpoint_dir, step_);
  published.reason = reason;
  Record(published);
  return Status::Ok();
}

records::StepRecord TrialRun::StepRecord(double loss, const std::vector<double>& norms, double lr_multiplier) {
  double interval_seconds = train_seconds_ - seconds_at_last_log_;
  double interval_tokens = static_cast<double>(tokens_ - tokens_at_last_log_);
  records::StepRecord record;
  record.step = step_;
  record.tokens = tokens_;
  record.flops = flops_per_token_.nonembedding * static_cast<double>(tokens_);
  record.flops_total = flops_per_token_.total() * static_cast<double>(tokens_);
  record.lr = trial_.train.lr * lr_multiplier;
  record.train_loss = loss;
  record.grad_norm = norms[0];
  record.positional_grad_norm = norms[1];
  record.tokens_per_sec = interval_seconds > 0 ? interval_tokens / interval_seconds : 0.0;
  record.elapsed_sec = train_seconds_;
  tokens_at_last_log_ = tokens_;
  seconds_at_last_log_ = train_seconds_;
  return record;
}

void TrialRun::EmitDiagnosticsAndFinal(const Evaluation& evaluation, double train_loss, Clock::time_point run_start) {
  const TrainConfig& train = trial_.train;
  if (train.diagnostics_sequences > 0) {
    Batch sample = ToTensors(source_->Batch(Split::kValidation, 0, train.diagnostics_sequences, trial_.data.seq_len),
                             device_, CrossDocumentMaskToken(trial_.data));
    DiagnosticsOptions diagnostics_options;
    diagnostics_options.seed = trial_.seed;
    diagnostics_options.renyi_order = train.diagnostics_renyi_order;
    records::DiagnosticsRecord diagnostics;
    diagnostics.kind = "attention";
    diagnostics.step = step_;
    diagnostics.milestone = "end";
    diagnostics.payload.text =
        MeasureAttentionDiagnostics(model_, sample.inputs, sample.doc_start, diagnostics_options).dump();
    Record(diagnostics);
  }
  records::FinalRecord final_record;
  final_record.step = step_;
  final_record.tokens = tokens_;
  final_record.flops = flops_per_token_.nonembedding * static_cast<double>(tokens_);
  final_record.flops_total = flops_per_token_.total() * static_cast<double>(tokens_);
  final_record.val_loss = evaluation.loss;
  final_record.val_loss_per_position = evaluation.loss_per_position;
  final_record.positional_parameters = PositionalParameters(model_);
  final_record.frequencies = Frequencies(model_);
  final_record.extrapolation = EvaluateBeyondTrainingLength(model_, *source_, trial_, device_);
  final_record.train_tokens_per_sec = steady_seconds_ > 0 ? static_cast<double>(steady_tokens_) / steady_seconds_ : 0.0;
  final_record.wall_sec = Seconds(run_start);
  final_record.peak_rss_bytes = PeakRssBytes();
  if (std::isfinite(train_loss)) final_record.train_loss = train_loss;  // unknown after a resume at the end
  if (evaluation.accuracy >= 0) final_record.val_accuracy = evaluation.accuracy;
  Record(final_record);
}

records::ProvenanceRecord TrialRun::Provenance() const {
  const json runtime = RuntimeProvenance();
  records::ProvenanceRecord provenance;
  provenance.commit = runtime.value("commit", std::string());
  provenance.host = runtime.value("host", std::string());
  provenance.blas.text = runtime.value("blas", json::object()).dump();
  provenance.torch_version = runtime.value("torch_version", std::string());
  provenance.threads = runtime.value("threads", int64_t{0});
  provenance.cuda_available = runtime.value("cuda_available", false);
  provenance.device = device_.str();
  provenance.config.text = TrialConfigToJson(trial_).dump();
  provenance.data.text = source_->Describe().dump();
  provenance.parameters.text = ParameterCountsToJson(CountParameters(trial_.model)).dump();
  provenance.flops_per_token.nonembedding = flops_per_token_.nonembedding;
  provenance.flops_per_token.attention = flops_per_token_.attention;
  provenance.flops_per_token.matrix = flops_per_token_.matrix;
  provenance.flops_per_token.total = flops_per_token_.total();
  provenance.steps = trial_.train.steps;
  provenance.tokens_per_step = TokensPerStep(trial_.train, trial_.data.seq_len);
  provenance.start_step = step_;
  if (!resumed_from_.empty()) provenance.resumed_from = resumed_from_;
  provenance.world_size = world_size_;
  return provenance;
}

StatusOr<TrainOutcome> TrialRun::Run() {
  RUNG_RETURN_IF_ERROR(Setup());
  const TrainConfig& train = trial_.train;
  Record(Provenance());
  // After a resume: the steps the checkpoint remembers, again (the coordinator keeps one value per
  // step, from the newest attempt).
  const std::deque<records::StepRecord> replay = std::move(recent_steps_);
  recent_steps_.clear();
  for (records::StepRecord record : replay) {
    record.replayed = true;
    Record(record);
  }

  const int64_t time = trial_.data.seq_len;
  const int64_t start_step = step_;
  const double accum = static_cast<double>(train.grad_accum);
  const int64_t document_start_token = CrossDocumentMaskToken(trial_.data);
  tokens_at_last_log_ = tokens_;
  auto run_start = Clock::now();
  while (step_ < train.steps) {
    auto step_start = Clock::now();
    const double lr_multiplier = LearningRateMultiplier(train.schedule, step_, train.steps);
    optimizer_->ZeroGrad();
    double step_loss = 0.0;
    for (int64_t micro = 0; micro < train.grad_accum; ++micro) {
      Batch batch = ToTensors(source_->Batch(Split::kTrain, data_index_++, train.batch_size, time), device_,
                              document_start_token);
      torch::Tensor loss;
      if (world_size_ == 1) {
        AutocastScope autocast(UsesAutocast(trial_));
        loss = MeanLoss(model_->forward(batch.inputs, batch.doc_start), batch);
      } else {
        const double global_count = batch.mask.defined() ? std::max(1.0, batch.mask.sum().item<double>())
                                                         : static_cast<double>(batch.targets.numel());
        Batch shard = ShardOf(batch, options_.rank, world_size_);
        AutocastScope autocast(UsesAutocast(trial_));
        loss = ShardLoss(model_->forward(shard.inputs, shard.doc_start), shard, global_count);
      }
      double value = loss.item<double>();
      // A data-parallel rank learns of a non-finite loss from the step's all-reduce below, with the others.
      if (world_size_ == 1 && !std::isfinite(value)) {
        return NonFinite("non-finite training loss (" + std::to_string(value) + ")");
      }
      step_loss += value / accum;
      (accum > 1 ? loss / accum : loss).backward();
    }
    // Data-parallel: the global loss and whether any rank was asked to stop, then the gradients
    // (summed: each rank's loss is already its share of the global mean).
    bool stop_agreed = false;
    if (world_size_ > 1) {
      torch::Tensor control =
          torch::tensor({step_loss, StopRequest().load() != 0 ? 1.0 : 0.0}, torch::TensorOptions(torch::kDouble))
              .to(device_);
      std::vector<torch::Tensor> gradients = optimizer_->GradientBuffers();
      gradients.push_back(control);
      RUNG_RETURN_IF_ERROR(group_->AllReduceSum(gradients));
      control = control.to(torch::kCPU);
      step_loss = control[0].item<double>();
      stop_agreed = control[1].item<double>() > 0;
      if (!std::isfinite(step_loss)) return NonFinite("non-finite training loss (" + std::to_string(step_loss) + ")");
    }
    std::vector<double> norms = optimizer_->ClipGradients();
    if (!std::isfinite(norms[0]) || !std::isfinite(norms[1])) return NonFinite("non-finite gradient norm");
    optimizer_->Step(lr_multiplier);
    ++step_;
    tokens_ += TokensPerStep(train, time);
    const double step_seconds = Seconds(step_start);
    train_seconds_ += step_seconds;
    if (step_ - start_step > kWarmupSteps) {
      steady_seconds_ += step_seconds;
      steady_tokens_ += TokensPerStep(train, time);
    }

    const bool last = step_ == train.steps;
    if (!lead()) {
      // Rank 0 evaluates, checkpoints and reports; this rank only keeps stepping with the group.
      if (last) return TrainOutcome::kCompleted;
      const bool stop = world_size_ > 1 ? stop_agreed : StopRequest().load() != 0;
      if (stop || (options_.stop_after_step > 0 && step_ >= options_.stop_after_step)) return TrainOutcome::kPreempted;
      continue;
    }
    const bool evaluate = !last && train.eval_every > 0 && step_ % train.eval_every == 0;
    if (evaluate || last || step_ % train.log_every == 0) {
      records::StepRecord record = StepRecord(step_loss, norms, lr_multiplier);
      if (evaluate) {
        Evaluation evaluation = Evaluate(model_, *source_, trial_, device_, trial_.data.seq_len, trial_.train.batch_size);
        record.val_loss = evaluation.loss;
        if (evaluation.accuracy >= 0) record.val_accuracy = evaluation.accuracy;
      }
      if (!last) Record(record);
      if (last) {
        Evaluation evaluation = Evaluate(model_, *source_, trial_, device_, trial_.data.seq_len, trial_.train.batch_size);
        record.val_loss = evaluation.loss;
        if (evaluation.accuracy >= 0) record.val_accuracy = evaluation.accuracy;
        Record(record);
        RUNG_RETURN_IF_ERROR(SaveCheckpoint("final"));
        EmitDiagnosticsAndFinal(evaluation, step_loss, run_start);
        return TrainOutcome::kCompleted;
      }
    }
    if (train.checkpoint_every > 0 && step_ % train.checkpoint_every == 0) RUNG_RETURN_IF_ERROR(SaveCheckpoint("periodic"));
    // Data-parallel ranks stop at the step they agreed on (a signal to any rank stops them all).
    const int signal = StopRequest().load();
    const bool stop = world_size_ > 1 ? stop_agreed : signal != 0;
    if (stop || (options_.stop_after_step > 0 && step_ >= options_.stop_after_step)) {
      RUNG_RETURN_IF_ERROR(SaveCheckpoint(stop ? "signal" : "stop_after_step"));
      records::PreemptedRecord preempted;
      preempted.step = step_;
      preempted.signal = signal;
      if (!options_.checkpoint_dir.empty()) preempted.checkpoint = CheckpointPath(options_.checkpoint_dir, step_);
      Record(preempted);
      return TrainOutcome::kPreempted;
    }
  }
  // Resumed from the final checkpoint (the previous attempt ended before it was reported): report
  // the results again, so that this attempt completes like the one before it.
  if (!lead()) return TrainOutcome::kCompleted;
  EmitDiagnosticsAndFinal(Evaluate(model_, *source_, trial_, device_, trial_.data.seq_len, train.batch_size),
                          std::nan(""), run_start);
  return TrainOutcome::kCompleted;
}

}  // namespace

StatusOr<TrainOutcome> TrainTrial(const TrialConfig& trial, const TrainerOptions& options) {
  if (options.records == nullptr) return Status::InvalidArgument("TrainTrial: no record stream");
  try {
    TrialRun run(trial, options);
    return run.Run();
  } catch (const std::exception& error) {
    return Status::Internal(std::string("training failed: ") + error.what());
  }
}

}  // namespace rung

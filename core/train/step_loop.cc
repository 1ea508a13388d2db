#include "core/train/step_loop.h"

#include <cmath>
#include <vector>

#include "core/config/lr_schedule.h"
#include "core/train/autocast_scope.h"
#include "core/train/batch_tensors.h"
#include "core/train/stop_signal.h"

namespace rung {
namespace {

using Clock = std::chrono::steady_clock;

// The one failure of a step: a non-finite loss or gradient (`what`) in the step after `step`.
Status NonFinite(const std::string& what, int64_t step) {
  return Status::Aborted(what + " at step " + std::to_string(step + 1));
}

Status CheckLoss(double loss, int64_t step) {
  if (std::isfinite(loss)) return Status::Ok();
  return NonFinite("non-finite training loss (" + std::to_string(loss) + ")", step);
}

}  // namespace

std::unique_ptr<FlatAdamW> MakeOptimizer(const TrialConfig& trial, Transformer& model) {
  const TrainConfig& train = trial.train;
  const PositionConfig& position = trial.model.position;
  ParameterGroups groups = model->parameter_groups();
  auto freeze = [](std::vector<torch::Tensor>& params) {
    for (auto& param : params) param.set_requires_grad(false);
    params.clear();
  };
  // Low-rank adapters train in the backbone's place (core/config/lora_config.h).
  if (train.freeze_backbone || train.lora.enabled()) {
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
  // The adapters' matrices decay as the backbone's would, in the backbone's clip set (checkpoints
  // before adapters have no such group).
  if (!groups.lora.empty()) specs.push_back({"lora", groups.lora, 1.0, train.weight_decay, 0});
  FlatAdamWOptions adam;
  adam.lr = train.lr;
  adam.beta1 = train.beta1;
  adam.beta2 = train.beta2;
  adam.eps = train.eps;
  adam.independent_weight_decay = train.weight_decay_mode == "independent";
  adam.clip_max_norm = {train.clip, position.clip};
  return std::make_unique<FlatAdamW>(std::move(specs), adam);
}

StepLoop::StepLoop(const TrialConfig& trial, const torch::Device& device, const BatchSource& source,
                   Transformer& model, FlatAdamW& optimizer, DataParallelGroup& group,
                   const FlopsPerToken& flops_per_token, const TrainingProgress& start)
    : trial_(trial),
      device_(device),
      source_(source),
      model_(model),
      optimizer_(optimizer),
      group_(group),
      flops_per_token_(flops_per_token),
      document_start_token_(CrossDocumentMaskToken(trial.data)),
      start_step_(start.step),
      tokens_at_last_record_(start.tokens) {}

torch::Tensor StepLoop::BatchLoss(const TensorBatch& batch) {
  if (group_.world_size() == 1) {
    AutocastScope autocast(UsesAutocast(trial_));
    return MeanLoss(model_->forward(batch.inputs, batch.doc_start), batch);
  }
  const double global_count = CountedTargets(batch);
  TensorBatch shard = ShardOf(batch, group_.rank(), group_.world_size());
  AutocastScope autocast(UsesAutocast(trial_));
  return ShardLoss(model_->forward(shard.inputs, shard.doc_start), shard, global_count);
}

StatusOr<StepResult> StepLoop::Step(TrainingProgress& progress) {
  const TrainConfig& train = trial_.train;
  const int64_t time = trial_.data.seq_len;
  const double accum = static_cast<double>(train.grad_accum);
  const auto step_start = Clock::now();
  StepResult result;
  result.lr_multiplier = LearningRateMultiplier(train.schedule, progress.step, train.steps);
  optimizer_.ZeroGrad();
  for (int64_t micro = 0; micro < train.grad_accum; ++micro) {
    TensorBatch batch =
        ToTensors(source_.Batch(Split::kTrain, progress.data_index++, train.batch_size, time), device_,
                  document_start_token_);
    torch::Tensor loss = BatchLoss(batch);
    const double value = loss.item<double>();
    // A data-parallel rank learns of a non-finite loss from the step's all-reduce below, with the others.
    if (group_.world_size() == 1) RUNG_RETURN_IF_ERROR(CheckLoss(value, progress.step));
    result.loss += value / accum;
    (accum > 1 ? loss / accum : loss).backward();
  }
  if (group_.world_size() > 1) {
    RUNG_ASSIGN_OR_RETURN(const StepAgreement agreed,
                          AgreeOnStep(group_, optimizer_.GradientBuffers(), result.loss, StopRequest().load() != 0,
                                      device_));
    result.loss = agreed.loss;
    result.stop_agreed = agreed.stop;
    RUNG_RETURN_IF_ERROR(CheckLoss(result.loss, progress.step));
  }
  const std::vector<double> norms = optimizer_.ClipGradients();
  if (!std::isfinite(norms[0]) || !std::isfinite(norms[1])) return NonFinite("non-finite gradient norm", progress.step);
  result.grad_norm = norms[0];
  result.positional_grad_norm = norms[1];
  optimizer_.Step(result.lr_multiplier);
  ++progress.step;
  progress.tokens += TokensPerStep(train, time);
  const double step_seconds = std::chrono::duration<double>(Clock::now() - step_start).count();
  train_seconds_ += step_seconds;
  if (progress.step - start_step_ > kWarmupSteps) {
    steady_seconds_ += step_seconds;
    steady_tokens_ += TokensPerStep(train, time);
  }
  return result;
}

records::StepRecord StepLoop::StepRecordOf(const StepResult& step, const TrainingProgress& progress) {
  const double interval_seconds = train_seconds_ - seconds_at_last_record_;
  const double interval_tokens = static_cast<double>(progress.tokens - tokens_at_last_record_);
  records::StepRecord record;
  record.step = progress.step;
  record.tokens = progress.tokens;
  record.flops = flops_per_token_.nonembedding * static_cast<double>(progress.tokens);
  record.flops_total = flops_per_token_.total() * static_cast<double>(progress.tokens);
  record.lr = trial_.train.lr * step.lr_multiplier;
  record.train_loss = step.loss;
  record.grad_norm = step.grad_norm;
  record.positional_grad_norm = step.positional_grad_norm;
  record.tokens_per_sec = interval_seconds > 0 ? interval_tokens / interval_seconds : 0.0;
  record.elapsed_sec = train_seconds_;
  tokens_at_last_record_ = progress.tokens;
  seconds_at_last_record_ = train_seconds_;
  return record;
}

double StepLoop::steady_tokens_per_sec() const {
  return steady_seconds_ > 0 ? static_cast<double>(steady_tokens_) / steady_seconds_ : 0.0;
}

}  // namespace rung

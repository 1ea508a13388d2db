#include "core/train/evaluation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/diagnostics/attention_diagnostics.h"
#include "core/model/length_extension.h"
#include "core/train/autocast_scope.h"
#include "core/train/batch_tensors.h"
#include "core/train/positional_records.h"

namespace rung {

void AddHeldOut(const Evaluation& evaluation, records::StepRecord& record) {
  record.val_loss = evaluation.loss;
  if (evaluation.accuracy >= 0) record.val_accuracy = evaluation.accuracy;
}

Evaluator::Evaluator(const TrialConfig& trial, const torch::Device& device, const BatchSource& source,
                     Transformer& model)
    : trial_(trial), device_(device), source_(source), model_(model) {}

Evaluation Evaluator::HeldOut() const { return Evaluate(trial_.data.seq_len, trial_.train.batch_size); }

Evaluation Evaluator::Evaluate(int64_t time, int64_t batch_size) const {
  torch::NoGradGuard no_grad;
  model_->eval();
  torch::Tensor loss_sum = torch::zeros({time}, torch::kDouble);
  torch::Tensor count = torch::zeros({time}, torch::kDouble);
  double correct = 0.0, answers = 0.0;
  bool masked = false;
  const int64_t document_start_token = CrossDocumentMaskToken(trial_.data);
  for (int64_t index = 0; index < trial_.train.eval_batches; ++index) {
    TensorBatch batch = ToTensors(source_.Batch(Split::kValidation, index, batch_size, time), device_,
                                  document_start_token);
    torch::Tensor logits;
    {
      AutocastScope autocast(UsesAutocast(trial_));
      logits = model_->forward(batch.inputs, batch.doc_start).to(torch::kFloat);
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
  model_->train();
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

std::vector<records::ExtrapolationResult> Evaluator::EvaluateBeyondTrainingLength() const {
  std::vector<records::ExtrapolationResult> results;
  const int64_t trained = trial_.data.seq_len;
  for (int64_t multiple : trial_.train.extrapolation_multiples) {
    for (const std::string& method : trial_.train.extrapolation_methods) {
      if (multiple == 1 && method != "none") continue;  // extensions change nothing at the training length
      LengthExtension extension{method, static_cast<double>(multiple), static_cast<double>(trained)};
      model_->positional()->set_length_extension(extension);
      // Same tokens per batch as training: attention memory grows with the square of the length.
      const int64_t batch_size = std::max<int64_t>(1, trial_.train.batch_size / multiple);
      Evaluation evaluation = Evaluate(trained * multiple, batch_size);
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
  model_->positional()->set_length_extension(LengthExtension{});
  return results;
}

records::DiagnosticsRecord Evaluator::EndDiagnostics(int64_t step) const {
  const TrainConfig& train = trial_.train;
  TensorBatch sample = ToTensors(source_.Batch(Split::kValidation, 0, train.diagnostics_sequences, trial_.data.seq_len),
                                 device_, CrossDocumentMaskToken(trial_.data));
  DiagnosticsOptions options;
  options.seed = trial_.seed;
  options.renyi_order = train.diagnostics_renyi_order;
  records::DiagnosticsRecord diagnostics;
  diagnostics.kind = "attention";
  diagnostics.step = step;
  diagnostics.milestone = "end";
  diagnostics.payload.text = MeasureAttentionDiagnostics(model_, sample.inputs, sample.doc_start, options).dump();
  return diagnostics;
}

records::FinalRecord Evaluator::FinalEvaluation(const Evaluation& held_out) const {
  records::FinalRecord final_record;
  final_record.val_loss = held_out.loss;
  final_record.val_loss_per_position = held_out.loss_per_position;
  if (held_out.accuracy >= 0) final_record.val_accuracy = held_out.accuracy;
  final_record.positional_parameters = PositionalParameters(model_);
  final_record.frequencies = Frequencies(model_);
  final_record.extrapolation = EvaluateBeyondTrainingLength();
  return final_record;
}

}  // namespace rung

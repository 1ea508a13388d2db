// core/train/evaluation.h
//
// What a run measures besides its training loss: the held-out loss (train.eval_batches validation
// batches at the training shape: per position, and the answer accuracy of sources with a loss
// mask), the held-out loss beyond the training length under each length extension
// (train.extrapolation_multiples x train.extrapolation_methods), and the attention diagnostics at
// the end of a run; with them the evaluation part of the final record.
//
// Every evaluation runs without gradients in eval mode and leaves the model in training mode (and
// without a length extension). Only rank 0 of a data-parallel trial evaluates.
//
// Example:
//   Evaluator evaluator(trial, device, *source, model);
//   AddHeldOut(evaluator.HeldOut(), step_record);
#pragma once

#include "core/diagnostics/attention_diagnostics.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/config/trial_config.h"
#include "core/data/batch_source.h"
#include "core/model/transformer.h"
#include "core/records/trainer_records.h"
#include "core/train/batch_tensors.h"
#include "core/train/probe_evaluation.h"

namespace rung {

struct Evaluation {
  double loss = 0.0;
  double accuracy = -1.0;                 // only for sources with a loss mask (answer accuracy)
  std::vector<double> loss_per_position;  // mean loss at each position over counted targets (NaN: none)
  // Token-weighted loss over the positions < data.seq_len (the training length) and >= it; NaN where
  // no target there counts.
  double loss_in_dist = 0.0;
  double loss_extrap = 0.0;
  // Token-weighted loss over the back half of each window, positions >= time / 2 (paper 004's
  // perplexity: every scored token sees at least half the window); NaN where none counts.
  double loss_back_half = 0.0;
  // Bits per byte: the summed token losses over ln 2 times the bytes of those tokens (the source's
  // TokenByteLengths); NaN where the source does not know them.
  double bits_per_byte = 0.0;
};

// The held-out fields of a step record: val_loss, and val_accuracy and val_bpb where there are.
void AddHeldOut(const Evaluation& evaluation, records::StepRecord& record);

// The diagnostics' options as a trial's train.diagnostics_* set them (its seed drives the bootstrap);
// `rung diag --model` takes TrainConfig's defaults the same way.
DiagnosticsOptions DiagnosticsOptionsOf(const TrainConfig& train, uint64_t seed);

// Whether a trial's end measures the heads' influence (Evaluator::HeadInfluence).
bool HasHeadInfluence(const TrialConfig& trial);

class Evaluator {
 public:
  // Keeps references: each argument must outlive the evaluator.
  Evaluator(const TrialConfig& trial, const torch::Device& device, const BatchSource& source, Transformer& model);

  // The attention diagnostics at each train.diagnostics_multiples entry x train.extrapolation_methods
  // (ForEachEvaluatedLength's points, without the training length): each a record of kind
  // "attention_beyond" whose payload carries its multiple and method, measured as Diagnostics measures the end, on validation
  // windows of multiple x data.seq_len tokens with that length extension on the model. None when
  // diagnostics_sequences is 0.
  std::vector<records::DiagnosticsRecord> DiagnosticsBeyondTrainingLength(int64_t step) const;

  // The held-out loss at the training shape (data.seq_len, train.batch_size).
  Evaluation HeldOut() const;

  // The attention diagnostics record (kind "attention") of `milestone`, over train.diagnostics_batches
  // validation batches (0, 1, ...) of train.diagnostics_sequences sequences each, with the
  // train.diagnostics_* settings; on data.source nrw the pair-by-distance profile is the QUERY's (the
  // last position) against the NEEDLE's key. REQUIRES: diagnostics_sequences > 0.
  records::DiagnosticsRecord Diagnostics(const DiagnosticsMilestone& milestone) const;

  // For data.source niah with train.niah_grid_instances > 0: the record (kind "niah_grid") of the
  // answer accuracy on the grid of needle depths 0, 0.1, ..., 1 x distractor counts
  // 0..data.niah.max_distractors, that many instances per cell, at the training length and at each
  // train.extrapolation_multiples entry with each train.extrapolation_methods entry; nullopt otherwise.
  // Its niah_grid member (records::NiahGridDiagnostics) holds the grids; `placed` is the mean number of
  // distractors that fit.
  std::optional<records::DiagnosticsRecord> NiahGrid(int64_t step) const;

  // For a rotary variant with train.diagnostics_sequences > 0: the leave-one-out band ablations (kind
  // "band_ablation"): on the diagnostics' validation sequences at the training length, the loss with
  // every pair as trained, and with each pair in turn zeroed (LeRoPE appendix D.1's) and reverted to
  // RoPE's frequency (for RoPE itself the same loss); PositionalEncodingImpl::set_band_ablation.
  // nullopt otherwise. The model is left as it was, however this ends.
  // Its band_ablation member (records::BandAblationDiagnostics) holds the losses.
  std::optional<records::DiagnosticsRecord> BandAblation(int64_t step) const;

  // For AdaRoPE with train.diagnostics_sequences > 0 (HasHeadInfluence): each query head's influence
  // Delta_h (AdaRoPE appendix B.3; kind "head_influence"): on the diagnostics' validation sequences at
  // the training length (for an extension trial, the extended length), the loss increase when the
  // head's AdaRoPE parameters are reset to `start` (the positional parameters' values when the trial
  // began, by name: StartingPositionalParameters), all of them, AdaFreq's alone and AdaScale's alone,
  // the rest of the model as trained; nullopt otherwise. Parameters shared by several heads
  // (share_freq, share_scale, a KV group's frequencies) are reset as one unit.
  std::optional<records::DiagnosticsRecord> HeadInfluence(int64_t step,
                                                          const std::map<std::string, torch::Tensor>& start) const;

  // train.probe's cells (core/train/probe_evaluation.h), each (length, method) of ProbeSettings x depth;
  // an indexing probe's, each list length.
  std::vector<records::ProbeResult> Probe(const PreparedProbe& probe) const;

  // A final record with its evaluation fields filled: `held_out` (val_loss, per position and
  // accuracy), the positional parameters and rotary frequencies, and the extrapolation results.
  records::FinalRecord FinalEvaluation(const Evaluation& held_out) const;

 private:
  // The diagnostics' sample (train.diagnostics_sequences validation sequences at T, batch 0) and the
  // mean token loss of the model on it, every sequence and position alike.
  TensorBatch DiagnosticsSample() const;
  double SampleLoss(const TensorBatch& sample) const;
  // The indexing probe's cells (paper 003 appendix D.2), within data.seq_len with no extension.
  std::vector<records::ProbeResult> ProbeIndexing(const PreparedProbe& probe) const;
  // Held-out loss over train.eval_batches batches of `batch_size` sequences of `time` positions.
  Evaluation Evaluate(int64_t time, int64_t batch_size) const;
  std::vector<records::ExtrapolationResult> EvaluateBeyondTrainingLength() const;
  // Each (multiple, method) of `multiples` x train.extrapolation_methods (with the training length, 1 and
  // none, first when `with_training_length`; a multiple of 1 only where the method changes the model
  // there); calls `visit` with that length extension set on the model, then switches it off.
  void ForEachEvaluatedLength(bool with_training_length, const std::vector<int64_t>& multiples,
                              const std::function<void(int64_t multiple, const std::string& method)>& visit) const;
  // The attention diagnostics on train.diagnostics_batches validation batches of diagnostics_sequences
  // windows of `length` tokens, with whatever length extension the model has set; `beyond` (a
  // train.diagnostics_multiples point) leaves the failure modes out.
  records::AttentionDiagnostics MeasureDiagnostics(int64_t length, bool beyond) const;
  // Each frequency unit's dominant pair where one of `methods` needs them (dominant-band
  // interpolation), measured at the training length on validation data; else none.
  std::vector<std::vector<int64_t>> DominantPairsFor(const std::vector<std::string>& methods) const;
  // Sets `method` at `multiple` of the training length on the model (its factor s: train.
  // extrapolation_scale, else the multiple).
  void SetExtension(double multiple, const std::string& method, const std::vector<std::vector<int64_t>>& dominant_pairs) const;

  const TrialConfig& trial_;
  const torch::Device device_;
  const BatchSource& source_;
  Transformer& model_;
};

}  // namespace rung

#include "core/train/trainer.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <memory>
#include <variant>
#include <iostream>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "core/common/provenance.h"
#include "core/hf/hf_import.h"
#include "core/config/model_arithmetic.h"
#include "core/data/batch_source.h"
#include "core/model/transformer.h"
#include "core/records/trainer_records.h"
#include "core/train/checkpoint.h"
#include "core/train/checkpoint_io.h"
#include "core/train/data_parallel.h"
#include "core/train/evaluation.h"
#include "core/train/flat_adamw.h"
#include "core/train/runtime.h"
#include "core/train/step_loop.h"
#include "core/train/training_progress.h"

namespace rung {
namespace {

// The positional parameters of `trial` as it began: a model of its config as initialised, with
// train.init applied. An evaluation trial (train.steps 0) that copies every parameter of a rung
// checkpoint of its own variant unchanged (init.parameters all, adarope_start trained) moved nothing:
// its start is its source's, followed through at most 8 such sources.
StatusOr<std::map<std::string, torch::Tensor>> PositionalParametersAtStart(const TrialConfig& trial, int depth) {
  torch::NoGradGuard no_grad;
  const InitConfig& init = trial.train.init;
  const bool copied_unchanged = init.parameters == "all" && init.adarope_start == "trained";
  if (trial.train.steps == 0 && copied_unchanged && !init.checkpoint.empty() && !hf::IsHfModelFolder(init.checkpoint) &&
      depth < 8) {
    RUNG_ASSIGN_OR_RETURN(const CheckpointModel source, LoadCheckpointModel(init.checkpoint));
    if (source.trial.model.position.variant == trial.model.position.variant) {
      return PositionalParametersAtStart(source.trial, depth + 1);
    }
  }
  // The positional parameters are made whole by their constructor; the rest need not be drawn.
  Transformer start(trial.model, Initialization::kEmpty);
  if (!init.checkpoint.empty()) RUNG_RETURN_IF_ERROR(InitializeFromCheckpoint(init, start, trial.train.extrapolation_yarn_c));
  std::map<std::string, torch::Tensor> values;
  for (const auto& parameter : start->positional()->named_parameters()) values[parameter.key()] = parameter.value().detach().clone();
  return values;
}

using Clock = std::chrono::steady_clock;

// One trial's run in this process: set-up (the group, data, model, optimizer, and the state to start
// from), then the step loop with its records, evaluations, checkpoints and stops.
class TrialRun {
 public:
  TrialRun(const TrialConfig& trial, const TrainerOptions& options) : trial_(trial), options_(options) {}
  StatusOr<TrainOutcome> Run();

 private:
  Status Setup();
  // Rank 0: resumes from a checkpoint (TrainerOptions::resume) or starts from train.init.
  Status RestoreOrInitialize();
  // Gives every rank rank 0's state (a world of one: nothing).
  Status JoinGroup();
  // After a resume: every step record the checkpoint remembers, again, marked replayed (the
  // coordinator stores a replayed value only where no attempt of the trial stored one).
  void ReplayRememberedSteps();
  // A step before the last: its step record (every train.log_every steps and on evaluation steps,
  // with the held-out loss on those) and the periodic checkpoint. Rank 0 only.
  Status Report(const StepResult& step);
  // The last step: its step record with the held-out loss, the final checkpoint, the diagnostics
  // and final records. Rank 0 only.
  Status Complete(const StepResult& step);
  // Why the run stops after this step ("signal", "stop_after_step"), or null to go on.
  const char* StopReason(const StepResult& step, int signal) const;
  // The checkpoint of a stop (rank 0) and the preempted record.
  Status Preempt(const char* reason, int signal);
  // The status a failed step ends the run with, after the error record of a non-finite loss or
  // gradient (ABORTED).
  Status Failed(const Status& status);
  Status SaveCheckpoint(const std::string& reason);
  // Prints a record: every record on rank 0, only error records on the other ranks.
  void Record(const records::TrainerRecord& record);
  bool lead() const { return options_.rank == 0; }
  records::ProvenanceRecord Provenance() const;
  // The end of a run: the diagnostics record (when the last step is a milestone), the NIAH grid (niah
  // tasks), the band ablation (learned frequencies), then the final record.
  void EmitDiagnosticsAndFinal(const Evaluation& held_out, double train_loss);
  // The positional parameters as the trial began (AdaRoPE B.3's "pre-finetuning initialization";
  // PositionalParametersAtStart), computed again at the end, so an attempt that resumed computes the
  // same. Errors: InitializeFromCheckpoint's and LoadCheckpointModel's.
  StatusOr<std::map<std::string, torch::Tensor>> StartingPositionalParameters() const;
  // The diagnostics milestone at `step`, or null.
  const DiagnosticsMilestone* MilestoneAt(int64_t step) const;

  const TrialConfig& trial_;
  const TrainerOptions& options_;
  torch::Device device_ = torch::kCPU;
  std::unique_ptr<DataParallelGroup> group_;
  std::unique_ptr<BatchSource> source_;
  Transformer model_{nullptr};
  std::unique_ptr<FlatAdamW> optimizer_;
  FlopsPerToken flops_per_token_;
  std::unique_ptr<StepLoop> steps_;
  std::unique_ptr<Evaluator> evaluator_;
  std::unique_ptr<PreparedProbe> probe_;  // train.probe's prompts (rank 0), or null
  TrainingProgress progress_;
  std::string resumed_from_;
  std::string converted_from_;  // the source's variant where train.init changed it
  std::vector<std::string> skipped_checkpoints_;  // damaged ones passed over to resume ("PATH: why")
  // Every step record of the trial so far (those of earlier attempts too, from the checkpoint this
  // one resumed from), stored in each checkpoint and printed again after a resume. A worker killed
  // or cut off from its coordinator for longer than a lease loses the lines it had not delivered,
  // however many checkpoints ago they were printed; the attempt that resumes from its newest
  // checkpoint reports them again. docs/design.md, "A cut-off attempt's work".
  std::deque<records::StepRecord> step_history_;
  std::vector<DiagnosticsMilestone> milestones_;  // of train.diagnostics_at
  Clock::time_point run_start_;
};

const DiagnosticsMilestone* TrialRun::MilestoneAt(int64_t step) const {
  for (const DiagnosticsMilestone& milestone : milestones_) {
    if (milestone.step == step) return &milestone;
  }
  return nullptr;
}

StatusOr<TrainOutcome> TrialRun::Run() {
  RUNG_RETURN_IF_ERROR(Setup());
  milestones_ = DiagnosticsMilestones(trial_.train);
  Record(Provenance());
  ReplayRememberedSteps();
  // The start milestone (step 0, before the first optimizer step) is measured by a run that begins
  // there; one resumed from a checkpoint (always after a step) has measured it before.
  // (A trial that only evaluates measures its model once, as its end, below.)
  if (progress_.step == 0 && lead() && trial_.train.steps > 0) {
    if (const DiagnosticsMilestone* milestone = MilestoneAt(0)) Record(evaluator_->Diagnostics(*milestone));
  }
  run_start_ = Clock::now();
  while (progress_.step < trial_.train.steps) {
    StatusOr<StepResult> step = steps_->Step(progress_);
    if (!step.ok()) return Failed(step.status());
    if (progress_.step == trial_.train.steps) {
      RUNG_RETURN_IF_ERROR(Complete(*step));
      return TrainOutcome::kCompleted;
    }
    RUNG_RETURN_IF_ERROR(Report(*step));
    const int signal = StopRequest().load();
    if (const char* reason = StopReason(*step, signal)) {
      RUNG_RETURN_IF_ERROR(Preempt(reason, signal));
      return TrainOutcome::kPreempted;
    }
  }
  // Resumed from the final checkpoint (the previous attempt ended before it was reported), or a trial
  // that only evaluates (train.steps 0): report the results of the model as it is.
  if (lead()) EmitDiagnosticsAndFinal(evaluator_->HeldOut(), std::nan(""));
  return TrainOutcome::kCompleted;
}

Status TrialRun::Setup() {
  if (trial_.train.device == "cuda") {
    if (!torch::cuda::is_available()) return Status::FailedPrecondition("train.device is cuda but no CUDA device is available");
    device_ = torch::Device(torch::kCUDA, 0);
  }
  DataParallelOptions parallel;
  parallel.rank = options_.rank;
  parallel.world_size = static_cast<int>(trial_.resources.world_size);
  parallel.rendezvous = options_.rendezvous;
  RUNG_ASSIGN_OR_RETURN(group_, DataParallelGroup::Connect(parallel, device_));
  torch::manual_seed(trial_.seed);
  RUNG_ASSIGN_OR_RETURN(source_, MakeBatchSource(trial_.data, trial_.seed));
  if (source_->vocab_size() > trial_.model.vocab_size) {
    return Status::InvalidArgument("data emits " + std::to_string(source_->vocab_size()) +
                                   " token ids but model.vocab_size is " + std::to_string(trial_.model.vocab_size));
  }
  // A probe's texts are encoded before anything trains: a bad tokenizer or length fails the trial now.
  if (lead()) {
    RUNG_ASSIGN_OR_RETURN(probe_, PrepareProbe(trial_));
  }
  model_ = Transformer(trial_.model);
  if (trial_.train.lora.enabled()) model_->AddLora(trial_.train.lora);
  model_->to(device_);
  flops_per_token_ = CountFlopsPerToken(trial_.model);
  optimizer_ = MakeOptimizer(trial_, model_);
  RUNG_RETURN_IF_ERROR(RestoreOrInitialize());
  RUNG_RETURN_IF_ERROR(JoinGroup());
  steps_ = std::make_unique<StepLoop>(trial_, device_, *source_, model_, *optimizer_, *group_, flops_per_token_,
                                      progress_);
  evaluator_ = std::make_unique<Evaluator>(trial_, device_, *source_, model_);
  return Status::Ok();
}

Status TrialRun::RestoreOrInitialize() {
  if (!lead()) return Status::Ok();  // JoinGroup hands rank 0's state to this rank
  const InitConfig& init = trial_.train.init;
  RUNG_ASSIGN_OR_RETURN(ResumeChoice choice,
                        ResumeFromNewestIntact(options_.resume, options_.checkpoint_dir,
                                               [&](const std::string& path) -> Status {
                                                 RUNG_ASSIGN_OR_RETURN(ResumedCheckpoint resumed,
                                                                       ReadCheckpoint(path, trial_, model_, *optimizer_));
                                                 progress_ = resumed.progress;
                                                 step_history_ = std::move(resumed.remembered);
                                                 return Status::Ok();
                                               }));
  skipped_checkpoints_ = std::move(choice.skipped);
  for (const std::string& skipped : skipped_checkpoints_) std::cerr << "rung-train: skipped " << skipped << "\n";
  if (!choice.path.empty()) {
    resumed_from_ = choice.path;
    return Status::Ok();
  }
  if (!init.checkpoint.empty()) {
    return InitializeFromCheckpoint(init, model_, trial_.train.extrapolation_yarn_c, &converted_from_);
  }
  if (!init.from_trial.empty()) {
    return Status::InvalidArgument("train.init.from_trial '" + init.from_trial +
                                   "' is resolved by the coordinator (rung submit / rung run); to run this "
                                   "config directly, set train.init.checkpoint to that trial's checkpoint");
  }
  return Status::Ok();
}

StatusOr<std::map<std::string, torch::Tensor>> TrialRun::StartingPositionalParameters() const {
  return PositionalParametersAtStart(trial_, 0);
}

Status TrialRun::JoinGroup() {
  if (group_->world_size() == 1) return Status::Ok();
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> state = optimizer_->StateBuffers();
  // Parameters outside the optimizer (frozen ones) may come from a checkpoint too.
  for (const auto& item : model_->named_parameters(true)) {
    if (!item.value().requires_grad()) state.push_back(item.value());
  }
  std::vector<int64_t> counters = {progress_.step, progress_.data_index, progress_.tokens, optimizer_->step_count()};
  RUNG_RETURN_IF_ERROR(BroadcastState(*group_, std::move(state), counters, device_));
  progress_ = {counters[0], counters[1], counters[2]};
  optimizer_->set_step_count(counters[3]);
  return Status::Ok();
}

void TrialRun::ReplayRememberedSteps() {
  const std::deque<records::StepRecord> replay = std::move(step_history_);
  step_history_.clear();
  for (records::StepRecord record : replay) {
    record.replayed = true;
    Record(record);
  }
}

Status TrialRun::Report(const StepResult& step) {
  if (!lead()) return Status::Ok();  // rank 0 evaluates, checkpoints and reports
  const TrainConfig& train = trial_.train;
  const bool evaluate = train.eval_every > 0 && progress_.step % train.eval_every == 0;
  if (evaluate || progress_.step % train.log_every == 0) {
    records::StepRecord record = steps_->StepRecordOf(step, progress_);
    if (evaluate) AddHeldOut(evaluator_->HeldOut(), record);
    Record(record);
  }
  if (const DiagnosticsMilestone* milestone = MilestoneAt(progress_.step)) Record(evaluator_->Diagnostics(*milestone));
  if (train.checkpoint_every > 0 && progress_.step % train.checkpoint_every == 0) return SaveCheckpoint("periodic");
  return Status::Ok();
}

Status TrialRun::Complete(const StepResult& step) {
  if (!lead()) return Status::Ok();
  records::StepRecord record = steps_->StepRecordOf(step, progress_);
  const Evaluation held_out = evaluator_->HeldOut();
  AddHeldOut(held_out, record);
  Record(record);
  RUNG_RETURN_IF_ERROR(SaveCheckpoint("final"));
  EmitDiagnosticsAndFinal(held_out, step.loss);
  return Status::Ok();
}

const char* TrialRun::StopReason(const StepResult& step, int signal) const {
  // Data-parallel ranks stop at the step they agreed on (a signal to any rank stops them all).
  if (group_->world_size() > 1 ? step.stop_agreed : signal != 0) return "signal";
  if (options_.stop_after_step > 0 && progress_.step >= options_.stop_after_step) return "stop_after_step";
  return nullptr;
}

Status TrialRun::Preempt(const char* reason, int signal) {
  RUNG_RETURN_IF_ERROR(SaveCheckpoint(reason));
  records::PreemptedRecord preempted;
  preempted.step = progress_.step;
  preempted.signal = signal;
  if (!options_.checkpoint_dir.empty()) preempted.checkpoint = CheckpointPath(options_.checkpoint_dir, progress_.step);
  Record(preempted);
  return Status::Ok();
}

Status TrialRun::Failed(const Status& status) {
  if (status.code() == StatusCode::kAborted) {  // a non-finite loss or gradient, in the step after progress_
    records::ErrorRecord error;
    error.step = progress_.step + 1;
    error.reason = status.message();
    Record(error);
  }
  return status;
}

Status TrialRun::SaveCheckpoint(const std::string& reason) {
  if (options_.checkpoint_dir.empty() || !lead()) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(std::string path, WriteCheckpoint(options_.checkpoint_dir, trial_, model_, *optimizer_,
                                                          progress_, step_history_));
  records::CheckpointRecord published;
  published.step = progress_.step;
  published.path = std::move(path);
  published.reason = reason;
  Record(published);
  return Status::Ok();
}

void TrialRun::Record(const records::TrainerRecord& record) {
  const bool error = std::holds_alternative<records::ErrorRecord>(record);
  if (lead() || error) *options_.records << records::EncodeRecord(record) << '\n' << std::flush;
  // Only a run that checkpoints has somewhere to keep them.
  if (const auto* step = std::get_if<records::StepRecord>(&record); step && lead() && !options_.checkpoint_dir.empty()) {
    step_history_.push_back(*step);
  }
}

void TrialRun::EmitDiagnosticsAndFinal(const Evaluation& held_out, double train_loss) {
  if (const DiagnosticsMilestone* milestone = MilestoneAt(progress_.step)) Record(evaluator_->Diagnostics(*milestone));
  for (const records::DiagnosticsRecord& beyond : evaluator_->DiagnosticsBeyondTrainingLength(progress_.step)) {
    Record(beyond);
  }
  if (std::optional<records::DiagnosticsRecord> grid = evaluator_->NiahGrid(progress_.step)) Record(*grid);
  if (std::optional<records::DiagnosticsRecord> bands = evaluator_->BandAblation(progress_.step)) Record(*bands);
  if (HasHeadInfluence(trial_)) {
    StatusOr<std::map<std::string, torch::Tensor>> start = StartingPositionalParameters();
    if (!start.ok()) {
      std::cerr << "rung-train: the heads' influence is not measured: " << start.status().message() << "\n";
    } else if (std::optional<records::DiagnosticsRecord> influence = evaluator_->HeadInfluence(progress_.step, *start)) {
      Record(*influence);
    }
  }
  records::FinalRecord final_record = evaluator_->FinalEvaluation(held_out);
  if (probe_) final_record.probe = evaluator_->Probe(*probe_);
  final_record.step = progress_.step;
  final_record.tokens = progress_.tokens;
  final_record.flops = flops_per_token_.nonembedding * static_cast<double>(progress_.tokens);
  final_record.flops_total = flops_per_token_.total() * static_cast<double>(progress_.tokens);
  final_record.train_tokens_per_sec = steps_->steady_tokens_per_sec();
  final_record.wall_sec = std::chrono::duration<double>(Clock::now() - run_start_).count();
  final_record.peak_rss_bytes = PeakRssBytes();
  if (std::isfinite(train_loss)) final_record.train_loss = train_loss;  // unknown after a resume at the end
  Record(final_record);
}

records::ProvenanceRecord TrialRun::Provenance() const {
  const nlohmann::json runtime = RuntimeProvenance();
  records::ProvenanceRecord provenance;
  provenance.commit = runtime.value("commit", std::string());
  provenance.host = runtime.value("host", std::string());
  provenance.blas.text = runtime.value("blas", nlohmann::json::object()).dump();
  provenance.torch_version = runtime.value("torch_version", std::string());
  provenance.threads = runtime.value("threads", int64_t{0});
  provenance.cuda_available = runtime.value("cuda_available", false);
  provenance.device = device_.str();
  provenance.config.text = TrialConfigToJson(trial_).dump();
  provenance.data.text = source_->Describe().dump();
  nlohmann::json parameters = ParameterCountsToJson(CountParameters(trial_.model));
  // What this trial trains: every optimizer group's parameters (the backbone's, or none when frozen or
  // adapted; the adapters'; the positional ones).
  int64_t trained = 0;
  for (int64_t group = 0; group < optimizer_->num_groups(); ++group) trained += optimizer_->exp_avg(group).numel();
  parameters["trained"] = trained;
  provenance.parameters.text = parameters.dump();
  provenance.flops_per_token.nonembedding = flops_per_token_.nonembedding;
  provenance.flops_per_token.attention = flops_per_token_.attention;
  provenance.flops_per_token.matrix = flops_per_token_.matrix;
  provenance.flops_per_token.total = flops_per_token_.total();
  provenance.steps = trial_.train.steps;
  provenance.tokens_per_step = TokensPerStep(trial_.train, trial_.data.seq_len);
  provenance.start_step = progress_.step;
  if (!resumed_from_.empty()) provenance.resumed_from = resumed_from_;
  provenance.skipped_checkpoints = skipped_checkpoints_;
  if (!converted_from_.empty()) provenance.converted_from = converted_from_;
  provenance.world_size = group_->world_size();
  return provenance;
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

// core/config/train_config.h
//
// How a trial trains (the `train` and `resources` blocks): optimizer, schedule, cadence, threads.
// Plain data, torch-free. Cadence and thread settings do not change results and are left out of a
// trial's identity by sweeps/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config_error.h"
#include "core/config/lora_config.h"
#include "core/config/probe_config.h"

namespace rung {

struct ScheduleConfig {
  std::string name = "cosine";     // cosine | wsd | constant
  int64_t warmup_steps = 100;
  double decay_fraction = 0.1;     // wsd: share of steps in the final linear decay
  double final_lr_fraction = 0.0;  // LR at the last step, relative to the peak
};

// Starting a run from another trial's checkpoint (docs/science.md sections 2 and 9): context extension
// (parameters: all, longer data.seq_len, train.freeze_backbone) or fixed learned frequencies
// (parameters: positional, position.freeze). The coordinator fills `checkpoint` from a named source
// trial; rung-train takes a path.
struct InitConfig {
  // A checkpoint file, or a folder of checkpoints (its newest is used); "" = a fresh initialisation.
  std::string checkpoint;
  // The trial whose final checkpoint to start from, as "<sweep name>/<trial index>" or
  // "id:<identity prefix>": a spec names it, the coordinator resolves it into `checkpoint` at
  // submission (the source must have SUCCEEDED). rung-train itself only reads `checkpoint`.
  std::string from_trial;
  std::string parameters = "all";     // all | positional | backbone: which parameters are copied
  // Where the trial's model block comes from: "spec" (as written), or "checkpoint": the Hugging Face
  // folder `checkpoint` names, its config.json read when the sweep is expanded (core/hf/
  // hf_model_options.h), so that a spec evaluating or training a pretrained model need not copy it.
  std::string model = "spec";
  // AdaRoPE context extension (docs/science.md section 9): "trained" starts from the source's frequencies,
  // tau and gamma as they are; "yarn" starts the frequencies and tau from YaRN's schedule at factor s
  // (NTK-by-parts frequencies, tau = 1 / (c ln s + 1)^2 with c = extrapolation_yarn_c), with gamma = 0;
  // "ntk_by_parts" and "pi" start from those schedules (tau = 1). position.adarope.l_ref must then be
  // the source's length. Each such start computes, before any step, what the source computes under
  // that extension: an evaluation trial (train.steps 0) evaluates the global schedule itself.
  std::string adarope_start = "trained";
  // The start's factor s: 0 = data.seq_len over the source's training length; else in [1, 1024] (a
  // tuned factor, or an evaluation at the source's own length).
  double adarope_scale = 0.0;
};

struct TrainConfig {
  int64_t steps = 0;               // optimizer steps; 0 = derived from tokens
  int64_t tokens = 0;              // training tokens D; used when steps == 0
  int64_t batch_size = 32;         // sequences per micro-batch
  int64_t grad_accum = 1;          // micro-batches per optimizer step
  double lr = 3e-3;                // peak learning rate of the backbone
  double weight_decay = 0.1;
  // LeRoPE's rule weight_decay = k / S (S = the trial's optimizer steps; the paper's k is 8): when
  // positive, ResolveTrialConfig sets weight_decay from it, so one value serves every rung. 0 = off.
  double weight_decay_over_steps = 0.0;
  std::string weight_decay_mode = "coupled";  // coupled (AdamW: lr*wd) | independent (wd * schedule)
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double clip = 1.0;               // global-norm clip of the backbone (0 = none)
  bool freeze_backbone = false;    // train only the positional parameters
  // Low-rank adapters on the backbone's projections (core/config/lora_config.h): with them only the
  // adapters and the positional parameters train, the backbone frozen.
  LoraConfig lora;
  ScheduleConfig schedule;
  InitConfig init;
  int64_t eval_every = 100;        // 0 = only at the end
  int64_t eval_batches = 8;
  int64_t log_every = 10;
  int64_t checkpoint_every = 0;    // 0 = only on signal and at the end
  int64_t keep_checkpoints = 2;
  // Evaluation beyond the training length at the end of a run (docs/science.md section 9): each
  // multiple m of the training length, with each inference-time extension (none, pi = position
  // interpolation, ntk_by_parts, yarn = NTK-by-parts plus the (c ln m + 1)^2 logit factor, dynamic_ntk,
  // dominant_band; core/model/length_extension.h).
  std::vector<int64_t> extrapolation_multiples;
  std::vector<std::string> extrapolation_methods = {"none"};
  double extrapolation_yarn_c = 0.1;  // YaRN's temperature coefficient c in (c ln s + 1)^2
  // The extension's factor s where it is not the evaluated multiple (YaRN's tables evaluate one s at
  // several lengths); 0 = each evaluated multiple is its own s.
  double extrapolation_scale = 0.0;
  // The extension's factor under cross-document masking: "document" (LeRoPE D.2: each document of a
  // window its own, s = min(1, L_train / L_doc)) or "window" (the evaluated multiple for every position).
  // Without cross-document masking a window is one context and the factor is the multiple.
  std::string extrapolation_factor = "document";
  // Attention diagnostics (docs/science.md section 7) on diagnostics_batches evaluation batches of
  // diagnostics_sequences validation sequences each (0 sequences = none; paper 004, appendix B.2: three
  // evaluation batches of B = 16), each written as a `diagnostics` record, at the milestones of `diagnostics_at`: 0 is the start (the
  // model before its first optimizer step, as paper 004's iteration 0), an entry in (0, 1] a fraction of
  // training (1 = the end), an integer entry > 1 a step (DiagnosticsMilestones).
  int64_t diagnostics_sequences = 16;
  int64_t diagnostics_batches = 3;
  // The unit gap counting's bootstrap resamples: "batch" (the paper's: one evaluation batch in one
  // (layer, head)) or "sequence" (one sequence in one (layer, head), rung's unit before this option).
  std::string diagnostics_bootstrap_unit = "batch";
  std::vector<double> diagnostics_at = {1.0};
  double diagnostics_renyi_order = 2.0;  // r of the effective attention length E_r (> 1; 2: E_2 = 1/sum a^2)
  // Gap counting's n-grid before clipping to the evaluated length (paper 004's by default).
  std::vector<int64_t> diagnostics_lengths = {64, 128, 256, 512, 768, 1024};
  // The n-grid as fractions of the evaluated length instead (paper 004's Qwen cells: {1/4, 1/2, 3/4, 1}
  // of n_eval): round(r x L) for each r in (0, 1]; empty: diagnostics_lengths.
  std::vector<double> diagnostics_grid_ratios;
  // The attention diagnostics also at each multiple m of the training length here (m >= 1), once per
  // train.extrapolation_methods entry (the factor as the extrapolation's), at the end of training: each
  // a `diagnostics` record of kind attention_beyond with its multiple and method (paper 004 reads
  // xi_Lambda at the evaluated length n_eval). A multiple of 1 counts only with a method that changes the
  // model at 1x.
  std::vector<int64_t> diagnostics_multiples;
  // The softmax regime is read at beta = c * Lambda for each c here.
  std::vector<double> diagnostics_regime_multiples = {0.5, 1.0, 2.0};
  // xi_beta's all-points reading fits every n >= this trim (the learned inverse temperature).
  int64_t diagnostics_beta_trim = 64;
  // Distance bins of each head's pair-by-distance profile (AdaRoPE figures 1 and 5); 0 = none.
  int64_t diagnostics_pair_profile_bins = 32;
  // RoPE's failure modes (docs/science.md section 12) on the trained queries and keys, over contexts M =
  // each multiple of the training length here (empty: not measured).
  std::vector<double> diagnostics_failure_lengths = {0.5, 1.0, 2.0, 4.0};
  // Multi-key needle in a haystack (data.source niah): at the end, the answer accuracy on the grid of
  // distractor counts 0..data.niah.max_distractors x needle depths 0, 0.1, ..., 1, this many instances
  // per cell, at the training length and at each extrapolation multiple (0: no grid).
  int64_t niah_grid_instances = 8;
  // A probe run at the end (core/config/probe_config.h); kind none = none.
  ProbeConfig probe;
  std::string device = "cpu";      // cpu | cuda
  std::string precision = "fp32";  // fp32 | bf16 (autocast on CUDA; positional parameters stay fp32)
};

struct ResourcesConfig {
  int64_t cpus = 1;                // CPU threads of the trainer
  int64_t gpus = 0;
  int64_t world_size = 1;
};

// Tokens per optimizer step. REQUIRES: a validated config (ValidateTrialConfig refuses one whose
// tokens per step, or steps x tokens per step, overflow int64).
inline int64_t TokensPerStep(const TrainConfig& train, int64_t seq_len) {
  return train.batch_size * train.grad_accum * seq_len;
}

// One point of training where the diagnostics are measured: its step (0..steps) and its name, "start"
// at step 0 (before the first optimizer step), "end" at the last step, "frac F" for a fraction, "step S"
// for a step.
struct DiagnosticsMilestone {
  int64_t step = 0;
  std::string name;
};

// The milestones of train.diagnostics_at, ascending by step, one per step (the first name wins, "end"
// always at the last step): 0 is step 0, a fraction f is step max(1, ceil(f * steps)). None when
// diagnostics_sequences is 0. REQUIRES: a validated config.
std::vector<DiagnosticsMilestone> DiagnosticsMilestones(const TrainConfig& train);

// Whether the milestones include the end (the attention diagnostics of the end, its xi_lambda summary, and
// train.diagnostics_multiples, measured beside it).
bool DiagnosesTheEnd(const TrainConfig& train);

// Whether train.diagnostics_multiples measures at (multiple, method): beyond the training length, or at 1x
// where the method changes the model there (a factor set apart from the multiple, a method that does not
// keep the frequencies), as Evaluator::DiagnosticsBeyondTrainingLength does.
bool DiagnosesBeyond(const TrainConfig& train, int64_t multiple, const std::string& method);

// One (multiple, method) that train.diagnostics_multiples measures.
struct DiagnosedLength {
  int64_t multiple = 1;
  std::string method;
};

// Every point DiagnosesBeyond keeps, multiples x train.extrapolation_methods in order; none when
// diagnostics_sequences is 0. What the cost and storage estimates and the reported metric names count.
std::vector<DiagnosedLength> DiagnosedLengthsBeyond(const TrainConfig& train);

void ValidateTrainConfig(const TrainConfig& train, const ResourcesConfig& resources,
                         std::vector<ConfigError>* errors);

}  // namespace rung

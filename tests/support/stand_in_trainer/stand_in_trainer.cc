// tests/support/stand_in_trainer/stand_in_trainer.cc
//
// rung-stand-in: the one stand-in trainer of the tests and the benchmarks. It trains nothing; it
// plays a deterministic loss surface (loss_surface.h) through rung-train's whole contract, as
// rung-worker launches trainers (worker/agent/trainer_process.h), so that everything downstream of
// a trainer (agent, wire, store, CLI, adaptive search, benchmarks) runs for real without LibTorch and
// without the cost of training. Portable C++17; links no LibTorch (rung_records, rung_config, rung_train_common,
// rung_yaml_document only).
//
// Command line (rung-train's, worker/train_main.cc, plus two knobs of its own):
//
//   rung-stand-in --config FILE [--checkpoint-dir DIR] [--resume auto|never|PATH] [--threads N]
//                 [--stop-after-step N] [--rank R --rendezvous HOST:PORT] [--print-config]
//   rung-stand-in --blas-kernel
//                 [--steps N] [--lines-per-second R] [--seconds S]
//
//   --config            the resolved trial, YAML or JSON, read by rung-train's parser
//                       (core/config/trial_config.h, core/config/yaml_document.h)
//   --checkpoint-dir    where this attempt's checkpoints go; none: no checkpoints (and none remembered)
//   --resume            auto (default): the newest checkpoint in --checkpoint-dir, if any; never; or
//                       a checkpoint file (rung-worker passes the previous attempt's)
//   --threads           reported in the provenance record (default resources.cpus); nothing runs on them
//   --stop-after-step   checkpoint and stop as if preempted after this many steps (signal 0)
//   --rank/--rendezvous resources.world_size > 1: checked as rung-train checks them (default
//                       RUNG_RANK/RUNG_RENDEZVOUS); the ranks do not meet: each plays the same curve,
//                       rank 0 prints the records and writes the checkpoints, the others print only
//                       error records
//   --print-config      print the resolved config as JSON and exit 0
//   --blas-kernel       rung-train's line (core/common/trainer_blas_kernel.h): no BLAS, it trains nothing
//   --steps N           play N steps instead of train.steps (default $RUNG_STAND_IN_STEPS, else
//                       train.steps); the provenance's `steps` says N, its `config` is as read
//   --lines-per-second R  at most R step records a second (default $RUNG_STAND_IN_LINES_PER_SECOND,
//                       else 0 = as fast as it can); steps without a record are not paced
//   --seconds S         play the steps over at least S seconds (default $RUNG_STAND_IN_SECONDS, else
//                       0 = as fast as it can): the record of step s is printed no sooner than
//                       S (s - s0) / (N - s0) seconds after the process started (s0 the step it
//                       resumed at, N the steps), so the last one at S or later; with
//                       --lines-per-second as well, each record waits for both
//
// Environment: RUNG_STAND_IN_STEPS, RUNG_STAND_IN_LINES_PER_SECOND and RUNG_STAND_IN_SECONDS (above:
// rung-worker passes its environment to its trainers but no extra flags, so tests and benchmarks set
// these on the workers),
// RUNG_STAND_IN_SURFACE (a JSON object overriding the loss surface's parameters, e.g.
// {"lr_ref":3e-3,"n_ref":1e5,"exponent":0.5,"curvature":0.3,"floor":2.0,"noise":0.01,
// "diverge_above_lr":1.0}; see loss_surface.h for every parameter and its default), RUNG_RANK,
// RUNG_RENDEZVOUS. A malformed value is exit 2, with the variable named.
//
// The loss surface (loss_surface.h; N = non-embedding parameters, lr = train.lr, S = the steps):
//   lr_opt(N) = lr_ref (N/n_ref)^-exponent;  final = floor + curvature (ln lr - ln lr_opt)^2 + noise z0
//   val_loss(s) = final + (initial - final) (e^(-rate s/S) - e^-rate) / (1 - e^-rate)
//   train_loss(s) = val_loss(s) + noise z_s;  lr > diverge_above_lr: NaN at step ceil(diverge_at S)
// with defaults lr_ref 3e-3, n_ref 1e5, exponent 0.5, curvature 0.3, floor 2.0, noise 0.01,
// initial ln(vocab_size), rate 5, diverge_above_lr 1.0, diverge_at 0.5; z0 and z_s are seeded by the
// config's seed. Optional terms for compute multipliers (none by default): a size term, a per-variant
// offset and a per-(seed, variant, N) noise (size_gain, size_exponent, variant_offset, variant_noise,
// variant_noise_exponent; loss_surface.h).
//
// stdout: one JSON object per line, every one encoded by core/records/trainer_records.h, in
// rung-train's order and cadence (core/train/trainer.cc):
//   provenance   first: commit, host, threads, device "cpu", the resolved config, `data` (the config's
//                source, not read, and the loss surface in effect), parameter counts and FLOPs per
//                token of the config's model, steps, tokens_per_step, start_step, resumed_from,
//                world_size
//   step         after a resume, first the steps the checkpoint remembers (replayed); then every
//                train.log_every steps, on evaluation steps (train.eval_every; with val_loss) and at
//                the last step (with val_loss): step, tokens (steps x tokens_per_step), flops
//                (6 N tokens), flops_total, lr (train.lr x the schedule's multiplier), train_loss,
//                grad_norm (sqrt(max(train_loss - floor, 0)), made up), positional_grad_norm (0),
//                tokens_per_sec, elapsed_sec
//   checkpoint   each published checkpoint: periodic (train.checkpoint_every), final, signal,
//                stop_after_step
//   final        after the last step: step, tokens, flops, flops_total, val_loss (the surface's
//                final value), train_loss (unset when resumed from the final checkpoint),
//                train_tokens_per_sec, wall_sec, peak_rss_bytes
//   preempted    after SIGTERM/SIGUSR1 (handled between steps) or --stop-after-step: the step, the
//                signal (0 for --stop-after-step) and the checkpoint to resume from
//   error        a diverging run: the step whose training loss is NaN and why
// No diagnostics records. stderr: a line on what it plays, and why it stopped.
//
// Checkpoints: ckpt-<step>.pt in --checkpoint-dir, named, published (temp file, fsync, rename, fsync
// of the folder) and pruned to train.keep_checkpoints exactly as rung-train's, by
// core/train/checkpoint.h. The file is JSON: {"format":"rung-stand-in/1", "step", "noise_state" (the
// per-step noise stream's state), "identity" (the config less cadence and resources, plus the steps
// and the surface: a checkpoint of another trial is refused), "records" (every step record of the
// trial so far, as rung-train keeps them)}, with its checksum file; --resume auto passes over a
// damaged checkpoint for the newest intact one, as rung-train does (core/train/checkpoint.h), and
// names it in the provenance record. A resumed attempt continues the same curve: its values are
// identical to an uninterrupted run's.
//
// Exit codes (rung-train's): 0 done, 2 bad config (the parser's file:line:col message on stderr),
// bad arguments or environment, 3 the run diverged (an error record first), 4 config file missing or
// checkpoint missing, unreadable, corrupt or of another trial, 75 preempted after a checkpoint, 1
// anything else (a checkpoint that cannot be written, stdout gone).
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/command_line.h"
#include "core/common/provenance.h"
#include "core/common/status.h"
#include "core/config/lr_schedule.h"
#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"
#include "core/config/yaml_document.h"
#include "core/records/trainer_records.h"
#include "core/train/stop_signal.h"
#include "core/train/checkpoint.h"
#include "tests/support/stand_in_trainer/loss_surface.h"

namespace rung::stand_in {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kExitOk = 0, kExitOther = 1, kExitUsage = 2, kExitDiverged = 3, kExitData = 4, kExitPreempted = 75;
constexpr const char* kCheckpointFormat = "rung-stand-in/1";

int ExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument: return kExitUsage;
    case StatusCode::kAborted: return kExitDiverged;
    case StatusCode::kNotFound:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kDataLoss: return kExitData;
    default: return kExitOther;
  }
}

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

// ---- signals -------------------------------------------------------------------------------------


// ---- options -------------------------------------------------------------------------------------

struct Options {
  std::string config_path;
  std::string checkpoint_dir;
  std::string resume = "auto";
  int threads = 0;
  int64_t stop_after_step = 0;
  int rank = 0;
  std::string rendezvous;
  bool print_config = false;
  int64_t steps = 0;              // 0: train.steps
  double lines_per_second = 0;    // 0: unpaced
  double seconds = 0;             // 0: no least duration
  std::string surface_text;       // RUNG_STAND_IN_SURFACE
};

// A whole environment variable as a number of type T, within [minimum, +inf).
template <class T>
Status NumberFromEnvironment(const char* name, T minimum, T* out) {
  const char* text = std::getenv(name);
  if (text == nullptr) return Status::Ok();
  const std::string_view value(text);
  T number{};
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() || !(number >= minimum)) {
    std::ostringstream message;
    message << name << "='" << value << "' must be a number >= " << minimum;
    return Status::InvalidArgument(message.str());
  }
  *out = number;
  return Status::Ok();
}

// ---- the run -------------------------------------------------------------------------------------

// The parts of a trial that must match for a checkpoint to be resumed (cadence may differ), as
// rung-train's ResumeIdentity, with what shapes this stand-in's curve.
json ResumeIdentity(const TrialConfig& trial, int64_t steps, const LossSurface& surface) {
  json identity = TrialConfigToJson(trial);
  for (const char* key : {"eval_every", "eval_batches", "log_every", "checkpoint_every", "keep_checkpoints"}) {
    identity["train"].erase(key);
  }
  identity.erase("resources");
  identity["stand_in"] = {{"steps", steps}, {"surface", LossSurfaceToJson(surface)}};
  return identity;
}

enum class Outcome { kCompleted, kPreempted };

class StandInRun {
 public:
  StandInRun(const TrialConfig& trial, const Options& options, const LossSurface& surface, int64_t steps)
      : trial_(trial),
        options_(options),
        surface_(surface),
        steps_(steps),
        curve_(CurveForTrial(surface, trial, steps)),
        flops_per_token_(CountFlopsPerToken(trial.model)),
        tokens_per_step_(TokensPerStep(trial.train, trial.data.seq_len)),
        noise_(trial.seed) {}

  StatusOr<Outcome> Run();

 private:
  bool lead() const { return options_.rank == 0; }
  int64_t tokens() const { return step_ * tokens_per_step_; }
  Status Emit(const records::TrainerRecord& record);
  Status Record(const records::TrainerRecord& record);
  Status Resume(const std::string& path);
  Status SaveCheckpoint(const std::string& reason);
  records::StepRecord MakeStepRecord(double train_loss, double lr_multiplier);
  Status EmitFinal(std::optional<double> train_loss);
  void Pace();

  const TrialConfig& trial_;
  const Options& options_;
  const LossSurface surface_;
  const int64_t steps_;
  const TrialCurve curve_;
  const FlopsPerToken flops_per_token_;
  const int64_t tokens_per_step_;
  NormalStream noise_;
  int64_t step_ = 0;
  int64_t start_step_ = 0;  // where this process started (> 0: resumed)
  std::string resumed_from_;
  std::deque<records::StepRecord> step_history_;  // every step record of the trial so far
  std::vector<std::string> skipped_checkpoints_;   // damaged ones a resume passed over
  Clock::time_point run_start_ = Clock::now();
  double seconds_at_last_log_ = 0;
  int64_t tokens_at_last_log_ = 0;
  std::optional<Clock::time_point> last_line_;
};

Status StandInRun::Emit(const records::TrainerRecord& record) {
  std::cout << records::EncodeRecord(record) << '\n' << std::flush;
  if (!std::cout) return Status::Internal("cannot write a record to stdout");
  return Status::Ok();
}

// As rung-train's Record: rank 0 prints everything, the other ranks only errors; a run that
// checkpoints remembers its step records for the next checkpoint.
Status StandInRun::Record(const records::TrainerRecord& record) {
  if (lead() || std::holds_alternative<records::ErrorRecord>(record)) RUNG_RETURN_IF_ERROR(Emit(record));
  if (lead() && !options_.checkpoint_dir.empty()) {
    if (const auto* step = std::get_if<records::StepRecord>(&record)) step_history_.push_back(*step);
  }
  return Status::Ok();
}

Status StandInRun::Resume(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return Status::NotFound("checkpoint " + path + " does not exist");
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Status::DataLoss("cannot read checkpoint " + path);
  const json meta = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto corrupt = [&](const std::string& why) {
    return Status::DataLoss("cannot read checkpoint " + path + ": " + why);
  };
  if (meta.is_discarded() || !meta.is_object()) return corrupt("not JSON (not a rung-stand-in checkpoint)");
  if (meta.value("format", std::string()) != kCheckpointFormat) {
    return Status::FailedPrecondition("checkpoint " + path + " has an unknown format (not " + kCheckpointFormat + ")");
  }
  const auto step = meta.find("step");
  const auto state = meta.find("noise_state");
  const auto identity = meta.find("identity");
  const auto remembered = meta.find("records");
  if (step == meta.end() || !step->is_number_integer()) return corrupt("no integer 'step'");
  if (state == meta.end() || !state->is_number_unsigned()) return corrupt("no unsigned 'noise_state'");
  if (identity == meta.end() || !identity->is_object()) return corrupt("no 'identity'");
  if (remembered == meta.end() || !remembered->is_array()) return corrupt("no 'records' array");
  const std::string difference = FirstIdentityDifference(*identity, ResumeIdentity(trial_, steps_, surface_));
  if (!difference.empty()) {
    return Status::FailedPrecondition("checkpoint " + path + " was written by a different trial config (differs at " +
                                      difference + ")");
  }
  const int64_t at = step->get<int64_t>();
  if (at < 0 || at > steps_) return corrupt("step " + std::to_string(at) + " outside 0.." + std::to_string(steps_));
  std::deque<records::StepRecord> steps;
  for (const json& line : *remembered) {
    StatusOr<records::TrainerRecord> record = records::DecodeRecord(line.dump());
    const auto* step_record = record.ok() ? std::get_if<records::StepRecord>(&*record) : nullptr;
    if (step_record == nullptr) return corrupt("a remembered record is not a step record: " + line.dump());
    steps.push_back(*step_record);
  }
  step_ = at;
  noise_ = NormalStream::FromState(state->get<uint64_t>());
  step_history_ = std::move(steps);
  resumed_from_ = path;
  return Status::Ok();
}

Status StandInRun::SaveCheckpoint(const std::string& reason) {
  if (options_.checkpoint_dir.empty() || !lead()) return Status::Ok();
  json remembered = json::array();
  for (const records::StepRecord& record : step_history_) remembered.push_back(json::parse(records::EncodeRecord(record)));
  const json meta = {{"format", kCheckpointFormat},
                     {"step", step_},
                     {"noise_state", noise_.state()},
                     {"identity", ResumeIdentity(trial_, steps_, surface_)},
                     {"records", std::move(remembered)}};
  RUNG_RETURN_IF_ERROR(WriteCheckpointAtomically(
      options_.checkpoint_dir, step_, trial_.train.keep_checkpoints, [&](const std::string& temp_path) -> Status {
        std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
        out << meta.dump() << '\n';
        out.close();
        if (!out) return Status::Internal("cannot write checkpoint " + temp_path);
        return Status::Ok();
      }));
  records::CheckpointRecord record;
  record.step = step_;
  record.path = CheckpointPath(options_.checkpoint_dir, step_);
  record.reason = reason;
  return Record(record);
}

records::StepRecord StandInRun::MakeStepRecord(double train_loss, double lr_multiplier) {
  const double elapsed = Seconds(run_start_);
  const double interval_seconds = elapsed - seconds_at_last_log_;
  const double interval_tokens = static_cast<double>(tokens() - tokens_at_last_log_);
  records::StepRecord record;
  record.step = step_;
  record.tokens = tokens();
  record.flops = flops_per_token_.nonembedding * static_cast<double>(tokens());
  record.flops_total = flops_per_token_.total() * static_cast<double>(tokens());
  record.lr = trial_.train.lr * lr_multiplier;
  record.train_loss = train_loss;
  record.grad_norm = std::sqrt(std::max(train_loss - surface_.floor, 0.0));
  record.positional_grad_norm = 0;
  record.tokens_per_sec = interval_seconds > 0 ? interval_tokens / interval_seconds : 0.0;
  record.elapsed_sec = elapsed;
  seconds_at_last_log_ = elapsed;
  tokens_at_last_log_ = tokens();
  return record;
}

Status StandInRun::EmitFinal(std::optional<double> train_loss) {
  const double seconds = Seconds(run_start_);
  records::FinalRecord record;
  record.step = step_;
  record.tokens = tokens();
  record.flops = flops_per_token_.nonembedding * static_cast<double>(tokens());
  record.flops_total = flops_per_token_.total() * static_cast<double>(tokens());
  record.val_loss = curve_.ValLoss(step_);
  record.train_loss = train_loss;
  const double trained_tokens = static_cast<double>(tokens() - start_step_ * tokens_per_step_);
  record.train_tokens_per_sec = seconds > 0 ? trained_tokens / seconds : 0.0;
  record.wall_sec = seconds;
  record.peak_rss_bytes = PeakRssBytes();
  return Record(record);
}

// Waits until `due`; a stop signal ends the wait.
void SleepUntilOrStopped(Clock::time_point due) {
  while (StopRequest().load() == 0) {
    const Clock::time_point now = Clock::now();
    if (now >= due) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(due - now, std::chrono::milliseconds(10)));
  }
}

// Waits until this step's share of --seconds has passed and 1/lines_per_second after the previous
// step record.
void StandInRun::Pace() {
  if (options_.seconds > 0 && steps_ > start_step_) {
    const double share = static_cast<double>(step_ - start_step_) / static_cast<double>(steps_ - start_step_);
    SleepUntilOrStopped(run_start_ + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(options_.seconds * share)));
  }
  if (options_.lines_per_second <= 0) return;
  const auto interval = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / options_.lines_per_second));
  if (last_line_) SleepUntilOrStopped(*last_line_ + interval);
  last_line_ = Clock::now();
}

StatusOr<Outcome> StandInRun::Run() {
  const TrainConfig& train = trial_.train;
  // train.init: a source checkpoint must exist, as rung-train requires; its contents are not read.
  if (!train.init.checkpoint.empty() && !std::filesystem::exists(train.init.checkpoint)) {
    return Status::NotFound("train.init.checkpoint " + train.init.checkpoint + " does not exist");
  }
  if (train.init.checkpoint.empty() && !train.init.from_trial.empty()) {
    return Status::InvalidArgument("train.init.from_trial '" + train.init.from_trial +
                                   "' is resolved by the coordinator (rung submit / rung run); to run this "
                                   "config directly, set train.init.checkpoint to that trial's checkpoint");
  }
  RUNG_ASSIGN_OR_RETURN(ResumeChoice choice, ResumeFromNewestIntact(options_.resume, options_.checkpoint_dir,
                                                                    [&](const std::string& path) { return Resume(path); }));
  skipped_checkpoints_ = std::move(choice.skipped);
  start_step_ = step_;
  tokens_at_last_log_ = tokens();

  records::ProvenanceRecord provenance;
  provenance.commit = BuildCommit();
  provenance.host = HostName();
  provenance.threads = options_.threads > 0 ? options_.threads : trial_.resources.cpus;
  provenance.device = "cpu";
  provenance.config.text = TrialConfigToJson(trial_).dump();
  provenance.data.text =
      json({{"source", trial_.data.source}, {"read", false}, {"loss_surface", LossSurfaceToJson(surface_)}}).dump();
  provenance.parameters.text = ParameterCountsToJson(CountParameters(trial_.model)).dump();
  provenance.flops_per_token.nonembedding = flops_per_token_.nonembedding;
  provenance.flops_per_token.attention = flops_per_token_.attention;
  provenance.flops_per_token.matrix = flops_per_token_.matrix;
  provenance.flops_per_token.total = flops_per_token_.total();
  provenance.steps = steps_;
  provenance.tokens_per_step = tokens_per_step_;
  provenance.start_step = step_;
  if (!resumed_from_.empty()) provenance.resumed_from = resumed_from_;
  provenance.skipped_checkpoints = skipped_checkpoints_;
  provenance.world_size = trial_.resources.world_size;
  RUNG_RETURN_IF_ERROR(Record(provenance));
  // After a resume: the steps the checkpoint remembers, again (the store keeps one value per step).
  std::deque<records::StepRecord> replay = std::move(step_history_);
  step_history_.clear();
  for (records::StepRecord& record : replay) {
    record.replayed = true;
    RUNG_RETURN_IF_ERROR(Record(record));
  }

  while (step_ < steps_) {
    const double lr_multiplier = LearningRateMultiplier(train.schedule, step_, steps_);
    const double train_loss = curve_.TrainLoss(step_ + 1, noise_.Next());
    if (!std::isfinite(train_loss)) {
      std::ostringstream reason;
      reason << "non-finite training loss (nan) at step " << step_ + 1 << ": train.lr " << train.lr
             << " is above the loss surface's diverge_above_lr " << surface_.diverge_above_lr;
      records::ErrorRecord error;
      error.step = step_ + 1;
      error.reason = reason.str();
      RUNG_RETURN_IF_ERROR(Record(error));
      return Status::Aborted(reason.str());
    }
    ++step_;
    const bool last = step_ == steps_;
    const bool evaluate = !last && train.eval_every > 0 && step_ % train.eval_every == 0;
    const bool report = evaluate || last || step_ % train.log_every == 0;
    if (report) Pace();
    const bool stop_after = options_.stop_after_step > 0 && step_ >= options_.stop_after_step;
    if (!lead()) {
      // Plays the same curve and stops where rank 0 would; rank 0 reports and checkpoints.
      if (last) return Outcome::kCompleted;
      if (StopRequest().load() != 0 || stop_after) return Outcome::kPreempted;
      continue;
    }
    if (report) {
      records::StepRecord record = MakeStepRecord(train_loss, lr_multiplier);
      if (evaluate || last) record.val_loss = curve_.ValLoss(step_);
      RUNG_RETURN_IF_ERROR(Record(record));
      if (last) {
        RUNG_RETURN_IF_ERROR(SaveCheckpoint("final"));
        RUNG_RETURN_IF_ERROR(EmitFinal(train_loss));
        return Outcome::kCompleted;
      }
    }
    if (train.checkpoint_every > 0 && step_ % train.checkpoint_every == 0) {
      RUNG_RETURN_IF_ERROR(SaveCheckpoint("periodic"));
    }
    const int signal_number = StopRequest().load();
    if (signal_number != 0 || stop_after) {
      RUNG_RETURN_IF_ERROR(SaveCheckpoint(signal_number != 0 ? "signal" : "stop_after_step"));
      records::PreemptedRecord preempted;
      preempted.step = step_;
      preempted.signal = signal_number;
      if (!options_.checkpoint_dir.empty()) preempted.checkpoint = CheckpointPath(options_.checkpoint_dir, step_);
      RUNG_RETURN_IF_ERROR(Record(preempted));
      return Outcome::kPreempted;
    }
  }
  // Resumed from the final checkpoint (the previous attempt ended before it was reported): the
  // results again, so that this attempt completes like the one before it.
  if (lead()) RUNG_RETURN_IF_ERROR(EmitFinal(std::nullopt));
  return Outcome::kCompleted;
}

int Main(int argc, char** argv) {
  CLI::App app{"rung-stand-in: plays a deterministic loss surface through rung-train's command line, records "
               "and checkpoints (tests and benchmarks; trains nothing).\n"
               "Exit codes: 0 done, 2 bad config or arguments, 3 diverged, 4 config/checkpoint unusable, "
               "75 preempted (checkpoint written), 1 other."};
  Options options;
  app.add_option("--config", options.config_path, "Trial config file (YAML or JSON); required unless --blas-kernel");
  app.add_option("--checkpoint-dir", options.checkpoint_dir,
                 "Directory for this attempt's checkpoints (train.checkpoint_every, SIGTERM/SIGUSR1, the end)");
  app.add_option("--resume", options.resume, "auto (newest checkpoint in --checkpoint-dir), never, or a checkpoint path");
  app.add_option("--threads", options.threads, "Threads to report (default: resources.cpus)")
      ->check(rung::PositiveNumberCheck());
  app.add_option("--stop-after-step", options.stop_after_step,
                 "Checkpoint and stop as if preempted after this many steps")
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true));
  app.add_option("--rank", options.rank, "This process's rank (resources.world_size > 1); default RUNG_RANK or 0")
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true));
  app.add_option("--rendezvous", options.rendezvous, "HOST:PORT of rank 0 (checked, not used); default RUNG_RENDEZVOUS");
  app.add_flag("--print-config", options.print_config, "Print the resolved config as JSON and exit");
  bool blas_kernel = false;
  app.add_flag("--blas-kernel", blas_kernel, "Print rung-train's BLAS kernel line (no BLAS: it trains nothing) and exit");
  app.add_option("--steps", options.steps, "Steps to play instead of train.steps (default $RUNG_STAND_IN_STEPS)")
      ->check(rung::PositiveNumberCheck());
  app.add_option("--lines-per-second", options.lines_per_second,
                 "At most this many step records a second, 0 = unpaced (default $RUNG_STAND_IN_LINES_PER_SECOND)")
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true));
  app.add_option("--seconds", options.seconds,
                 "Play the steps over at least this many seconds, 0 = as fast as it can (default "
                 "$RUNG_STAND_IN_SECONDS)")
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true));
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;  // rung-train's codes
  if (blas_kernel) {
    std::cout << "{\"library\": \"\", \"kernel\": {\"name\": \"\", \"source\": \"not-chosen\"}, "
                 "\"describe\": \"rung-stand-in trains nothing: no BLAS\"}\n";
    return kExitOk;
  }
  if (options.config_path.empty()) {
    std::cerr << "--config is required\nRun with --help for more information.\n";
    return kExitUsage;
  }
  Status environment = Status::Ok();
  if (app.count("--rank") == 0) environment = NumberFromEnvironment("RUNG_RANK", 0, &options.rank);
  if (app.count("--rendezvous") == 0) {
    if (const char* value = std::getenv("RUNG_RENDEZVOUS"); value != nullptr) options.rendezvous = value;
  }
  if (app.count("--steps") == 0 && environment.ok()) {
    environment = NumberFromEnvironment<int64_t>("RUNG_STAND_IN_STEPS", 1, &options.steps);
  }
  if (app.count("--lines-per-second") == 0 && environment.ok()) {
    environment = NumberFromEnvironment<double>("RUNG_STAND_IN_LINES_PER_SECOND", 0.0, &options.lines_per_second);
  }
  if (app.count("--seconds") == 0 && environment.ok()) {
    environment = NumberFromEnvironment<double>("RUNG_STAND_IN_SECONDS", 0.0, &options.seconds);
  }
  if (const char* value = std::getenv("RUNG_STAND_IN_SURFACE"); value != nullptr) options.surface_text = value;
  if (!environment.ok()) {
    std::cerr << "rung-stand-in: " << environment.message() << "\n";
    return kExitUsage;
  }

  StatusOr<ConfigDocument> document = ReadConfigDocument(options.config_path);
  if (!document.ok()) {
    std::cerr << "rung-stand-in: " << document.status().message() << "\n";
    return document.status().code() == StatusCode::kNotFound ? kExitData : kExitUsage;
  }
  const ConfigDocument& doc = document.value();
  StatusOr<TrialConfig> trial = TrialConfigFromJson(doc.json, [&](const std::string& path) { return doc.Locate(path); });
  if (!trial.ok()) {
    std::cerr << "rung-stand-in: " << trial.status().message() << "\n";
    return kExitUsage;
  }
  if (options.print_config) {
    std::cout << TrialConfigToJson(*trial).dump(2) << "\n";
    return kExitOk;
  }
  if (options.rank >= trial->resources.world_size) {
    std::cerr << "rung-stand-in: --rank " << options.rank << " is outside resources.world_size "
              << trial->resources.world_size << "\n";
    return kExitUsage;
  }
  if (trial->resources.world_size > 1 && options.rendezvous.empty()) {
    std::cerr << "rung-stand-in: resources.world_size is " << trial->resources.world_size
              << ": give every rank --rank and the --rendezvous HOST:PORT of rank 0\n";
    return kExitUsage;
  }
  StatusOr<LossSurface> surface = ParseLossSurface(options.surface_text);
  if (!surface.ok()) {
    std::cerr << "rung-stand-in: RUNG_STAND_IN_SURFACE: " << surface.status().message() << "\n";
    return kExitUsage;
  }
  const int64_t steps = options.steps > 0 ? options.steps : trial->train.steps;
  InstallStopSignalHandlers();

  const TrialCurve curve = CurveForTrial(*surface, *trial, steps);
  std::cerr << "rung-stand-in: loss surface " << LossSurfaceToJson(*surface).dump() << "; N = " << curve.n
            << ", lr " << curve.lr << " (lr_opt " << curve.lr_opt << "): val_loss " << curve.initial << " -> "
            << curve.final_loss << " over " << steps << " steps";
  if (curve.divergence_step) std::cerr << ", diverging at step " << *curve.divergence_step;
  std::cerr << "\n";

  StandInRun run(*trial, options, *surface, steps);
  StatusOr<Outcome> outcome = run.Run();
  if (!outcome.ok()) {
    std::cerr << "rung-stand-in: " << outcome.status().ToString() << "\n";
    return ExitCodeFor(outcome.status());
  }
  if (*outcome == Outcome::kPreempted) {
    std::cerr << "rung-stand-in: stopped after a checkpoint (preempted)\n";
    return kExitPreempted;
  }
  return kExitOk;
}

}  // namespace
}  // namespace rung::stand_in

int main(int argc, char** argv) { return rung::stand_in::Main(argc, argv); }

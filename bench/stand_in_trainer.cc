// bench/stand_in_trainer.cc
//
// rung-bench-stand-in: a trainer that does no training, FOR BENCHMARKS ONLY (bench/orchestration.py,
// the "trial kind that does no training"). It speaks rung-train's command-line and record-line
// contract exactly as rung-worker calls it (worker/agent/trainer_process.h, worker/train_main.cc), so
// the real lease -> spawn -> relay -> complete path can be timed without LibTorch and without the
// cost of training:
//
//   rung-bench-stand-in --config trial.json [--checkpoint-dir DIR] [--resume auto|never|PATH]
//                       [--threads N] [--stop-after-step N]
//                       [--steps N] [--lines-per-second R]
//
// stdout, one JSON object per line, flushed:
//   {"type":"provenance", ...}   first: trainer "rung-bench-stand-in", commit, host, threads, the
//                                config as read, steps, start_step, resumed_from
//   {"type":"step", ...}         one per step: step, tokens, flops, flops_total, lr, train_loss,
//                                tokens_per_sec, elapsed_sec (7 metric points each once the agent
//                                splits it; fake numbers), at most R per second (0: as fast as it can)
//   {"type":"checkpoint", ...}   and {"type":"preempted", ...} after SIGTERM/SIGUSR1 or
//                                --stop-after-step (the checkpoint is a small JSON file named and
//                                published like rung-train's, so a resumed attempt continues its steps)
//   {"type":"final", ...}        last: step, val_loss, train_tokens_per_sec, peak_rss_bytes
// Exit codes as rung-train: 0 done, 2 bad arguments or config, 4 checkpoint unusable, 75 stopped by
// SIGTERM/SIGUSR1 after a checkpoint (preempted), 1 anything else.
//
// --steps and --lines-per-second default to the environment variables RUNG_STAND_IN_STEPS (else 3)
// and RUNG_STAND_IN_LINES_PER_SECOND (else 0): rung-worker passes its environment to its trainers
// but not these flags, so a benchmark sets them on the workers. The config must be JSON (what
// rung-worker writes); its content is echoed in the provenance record and otherwise ignored.
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/provenance.h"
#include "core/common/status.h"
#include "core/train/checkpoint.h"

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kExitOk = 0, kExitOther = 1, kExitUsage = 2, kExitData = 4, kExitPreempted = 75;
constexpr int64_t kTokensPerStep = 4096;
constexpr double kFlopsPerToken = 6.0e6;

std::atomic<int> stop_signal{0};

void OnStopSignal(int signal_number) { stop_signal.store(signal_number); }

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

void Emit(const json& record) { std::cout << record.dump() << std::endl; }

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::strtoll(text, nullptr, 10) : fallback;
}

double EnvDouble(const char* name, double fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::strtod(text, nullptr) : fallback;
}

rung::StatusOr<json> ReadJsonFile(const std::string& path) {
  std::ifstream stream(path);
  if (!stream) return rung::Status::NotFound("cannot read " + path);
  std::stringstream text;
  text << stream.rdbuf();
  json parsed = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return rung::Status::InvalidArgument(path + " is not JSON");
  return parsed;
}

// The step a checkpoint of this stand-in holds. Errors: NOT_FOUND, INVALID_ARGUMENT.
rung::StatusOr<int64_t> CheckpointStep(const std::string& path) {
  rung::StatusOr<json> checkpoint = ReadJsonFile(path);
  if (!checkpoint.ok()) return checkpoint.status();
  if (!checkpoint->is_object() || !checkpoint->contains("step") || !(*checkpoint)["step"].is_number_integer()) {
    return rung::Status::InvalidArgument(path + " is not a checkpoint of rung-bench-stand-in");
  }
  return (*checkpoint)["step"].get<int64_t>();
}

rung::Status WriteCheckpoint(const std::string& dir, int64_t step) {
  return rung::WriteCheckpointAtomically(dir, step, /*keep=*/2, [step](const std::string& temp_path) {
    std::ofstream file(temp_path, std::ios::trunc);
    file << json{{"stand_in", true}, {"step", step}}.dump() << "\n";
    file.flush();
    return file ? rung::Status::Ok() : rung::Status::Internal("cannot write " + temp_path);
  });
}

json StepRecord(int64_t step, double elapsed_sec) {
  const int64_t tokens = step * kTokensPerStep;
  return {{"type", "step"},
          {"step", step},
          {"tokens", tokens},
          {"flops", kFlopsPerToken * kTokensPerStep},
          {"flops_total", kFlopsPerToken * static_cast<double>(tokens)},
          {"lr", 1e-3},
          {"train_loss", 5.0 / std::sqrt(static_cast<double>(step))},
          {"tokens_per_sec", elapsed_sec > 0 ? static_cast<double>(tokens) / elapsed_sec : 0.0},
          {"elapsed_sec", elapsed_sec}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rung-bench-stand-in: FOR BENCHMARKS ONLY. Speaks rung-train's arguments, JSON record lines "
               "and exit codes but trains nothing.\n"
               "Exit codes: 0 done, 2 bad config, 4 checkpoint unusable, 75 preempted (checkpoint written), 1 other."};
  std::string config_path, checkpoint_dir, resume = "auto";
  int threads = 1;
  int64_t stop_after_step = 0;
  int64_t steps = EnvInt("RUNG_STAND_IN_STEPS", 3);
  double lines_per_second = EnvDouble("RUNG_STAND_IN_LINES_PER_SECOND", 0.0);
  app.add_option("--config", config_path, "Trial config file (JSON)")->required();
  app.add_option("--checkpoint-dir", checkpoint_dir, "Directory for this attempt's checkpoints");
  app.add_option("--resume", resume, "auto (newest checkpoint in --checkpoint-dir), never, or a checkpoint path");
  app.add_option("--threads", threads, "CPU threads (recorded only)")->check(CLI::PositiveNumber);
  app.add_option("--stop-after-step", stop_after_step, "Checkpoint and stop as if preempted after this step");
  app.add_option("--steps", steps, "Step records to print (default: $RUNG_STAND_IN_STEPS, else 3)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--lines-per-second", lines_per_second,
                 "At most this many step records per second; 0: as fast as possible "
                 "(default: $RUNG_STAND_IN_LINES_PER_SECOND, else 0)")
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? kExitOk : kExitUsage;
  }
  if (steps < 0 || lines_per_second < 0 || !std::isfinite(lines_per_second)) {
    std::cerr << "rung-bench-stand-in: steps and lines per second must not be negative\n";
    return kExitUsage;
  }

  rung::StatusOr<json> config = ReadJsonFile(config_path);
  if (!config.ok()) {
    std::cerr << "rung-bench-stand-in: " << config.status().message() << "\n";
    return config.status().code() == rung::StatusCode::kNotFound ? kExitData : kExitUsage;
  }
  InstallStopHandlers();

  std::string resumed_from;
  if (resume == "auto" && !checkpoint_dir.empty()) {
    std::vector<std::string> checkpoints = rung::ListCheckpoints(checkpoint_dir);
    if (!checkpoints.empty()) resumed_from = checkpoints.back();
  } else if (resume != "auto" && resume != "never") {
    resumed_from = resume;
  }
  int64_t step = 0;
  if (!resumed_from.empty()) {
    rung::StatusOr<int64_t> resumed = CheckpointStep(resumed_from);
    if (!resumed.ok()) {
      std::cerr << "rung-bench-stand-in: " << resumed.status().message() << "\n";
      return kExitData;
    }
    step = *resumed;
  }

  Emit({{"type", "provenance"},
        {"trainer", "rung-bench-stand-in (benchmarks only: no training)"},
        {"commit", rung::BuildCommit()},
        {"host", rung::HostName()},
        {"threads", threads},
        {"config", *config},
        {"steps", steps},
        {"start_step", step},
        {"resumed_from", resumed_from.empty() ? json(nullptr) : json(resumed_from)}});

  const Clock::time_point start = Clock::now();
  const auto interval = lines_per_second > 0 ? std::chrono::duration<double>(1.0 / lines_per_second)
                                             : std::chrono::duration<double>(0);
  int64_t emitted = 0;
  while (step < steps) {
    const int signal_number = stop_signal.load();
    if (signal_number != 0 || (stop_after_step > 0 && step >= stop_after_step)) {
      if (!checkpoint_dir.empty()) {
        if (rung::Status written = WriteCheckpoint(checkpoint_dir, step); !written.ok()) {
          std::cerr << "rung-bench-stand-in: " << written.message() << "\n";
          return kExitOther;
        }
        Emit({{"type", "checkpoint"}, {"step", step}, {"path", rung::CheckpointPath(checkpoint_dir, step)},
              {"reason", signal_number != 0 ? "signal" : "stop_after_step"}});
      }
      Emit({{"type", "preempted"},
            {"step", step},
            {"signal", signal_number},
            {"checkpoint", checkpoint_dir.empty() ? json(nullptr) : json(rung::CheckpointPath(checkpoint_dir, step))}});
      std::cerr << "rung-bench-stand-in: stopped after a checkpoint (preempted)\n";
      return kExitPreempted;
    }
    if (interval.count() > 0) {
      std::this_thread::sleep_until(start + std::chrono::duration_cast<Clock::duration>(interval * emitted));
    }
    ++step;
    ++emitted;
    Emit(StepRecord(step, std::chrono::duration<double>(Clock::now() - start).count()));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  Emit({{"type", "final"},
        {"step", step},
        {"val_loss", step > 0 ? 5.0 / std::sqrt(static_cast<double>(step)) : 5.0},
        {"train_tokens_per_sec", elapsed > 0 ? static_cast<double>(emitted * kTokensPerStep) / elapsed : 0.0},
        {"peak_rss_bytes", rung::PeakRssBytes()}});
  return kExitOk;
}

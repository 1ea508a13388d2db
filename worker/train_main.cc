// rung-train: trains one resolved trial (a cell of a sweep) and prints its metrics as JSON lines.
//
//   rung-train --config trial.yaml [--checkpoint-dir DIR] [--resume auto|never|PATH] [--threads N]
//              [--rank R --rendezvous HOST:PORT]
//   rung-train --blas-kernel     (one JSON line: the BLAS and the kernel this machine trains on)
//
// Before main, rung chooses the OpenBLAS kernel (core/common/blas_kernel_startup.h); the first stderr
// line of a training run names it and who chose it.
//
// A data-parallel trial (resources.world_size W > 1) runs as W rung-train processes, ranks 0..W-1,
// that meet at rank 0's rendezvous address (--rank/--rendezvous, or RUNG_RANK/RUNG_RENDEZVOUS).
// Rank 0 prints the records and writes the checkpoints; the other ranks print only errors.
//
// Exit codes (docs/cli.md): 0 completed, 2 bad config or arguments, 3 training failed (non-finite
// loss or gradient), 4 data or checkpoint unusable, 5 no space left on device (the path named), 75
// stopped by SIGTERM/SIGUSR1 after a checkpoint (preempted; resume with the same --checkpoint-dir),
// 1 anything else.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/command_line.h"
#include "core/common/blas_kernel_startup.h"
#include "core/config/inverse_temperature_form.h"
#include "core/config/length_extension_method.h"
#include "core/config/positional_variant.h"
#include "core/config/trial_config.h"
#include "core/hf/hf_model_options.h"
#include "core/train/runtime.h"
#include "core/train/trainer.h"
#include "core/config/yaml_document.h"

namespace {

constexpr int kExitOk = 0, kExitOther = 1, kExitUsage = 2, kExitTrainingFailed = 3, kExitData = 4,
              kExitNoSpace = 5, kExitPreempted = 75;

int ExitCodeFor(const rung::Status& status) {
  switch (status.code()) {
    case rung::StatusCode::kInvalidArgument: return kExitUsage;
    case rung::StatusCode::kAborted: return kExitTrainingFailed;
    case rung::StatusCode::kNotFound:
    case rung::StatusCode::kFailedPrecondition:
    case rung::StatusCode::kDataLoss: return kExitData;
    case rung::StatusCode::kResourceExhausted: return kExitNoSpace;  // a full disk (core/common/write_error.h)
    default: return kExitOther;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A write to a closed socket or pipe is an error the writer handles, not a signal that ends the
  // process: a data-parallel rank whose peer died gets EPIPE from Gloo (an error, exit 1), where
  // SIGPIPE killed it (exit 141) when its write raced the peer's death. (A trainer whose worker is
  // gone dies with it: the worker starts it with a parent-death signal.)
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"rung-train: train one resolved trial and print its metrics as JSON lines on stdout.\n"
               "Exit codes (docs/cli.md): 0 done, 2 bad config, 3 non-finite loss, 4 data/checkpoint unusable, "
               "5 no space left on device, 75 preempted (checkpoint written), 1 other."};
  app.footer("\n" + rung::PositionalVariantsHelp() + "\n" + rung::InverseTemperatureFormsHelp() + "\n" +
             rung::LengthExtensionMethodsHelp());
  std::string config_path, checkpoint_dir, resume = "auto";
  int threads = 0;
  int64_t stop_after_step = 0;
  bool print_config = false;
  bool blas_kernel = false;
  int rank = 0;
  std::string rendezvous;
  if (const char* value = std::getenv("RUNG_RANK"); value != nullptr) rank = std::atoi(value);
  if (const char* value = std::getenv("RUNG_RENDEZVOUS"); value != nullptr) rendezvous = value;
  app.add_option("--config", config_path, "Trial config file (YAML or JSON); required unless --blas-kernel");
  app.add_option("--checkpoint-dir", checkpoint_dir,
                 "Directory for this attempt's checkpoints (written every train.checkpoint_every steps, "
                 "on SIGTERM/SIGUSR1 and at the end)");
  app.add_option("--resume", resume, "auto (newest checkpoint in --checkpoint-dir), never, or a checkpoint path");
  app.add_option("--threads", threads, "CPU threads (default: resources.cpus of the config)")->check(rung::PositiveNumberCheck());
  app.add_option("--stop-after-step", stop_after_step,
                 "Checkpoint and stop as if preempted after this many steps (for tests)");
  app.add_option("--rank", rank, "This process's rank in a data-parallel trial (resources.world_size > 1); "
                 "default RUNG_RANK or 0")->check(rung::PositiveNumberCheck(/*zero_allowed=*/true));
  app.add_option("--rendezvous", rendezvous, "HOST:PORT where rank 0 serves the data-parallel rendezvous "
                 "(resources.world_size > 1); default RUNG_RENDEZVOUS");
  app.add_flag("--print-config", print_config, "Print the resolved config as JSON and exit");
  app.add_flag("--blas-kernel", blas_kernel,
               "Print the BLAS and the kernel this machine trains on (who chose it and why) as one JSON line "
               "and exit; RUNG_BLAS_KERNEL=keep keeps OpenBLAS's own choice, OPENBLAS_CORETYPE forces one");
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  if (blas_kernel) {
    nlohmann::json blas = rung::RuntimeProvenance()["blas"];
    blas["describe"] = rung::StartupBlasKernel().Describe();
    std::cout << blas.dump() << "\n";
    return kExitOk;
  }
  if (config_path.empty()) {
    std::cerr << "rung-train: --config is required\nRun with --help for more information.\n";
    return kExitUsage;
  }

  rung::StatusOr<rung::ConfigDocument> document = rung::ReadConfigDocument(config_path);
  if (!document.ok()) {
    std::cerr << "rung-train: " << document.status().message() << "\n";
    return document.status().code() == rung::StatusCode::kNotFound ? kExitData : kExitUsage;
  }
  const rung::ConfigDocument& doc = document.value();
  // train.init.model: checkpoint: the model block is the Hugging Face folder's (as a sweep's expansion
  // sets it; a config run directly gets it here).
  nlohmann::json config_json = doc.json;
  const nlohmann::json::json_pointer init_path("/train/init");
  const nlohmann::json init =
      config_json.is_object() && config_json.contains(init_path) ? config_json.at(init_path) : nlohmann::json();
  if (init.is_object() && init.value("model", nlohmann::json()) == "checkpoint" &&
      init.value("checkpoint", nlohmann::json()).is_string()) {
    const std::string folder = init.at("checkpoint").get<std::string>();
    rung::StatusOr<std::vector<std::pair<std::string, nlohmann::json>>> keys =
        rung::hf::HfFolderModelKeys(folder, config_json.value("position", nlohmann::json()));
    if (!keys.ok()) {
      std::cerr << "rung-train: train.init.model checkpoint: " << keys.status().message() << "\n";
      return kExitData;
    }
    try {
      for (const auto& [key, value] : *keys) {
        std::string pointer = "/" + key;
        std::replace(pointer.begin(), pointer.end(), '.', '/');
        config_json[nlohmann::json::json_pointer(pointer)] = value;
      }
    } catch (const nlohmann::json::exception&) {
      std::cerr << "rung-train: train.init.model checkpoint: the config's model or position is not a block\n";
      return kExitUsage;
    }
  }
  rung::StatusOr<rung::TrialConfig> trial =
      rung::TrialConfigFromJson(config_json, [&](const std::string& path) { return doc.Locate(path); });
  if (!trial.ok()) {
    std::cerr << "rung-train: " << trial.status().message() << "\n";
    return kExitUsage;
  }
  if (print_config) {
    std::cout << rung::TrialConfigToJson(trial.value()).dump(2) << "\n";
    return kExitOk;
  }
  if (rank >= trial->resources.world_size) {
    std::cerr << "rung-train: --rank " << rank << " is outside resources.world_size " << trial->resources.world_size
              << "\n";
    return kExitUsage;
  }
  if (trial->resources.world_size > 1 && rendezvous.empty()) {
    std::cerr << "rung-train: resources.world_size is " << trial->resources.world_size
              << ": give every rank --rank and the --rendezvous HOST:PORT of rank 0\n";
    return kExitUsage;
  }
  rung::ConfigureRuntime(threads > 0 ? threads : static_cast<int>(trial->resources.cpus));
  rung::InstallStopSignalHandlers();
  nlohmann::json provenance = rung::RuntimeProvenance();
  std::cerr << "rung-train: LibTorch " << provenance["torch_version"].get<std::string>() << ", "
            << provenance["threads"].get<int>() << " thread(s), BLAS "
            << provenance["blas"]["library"].get<std::string>() << " ("
            << provenance["blas"]["threading"].get<std::string>() << "), "
            << rung::StartupBlasKernel().Describe() << "\n";
  if (!provenance["blas"]["optimized"].get<bool>()) {
    std::cerr << "rung-train: warning: LibTorch is running on the reference BLAS (about 15x slower); "
                 "run deploy/install-deps.sh to pin libopenblas0-openmp\n";
  }

  rung::TrainerOptions options;
  options.checkpoint_dir = checkpoint_dir;
  options.resume = resume;
  options.stop_after_step = stop_after_step;
  options.records = &std::cout;
  options.rank = rank;
  options.rendezvous = rendezvous;
  rung::StatusOr<rung::TrainOutcome> outcome = rung::TrainTrial(trial.value(), options);
  if (!outcome.ok()) {
    std::cerr << "rung-train: " << outcome.status().ToString() << "\n";
    return ExitCodeFor(outcome.status());
  }
  if (outcome.value() == rung::TrainOutcome::kPreempted) {
    std::cerr << "rung-train: stopped after a checkpoint (preempted)\n";
    return kExitPreempted;
  }
  return kExitOk;
}

#include "core/common/trainer_blas_kernel.h"

#include <nlohmann/json.hpp>

#include "core/common/subprocess.h"

namespace rung {

std::string TrainerBlasKernel::Short() const {
  if (source == "not-openblas") return "not OpenBLAS";
  if (name.empty()) return "no BLAS";
  return name + " (" + source + ")";
}

StatusOr<TrainerBlasKernel> AskTrainerForBlasKernel(const std::string& trainer, std::chrono::milliseconds timeout) {
  SubprocessOptions options;
  options.argv = {trainer, "--blas-kernel"};
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> run = Subprocess::Run(options, timeout);
  if (!run.ok()) return Status::FailedPrecondition("cannot ask " + trainer + " for its BLAS kernel: " + run.status().message());
  if (run->timed_out) {
    return Status::DeadlineExceeded(trainer + " --blas-kernel did not answer in " +
                                    std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) + " s");
  }
  if (!run->exit.Succeeded()) {
    std::string err = run->stderr_text.substr(0, run->stderr_text.find('\n'));
    return Status::FailedPrecondition(trainer + " --blas-kernel " + run->exit.Describe() + (err.empty() ? "" : ": " + err));
  }
  const nlohmann::json blas = nlohmann::json::parse(run->stdout_text, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json kernel = blas.is_object() ? blas.value("kernel", nlohmann::json()) : nlohmann::json();
  if (!kernel.is_object() || !kernel.value("name", nlohmann::json()).is_string() ||
      !kernel.value("source", nlohmann::json()).is_string()) {
    return Status::DataLoss(trainer + " --blas-kernel printed no kernel: " + run->stdout_text.substr(0, 200));
  }
  TrainerBlasKernel result;
  result.name = kernel["name"].get<std::string>();
  result.source = kernel["source"].get<std::string>();
  if (blas.value("describe", nlohmann::json()).is_string()) result.describe = blas["describe"].get<std::string>();
  return result;
}

}  // namespace rung

#include "core/train/runtime.h"

#include <malloc.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "core/common/provenance.h"

namespace rung {

std::atomic<int>& StopRequest() {
  static std::atomic<int> request{0};
  return request;
}

namespace {
void OnStopSignal(int signal) { StopRequest().store(signal); }
}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

void ConfigureRuntime(int threads) {
  // Keep freed tensor memory in the process (docs/performance.md, "Allocator").
  mallopt(M_MMAP_THRESHOLD, 256 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
  std::string count = std::to_string(threads);
  setenv("OMP_NUM_THREADS", count.c_str(), 1);
  setenv("OPENBLAS_NUM_THREADS", count.c_str(), 1);
  at::set_num_interop_threads(1);
  torch::set_num_threads(threads);
}

nlohmann::json RuntimeProvenance() {
  nlohmann::json provenance = BasicProvenance();
  provenance["torch_version"] = TORCH_VERSION;
  provenance["threads"] = torch::get_num_threads();
  provenance["cuda_available"] = torch::cuda::is_available();
  return provenance;
}

}  // namespace rung

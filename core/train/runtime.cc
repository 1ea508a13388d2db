#include "core/train/runtime.h"

#include <malloc.h>

#include <csignal>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "core/common/blas_kernel_startup.h"
#include "core/common/provenance.h"

namespace rung {

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
  provenance["blas"]["kernel"] = StartupBlasKernel().ToJson();
  provenance["torch_version"] = TORCH_VERSION;
  provenance["threads"] = torch::get_num_threads();
  provenance["cuda_available"] = torch::cuda::is_available();
  return provenance;
}

}  // namespace rung

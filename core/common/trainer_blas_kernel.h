// core/common/trainer_blas_kernel.h
//
// The BLAS kernel a trainer binary runs on this machine, asked of it (`rung-train --blas-kernel`),
// for the programs that do not link LibTorch themselves: rung-worker reports it when it registers
// (so `rung workers` shows each machine's kernel), rung validate keys its calibration by it. The
// first start on a machine may check kernels in child processes (blas_kernel_startup.h): allow it
// seconds.
//
// Thread safety: reentrant.
#pragma once

#include <chrono>
#include <string>

#include "core/common/status.h"

namespace rung {

struct TrainerBlasKernel {
  std::string name;      // e.g. "Cooperlake"; "" when the BLAS is not OpenBLAS
  std::string source;    // BlasKernelSourceName: "rung", "openblas", "environment", "kept", "not-openblas"
  std::string describe;  // the trainer's one-line description

  // "Cooperlake (rung)", "Haswell (environment)", "not OpenBLAS", "no BLAS" (a trainer that links none).
  std::string Short() const;
};

// Runs `trainer --blas-kernel`. Errors: FAILED_PRECONDITION when it cannot be started or exits
// non-zero (a trainer without the flag), DEADLINE_EXCEEDED after `timeout`, DATA_LOSS when its output
// is not the JSON line the flag prints; the message names the trainer.
StatusOr<TrainerBlasKernel> AskTrainerForBlasKernel(const std::string& trainer,
                                                    std::chrono::milliseconds timeout = std::chrono::minutes(2));

}  // namespace rung

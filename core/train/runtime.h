// core/train/runtime.h
//
// Process-wide set-up of a trainer and the facts it records: LibTorch threads (intra-op = the
// trial's CPU slots, inter-op 1; LibTorch defaults to one here), the glibc allocator thresholds that
// stop freed tensor memory from being returned to the OS and faulted back every step; the stop
// request raised by SIGTERM/SIGUSR1 is core/train/stop_signal.h. Torch-free header.
#pragma once

#include <nlohmann/json.hpp>

#include "core/train/stop_signal.h"

namespace rung {

// Call once, first thing in main, before any tensor work.
void ConfigureRuntime(int threads);

// Provenance: commit, host, BLAS (detected, with its kernel and who chose it: blas_kernel_startup.h),
// LibTorch version, threads, CUDA availability.
nlohmann::json RuntimeProvenance();

}  // namespace rung

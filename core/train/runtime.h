// core/train/runtime.h
//
// Process-wide set-up of a trainer and the facts it records: LibTorch threads (intra-op = the
// trial's CPU slots, inter-op 1; LibTorch defaults to one here), the glibc allocator thresholds that
// stop freed tensor memory from being returned to the OS and faulted back every step, and the
// stop request raised by SIGTERM/SIGUSR1. Torch-free header.
#pragma once

#include <atomic>

#include <nlohmann/json.hpp>

namespace rung {

// Call once, first thing in main, before any tensor work.
void ConfigureRuntime(int threads);

// Provenance: commit, host, BLAS (detected), LibTorch version, threads, CUDA availability.
nlohmann::json RuntimeProvenance();

// Set (to the signal number) by the SIGTERM/SIGUSR1 handler; the trainer checks it after every
// optimizer step, writes a checkpoint and stops.
std::atomic<int>& StopRequest();

// Installs the SIGTERM/SIGUSR1 handler that sets StopRequest().
void InstallStopSignalHandlers();

}  // namespace rung

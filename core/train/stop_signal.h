// core/train/stop_signal.h
//
// The stop request of a trainer process: SIGTERM or SIGUSR1 sets it (to the signal number); a
// trainer checks it after every optimizer step, writes a checkpoint and stops (exit 75). Shared by
// rung-train and the stand-in trainer of the tests. Torch-free.
//
// Thread safety: StopRequest() is an atomic; install the handlers once, first thing in main.
#pragma once

#include <atomic>

namespace rung {

// The signal that asked the process to stop, 0 while none did.
std::atomic<int>& StopRequest();

// Installs the SIGTERM/SIGUSR1 handler that sets StopRequest() (SA_RESTART).
void InstallStopSignalHandlers();

}  // namespace rung

// core/train/stop_signal.cc
#include "core/train/stop_signal.h"

#include <signal.h>

namespace rung {
namespace {

void OnStopSignal(int signal) { StopRequest().store(signal); }

}  // namespace

std::atomic<int>& StopRequest() {
  static std::atomic<int> request{0};
  return request;
}

void InstallStopSignalHandlers() {
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
}

}  // namespace rung

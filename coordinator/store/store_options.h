// coordinator/store/store_options.h
//
// The settings a Store is opened with: where checkpoints go, lease and gang-formation periods,
// gangs' rendezvous ports.
#pragma once

#include <chrono>
#include <string>

namespace rung {

struct StoreOptions {
  // Where checkpoints go: <artifact_root>/<sweep name>/<trial_index>/attempt-<n>. Shared by all
  // workers; the store only names the folders.
  std::string artifact_root = "artifacts";
  // How long a lease lasts without a heartbeat.
  std::chrono::microseconds lease_duration = std::chrono::seconds(60);
  // After a restart (TrialLifecycle::RestartReconcile) every live lease lasts the longer of
  // lease_duration and this: longer than a worker takes to find a coordinator that came back (its
  // reconnect and retry backoffs are each at most 2 s, worker/agent/coordinator_client.h).
  std::chrono::microseconds restart_grace = std::chrono::seconds(10);
  int busy_timeout_ms = 5000;
  // What Store::Open checks before it serves: SQLite's quick_check (O(N), skips index contents),
  // the full integrity_check, or nothing.
  enum class StartCheck { kQuick, kFull, kNone };
  StartCheck start_check = StartCheck::kQuick;
  // Gangs (gang_leases.h): a forming gang whose ranks are not all reserved this long after its first
  // reservation is released; a reserving worker that has not polled for this long drops out.
  std::chrono::microseconds gang_formation_timeout = std::chrono::seconds(60);
  // Rendezvous ports of gang attempts: first_port + (a hash of trial and attempt) % port_count, on
  // rank 0's worker host.
  int rendezvous_first_port = 29500;
  int rendezvous_port_count = 500;
};

}  // namespace rung

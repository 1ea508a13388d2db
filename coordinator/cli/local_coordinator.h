// coordinator/cli/local_coordinator.h
//
// A run directory and the rung-coordinator child that serves it on loopback, shared by `rung run`
// (which makes the directory) and `rung serve` (which serves one again). A run directory holds:
//   rung.db          the database (sweeps, trials, metrics)
//   artifacts/       every attempt's checkpoints
//   user.token       the user token (`rung` commands; 0600)
//   worker.token     the worker token (rung-worker; 0600)
//   viewer.token     the viewer token (dashboards, people who only look: queries only; 0600)
//   coordinator.log  the coordinator's stderr, appended
//   dashboard.log    `rung dashboard`'s output (rung run --dashboard, rung serve --dashboard)
// Token files that are missing are created by the coordinator with fresh tokens.
//
// Example:
//   RunDirectory run{"rung-runs/ladder-20260101-120000"};
//   StatusOr<LocalCoordinator> coordinator = StartLocalCoordinator(run, "127.0.0.1:0", 30);
//   if (coordinator.ok()) Use(coordinator->address);   // "127.0.0.1:43117"
//
// Thread safety: values and reentrant functions; the child is its caller's (subprocess.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace rung::cli {

struct RunDirectory {
  std::string dir;

  std::string Path(const std::string& name) const;
  std::string database() const { return Path("rung.db"); }
  std::string artifacts() const { return Path("artifacts"); }
  std::string user_token() const { return Path("user.token"); }
  std::string worker_token() const { return Path("worker.token"); }
  std::string viewer_token() const { return Path("viewer.token"); }
  std::string log() const { return Path("coordinator.log"); }
};

// A rung-coordinator child (killed with this process) and the address it serves on.
struct LocalCoordinator {
  std::unique_ptr<Subprocess> process;
  std::string address;
};

// A `rung dashboard` child (killed with this process) and the URL it printed, with its login token.
struct LocalDashboard {
  std::unique_ptr<Subprocess> process;
  std::string url;  // "http://127.0.0.1:8050/?token=..."
};

// Starts `rung dashboard` (this executable's) on the coordinator at `address` with `token_file`,
// listening on `listen`, its output appended to `log_path`, and waits up to 20 s for its URL.
// Errors: FAILED_PRECONDITION when it stops first (the message has what it wrote: a port in use, a
// missing page), UNAVAILABLE when it prints no URL in time, Subprocess::Start's.
StatusOr<LocalDashboard> StartLocalDashboard(const std::string& address, const std::string& token_file,
                                             const std::string& listen, const std::string& log_path);

// How long StartLocalCoordinator waits for a coordinator to serve a database of `database_bytes`:
// 20 s, and 60 s more per GiB begun, since the coordinator reads the whole file (PRAGMA quick_check)
// before it serves (how long that takes: docs/performance.md, "Orchestration").
std::chrono::seconds CoordinatorStartBudget(std::uintmax_t database_bytes);

// The size of the run directory's database file, 0 when there is none yet.
std::uintmax_t DatabaseBytes(const RunDirectory& run);

// Starts rung-coordinator (beside this executable) on `listen` over the run directory's database,
// artifacts and tokens, its stderr appended to the directory's log, and waits for it to serve, up to
// CoordinatorStartBudget of the database's size. Errors: FAILED_PRECONDITION when it stops before
// serving (the message has what it wrote to the log: for example that another coordinator holds the
// database), UNAVAILABLE when it does not serve in time, Subprocess::Start's.
StatusOr<LocalCoordinator> StartLocalCoordinator(const RunDirectory& run, const std::string& listen,
                                                 double lease_seconds);

// `rung run`'s worker layout unless told otherwise: kRunDefaultWorkers workers, each with
// RunCpusPerWorker(workers, 0) CPU threads (the machine's online cores shared out, at least 1).
// `rung validate` estimates a calibrated sweep's time for this layout too.
constexpr int kRunDefaultWorkers = 2;
int RunCpusPerWorker(int workers, int cpus_per_worker_option);

}  // namespace rung::cli

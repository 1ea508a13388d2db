// tests/deploy/slurm_cluster.h
//
// A one-node SLURM cluster for the tests, from Debian 12's slurm-wlm and munge: munged, slurmctld
// and slurmd run in the foreground as children of the test, from a folder of their own, with a
// generated slurm.conf:
//   - localhost only: slurmctld and slurmd on ports free on 127.0.0.1 when started; the node is this
//     host under its short name (what `hostname -s` prints), at 127.0.0.1;
//   - munge on a socket and key of the folder (AuthInfo socket=...), never the system's;
//   - CPUs over-declared (config_overrides), so that several one-thread workers and a coordinator
//     fit on a 2-core machine; memory not a consumable;
//   - JobRequeue=1; a requeued job is eligible again after 10 s (cred_expire=10; SLURM's default
//     holds it 120 s); KillWait=10 between a job's SIGTERM and its SIGKILL;
//   - processes tracked by their parent chain (proctrack/linuxproc: no cgroups needed), no
//     accounting database.
// The cluster's commands (sbatch, squeue, scontrol, ...) find it through SLURM_CONF, which
// Environment() gives and Run() sets.
//
// Start() says why a cluster cannot start here (not root, slurm-wlm or munge not installed, a daemon
// that did not come up, with the tail of its log), for the caller to skip with that message.
// The destructor cancels every job, waits for them to end, shuts the daemons down and reaps them,
// then SIGKILLs any process still carrying this cluster's SLURM_CONF (a job step that outlived them).
//
// Example:
//   StatusOr<std::unique_ptr<SlurmCluster>> cluster = SlurmCluster::Start(scratch / "slurm", 16);
//   if (!cluster.ok()) GTEST_SKIP() << cluster.status().message();
//   StatusOr<CommandOutput> out = (*cluster)->Run("sbatch --wrap hostname", std::chrono::seconds(30));
//
// Thread safety: one thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace rung::deploy_test {

// What a shell command printed (stdout and stderr together) and how it ended.
struct CommandOutput {
  std::string text;
  int exit_code = 0;  // as a shell's $?: 128 + the signal when killed; 124 when it timed out
};

class SlurmCluster {
 public:
  // Starts munged, slurmctld and slurmd in `folder` (created) with a node of `cpus` CPUs, and waits
  // until the node is idle. FAILED_PRECONDITION with the reason when a cluster cannot start here.
  static StatusOr<std::unique_ptr<SlurmCluster>> Start(const std::filesystem::path& folder, int cpus);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  const std::string& node() const { return node_; }
  // NAME=VALUE entries a process needs to use this cluster (SLURM_CONF).
  std::vector<std::string> Environment() const;

  // Runs `command` with `bash -o pipefail -c` in `working_dir` ("" = the test's), with Environment()
  // and `environment` (NAME=VALUE, replacing inherited ones). Errors: bash cannot start.
  StatusOr<CommandOutput> Run(const std::string& command, std::chrono::milliseconds timeout,
                              const std::vector<std::string>& environment = {},
                              const std::string& working_dir = "") const;

  // A job's state as scontrol shows it ("PENDING", "RUNNING", "COMPLETED", ...), with its restart
  // count; "" when the controller no longer knows the job.
  struct JobInfo {
    std::string state;
    int restarts = 0;
  };
  JobInfo Job(int64_t job_id) const;
  // Ids of the jobs the controller still lists (any state but finished and purged).
  std::vector<int64_t> QueuedJobs() const;

  // The last `lines` lines of each daemon's log, for a failure message.
  std::string LogTails(int lines = 30) const;

 private:
  SlurmCluster() = default;
  Status Launch(int cpus);
  void Stop();

  std::filesystem::path folder_;
  std::string node_;
  std::unique_ptr<Subprocess> munged_;
  std::unique_ptr<Subprocess> slurmctld_;
  std::unique_ptr<Subprocess> slurmd_;
};

}  // namespace rung::deploy_test

// rung-worker: the worker agent of rung. Registers this worker's CPU slots and GPUs with a
// coordinator, leases trials that fit them, runs each as a `rung-train` child process, relays its
// records and metrics, heartbeats its lease, and stops it on CANCEL.
//
//   rung-worker --coordinator HOST:PORT --worker-token-file FILE [--tls-ca FILE] [--cpus N] [--gpus N]
//               [--worker-id ID] [--trainer PATH] [--work-dir DIR] [--heartbeat-seconds S]
//               [--until TIME] [--end-margin S]
//
// SIGTERM, SIGUSR1 or SIGINT: no new trials; every trainer checkpoints and stops, each trial is
// reported PREEMPTED (it resumes from that checkpoint on its next lease), then exit 0. Trainers die
// with the agent if it is killed outright (parent-death signal). Diagnostics go to stderr.
//
// The allocation's end (worker/agent/allocation_end.h): --until TIME, else under SLURM the job's end
// (SLURM_JOB_END_TIME, else `squeue -h -j $SLURM_JOB_ID -o %e`), else none. With an end, the worker
// registers stops_at = end - --end-margin (default --grace-seconds + 60) and at stops_at stops by
// itself exactly as on SIGTERM. An end already past, or within the margin, is bad usage (exit 2); a
// squeue that fails is logged and the worker runs without an end.
//
// Exit codes (docs/cli.md): 0 after a signal, 1 the coordinator refused this worker or an error
// stopped it, 2 bad arguments, 4 a missing or unreadable worker token file, or a token the coordinator
// refuses, 5 it stopped by itself before its allocation's end (a SLURM job then requeues itself).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>

#include "core/common/command_line.h"
#include "core/common/executable_folder.h"
#include "core/common/provenance.h"
#include "core/common/subprocess.h"
#include "core/common/token_file.h"
#include "core/common/trainer_blas_kernel.h"
#include "worker/agent/agent.h"
#include "worker/agent/allocation_end.h"
#include "worker/agent/checkpoint_retention.h"
#include "worker/agent/coordinator_client.h"
#include "worker/agent/log.h"

namespace {

constexpr int kExitOk = 0, kExitRefused = 1, kExitUsage = 2, kExitToken = 4, kExitAllocationEnd = 5;

// rung-train beside this binary (build/bin, or an install's bin/).
std::string DefaultTrainerPath() {
  const std::string folder = rung::ExecutableFolder();
  if (folder.empty()) return "rung-train";
  return (std::filesystem::path(folder) / "rung-train").string();
}

std::chrono::milliseconds Milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000.0)));
}

rung::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream stream(path);
  if (!stream) return rung::Status::InvalidArgument("cannot read " + path);
  std::stringstream text;
  text << stream.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  rung::agent::AgentOptions options;
  options.host = rung::HostName();
  options.worker_id = options.host + "-" + std::to_string(::getpid());
  options.attempt.trainer_path = DefaultTrainerPath();
  options.attempt.work_dir = "rung-work";
  std::string address = "127.0.0.1:50551", token_file, tls_ca_file;
  double heartbeat_seconds = 0, grace_seconds = 120;
  std::string retention = "final", until;
  double end_margin_seconds = 0;

  CLI::App app{
      "rung-worker: leases trials from a rung coordinator and runs each as a rung-train process.\n"
      "SIGTERM/SIGUSR1/SIGINT: trainers checkpoint, trials are reported PREEMPTED, exit 0. The worker stops the "
      "same way by itself --end-margin before the allocation's end (--until; under SLURM, the job's), exit 5.\n"
      "Exit codes (docs/cli.md): 0 after a signal, 1 the coordinator refused this worker or an error stopped it, "
      "2 bad arguments, 4 a worker token file missing or unreadable, or a token the coordinator refuses, "
      "5 that stop before the allocation's end."};
  app.add_option("--coordinator", address, "Coordinator address")->type_name("HOST:PORT")->capture_default_str();
  app.add_option("--worker-token-file", token_file,
                 "File (mode 0600) with the worker token: the coordinator's --worker-token-file")
      ->required()
      ->type_name("FILE");
  app.add_option("--tls-ca", tls_ca_file, "PEM root certificates: connect with TLS (needed off loopback)")
      ->type_name("FILE");
  app.add_option("--cpus", options.cpu_slots, "CPU slots: threads this worker's trainers use in total")
      ->capture_default_str();
  app.add_option("--gpus", options.gpus, "GPUs this worker offers (indices 0..N-1 of CUDA_VISIBLE_DEVICES)")
      ->capture_default_str();
  // The defaults that depend on the machine are described, not printed: --help reads the same everywhere.
  app.add_option("--worker-id", options.worker_id,
                 "Stable id of this worker (letters, digits, - _ .; default: this host's name and the process id)");
  app.add_option("--host", options.host,
                 "Host name or address other workers reach this one at: the rendezvous of a data-parallel trial "
                 "whose rank 0 runs here (default: this host's name)");
  app.add_option("--name", options.name, "Label shown by `rung workers` (e.g. a SLURM job id)");
  app.add_option("--trainer", options.attempt.trainer_path,
                 "The rung-train binary (default: the one beside rung-worker)");
  app.add_option("--work-dir", options.attempt.work_dir,
                 "Folder of the attempts' configs, logs and (unless the coordinator names a shared one) checkpoints")
      ->capture_default_str();
  app.add_option("--heartbeat-seconds", heartbeat_seconds,
                 "Heartbeat interval of each trial (fractions allowed); 0 or longer than the coordinator's: the "
                 "coordinator's")
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true))
      ->capture_default_str();
  app.add_option("--grace-seconds", grace_seconds,
                 "After SIGTERM (cancel, shutdown), how long a trainer may take to checkpoint before SIGKILL")
      ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true))
      ->capture_default_str();
  app.add_option("--checkpoints-after-success", retention,
                 "What stays of a trial's checkpoints once it SUCCEEDED: final (the newest only: what "
                 "train.init.from_trial reads), all, or none")
      ->check(CLI::IsMember({"final", "all", "none"}))
      ->capture_default_str();
  CLI::Option* until_option =
      app.add_option("--until", until,
                     "When this worker's allocation ends: YYYY-MM-DDTHH:MM:SS in local time (as squeue -o %e prints "
                     "it), optionally with Z or +HH:MM, or unix seconds. The worker registers it (less --end-margin) "
                     "and stops by itself then, as on SIGTERM (default under SLURM: the job's end, from "
                     "SLURM_JOB_END_TIME or squeue; elsewhere none)")
          ->type_name("TIME");
  CLI::Option* end_margin_option =
      app.add_option("--end-margin", end_margin_seconds,
                     "How long before the allocation's end the worker stops by itself: time for its trainers to "
                     "checkpoint and for the reports (default: --grace-seconds + 60; at most a year)")
          ->check(rung::PositiveNumberCheck(/*zero_allowed=*/true))
          ->check(CLI::Range(0.0, 365.0 * 24 * 3600))
          ->type_name("SECONDS");
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  options.heartbeat_interval = Milliseconds(heartbeat_seconds);
  options.attempt.stop_grace = Milliseconds(grace_seconds);
  options.end_margin = Milliseconds(end_margin_option->count() > 0 ? end_margin_seconds : grace_seconds + 60);
  options.attempt.retention = rung::agent::ParseRetentionAfterSuccess(retention).value();  // checked by CLI11

  rung::agent::PollReconnectsPromptly();  // before any gRPC object or thread exists
  // The stop signals are taken by sigwait on a thread of their own: block them before any other
  // thread (gRPC's) starts, which inherits the mask. Trainers get an empty mask (trainer_process.h).
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int signal_number : {SIGTERM, SIGUSR1, SIGINT}) sigaddset(&stop_signals, signal_number);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  if (rung::Status valid = rung::agent::ValidateAgentOptions(options); !valid.ok()) {
    std::cerr << "rung-worker: " << valid.message() << "\n";
    return kExitUsage;
  }
  // The allocation's end: --until, else SLURM's (a squeue that fails only leaves it unknown).
  if (until_option->count() > 0) {
    rung::StatusOr<rung::agent::AllocationEnd> end = rung::agent::AllocationEndFromUntil(until);
    if (!end.ok()) {
      std::cerr << "rung-worker: " << end.status().message() << "\n";
      return kExitUsage;
    }
    options.allocation_end = *end;
  } else {
    rung::agent::SlurmAllocationLookup slurm =
        rung::agent::FindSlurmAllocationEnd(rung::agent::ThisProcessEnvironment(), &rung::Subprocess::Run);
    for (const std::string& note : slurm.notes) rung::agent::AgentLog(note);
    options.allocation_end = slurm.end;
  }
  if (options.allocation_end) {
    if (rung::Status ahead = rung::agent::CheckStopsAfter(*options.allocation_end, options.end_margin,
                                                          std::chrono::system_clock::now());
        !ahead.ok()) {
      std::cerr << "rung-worker: " << ahead.message() << "\n";
      return kExitUsage;
    }
  }
  // The work folder must take the attempts' files before anything is leased (else every attempt fails).
  {
    std::error_code error;
    std::filesystem::create_directories(options.attempt.work_dir, error);
    if (error || ::access(options.attempt.work_dir.c_str(), W_OK | X_OK) != 0) {
      std::cerr << "rung-worker: --work-dir " << options.attempt.work_dir << ": cannot create or write it ("
                << (error ? error.message() : std::strerror(errno)) << ")\n";
      return kExitUsage;
    }
  }
  // The kernel the trainer runs on here, for the registration (`rung workers` shows it).
  if (rung::StatusOr<rung::TrainerBlasKernel> kernel = rung::AskTrainerForBlasKernel(options.attempt.trainer_path);
      kernel.ok()) {
    options.blas_kernel = kernel->Short();
  } else {
    rung::agent::AgentLog("the trainer's BLAS kernel is unknown: " + kernel.status().message());
  }
  rung::agent::CoordinatorClientOptions client_options;
  client_options.address = address;
  rung::StatusOr<std::string> token = rung::ReadBearerTokenFile(token_file);
  if (!token.ok()) {
    std::cerr << "rung-worker: " << token.status().message() << "\n";
    return kExitToken;
  }
  client_options.token = token.value();
  if (!tls_ca_file.empty()) {
    rung::StatusOr<std::string> roots = ReadWholeFile(tls_ca_file);
    if (!roots.ok()) {
      std::cerr << "rung-worker: --tls-ca: " << roots.status().message() << "\n";
      return kExitUsage;
    }
    client_options.tls_root_pem = roots.value();
  }
  rung::StatusOr<std::unique_ptr<rung::agent::CoordinatorClient>> client =
      rung::agent::CoordinatorClient::Connect(client_options);
  if (!client.ok()) {
    std::cerr << "rung-worker: " << client.status().message() << "\n";
    return kExitUsage;
  }

  rung::agent::AgentLog("rung-worker " + std::string(rung::BuildCommit()) + " as " + options.worker_id + " on " +
                        options.host + ": coordinator " + address + (tls_ca_file.empty() ? " (plaintext)" : " (TLS)") +
                        ", trainer " + options.attempt.trainer_path +
                        (options.blas_kernel.empty() ? "" : " (BLAS kernel " + options.blas_kernel + ")") +
                        ", work dir " + options.attempt.work_dir +
                        (options.allocation_end
                             ? "; " + rung::agent::DescribeStop(*options.allocation_end, options.end_margin)
                             : std::string()));
  rung::agent::Agent agent(client->get(), options);
  std::thread signals([&agent, stop_signals] {
    for (bool first = true;; first = false) {
      int signal_number = 0;
      if (sigwait(&stop_signals, &signal_number) != 0) return;
      if (first) {
        agent.Shutdown(sigabbrev_np(signal_number) != nullptr ? std::string("SIG") + sigabbrev_np(signal_number)
                                                              : strsignal(signal_number));
      } else {
        rung::agent::AgentLog(std::string(strsignal(signal_number)) + " again: already shutting down");
      }
    }
  });
  signals.detach();  // blocked in sigwait until the process exits

  const rung::Status status = agent.Run();
  if (!status.ok()) {
    rung::agent::AgentLog(status.message());
    const bool token = status.code() == rung::StatusCode::kUnauthenticated ||
                       status.code() == rung::StatusCode::kPermissionDenied;
    return token ? kExitToken : kExitRefused;
  }
  return agent.StoppedForAllocationEnd() ? kExitAllocationEnd : kExitOk;
}

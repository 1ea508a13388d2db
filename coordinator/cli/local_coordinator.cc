// coordinator/cli/local_coordinator.cc
#include "coordinator/cli/local_coordinator.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "coordinator/cli/command_support.h"

namespace rung::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kReadStep{200};
constexpr int kReadSteps = 100;  // 20 s: the dashboard's wait

// What was appended to `path` after byte `offset`, without its trailing newline.
std::string AppendedSince(const std::string& path, std::uintmax_t offset) {
  std::ifstream log(path);
  log.seekg(static_cast<std::streamoff>(offset));
  std::stringstream text;
  text << log.rdbuf();
  std::string appended = text.str();
  while (!appended.empty() && appended.back() == '\n') appended.pop_back();
  return appended;
}

}  // namespace

std::string RunDirectory::Path(const std::string& name) const { return (fs::path(dir) / name).string(); }

std::chrono::seconds CoordinatorStartBudget(std::uintmax_t database_bytes) {
  constexpr std::uintmax_t kGiB = std::uintmax_t{1} << 30;
  return std::chrono::seconds(20 + 60 * ((database_bytes + kGiB - 1) / kGiB));
}

std::uintmax_t DatabaseBytes(const RunDirectory& run) {
  std::error_code error;
  const std::uintmax_t bytes = fs::file_size(run.database(), error);
  return error ? 0 : bytes;
}

StatusOr<LocalCoordinator> StartLocalCoordinator(const RunDirectory& run, const std::string& listen,
                                                 double lease_seconds) {
  std::error_code error;
  const std::uintmax_t log_size = fs::exists(run.log(), error) ? fs::file_size(run.log(), error) : 0;
  const std::chrono::seconds budget = CoordinatorStartBudget(DatabaseBytes(run));
  SubprocessOptions options;
  options.argv = {ExecutableDirectory() + "/rung-coordinator",
                  "--listen", listen,
                  "--db", run.database(),
                  "--artifact-root", run.artifacts(),
                  "--user-token-file", run.user_token(),
                  "--worker-token-file", run.worker_token(),
                  "--viewer-token-file", run.viewer_token(),
                  "--lease-seconds", std::to_string(lease_seconds)};
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::AppendTo(run.log());
  options.die_with_parent = true;
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> process, Subprocess::Start(options));
  LocalCoordinator coordinator;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (coordinator.address.empty() && std::chrono::steady_clock::now() < deadline) {
    std::optional<std::string> line = process->ReadLine(Stream::kStdout, kReadStep);
    if (line && line->rfind("listening on ", 0) == 0) coordinator.address = line->substr(13);
    if (coordinator.address.empty() && !process->Running()) {
      const std::string said = AppendedSince(run.log(), log_size);
      return Status::FailedPrecondition("the coordinator stopped before serving" +
                                        (said.empty() ? std::string(" (see ") + run.log() + ")" : ":\n" + said));
    }
  }
  if (coordinator.address.empty()) {
    return Status::Unavailable("the coordinator did not start serving within " + std::to_string(budget.count()) +
                               " s (it checks its database first); see " + run.log());
  }
  coordinator.process = std::move(process);
  return coordinator;
}

StatusOr<LocalDashboard> StartLocalDashboard(const std::string& address, const std::string& token_file,
                                             const std::string& listen, const std::string& log_path) {
  std::error_code error;
  const std::uintmax_t log_size = fs::exists(log_path, error) ? fs::file_size(log_path, error) : 0;
  SubprocessOptions options;
  options.argv = {ExecutableDirectory() + "/rung", "dashboard", "--coordinator", address, "--token-file", token_file,
                  "--listen", listen};
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::AppendTo(log_path);
  options.die_with_parent = true;
  RUNG_ASSIGN_OR_RETURN(std::unique_ptr<Subprocess> process, Subprocess::Start(options));
  constexpr char kPrefix[] = "rung dashboard: ";
  LocalDashboard dashboard;
  for (int attempt = 0; attempt < kReadSteps && dashboard.url.empty(); ++attempt) {
    std::optional<std::string> line = process->ReadLine(Stream::kStdout, kReadStep);
    if (line && line->rfind(kPrefix, 0) == 0) dashboard.url = line->substr(sizeof(kPrefix) - 1);
    if (dashboard.url.empty() && !process->Running()) {
      const std::string said = AppendedSince(log_path, log_size);
      return Status::FailedPrecondition("the dashboard stopped before serving" +
                                        (said.empty() ? std::string(" (see ") + log_path + ")" : ":\n" + said));
    }
  }
  if (dashboard.url.empty()) return Status::Unavailable("the dashboard printed no URL within 20 s; see " + log_path);
  dashboard.process = std::move(process);
  return dashboard;
}

int RunCpusPerWorker(int workers, int cpus_per_worker_option) {
  if (cpus_per_worker_option > 0) return cpus_per_worker_option;
  const int cores = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  return std::max(1, cores / std::max(1, workers));
}

}  // namespace rung::cli

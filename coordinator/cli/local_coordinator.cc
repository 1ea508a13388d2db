// coordinator/cli/local_coordinator.cc
#include "coordinator/cli/local_coordinator.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

namespace rung::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::milliseconds kReadStep{200};
constexpr int kReadSteps = 100;  // 20 s

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

std::string ExecutableDirectory() {
  std::error_code error;
  auto path = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : path.parent_path().string();
}

StatusOr<LocalCoordinator> StartLocalCoordinator(const RunDirectory& run, const std::string& listen,
                                                 double lease_seconds) {
  std::error_code error;
  const std::uintmax_t log_size = fs::exists(run.log(), error) ? fs::file_size(run.log(), error) : 0;
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
  for (int attempt = 0; attempt < kReadSteps && coordinator.address.empty(); ++attempt) {
    std::optional<std::string> line = process->ReadLine(Stream::kStdout, kReadStep);
    if (line && line->rfind("listening on ", 0) == 0) coordinator.address = line->substr(13);
    if (coordinator.address.empty() && !process->Running()) {
      const std::string said = AppendedSince(run.log(), log_size);
      return Status::FailedPrecondition("the coordinator stopped before serving" +
                                        (said.empty() ? std::string(" (see ") + run.log() + ")" : ":\n" + said));
    }
  }
  if (coordinator.address.empty()) {
    return Status::Unavailable("the coordinator did not start serving within 20 s; see " + run.log());
  }
  coordinator.process = std::move(process);
  return coordinator;
}

}  // namespace rung::cli

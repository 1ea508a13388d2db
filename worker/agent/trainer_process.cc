// worker/agent/trainer_process.cc
#include "worker/agent/trainer_process.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace rung::agent {
namespace {

std::string ErrnoText(int error) { return std::strerror(error); }

// Splits `buffer` after every '\n' into `lines`; keeps the unterminated rest in `buffer`.
void TakeLines(std::string* buffer, std::vector<std::string>* lines) {
  size_t start = 0;
  for (size_t newline; (newline = buffer->find('\n', start)) != std::string::npos; start = newline + 1) {
    size_t end = newline;
    if (end > start && (*buffer)[end - 1] == '\r') --end;
    lines->emplace_back(*buffer, start, end - start);
  }
  buffer->erase(0, start);
}

// CUDA_VISIBLE_DEVICES for the trial's GPU indices, which count the agent's visible devices.
std::string VisibleDevices(const std::vector<int>& gpus) {
  std::vector<std::string> parent;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr && *visible != '\0') {
    std::stringstream list(visible);
    for (std::string item; std::getline(list, item, ',');) parent.push_back(item);
  }
  std::string devices;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const int index = gpus[i];
    if (i > 0) devices += ',';
    devices += index >= 0 && static_cast<size_t>(index) < parent.size() ? parent[index] : std::to_string(index);
  }
  return devices;
}

}  // namespace

StatusOr<std::unique_ptr<TrainerProcess>> TrainerProcess::Start(const TrainerLaunch& launch) {
  if (launch.trainer_path.empty()) return Status::InvalidArgument("no trainer binary given");
  if (launch.stderr_path.empty()) return Status::InvalidArgument("no stderr file given for the trainer");
  if (launch.threads < 1) return Status::InvalidArgument("a trainer needs at least one thread");

  SubprocessOptions options;
  // A bare name is a file in the current folder, as execve takes it (no PATH lookup).
  const bool bare_name = launch.trainer_path.find('/') == std::string::npos;
  options.argv = {bare_name ? "./" + launch.trainer_path : launch.trainer_path,
                  "--config",         launch.config_path,
                  "--checkpoint-dir", launch.checkpoint_dir,
                  "--resume",         launch.resume.empty() ? "never" : launch.resume,
                  "--threads",        std::to_string(launch.threads)};
  options.argv.insert(options.argv.end(), launch.extra_arguments.begin(), launch.extra_arguments.end());
  options.environment = {"OMP_NUM_THREADS=" + std::to_string(launch.threads),
                         "CUDA_VISIBLE_DEVICES=" + VisibleDevices(launch.gpus)};
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::AppendTo(launch.stderr_path, 0644);
  options.new_process_group = true;
  options.die_with_parent = true;

  // The agent follows the stderr file from its current end: what this trainer appends.
  auto trainer = std::unique_ptr<TrainerProcess>(new TrainerProcess());
  trainer->stderr_fd_ = ::open(launch.stderr_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (trainer->stderr_fd_ < 0) {
    return Status::FailedPrecondition("cannot open " + launch.stderr_path + " for the trainer's stderr: " +
                                      ErrnoText(errno));
  }
  if (::lseek(trainer->stderr_fd_, 0, SEEK_END) < 0) {
    return Status::FailedPrecondition("cannot read " + launch.stderr_path + ": " + ErrnoText(errno));
  }
  RUNG_ASSIGN_OR_RETURN(trainer->process_, Subprocess::Start(options));
  return trainer;
}

TrainerProcess::~TrainerProcess() {
  process_.reset();  // kills and reaps a trainer still running
  if (stderr_fd_ >= 0) ::close(stderr_fd_);
}

bool TrainerProcess::ReadOutput(std::chrono::milliseconds timeout, TrainerOutput* output) {
  std::chrono::milliseconds wait = timeout;  // for the first line; the rest are those already there
  while (std::optional<std::string> line = process_->ReadLine(Stream::kStdout, wait)) {
    output->stdout_lines.push_back(std::move(*line));
    wait = std::chrono::milliseconds(0);
  }
  const bool ended = process_->OutputEnded(Stream::kStdout);
  ReadStderr(/*flush_partial=*/ended, output);
  return !ended;
}

void TrainerProcess::ReadStderr(bool flush_partial, TrainerOutput* output) {
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(stderr_fd_, buffer, sizeof(buffer));
    if (got > 0) {
      stderr_partial_.append(buffer, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    break;
  }
  TakeLines(&stderr_partial_, &output->stderr_lines);
  if (flush_partial && !stderr_partial_.empty()) {
    output->stderr_lines.push_back(stderr_partial_);
    stderr_partial_.clear();
  }
}

Status TrainerProcess::Signal(int signal_number) {
  return process_->Signal(signal_number).WithContext("the trainer");
}

std::optional<TrainerExit> TrainerProcess::Wait(std::chrono::milliseconds timeout) {
  StatusOr<ExitStatus> exit = process_->Wait(timeout);
  if (!exit.ok()) return std::nullopt;  // still running (or lost, which reads the same)
  return TrainerExit{exit->code, exit->signal};
}

}  // namespace rung::agent

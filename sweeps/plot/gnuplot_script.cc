#include "sweeps/plot/gnuplot_script.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `gnuplot script` with stderr into `log`; its exit status, or a Status when it cannot start.
StatusOr<int> RunGnuplot(const std::string& gnuplot, const fs::path& script, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);  // less the umask
  std::string script_path = script.string();
  std::vector<char*> argv = {const_cast<char*>(gnuplot.c_str()), const_cast<char*>(script_path.c_str()), nullptr};
  pid_t pid = 0;
  int spawned = posix_spawnp(&pid, gnuplot.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return Status::FailedPrecondition("cannot run " + gnuplot + ": " + std::strerror(spawned) +
                                      " (install gnuplot-nox: deploy/install-deps.sh)");
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return Status::Internal(std::string("waiting for gnuplot: ") + std::strerror(errno));
  }
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  return 128 + (WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0);
}

}  // namespace

std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

std::string DoubleQuote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') quoted += '\\';
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    quoted += c;
  }
  return quoted + "\"";
}

std::string EnhancedLiteral(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c != 0 && std::strchr("_^{}@&~\\", c)) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string SvgTerminal(int width, int height) {
  return "set terminal svg size " + std::to_string(width) + "," + std::to_string(height) +
         " dynamic enhanced font 'DejaVu Sans,16' background '#ffffff'";
}

std::string PngTerminal(int width, int height) {
  return "set terminal pngcairo size " + std::to_string(width) + "," + std::to_string(height) +
         " enhanced font 'DejaVu Sans,13' background '#ffffff'";
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::InvalidArgument("cannot write " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

Status MakeOutputFolder(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("no output folder given");
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) {
    return Status::InvalidArgument("cannot create output folder " + dir + ": " + error.message());
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> RenderGnuplot(const std::string& gnuplot, const std::string& dir,
                                                 const std::string& script_name, const std::string& script,
                                                 const std::vector<std::string>& outputs) {
  const fs::path folder(dir);
  const fs::path script_path = folder / script_name;
  RUNG_RETURN_IF_ERROR(WriteTextFile(script_path.string(), script));
  RUNG_ASSIGN_OR_RETURN(const int exit_code, RunGnuplot(gnuplot, script_path, folder / "gnuplot.log"));
  if (exit_code != 0) {
    return Status::Internal("gnuplot failed (exit " + std::to_string(exit_code) + ") on " +
                            script_path.string() + ":\n" + ReadFile(folder / "gnuplot.log"));
  }
  std::vector<std::string> files;
  for (const std::string& name : outputs) {
    fs::path file = folder / name;
    std::error_code error;
    if (!fs::exists(file, error) || fs::file_size(file, error) == 0) {
      return Status::Internal("gnuplot did not write " + file.string() + ":\n" + ReadFile(folder / "gnuplot.log"));
    }
    files.push_back(file.string());
  }
  return files;
}

}  // namespace rung::plot

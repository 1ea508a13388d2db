// tests/cli/cli_process.cc
#include "tests/cli/cli_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace rung::cli::testing {
namespace {

// An unlinked temporary file, open for reading and writing.
int TemporaryFile() {
  char pattern[] = "/tmp/rung-cli-test-XXXXXX";
  const int fd = mkstemp(pattern);
  if (fd >= 0) unlink(pattern);
  return fd;
}

std::string ReadAll(int fd) {
  std::string text;
  lseek(fd, 0, SEEK_SET);
  char buffer[65536];
  ssize_t got;
  while ((got = read(fd, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(got));
  return text;
}

}  // namespace

CommandResult RunProcess(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                         const std::string& stdin_text, const std::string& cwd, std::chrono::milliseconds limit) {
  CommandResult result;
  const int in = TemporaryFile(), out = TemporaryFile(), err = TemporaryFile();
  if (in < 0 || out < 0 || err < 0 || argv.empty()) {
    for (int fd : {in, out, err}) {
      if (fd >= 0) close(fd);
    }
    result.err = "cannot create temporary files";
    return result;
  }
  if (write(in, stdin_text.data(), stdin_text.size()) != static_cast<ssize_t>(stdin_text.size())) {
    result.err = "cannot write stdin";
  }
  lseek(in, 0, SEEK_SET);
  std::vector<char*> args, env;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  for (const std::string& entry : environment) env.push_back(const_cast<char*>(entry.c_str()));
  env.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    execve(args[0], args.data(), env.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (true) {
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        result.timed_out = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
  }
  result.out = ReadAll(out);
  result.err += ReadAll(err);
  for (int fd : {in, out, err}) close(fd);
  return result;
}

std::vector<std::string> EnvironmentWithout(const std::vector<std::string>& prefixes) {
  std::vector<std::string> kept;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    bool drop = false;
    for (const std::string& prefix : prefixes) drop = drop || text.rfind(prefix, 0) == 0;
    if (!drop) kept.push_back(text);
  }
  return kept;
}

}  // namespace rung::cli::testing

// tests/deploy/network_hosts.cc
#include "tests/deploy/network_hosts.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace rung::deploy_test {
namespace {

namespace fs = std::filesystem;

// Runs a command (no shell) and waits for it; its output on failure.
Status Command(const std::vector<std::string>& argv) {
  SubprocessOptions options;
  options.argv = argv;
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::ToStdout();
  RUNG_ASSIGN_OR_RETURN(SubprocessResult result, Subprocess::Run(options, std::chrono::seconds(30)));
  if (result.exit.Succeeded()) return Status::Ok();
  std::string line;
  for (const std::string& word : argv) line += (line.empty() ? "" : " ") + word;
  return Status::FailedPrecondition("`" + line + "` failed (" + result.exit.Describe() + "): " + result.stdout_text);
}

// `text` in single quotes for /bin/sh.
std::string Quoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

StatusOr<std::unique_ptr<NetworkHosts>> NetworkHosts::Start(const std::vector<HostSpec>& hosts) {
  if (::geteuid() != 0) return Status::FailedPrecondition("network namespaces need root here");
  for (const char* program : {"/usr/sbin/ip", "/usr/bin/unshare", "/usr/bin/hostname"}) {
    if (::access(program, X_OK) != 0) {
      return Status::FailedPrecondition(std::string(program) + " is missing (iproute2, util-linux, hostname)");
    }
  }
  std::unique_ptr<NetworkHosts> made(new NetworkHosts());
  made->prefix_ = "rg" + std::to_string(::getpid() % 100000);
  if (Status status = made->Make(hosts); !status.ok()) {
    made->Remove();
    return Status::FailedPrecondition("network namespaces cannot be made here: " + status.message());
  }
  return made;
}

std::string NetworkHosts::Namespace(const std::string& host) const { return prefix_ + "-" + host; }

std::string NetworkHosts::SwitchPort(const std::string& host) const {
  for (size_t index = 0; index < hosts_.size(); ++index) {
    if (hosts_[index] == host) return "p" + prefix_.substr(2) + "-" + std::to_string(index);
  }
  return "";
}

std::string NetworkHosts::Address(const std::string& host) const {
  for (size_t index = 0; index < hosts_.size(); ++index) {
    if (hosts_[index] == host) return "10.201.0." + std::to_string(index + 1);
  }
  return "";
}

Status NetworkHosts::Make(const std::vector<HostSpec>& hosts) {
  if (!fs::exists("/etc/netns")) etc_folders_.push_back("/etc/netns");  // removed last, if still empty
  const std::string switch_namespace = prefix_ + "-switch";
  RUNG_RETURN_IF_ERROR(Command({"ip", "netns", "add", switch_namespace}));
  namespaces_.push_back(switch_namespace);
  RUNG_RETURN_IF_ERROR(Command({"ip", "-n", switch_namespace, "link", "add", "br0", "type", "bridge"}));
  RUNG_RETURN_IF_ERROR(Command({"ip", "-n", switch_namespace, "link", "set", "br0", "up"}));

  std::ostringstream etc_hosts;
  etc_hosts << "127.0.0.1 localhost\n";
  for (const HostSpec& host : hosts) {
    hosts_.push_back(host.name);
    etc_hosts << Address(host.name) << " " << host.name;
    for (const std::string& alias : host.aliases) etc_hosts << " " << alias;
    etc_hosts << "\n";
  }
  for (const HostSpec& host : hosts) {
    const std::string name_space = Namespace(host.name);
    RUNG_RETURN_IF_ERROR(Command({"ip", "netns", "add", name_space}));
    namespaces_.push_back(name_space);
    const std::string port = SwitchPort(host.name);
    const std::string end = "h" + port.substr(1);
    RUNG_RETURN_IF_ERROR(Command({"ip", "link", "add", end, "type", "veth", "peer", "name", port}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "link", "set", end, "netns", name_space}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "link", "set", port, "netns", switch_namespace}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "-n", name_space, "link", "set", end, "name", "eth0"}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "-n", name_space, "addr", "add", Address(host.name) + "/24", "dev", "eth0"}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "-n", name_space, "link", "set", "eth0", "up"}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "-n", name_space, "link", "set", "lo", "up"}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "-n", switch_namespace, "link", "set", port, "master", "br0"}));
    RUNG_RETURN_IF_ERROR(Command({"ip", "-n", switch_namespace, "link", "set", port, "up"}));
    const fs::path etc = fs::path("/etc/netns") / name_space;
    std::error_code error;
    fs::create_directories(etc, error);
    if (error) return Status::FailedPrecondition("cannot make " + etc.string() + ": " + error.message());
    etc_folders_.push_back(etc.string());
    std::ofstream(etc / "hosts") << etc_hosts.str();
  }
  return Status::Ok();
}

NetworkHosts::~NetworkHosts() { Remove(); }

void NetworkHosts::Remove() {
  for (const std::string& name_space : namespaces_) {
    SubprocessOptions pids;
    pids.argv = {"ip", "netns", "pids", name_space};
    pids.stdout_to = Redirect::Pipe();
    StatusOr<SubprocessResult> listed = Subprocess::Run(pids, std::chrono::seconds(10));
    if (listed.ok()) {
      std::istringstream lines(listed->stdout_text);
      for (std::string pid; std::getline(lines, pid);) {
        if (!pid.empty()) ::kill(std::stoi(pid), SIGKILL);
      }
    }
  }
  for (auto name_space = namespaces_.rbegin(); name_space != namespaces_.rend(); ++name_space) {
    Command({"ip", "netns", "del", *name_space}).IgnoreError();
  }
  namespaces_.clear();
  for (auto folder = etc_folders_.rbegin(); folder != etc_folders_.rend(); ++folder) {
    std::error_code error;
    if (*folder == "/etc/netns") fs::remove(*folder, error);  // only when empty: others may use it
    else fs::remove_all(*folder, error);
  }
  etc_folders_.clear();
}

std::vector<std::string> NetworkHosts::SpawnArgv(const std::string& host, const std::vector<HostMount>& mounts,
                                                 const std::string& script) const {
  std::string prelude = "set -e\nhostname " + Quoted(host) + "\n";
  for (const HostMount& mount : mounts) {
    prelude += "mkdir -p " + Quoted(mount.target) + "\n";
    prelude += mount.source.empty() ? "mount -t tmpfs rung-hidden " + Quoted(mount.target) + "\n"
                                    : "mount --bind " + Quoted(mount.source) + " " + Quoted(mount.target) + "\n";
  }
  return {"ip",     "netns",   "exec",          Namespace(host), "unshare", "--mount", "--uts",
          "--propagation", "private", "/bin/sh", "-c",             prelude + "set +e\n" + script};
}

StatusOr<std::unique_ptr<Subprocess>> NetworkHosts::Spawn(const std::string& host, const std::vector<HostMount>& mounts,
                                                         const std::string& script, const std::string& log,
                                                         const std::vector<std::string>& environment) const {
  SubprocessOptions options;
  options.argv = SpawnArgv(host, mounts, script);
  options.environment = environment;
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::AppendTo(log);
  options.stderr_to = Redirect::ToStdout();
  options.new_process_group = true;
  return Subprocess::Start(options);
}

StatusOr<SubprocessResult> NetworkHosts::Run(const std::string& host, const std::vector<HostMount>& mounts,
                                             const std::string& script, std::chrono::milliseconds timeout,
                                             const std::vector<std::string>& environment) const {
  SubprocessOptions options;
  options.argv = SpawnArgv(host, mounts, script);
  options.environment = environment;
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Pipe();
  options.stderr_to = Redirect::ToStdout();
  options.new_process_group = true;
  return Subprocess::Run(options, timeout);
}

Status NetworkHosts::Cut(const std::string& host) const {
  return Command({"ip", "-n", prefix_ + "-switch", "link", "set", SwitchPort(host), "down"});
}

Status NetworkHosts::Restore(const std::string& host) const {
  return Command({"ip", "-n", prefix_ + "-switch", "link", "set", SwitchPort(host), "up"});
}

}  // namespace rung::deploy_test

// tests/deploy/network_hosts.h
//
// Several hosts on one machine, for the tests: each host a network namespace of its own (`ip netns`)
// with one interface, eth0, on a private /24, all joined by a bridge that lives in a namespace of its
// own (the switch); and, for each process a host runs, a mount namespace and a host name of its own.
//   - No address exists outside the namespaces this object creates: the root namespace gets no
//     interface, address or route, and the hosts have no default route, so nothing they send can
//     leave the bridge.
//   - Each host resolves names through an /etc/hosts of its own (/etc/netns/<namespace>/hosts, which
//     `ip netns exec` mounts over /etc/hosts): every host's name and its aliases.
//   - A process runs as `ip netns exec NS unshare --mount --uts --propagation private sh -c ...`: the
//     host's name is set, the host's mounts (a folder of the test bind-mounted over a path, or a
//     tmpfs hiding one) are made, then the command is exec'd. What one host mounts no other sees.
//   - Cut(host) / Restore(host) take the host's port on the switch down and up: the host is cut off
//     from every other host while its processes run on.
// Start() says why hosts cannot be made here (not root, no iproute2 or unshare, a namespace or link
// refused), for the caller to skip with that message. The destructor removes every namespace (and
// with them every interface) and every /etc/netns folder it made, also after a failed test; it kills
// what still runs in the namespaces first.
//
// Example:
//   StatusOr<std::unique_ptr<NetworkHosts>> hosts =
//       NetworkHosts::Start({{"coordinator", {"coord.example.org"}}, {"worker-1", {}}});
//   if (!hosts.ok()) GTEST_SKIP() << hosts.status().message();
//   std::unique_ptr<Subprocess> server = (*hosts)->Spawn("coordinator", {{"/srv/shared", "/tmp/t/nfs"}},
//                                                         "exec rung-coordinator ...", "coordinator.log");
//
// Thread safety: one thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/common/subprocess.h"

namespace rung::deploy_test {

// A host to make: its name (also its host name inside its processes) and other names it answers to.
struct HostSpec {
  std::string name;
  std::vector<std::string> aliases;
};

// One mount a process of a host sees: `source` (a folder of the test) bind-mounted at `target`, or,
// with an empty source, a fresh tmpfs at `target` (hiding what the machine has there).
struct HostMount {
  std::string target;
  std::string source;
};

class NetworkHosts {
 public:
  // Makes the switch and one namespace per host (addresses 10.201.0.1, .2, ... in the order given).
  // FAILED_PRECONDITION with the reason when namespaces cannot be made here.
  static StatusOr<std::unique_ptr<NetworkHosts>> Start(const std::vector<HostSpec>& hosts);
  ~NetworkHosts();
  NetworkHosts(const NetworkHosts&) = delete;
  NetworkHosts& operator=(const NetworkHosts&) = delete;

  // The host's address on the bridge. REQUIRES: a host Start() made.
  std::string Address(const std::string& host) const;

  // Starts `script` (run by /bin/sh after the mounts) on `host`, its stdout and stderr appended to
  // `log`, in a process group of its own. `environment`: NAME=VALUE entries it gets besides the test's.
  StatusOr<std::unique_ptr<Subprocess>> Spawn(const std::string& host, const std::vector<HostMount>& mounts,
                                              const std::string& script, const std::string& log,
                                              const std::vector<std::string>& environment = {}) const;
  // Runs `script` on `host` as Spawn does and waits up to `timeout`: its output (stdout and stderr)
  // and exit status.
  StatusOr<SubprocessResult> Run(const std::string& host, const std::vector<HostMount>& mounts,
                                 const std::string& script, std::chrono::milliseconds timeout,
                                 const std::vector<std::string>& environment = {}) const;

  // Takes the host's link to the switch down (Cut) or up again (Restore).
  Status Cut(const std::string& host) const;
  Status Restore(const std::string& host) const;

 private:
  NetworkHosts() = default;
  Status Make(const std::vector<HostSpec>& hosts);
  void Remove();
  std::string Namespace(const std::string& host) const;
  std::string SwitchPort(const std::string& host) const;
  std::vector<std::string> SpawnArgv(const std::string& host, const std::vector<HostMount>& mounts,
                                     const std::string& script) const;

  std::string prefix_;  // of every namespace and interface this object makes: unique per process
  std::vector<std::string> hosts_;
  std::vector<std::string> namespaces_;  // made so far, the switch's first
  std::vector<std::string> etc_folders_;  // /etc/netns/<namespace> made so far (and /etc/netns, when made)
};

}  // namespace rung::deploy_test

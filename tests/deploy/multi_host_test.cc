// tests/deploy/multi_host_test.cc
//
// Several hosts on one machine (network_hosts.h): network namespaces joined by a bridge, each host a
// name, an /etc/hosts and mounts of its own. What is checked here is the harness's own contract: a
// host reaches another by name over the bridge, a host has no route but the bridge's subnet, a cut
// link cuts a host off until it is restored, and what one host mounts no other host sees. Where
// namespaces cannot be made (not root, no iproute2) the tests are skipped and say why.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/deploy/network_hosts.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::deploy_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::seconds;

// A one-connection TCP server on port 7070 that answers "hello from <its host name>", and a client.
constexpr char kServe[] =
    "exec python3 -c 'import socket\n"
    "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind((\"0.0.0.0\", 7070)); s.listen(4)\n"
    "while True:\n"
    "    c, _ = s.accept(); c.sendall((\"hello from \" + socket.gethostname()).encode()); c.close()'";

std::string Ask(const std::string& name) {
  return "exec python3 -c 'import socket\n"
         "s = socket.create_connection((\"" + name + "\", 7070), timeout=3)\n"
         "print(s.recv(100).decode())'";
}

TEST(NetworkHostsTest, HostsReachEachOtherByNameAndNothingElseAndACutLinkCutsOneOff) {
  agent::testing::ScratchDir scratch;
  StatusOr<std::unique_ptr<NetworkHosts>> hosts =
      NetworkHosts::Start({{"server", {"server.rung.test"}}, {"client", {}}});
  if (!hosts.ok()) GTEST_SKIP() << "no network namespaces here: " << hosts.status().message();
  StatusOr<std::unique_ptr<Subprocess>> server =
      (*hosts)->Spawn("server", {}, kServe, scratch.Path("server.log"));
  ASSERT_TRUE(server.ok()) << server.status().ToString();

  SubprocessResult answer;
  for (int tries = 0; tries < 50; ++tries) {  // until the server listens
    StatusOr<SubprocessResult> asked = (*hosts)->Run("client", {}, Ask("server.rung.test"), seconds(10));
    ASSERT_TRUE(asked.ok()) << asked.status().ToString();
    answer = *asked;
    if (answer.exit.Succeeded()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(answer.stdout_text, "hello from server\n") << answer.stdout_text
                                                         << agent::testing::FileText(scratch.Path("server.log"));

  // A host's only route is the bridge's subnet: nothing it sends can leave the bridge.
  StatusOr<SubprocessResult> routes = (*hosts)->Run("client", {}, "ip -4 route", seconds(10));
  ASSERT_TRUE(routes.ok());
  EXPECT_EQ(routes->stdout_text, "10.201.0.0/24 dev eth0 proto kernel scope link src " +
                                     (*hosts)->Address("client") + " \n");

  ASSERT_TRUE((*hosts)->Cut("client").ok());
  StatusOr<SubprocessResult> cut = (*hosts)->Run("client", {}, Ask("server"), seconds(10));
  ASSERT_TRUE(cut.ok());
  EXPECT_FALSE(cut->exit.Succeeded()) << "a cut-off host reached another: " << cut->stdout_text;
  ASSERT_TRUE((*hosts)->Restore("client").ok());
  StatusOr<SubprocessResult> restored = (*hosts)->Run("client", {}, Ask("server"), seconds(10));
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(restored->stdout_text, "hello from server\n");
}

TEST(NetworkHostsTest, WhatOneHostMountsNoOtherSees) {
  agent::testing::ScratchDir scratch;
  StatusOr<std::unique_ptr<NetworkHosts>> hosts = NetworkHosts::Start({{"one", {}}, {"two", {}}});
  if (!hosts.ok()) GTEST_SKIP() << "no network namespaces here: " << hosts.status().message();
  fs::create_directories(scratch.Path("export"));
  std::ofstream(scratch.Path("export/marker")) << "shared";
  const std::string target = scratch.Path("mounted");
  fs::create_directories(target);
  StatusOr<SubprocessResult> one =
      (*hosts)->Run("one", {{target, scratch.Path("export")}}, "cat " + target + "/marker", seconds(10));
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->stdout_text, "shared");
  StatusOr<SubprocessResult> two = (*hosts)->Run("two", {}, "ls " + target, seconds(10));
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->stdout_text, "") << "host two sees host one's mount";
  EXPECT_FALSE(fs::exists(target + "/marker")) << "the machine sees host one's mount";
  StatusOr<SubprocessResult> hidden =
      (*hosts)->Run("two", {{scratch.Path("export"), ""}}, "ls " + scratch.Path("export"), seconds(10));
  ASSERT_TRUE(hidden.ok());
  EXPECT_EQ(hidden->stdout_text, "") << "a tmpfs mount did not hide the folder";
}

}  // namespace
}  // namespace rung::deploy_test

// tests/deploy/multi_host_test.cc
//
// Several hosts on one machine (network_hosts.h): network namespaces joined by a bridge, each host a
// name, an /etc/hosts and mounts of its own. NetworkHostsTest checks the harness's own contract: a
// host reaches another by name over the bridge, a host has no route but the bridge's subnet, a cut
// link cuts a host off until it is restored, and what one host mounts no other host sees.
//
// MultiHostTest runs deploy/README.md's "Several hosts by hand" blocks (marked
// `<!-- multi-host-test: NAME -->`) as written, each on its host: the certificate (made where the
// test runs, as an administrator would), the coordinator on its host (TLS on its namespace address,
// its database on its own disk), four workers dialling it by name (one of them without the shared
// artifact root mounted), and the sweep submitted from a host. Each host sees /etc/rung,
// /var/lib/rung and /var/lib/rung-worker of its own and /srv/rung/artifacts only where it is
// bind-mounted, as an NFS mount would be; the binaries are the test build's `make install`. Then:
//   - plaintext from a worker host is refused;
//   - the worker without the artifact mount says so at start and never leases;
//   - the data-parallel trials run as gangs across two worker hosts (Gloo over eth0, the
//     namespace's only interface), rank 1 meeting rank 0 by its host's name;
//   - a worker's link is cut for longer than its lease while it trains a trial: the attempt goes
//     STALE, the trial resumes on another host from a checkpoint, and once the link is back the
//     cut-off worker's reports of that attempt are refused (it stays STALE);
//   - every trial SUCCEEDS with one train_loss value per logged step.
// It prints the gangs' tokens/s across two hosts against the one-rank trials' on one. Where
// namespaces cannot be made (not root, no iproute2) the tests are skipped and say why.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <vector>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/token_file.h"
#include "tests/deploy/network_hosts.h"
#include "tests/deploy/readme_blocks.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::deploy_test {
namespace {

namespace fs = std::filesystem;
using agent::testing::FileText;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

const fs::path kSource = RUNG_SOURCE_DIR;
constexpr int64_t kSteps = 600, kLogEvery = 5, kCheckpointEvery = 20;  // sweeps/examples/multi-host-check.yaml
constexpr char kCoordinatorName[] = "coord.example.org";
const std::vector<std::string> kWorkers = {"worker-1", "worker-2", "worker-3"};
constexpr char kUnmountedWorker[] = "worker-4";
// The machine's folders the hosts mount over (deploy/README.md's paths, and where `make install`
// puts rung): created for the mounts where missing, removed again at the end.
const std::vector<std::string> kSystemFolders = {"/etc/rung", "/var/lib/rung", "/var/lib/rung-worker",
                                                 "/srv/rung/artifacts", "/usr/local/bin", "/usr/local/share/rung"};



double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

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

class MultiHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<HostSpec> specs = {{"coordinator", {kCoordinatorName}}};
    for (const std::string& worker : kWorkers) specs.push_back({worker, {}});
    specs.push_back({kUnmountedWorker, {}});
    StatusOr<std::unique_ptr<NetworkHosts>> hosts = NetworkHosts::Start(specs);
    if (!hosts.ok()) GTEST_SKIP() << "no network namespaces here: " << hosts.status().message();
    hosts_ = std::move(*hosts);
    for (const std::string& folder : kSystemFolders) {
      for (fs::path path = folder; path != path.root_path() && !fs::exists(path); path = path.parent_path()) {
        created_.push_back(path.string());  // deepest first
      }
    }
    blocks_ = ReadmeBlocks(kSource / "deploy" / "README.md", "multi-host-test");
    fs::create_directories(Scratch("admin"));
    fs::create_directory_symlink(kSource / "sweeps", Scratch("admin/sweeps"));
    for (const std::string& host : {std::string("coordinator"), kWorkers[0], kWorkers[1], kWorkers[2],
                                    std::string(kUnmountedWorker)}) {
      for (const char* folder : {"etc-rung", "var-lib-rung", "work"}) fs::create_directories(HostFolder(host, folder));
    }
    fs::create_directories(Scratch("nfs"));
  }

  void TearDown() override {
    if (HasFailure() && hosts_) std::cerr << Logs();
    hosts_.reset();  // every process of the hosts killed, the namespaces gone
    for (const std::string& folder : created_) {
      std::error_code error;
      fs::remove_all(folder, error);  // made by this test: whatever is in it came from the test
    }
  }

  std::string Scratch(const std::string& name) const { return scratch_.Path(name); }
  std::string HostFolder(const std::string& host, const std::string& folder) const {
    return Scratch("hosts/" + host + "/" + folder);
  }

  // What `host` mounts: its own /etc/rung, /var/lib/rung and work folder, rung's install, and, unless
  // `artifacts` is false, the shared artifact root.
  std::vector<HostMount> Mounts(const std::string& host, bool artifacts = true) const {
    std::vector<HostMount> mounts = {
        {"/etc/rung", HostFolder(host, "etc-rung")},
        {"/var/lib/rung", HostFolder(host, "var-lib-rung")},
        {"/var/lib/rung-worker", HostFolder(host, "work")},
        {"/usr/local/bin", Scratch("install/bin")},
        {"/usr/local/share/rung", Scratch("install/share/rung")}};
    if (artifacts) mounts.push_back({"/srv/rung/artifacts", Scratch("nfs")});
    return mounts;
  }

  std::string Block(const std::string& name) {
    EXPECT_EQ(blocks_.count(name), 1u) << "deploy/README.md has no block <!-- multi-host-test: " << name << " -->";
    return blocks_[name];
  }

  // Runs the README block `name` on `host`, in the administrator's folder (tls/, the token files,
  // sweeps/): its output, and a test failure when it exits non-zero.
  std::string RunBlock(const std::string& host, const std::string& name) {
    StatusOr<SubprocessResult> ran =
        hosts_->Run(host, Mounts(host), "cd " + Scratch("admin") + " && bash -e -c " + Quote(Block(name)),
                    seconds(120));
    EXPECT_TRUE(ran.ok()) << ran.status().ToString();
    if (!ran.ok()) return "";
    EXPECT_TRUE(ran->exit.Succeeded()) << "block '" << name << "' on " << host << ": " << ran->exit.Describe() << "\n"
                                       << ran->stdout_text;
    return ran->stdout_text;
  }

  // Starts the README block `name` on `host` in the background, its output in <host>.log.
  void SpawnBlock(const std::string& host, const std::string& name, const std::vector<std::string>& environment,
                  bool artifacts = true) {
    StatusOr<std::unique_ptr<Subprocess>> process =
        hosts_->Spawn(host, Mounts(host, artifacts), "cd " + Scratch("admin") + " && exec bash -e -c " + Quote(Block(name)),
                      Log(host), environment);
    ASSERT_TRUE(process.ok()) << process.status().ToString();
    processes_.push_back(std::move(*process));
  }

  static std::string Quote(const std::string& text) {
    std::string quoted = "'";
    for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
  }

  std::string Log(const std::string& host) const { return Scratch(host + ".log"); }

  std::string Logs() const {
    std::string text;
    for (const std::string& host : {std::string("coordinator"), kWorkers[0], kWorkers[1], kWorkers[2],
                                    std::string(kUnmountedWorker)}) {
      text += "--- " + host + ":\n" + FileText(Log(host));
    }
    return text;
  }

  // `rung ARGS --format json` as a user on the coordinator's host, over TLS by name; null when it
  // fails (its output is kept in last_rung_).
  nlohmann::json Rung(const std::string& args) {
    StatusOr<SubprocessResult> ran = hosts_->Run(
        "coordinator", Mounts("coordinator"),
        "exec rung " + args + " --coordinator " + kCoordinatorName + ":50551 --tls-ca " + Scratch("admin/tls/ca.crt") +
            " --token-file " + Scratch("admin/user.token") + " --format json",
        seconds(30));
    if (!ran.ok() || !ran->exit.Succeeded()) {
      last_rung_ = ran.ok() ? ran->stdout_text : ran.status().ToString();
      return nullptr;
    }
    nlohmann::json parsed = nlohmann::json::parse(ran->stdout_text, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? nlohmann::json() : parsed;
  }

  std::vector<nlohmann::json> Trials() {
    const nlohmann::json listed = Rung("trials 1");
    return listed.is_array() ? std::vector<nlohmann::json>(listed.begin(), listed.end()) : std::vector<nlohmann::json>();
  }

  nlohmann::json Trial(int64_t trial_id) { return Rung("show " + std::to_string(trial_id)); }

  // object[key], or null when `object` is not an object or has no `key`.
  static nlohmann::json Field(const nlohmann::json& object, const char* key) {
    return object.is_object() && object.contains(key) ? object.at(key) : nlohmann::json();
  }

  // object[key] as a string, or "" when it is not one.
  static std::string Text(const nlohmann::json& object, const char* key) {
    const nlohmann::json value = Field(object, key);
    return value.is_string() ? value.get<std::string>() : std::string();
  }

  // A trial's resources.world_size, from its cell's assignments (the spec's zip axis).
  static int64_t WorldSize(const nlohmann::json& trial) {
    const nlohmann::json* assignments = trial.contains("assignments") ? &trial.at("assignments") : nullptr;
    if (assignments == nullptr || !assignments->contains("resources.world_size")) return 1;
    return Number(assignments->at("resources.world_size"));
  }

  static int64_t Number(const nlohmann::json& value) {
    if (value.is_number()) return value.get<int64_t>();
    if (value.is_string()) return std::stoll(value.get<std::string>());
    return 0;
  }

  agent::testing::ScratchDir scratch_;  // destroyed last
  std::unique_ptr<NetworkHosts> hosts_;
  std::vector<std::unique_ptr<Subprocess>> processes_;
  std::vector<std::string> created_;
  std::map<std::string, std::string> blocks_;
  std::string last_rung_;
};

TEST_F(MultiHostTest, ReadmeRunsASweepAcrossHostsWithTlsAGangACutLinkAndAMissingMount) {
  // The binaries every host runs, and the certificate.
  {
    SubprocessOptions install;
    install.argv = {"make", "-C", kSource.string(), "install", "PREFIX=" + Scratch("install"),
                    "BUILD=" + std::string(RUNG_BINARY_DIR)};
    install.environment = {"MAKEFLAGS=", "MAKELEVEL=", "MFLAGS="};
    install.stdout_to = Redirect::Pipe();
    install.stderr_to = Redirect::ToStdout();
    StatusOr<SubprocessResult> installed = Subprocess::Run(install, std::chrono::minutes(5));
    ASSERT_TRUE(installed.ok() && installed->exit.Succeeded()) << (installed.ok() ? installed->stdout_text : "");
    SubprocessOptions certificate;
    certificate.argv = {"bash", "-e", "-c", Block("certificate")};
    certificate.working_dir = Scratch("admin");
    certificate.stdout_to = Redirect::Pipe();
    certificate.stderr_to = Redirect::ToStdout();
    StatusOr<SubprocessResult> made = Subprocess::Run(certificate, seconds(60));
    ASSERT_TRUE(made.ok() && made->exit.Succeeded()) << (made.ok() ? made->stdout_text : "");
  }

  // The coordinator on its host; its tokens go to the administrator's folder, as the README says.
  ASSERT_NO_FATAL_FAILURE(SpawnBlock("coordinator", "coordinator", {"LEASE_SECONDS=3"}));
  ASSERT_TRUE(PollUntil([&] { return FileText(Log("coordinator")).find("listening on ") != std::string::npos; },
                   seconds(60)))
      << Logs();
  for (const char* token : {"worker.token", "user.token"}) {
    fs::copy_file(HostFolder("coordinator", "var-lib-rung") + "/" + token, Scratch(std::string("admin/") + token));
    fs::permissions(Scratch(std::string("admin/") + token), fs::perms::owner_read | fs::perms::owner_write);
  }

  // Plaintext from a worker host is refused.
  StatusOr<SubprocessResult> plaintext = hosts_->Run(
      kWorkers[0], Mounts(kWorkers[0]),
      std::string("exec rung status 1 --coordinator ") + kCoordinatorName + ":50551 --token-file " +
          Scratch("admin/user.token"),
      seconds(30));
  ASSERT_TRUE(plaintext.ok());
  EXPECT_FALSE(plaintext->exit.Succeeded()) << "plaintext was answered: " << plaintext->stdout_text;

  // Workers of one CPU on three hosts, and one whose host lacks the shared artifact root.
  for (const std::string& worker : kWorkers) ASSERT_NO_FATAL_FAILURE(SpawnBlock(worker, "worker", {"CPUS=1"}));
  ASSERT_NO_FATAL_FAILURE(SpawnBlock(kUnmountedWorker, "worker", {"CPUS=1"}, /*artifacts=*/false));
  EXPECT_TRUE(PollUntil([&] { return FileText(Log(kUnmountedWorker)).find("is not mounted here") != std::string::npos; },
                   seconds(60)))
      << "the worker without the artifact mount did not say so\n" << FileText(Log(kUnmountedWorker));

  const std::string submitted = RunBlock(kWorkers[0], "submit");
  ASSERT_NE(submitted.find("submitted sweep 1: 4 trials"), std::string::npos) << submitted;

  // A one-rank trial past its third checkpoint: its worker's link is cut for longer than its lease.
  int64_t cut_trial = 0;
  std::string cut_host, cut_worker_id;
  ASSERT_TRUE(PollUntil([&] {
    for (const nlohmann::json& trial : Trials()) {
      if (Text(trial, "state") != "TRIAL_STATE_RUNNING" || Number(Field(trial, "latest_step")) < 3 * kCheckpointEvery) {
        continue;
      }
      if (WorldSize(trial) != 1) continue;
      const std::string worker_id = Text(trial, "worker_id");
      for (const std::string& host : kWorkers) {
        if (worker_id.rfind(host + "-", 0) == 0) {
          cut_trial = Number(Field(trial, "trial_id"));
          cut_host = host;
          cut_worker_id = worker_id;
          return true;
        }
      }
    }
    return false;
  }, seconds(180))) << "no one-rank trial got going\n" << last_rung_ << Logs();
  const int64_t cut_attempt = Number(Field(Trial(cut_trial), "attempt"));
  ASSERT_TRUE(hosts_->Cut(cut_host).ok());
  // Resumed elsewhere: a later attempt runs (or, resumed near its end, has already finished).
  const bool resumed = PollUntil([&] {
    const nlohmann::json trial = Trial(cut_trial);
    const std::string state = Text(trial, "state");
    return Number(Field(trial, "attempt")) > cut_attempt &&
           (state == "TRIAL_STATE_RUNNING" || state == "TRIAL_STATE_SUCCEEDED");
  }, seconds(180));
  ASSERT_TRUE(hosts_->Restore(cut_host).ok());
  ASSERT_TRUE(resumed) << "trial " << cut_trial << " did not resume after its worker was cut off\n" << Logs();
  std::string resumed_on;  // the newest attempt's worker
  for (const nlohmann::json& attempt : Field(Trial(cut_trial), "attempts")) resumed_on = Text(attempt, "worker_id");
  EXPECT_NE(resumed_on, cut_worker_id) << "the trial resumed on the worker that was cut off";

  // The sweep ends, every trial SUCCEEDED.
  std::string sweep_state;
  ASSERT_TRUE(PollUntil([&] {
    sweep_state = Text(Rung("status 1"), "state");
    return !sweep_state.empty() && sweep_state != "ACTIVE";
  }, seconds(300))) << last_rung_ << Logs();
  EXPECT_EQ(sweep_state, "SUCCEEDED");
  const std::vector<nlohmann::json> trials = Trials();
  ASSERT_EQ(trials.size(), 4u);

  std::set<int64_t> logged;
  for (int64_t step = kLogEvery; step <= kSteps; step += kLogEvery) logged.insert(step);
  std::vector<double> gang_rates, single_rates;
  for (const nlohmann::json& listed : trials) {
    const int64_t trial_id = Number(Field(listed, "trial_id"));
    const nlohmann::json trial = Trial(trial_id);
    EXPECT_EQ(Text(trial, "state"), "TRIAL_STATE_SUCCEEDED") << trial.dump(1).substr(0, 2000);
    for (const nlohmann::json& attempt : Field(trial, "attempts")) {
      EXPECT_NE(Text(attempt, "worker_id").rfind(std::string(kUnmountedWorker) + "-", 0), 0u)
          << "the worker without the artifact mount leased trial " << trial_id;
    }
    // One value per logged step, whatever its attempts.
    std::map<int64_t, int> per_step;
    std::vector<double> rates;
    const nlohmann::json metrics = Rung("metrics " + std::to_string(trial_id));
    for (const nlohmann::json& point : metrics) {
      if (Text(point, "name") == "train_loss") ++per_step[Number(Field(point, "step"))];
      if (Text(point, "name") == "tokens_per_sec" && Field(point, "value").is_number()) {
        rates.push_back(Field(point, "value").get<double>());
      }
    }
    std::set<int64_t> steps;
    for (const auto& [step, count] : per_step) {
      EXPECT_EQ(count, 1) << "trial " << trial_id << ": train_loss at step " << step << " stored " << count << " times";
      steps.insert(step);
    }
    EXPECT_EQ(steps, logged) << "trial " << trial_id << ": not exactly the logged steps";
    const bool gang = WorldSize(listed) == 2;
    (gang ? gang_rates : single_rates).push_back(Median(rates));
    if (!gang) continue;
    // A gang across two hosts: rank 0 on one, rank 1 meeting it there by its host's name.
    std::string rank0_worker;  // its last attempt's worker: rank 0's
    for (const nlohmann::json& attempt : Field(trial, "attempts")) rank0_worker = Text(attempt, "worker_id");
    const std::string rank0_host = rank0_worker.substr(0, rank0_worker.rfind('-'));
    bool rank1_elsewhere = false;
    for (const std::string& host : kWorkers) {
      if (host != rank0_host && FileText(Log(host)).find("rank 1 of 2 at " + rank0_host + ":") != std::string::npos) {
        rank1_elsewhere = true;
      }
    }
    EXPECT_TRUE(rank1_elsewhere) << "trial " << trial_id << ": no rank 1 on another host met rank 0 at " << rank0_host
                                 << "\n" << Logs();
  }

  // The cut-off attempt stayed STALE: its worker's late reports were refused.
  const nlohmann::json cut = Trial(cut_trial);
  for (const nlohmann::json& attempt : Field(cut, "attempts")) {
    if (Number(Field(attempt, "attempt")) == cut_attempt) {
      EXPECT_EQ(Text(attempt, "state"), "TRIAL_STATE_STALE") << cut.dump(1).substr(0, 2000);
      EXPECT_EQ(Text(attempt, "worker_id"), cut_worker_id);
    }
  }
  // tokens_per_sec is the trial's (a gang's: its global batch's) between step records.
  std::printf("multi-host: two-rank gangs across two hosts %.0f tokens/s, one-rank trials on one host %.0f tokens/s "
              "(medians over each trial's step records, then over trials)\n",
              Median(gang_rates), Median(single_rates));
}

}  // namespace
}  // namespace rung::deploy_test

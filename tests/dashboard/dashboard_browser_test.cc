// tests/dashboard/dashboard_browser_test.cc
//
// `rung dashboard` in a real browser while a real sweep runs: rung-coordinator on 127.0.0.1 with a
// fresh database and tokens; first a small sweep trained for real by one rung-worker running rung-train
// (a few steps, with attention diagnostics, evaluation beyond the training length and a probe: the trial
// page's diagnostics charts and probe heatmaps, its sweep page's loss against the evaluation length and
// the comparison view read it); then two rung-worker processes playing
// rung-stand-in (the tests' stand-in trainer: rung-train's whole contract without training, paced so
// that the sweep runs for some seconds), the sweep submitted through the API, `rung dashboard` as a
// process on a free port, and
// browser_check.mjs driving Debian's chromium through playwright-core against it (what it checks is
// listed in its header; a paused precision-aimed sweep's panel among it, and the scaling laws panel
// of two sweeps law_sweep.h plays through the worker API, with and without laws), and a second `rung
// dashboard --allow-control` whose pause and resume
// buttons it clicks on a third, paused sweep; and `rung dashboard --allow-control` with the viewer
// token refused with exit 4. Screenshots of each view land in build/dashboard-screenshots/.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "coordinator/client/coordinator_connection.h"
#include "core/common/subprocess.h"
#include "tests/dashboard/law_sweep.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::dashboard {
namespace {

namespace fs = std::filesystem;
using agent::testing::ScratchDir;

// 2 rungs x 2 variants x 2 seeds of a tiny model; the stand-in plays them.
constexpr char kSpec[] = R"(name: dashboard-browser
description: the sweep the dashboard's browser test watches
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 16}
model: {mlp: gelu}
train: {batch_size: 2, steps: 40, lr: 1.0e-3, eval_every: 4, log_every: 2}
resources: {cpus: 1}
policy: {max_retries: 0, max_failed: 4, priority: 1}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
    - {layers: 2, d_model: 32, heads: 2}
    - {layers: 3, d_model: 48, heads: 2}
sweep:
  position.variant: [rope, lerope]
  seed: [0, 1]
)";

// 2 rungs x 2 variants of a tiny model trained by rung-train for 12 steps, with diagnostics at two
// milestones, evaluation at 2x and 4x the training length (none and yarn) and a template probe at the
// end (prompts of 16 tokens with none, 32 with none and yarn; needle depths 0, 1/2 and 1; three
// prompts a cell): a few seconds.
constexpr char kDiagnosticsSpec[] = R"(name: dashboard-diagnostics
description: trained for real by rung-train (a few steps) for the dashboard's diagnostics charts and comparison
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 16}
model: {mlp: gelu}
train: {batch_size: 2, steps: 12, lr: 1.0e-3, eval_every: 4, eval_batches: 2, log_every: 2, diagnostics_sequences: 2,
        diagnostics_at: [0.5, 1], extrapolation_multiples: [2, 4], extrapolation_methods: [none, yarn],
        probe: {kind: template, prefix: "Key:", needle: " #{key}", query: " now #", answer: "{key}",
                filler_text: " the quick brown fox.", key_digits: 2, instances: 3, lengths: [16, 32],
                depths: [0, 0.5, 1]}}
resources: {cpus: 1}
policy: {max_retries: 0, max_failed: 4, priority: 1}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
    - {layers: 2, d_model: 32, heads: 2}
sweep:
  position.variant: [rope, lerope]
  seed: [0]
)";

// A precision-aimed sweep (rope against lerope on two rungs, seeds 0-2): submitted and paused before
// the stand-in workers start, so none of its trials runs and its panel shows each target without a
// fit yet.
constexpr char kPrecisionSpec[] = R"(name: dashboard-precision
description: a precision aim the dashboard's precision panel shows before any trial ran
metric: {name: val_loss, goal: minimize}
baseline: {position.variant: rope}
data: {source: builtin, seq_len: 16}
model: {mlp: gelu}
train: {batch_size: 2, steps: 40, lr: 1.0e-3, eval_every: 4, log_every: 2}
resources: {cpus: 1}
policy: {max_retries: 0, max_failed: 4, priority: 1}
ladder:
  rungs:
    - {layers: 1, d_model: 16, heads: 2}
    - {layers: 2, d_model: 32, heads: 2}
sweep:
  position.variant: [rope, lerope]
  seed: [0, 1, 2]
precision: {target_half_width: 0.01, budget_flops: 1.0e15}
)";

std::unique_ptr<Subprocess> Start(std::vector<std::string> argv, const std::string& log, bool pipe_stdout,
                                  std::vector<std::string> environment = {}) {
  SubprocessOptions options;
  options.argv = std::move(argv);
  options.environment = std::move(environment);
  options.stdout_to = pipe_stdout ? Redirect::Pipe() : Redirect::AppendTo(log, 0644);
  options.stderr_to = Redirect::AppendTo(log, 0644);
  options.die_with_parent = true;
  StatusOr<std::unique_ptr<Subprocess>> started = Subprocess::Start(options);
  EXPECT_TRUE(started.ok()) << options.argv[0] << ": " << started.status().ToString();
  return started.ok() ? std::move(started).value() : nullptr;
}

// The first stdout line starting with `prefix`, without it; "" if none within 30 s.
std::string AwaitLine(Subprocess& process, const std::string& prefix) {
  for (int i = 0; i < 150; ++i) {
    std::optional<std::string> line = process.ReadLine(Stream::kStdout, std::chrono::milliseconds(200));
    if (line && line->rfind(prefix, 0) == 0) return line->substr(prefix.size());
    if (!process.Running()) break;
  }
  return "";
}

TEST(DashboardBrowserTest, ARealSweepReadsRightInChromiumAndUpdatesLive) {
  ScratchDir scratch;
  const std::string bin = RUNG_BIN_DIR;
  const std::string user_token = scratch.Path("user.token");
  auto coordinator = Start({bin + "/rung-coordinator", "--listen", "127.0.0.1:0", "--db", scratch.Path("rung.db"),
                            "--artifact-root", scratch.Path("artifacts"), "--user-token-file", user_token,
                            "--worker-token-file", scratch.Path("worker.token"), "--viewer-token-file",
                            scratch.Path("viewer.token"), "--lease-seconds", "30"},
                           scratch.Path("coordinator.log"), /*pipe_stdout=*/true);
  ASSERT_NE(coordinator, nullptr);
  const std::string address = AwaitLine(*coordinator, "listening on ");
  ASSERT_FALSE(address.empty()) << agent::testing::FileText(scratch.Path("coordinator.log"));

  client::ConnectionOptions connection_options;
  connection_options.address = address;
  connection_options.token_file = user_token;
  StatusOr<std::unique_ptr<client::CoordinatorConnection>> connection = client::CoordinatorConnection::Open(connection_options);
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  auto submit_spec = [&](const char* spec, const std::string& file_name) {
    v1::SubmitSweepRequest request;
    request.set_spec_text(spec);
    request.set_spec_file_name(file_name);
    v1::SubmitSweepResponse response;
    grpc::Status submitted = (*connection)->user().SubmitSweep((*connection)->Context().get(), request, &response);
    EXPECT_TRUE(submitted.ok()) << submitted.error_message();
    return response.sweep_id();
  };

  // The sweep trained for real, run to its end before the watched one starts (one worker, 2 slots).
  const int64_t diagnostics_sweep = submit_spec(kDiagnosticsSpec, "dashboard-diagnostics.yaml");
  ASSERT_GT(diagnostics_sweep, 0);
  {
    auto trainer = Start({bin + "/rung-worker", "--coordinator", address, "--worker-token-file", scratch.Path("worker.token"),
                          "--cpus", "2", "--worker-id", "trainer", "--work-dir", scratch.Path("trainer"), "--trainer",
                          bin + "/rung-train"},
                         scratch.Path("trainer.log"), /*pipe_stdout=*/false);
    ASSERT_NE(trainer, nullptr);
    v1::Sweep sweep;
    for (int i = 0; i < 600; ++i) {
      v1::GetSweepRequest get;
      get.set_sweep_id(diagnostics_sweep);
      ASSERT_TRUE((*connection)->user().GetSweep((*connection)->Context().get(), get, &sweep).ok());
      if (sweep.state() != v1::SWEEP_STATE_ACTIVE) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ASSERT_EQ(sweep.state(), v1::SWEEP_STATE_SUCCEEDED) << sweep.state_reason() << "\n"
                                                        << agent::testing::FileText(scratch.Path("trainer.log"));
    trainer->Stop(SIGTERM, std::chrono::seconds(10)).IgnoreError();
  }

  // The scaling-law sweeps (law_sweep.h), played to their end by a worker of the test's own while
  // nothing else waits for a lease: an IsoFLOP grid with laws, a ladder without.
  StatusOr<int64_t> laws_sweep =
      testing::PlayLawSweep(address, user_token, scratch.Path("worker.token"), testing::kIsoflopLawSpec);
  ASSERT_TRUE(laws_sweep.ok()) << laws_sweep.status().ToString();
  StatusOr<int64_t> no_laws_sweep =
      testing::PlayLawSweep(address, user_token, scratch.Path("worker.token"), testing::kOneTokenCountSpec);
  ASSERT_TRUE(no_laws_sweep.ok()) << no_laws_sweep.status().ToString();

  // The precision-aimed sweep, paused before any worker could lease one of its trials.
  const int64_t precision_sweep = submit_spec(kPrecisionSpec, "dashboard-precision.yaml");
  ASSERT_GT(precision_sweep, 0);
  {
    v1::PauseSweepRequest pause;
    pause.set_sweep_id(precision_sweep);
    v1::Sweep paused;
    grpc::Status paused_status = (*connection)->user().PauseSweep((*connection)->Context().get(), pause, &paused);
    ASSERT_TRUE(paused_status.ok()) << paused_status.error_message();
  }

  v1::SubmitSweepRequest submit;
  submit.set_spec_text(kSpec);
  submit.set_spec_file_name("dashboard-browser.yaml");
  v1::SubmitSweepResponse submitted;
  grpc::Status status = (*connection)->user().SubmitSweep((*connection)->Context().get(), submit, &submitted);
  ASSERT_TRUE(status.ok()) << status.error_message();

  // Each stand-in trial plays its 40 steps over 3 s: the sweep (12 trials, 2 at a time) runs ~20 s.
  std::vector<std::unique_ptr<Subprocess>> workers;
  for (int i = 0; i < 2; ++i) {
    const std::string id = "w" + std::to_string(i);
    workers.push_back(Start({bin + "/rung-worker", "--coordinator", address, "--worker-token-file",
                             scratch.Path("worker.token"), "--cpus", "1", "--worker-id", id, "--work-dir",
                             scratch.Path(id), "--trainer", bin + "/rung-stand-in"},
                            scratch.Path(id + ".log"), /*pipe_stdout=*/false, {"RUNG_STAND_IN_SECONDS=3"}));
    ASSERT_NE(workers.back(), nullptr);
  }

  auto dashboard = Start({bin + "/rung", "dashboard", "--coordinator", address, "--token-file", user_token, "--listen",
                          "127.0.0.1:0"},
                         scratch.Path("dashboard.log"), /*pipe_stdout=*/true);
  ASSERT_NE(dashboard, nullptr);
  const std::string url = AwaitLine(*dashboard, "rung dashboard: ");
  ASSERT_EQ(url.rfind("http://127.0.0.1:", 0), 0u) << url << agent::testing::FileText(scratch.Path("dashboard.log"));

  // A viewer token (read-only) cannot have the control buttons: refused before serving, exit 4.
  SubprocessOptions viewer;
  viewer.argv = {bin + "/rung", "dashboard", "--coordinator", address, "--token-file", scratch.Path("viewer.token"),
                 "--listen", "127.0.0.1:0", "--allow-control"};
  viewer.stdout_to = Redirect::Pipe();
  viewer.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> refused = Subprocess::Run(viewer, std::chrono::seconds(30));
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->exit.code, 4) << refused->stderr_text;
  EXPECT_NE(refused->stderr_text.find("--allow-control needs a user token"), std::string::npos) << refused->stderr_text;

  // A third sweep, paused at once, for the page's control buttons on a dashboard with --allow-control.
  std::string control_spec = kSpec;
  control_spec.replace(control_spec.find("dashboard-browser"), std::string("dashboard-browser").size(), "dashboard-control");
  const int64_t control_sweep = submit_spec(control_spec.c_str(), "dashboard-control.yaml");
  ASSERT_GT(control_sweep, 0);
  {
    v1::PauseSweepRequest pause;
    pause.set_sweep_id(control_sweep);
    v1::Sweep paused;
    grpc::Status paused_status = (*connection)->user().PauseSweep((*connection)->Context().get(), pause, &paused);
    ASSERT_TRUE(paused_status.ok()) << paused_status.error_message();
  }
  auto control_dashboard = Start({bin + "/rung", "dashboard", "--coordinator", address, "--token-file", user_token,
                                  "--listen", "127.0.0.1:0", "--allow-control"},
                                 scratch.Path("control-dashboard.log"), /*pipe_stdout=*/true);
  ASSERT_NE(control_dashboard, nullptr);
  const std::string control_url = AwaitLine(*control_dashboard, "rung dashboard: ");
  ASSERT_EQ(control_url.rfind("http://127.0.0.1:", 0), 0u) << agent::testing::FileText(scratch.Path("control-dashboard.log"));

  const std::string screenshots = std::string(RUNG_BUILD_DIR) + "/dashboard-screenshots";
  fs::create_directories(screenshots);
  SubprocessOptions check;
  check.argv = {"node", std::string(RUNG_SOURCE_DIR) + "/tests/dashboard/browser_check.mjs"};
  check.environment = {"DASHBOARD_URL=" + url,
                       "SCREENSHOT_DIR=" + screenshots,
                       "SWEEP_ID=" + std::to_string(submitted.sweep_id()),
                       "DIAGNOSTICS_SWEEP_ID=" + std::to_string(diagnostics_sweep),
                       "PRECISION_SWEEP_ID=" + std::to_string(precision_sweep),
                       "LAWS_SWEEP_ID=" + std::to_string(*laws_sweep),
                       "NO_LAWS_SWEEP_ID=" + std::to_string(*no_laws_sweep),
                       "RUNG_CLI=" + bin + "/rung",
                       "RUNG_COORDINATOR=" + address,
                       "RUNG_TOKEN_FILE=" + user_token,
                       "CONTROL_URL=" + control_url,
                       "CONTROL_SWEEP_ID=" + std::to_string(control_sweep),
                       "NODE_PATH=" + std::string(RUNG_NODE_MODULES)};
  check.stdout_to = Redirect::Pipe();
  check.stderr_to = Redirect::Pipe();
  StatusOr<SubprocessResult> result = Subprocess::Run(check, std::chrono::seconds(150));
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::cout << result->stdout_text;
  EXPECT_FALSE(result->timed_out) << "browser_check.mjs ran past 150 s";
  EXPECT_TRUE(result->exit.Succeeded()) << result->exit.Describe() << "\n"
                                        << result->stderr_text << "\ndashboard log:\n"
                                        << agent::testing::FileText(scratch.Path("dashboard.log"));
  for (auto& worker : workers) worker->Stop(SIGTERM, std::chrono::seconds(10)).IgnoreError();
  dashboard->Stop(SIGTERM, std::chrono::seconds(5)).IgnoreError();
  control_dashboard->Stop(SIGTERM, std::chrono::seconds(5)).IgnoreError();
  coordinator->Stop(SIGTERM, std::chrono::seconds(10)).IgnoreError();
}

}  // namespace
}  // namespace rung::dashboard

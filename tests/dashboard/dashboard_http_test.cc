// tests/dashboard/dashboard_http_test.cc
//
// `rung dashboard`'s HTTP side against a real coordinator (the CLI goldens' in-process fixture,
// tests/cli/golden_fixture.h: sweep 1 with curves, final records and stored fit 1) and a real
// DashboardServer on 127.0.0.1 port 0 serving the real bundled page: the login, 401 everywhere
// without it, the JSON endpoints against the coordinator's own answers, control refused without
// --allow-control, the listen rules, and hostile requests (bad paths, ids and parameters, huge
// headers and URIs, wrong tokens, junk bodies), after each of which the server still answers.
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "coordinator/client/message_json.h"
#include "coordinator/dashboard/dashboard_server.h"
#include "coordinator/dashboard/gzip_body.h"
#include "coordinator/dashboard/login_gate.h"
#include "coordinator/server/auth.h"
#include "coordinator/server/grpc_server.h"
#include "core/config/inverse_temperature_form.h"
#include "core/config/length_extension_method.h"
#include "core/config/positional_variant.h"
#include "tests/cli/golden_fixture.h"
#include "tests/dashboard/law_sweep.h"
#include "tests/support/tls/self_signed_certificate.h"
#include "tests/worker/agent/agent_test_util.h"

namespace rung::dashboard {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

class DashboardHttpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    StatusOr<std::unique_ptr<cli::testing::GoldenCoordinator>> started = cli::testing::GoldenCoordinator::Start();
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    coordinator_ = std::move(started).value().release();
  }
  static void TearDownTestSuite() {
    delete coordinator_;
    coordinator_ = nullptr;
  }

  static DashboardOptions Options() {
    DashboardOptions options;
    options.connection.address = coordinator_->address();
    options.connection.token_file = coordinator_->user_token_file();
    options.listen = "127.0.0.1:0";
    options.web_root = RUNG_DASHBOARD_WEB_ROOT;
    return options;
  }

  void StartServer(bool allow_control = false, DashboardOptions options = Options()) {
    options.allow_control = allow_control;
    StatusOr<std::unique_ptr<DashboardServer>> server = DashboardServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }

  httplib::Headers LoggedIn() const {
    return {{"Cookie", std::string(kLoginCookie) + "=" + server_->gate().token()}};
  }

  // What the page's own control request carries (api.ts postJson) besides the cookie.
  httplib::Headers FromThePage() const {
    httplib::Headers headers = LoggedIn();
    headers.emplace("Origin", "http://127.0.0.1:" + std::to_string(server_->port()));
    headers.emplace("Sec-Fetch-Site", "same-origin");
    headers.emplace("X-Rung-Control", "1");
    return headers;
  }

  std::string SweepState(int64_t sweep_id) {
    return GetJson("/api/sweeps/" + std::to_string(sweep_id))["state"].get<std::string>();
  }

  json GetJson(const std::string& path) {
    httplib::Result result = client_->Get(path.c_str(), LoggedIn());
    EXPECT_TRUE(result) << path;
    if (!result) return json();
    EXPECT_EQ(result->status, 200) << path << ": " << result->body;
    return json::parse(result->body, nullptr, false);
  }

  // A user's connection to the fixture's coordinator, whose own answers the endpoints are held to.
  static std::unique_ptr<client::CoordinatorConnection> UserConnection() {
    client::ConnectionOptions options;
    options.address = coordinator_->address();
    options.token_file = coordinator_->user_token_file();
    StatusOr<std::unique_ptr<client::CoordinatorConnection>> connection = client::CoordinatorConnection::Open(options);
    EXPECT_TRUE(connection.ok()) << connection.status().ToString();
    return connection.ok() ? std::move(connection).value() : nullptr;
  }

  // The server still answers a logged-in request.
  void ExpectStillServing() {
    httplib::Client fresh("127.0.0.1", server_->port());
    httplib::Result result = fresh.Get("/api/info", LoggedIn());
    ASSERT_TRUE(result) << "the dashboard stopped answering";
    EXPECT_EQ(result->status, 200);
  }

  static cli::testing::GoldenCoordinator* coordinator_;
  std::unique_ptr<DashboardServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

cli::testing::GoldenCoordinator* DashboardHttpTest::coordinator_ = nullptr;

TEST(LoginGateTest, AdmitsTheCookieOrTheBearerTokenAndNothingElse) {
  LoginGate gate("0123456789abcdef0123456789abcdef");
  EXPECT_TRUE(gate.Admits("a=1; rung_dashboard=0123456789abcdef0123456789abcdef; b=2", ""));
  EXPECT_TRUE(gate.Admits("", "Bearer 0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(gate.Admits("rung_dashboard=0123456789abcdef0123456789abcdeX", ""));
  EXPECT_FALSE(gate.Admits("rung_dashboard=0123456789abcdef", ""));
  EXPECT_FALSE(gate.Admits("xrung_dashboard=0123456789abcdef0123456789abcdef", ""));
  EXPECT_FALSE(gate.Admits("rung_dashboard=", "Bearer "));
  EXPECT_FALSE(LoginGate("").Admits("rung_dashboard=", ""));
  EXPECT_THAT(gate.SetCookie(false), HasSubstr("HttpOnly; SameSite=Strict"));
  EXPECT_THAT(gate.SetCookie(true), HasSubstr("; Secure"));
}

TEST(DashboardOptionsTest, RefusesANonLoopbackAddressWithoutTls) {
  DashboardOptions options;
  options.listen = "0.0.0.0:8050";
  Status status = CheckListenAddress(options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not a loopback address"));
  EXPECT_THAT(status.message(), HasSubstr("--tls-cert"));
  options.tls_cert_file = "cert.pem";
  EXPECT_THAT(CheckListenAddress(options).message(), HasSubstr("go together"));
  options.listen = "127.0.0.1";
  options.tls_cert_file.clear();
  EXPECT_THAT(CheckListenAddress(options).message(), HasSubstr("not HOST:PORT"));
  options.listen = "[::1]:0";
  EXPECT_TRUE(CheckListenAddress(options).ok());
}

TEST(GzipBodyTest, AcceptsGzipUnlessRefusedOrAbsent) {
  EXPECT_TRUE(AcceptsGzip("gzip, deflate, br"));
  EXPECT_TRUE(AcceptsGzip("br;q=1.0, GZip;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_FALSE(AcceptsGzip("br, deflate"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, br"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0.000"));
  EXPECT_FALSE(AcceptsGzip("xgzip"));
  EXPECT_FALSE(AcceptsGzip(""));
}

TEST(GzipBodyTest, GzipIsTheGzipFormatOfTheBody) {
  std::string body;
  for (int i = 0; i < 5000; ++i) body += "{\"step\": " + std::to_string(i) + "}\n";
  std::optional<std::string> compressed = Gzip(body);
  ASSERT_TRUE(compressed.has_value());
  ASSERT_GE(compressed->size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>((*compressed)[1]), 0x8b);
  EXPECT_LT(compressed->size(), body.size() / 4);
  z_stream stream{};
  ASSERT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string back(body.size() + 16, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(compressed->data());
  stream.avail_in = static_cast<uInt>(compressed->size());
  stream.next_out = reinterpret_cast<Bytef*>(back.data());
  stream.avail_out = static_cast<uInt>(back.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  back.resize(stream.total_out);
  inflateEnd(&stream);
  EXPECT_EQ(back, body);
}

TEST_F(DashboardHttpTest, LargeBodiesComeGzippedEvenWhenTheBrowserAlsoAcceptsBrotli) {
  // Brotli at httplib's default quality takes seconds on a large sweep's JSON (gzip_body.h).
  StartServer();
  httplib::Client client("127.0.0.1", server_->port());
  client.set_decompress(false);
  httplib::Headers headers = LoggedIn();
  headers.emplace("Accept-Encoding", "gzip, deflate, br");
  for (const char* path : {"/api/sweeps/1/trials", "/app.js"}) {
    httplib::Result result = client.Get(path, headers);
    ASSERT_TRUE(result) << path;
    EXPECT_EQ(result->status, 200) << path;
    EXPECT_EQ(result->get_header_value("Content-Encoding"), "gzip") << path;
    EXPECT_EQ(result->get_header_value("Vary"), "Accept-Encoding") << path;
  }
  httplib::Headers plain = LoggedIn();
  plain.emplace("Accept-Encoding", "identity");
  httplib::Result result = client.Get("/api/sweeps/1/trials", plain);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->get_header_value("Content-Encoding"), "");
  EXPECT_TRUE(json::parse(result->body, nullptr, false).is_object());
  EXPECT_EQ(result->get_header_value("Content-Type"), "application/json; charset=utf-8");
}

TEST_F(DashboardHttpTest, EveryPageAndEndpointAnswers401WithoutTheLogin) {
  StartServer();
  for (const char* path : {"/", "/app.js", "/app.css", "/api/info", "/api/sweeps", "/api/sweeps/1/trials",
                           "/api/sweeps/1/events", "/nosuch", "/api/nosuch"}) {
    httplib::Result result = client_->Get(path);
    ASSERT_TRUE(result) << path;
    EXPECT_EQ(result->status, 401) << path;
    EXPECT_THAT(result->body, HasSubstr("token")) << path;
  }
  httplib::Result wrong = client_->Get("/api/sweeps", {{"Cookie", "rung_dashboard=" + std::string(64, 'a')}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  httplib::Result post = client_->Post("/api/sweeps/1/cancel", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 401);
  httplib::Result bad_login = client_->Get("/?token=nottheone");
  ASSERT_TRUE(bad_login);
  EXPECT_EQ(bad_login->status, 401);
}

TEST_F(DashboardHttpTest, ThePrintedUrlSetsAStrictHttpOnlyCookieAndRedirects) {
  StartServer();
  EXPECT_THAT(server_->url(), HasSubstr("http://127.0.0.1:" + std::to_string(server_->port()) + "/?token="));
  httplib::Result login = client_->Get(("/?token=" + server_->gate().token()).c_str());
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 303);
  EXPECT_EQ(login->get_header_value("Location"), "/");
  const std::string cookie = login->get_header_value("Set-Cookie");
  EXPECT_THAT(cookie, HasSubstr("rung_dashboard=" + server_->gate().token()));
  EXPECT_THAT(cookie, HasSubstr("HttpOnly"));
  EXPECT_THAT(cookie, HasSubstr("SameSite=Strict"));
  httplib::Result page = client_->Get("/", LoggedIn());
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_THAT(page->body, HasSubstr("/app.js"));
  EXPECT_THAT(page->get_header_value("Content-Security-Policy"), HasSubstr("default-src 'self'"));
  httplib::Result script = client_->Get("/app.js", LoggedIn());
  ASSERT_TRUE(script);
  EXPECT_EQ(script->status, 200);
  EXPECT_THAT(script->get_header_value("Content-Type"), HasSubstr("javascript"));
}

TEST_F(DashboardHttpTest, EndpointsAnswerWhatTheCoordinatorAnswers) {
  StartServer();
  json sweeps = GetJson("/api/sweeps");
  ASSERT_EQ(sweeps["sweeps"].size(), 2u);
  EXPECT_EQ(sweeps["sweeps"][0]["name"], "golden-second") << "newest first, as ListSweeps answers";
  EXPECT_EQ(sweeps["sweeps"][1]["name"], "golden-ladder");
  json trials = GetJson("/api/sweeps/1/trials");
  ASSERT_EQ(trials["trials"].size(), 8u);

  // The curves of sweep 1 against GetMetrics of each trial, point for point.
  const std::unique_ptr<client::CoordinatorConnection> connection = UserConnection();
  ASSERT_NE(connection, nullptr);
  json curves = GetJson("/api/sweeps/1/curves?metric=val_loss&x=tokens&points=4000");
  ASSERT_FALSE(curves["trials"].empty());
  for (const json& curve : curves["trials"]) {
    v1::GetMetricsRequest request;
    request.set_trial_id(std::stoll(curve["trial_id"].dump()));
    request.add_names("val_loss");
    v1::GetMetricsResponse expected;
    ASSERT_TRUE(connection->user().GetMetrics(connection->Context().get(), request, &expected).ok());
    ASSERT_EQ(expected.series_size(), 1);
    ASSERT_EQ(curve["points"].size(), static_cast<size_t>(expected.series(0).points_size()));
    for (int i = 0; i < expected.series(0).points_size(); ++i) {
      EXPECT_EQ(curve["points"][i][0].get<int64_t>(), expected.series(0).points(i).step());
      EXPECT_EQ(curve["points"][i][1].get<double>(), static_cast<double>(expected.series(0).points(i).tokens()));
      EXPECT_EQ(curve["points"][i][2].get<double>(), expected.series(0).points(i).value());
    }
  }
  json only = GetJson("/api/sweeps/1/curves?trials=" + curves["trials"][0]["trial_id"].dump());
  EXPECT_EQ(only["trials"].size(), 1u);

  // The stored fit is what `rung fit --format json` printed when it was made.
  json fit = GetJson("/api/sweeps/1/fit");
  EXPECT_EQ(fit["fit_id"], "1");
  ASSERT_TRUE(fit["report"].is_array());
  v1::ListFitsRequest list;
  list.set_fit_id(1);
  list.set_with_report(true);
  v1::ListFitsResponse stored;
  ASSERT_TRUE(connection->user().ListFits(connection->Context().get(), list, &stored).ok());
  ASSERT_EQ(fit["report"].size(), static_cast<size_t>(stored.fits(0).report_size()));
  EXPECT_EQ(fit["report"][0]["variant"], stored.fits(0).report(0).variant());
  EXPECT_EQ(fit["report"][0]["role"], "estimate");

  json trial = GetJson("/api/trials/1");
  EXPECT_EQ(trial["trial_id"], "1");
  EXPECT_TRUE(trial["config"].is_object() && trial["config"].contains("position")) << "the config as the JSON object it is";
  EXPECT_TRUE(trial["assignments"].is_object()) << trial["assignments"].dump();
  EXPECT_FALSE(GetJson("/api/trials/1/logs?tail=5")["lines"].empty());
  EXPECT_TRUE(GetJson("/api/trials/1/parameters").contains("parameters"));
  EXPECT_TRUE(GetJson("/api/trials/1/diagnostics").contains("diagnostics"));
  json results = GetJson("/api/sweeps/1/results?summary=best&group_by=position.variant");
  EXPECT_EQ(results["group_by"][0], "position.variant");
  EXPECT_EQ(GetJson("/api/info")["control"], false);
}

// Sweep 1's six SUCCEEDED trials were each evaluated at 2x their training length with none and yarn:
// each comes with its extrapolation table as GetDiagnostics has it (the per-position losses left to the
// trial's page) and its val_loss at the training length; the RUNNING and FAILED trials do not, nor do
// sweep 2's PENDING ones.
TEST_F(DashboardHttpTest, TheExtrapolationEndpointHasEachEvaluatedTrialsTableAndItsLossAtTheTrainingLength) {
  StartServer();
  const std::unique_ptr<client::CoordinatorConnection> connection = UserConnection();
  ASSERT_NE(connection, nullptr);
  json answer = GetJson("/api/sweeps/1/extrapolation");
  ASSERT_EQ(answer["trials"].size(), 6u) << answer.dump();
  for (const json& entry : answer["trials"]) {
    const int64_t trial_id = std::stoll(entry["trial"]["trial_id"].get<std::string>());
    EXPECT_EQ(entry["trial"]["state"], "TRIAL_STATE_SUCCEEDED");
    EXPECT_TRUE(entry["trial"]["assignments"].contains("position.variant")) << entry["trial"].dump();
    v1::GetTrialRequest get_trial;
    get_trial.set_trial_id(trial_id);
    v1::Trial trial;
    ASSERT_TRUE(connection->user().GetTrial(connection->Context().get(), get_trial, &trial).ok());
    EXPECT_EQ(entry["val_loss"].get<double>(), trial.final_metric()) << "the sweep's metric is val_loss";
    v1::GetDiagnosticsRequest request;
    request.set_trial_id(trial_id);
    request.add_names("extrapolation");
    v1::GetDiagnosticsResponse stored;
    ASSERT_TRUE(connection->user().GetDiagnostics(connection->Context().get(), request, &stored).ok());
    ASSERT_EQ(stored.diagnostics_size(), 1);
    const v1::ExtrapolationTable& table = stored.diagnostics(0).extrapolation();
    ASSERT_EQ(entry["results"].size(), static_cast<size_t>(table.results_size()));
    for (int i = 0; i < table.results_size(); ++i) {
      const json& result = entry["results"][i];
      EXPECT_EQ(result["method"], table.results(i).method());
      EXPECT_EQ(result["length"], std::to_string(table.results(i).length())) << "int64 as proto3 JSON writes it";
      EXPECT_EQ(result["multiple"], "2");
      EXPECT_EQ(result["val_loss"].get<double>(), table.results(i).val_loss());
      EXPECT_TRUE(result["val_loss_per_position"].empty());
    }
  }
  EXPECT_EQ(answer["trials"][0]["results"][1]["method"], "yarn");
  EXPECT_TRUE(GetJson("/api/sweeps/2/extrapolation")["trials"].empty());
  httplib::Result unknown = client_->Get("/api/sweeps/99/extrapolation", LoggedIn());
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404) << unknown->body;
}

// A trial's probe cells come with its diagnostics as the document "probe", typed as GetDiagnostics has
// it (ProbeTable; proto3 JSON writes int64 as strings): five of sweep 1's six SUCCEEDED trials have the
// population's pass-key probe (16 tokens with none, 32 with none and yarn, needle depths 0 and 1, four
// prompts a cell), the sixth (trial 6) an indexing probe of two list lengths with its own fields; the
// RUNNING and FAILED trials, without a final record, have none.
TEST_F(DashboardHttpTest, TheDiagnosticsEndpointHasATrialsProbeCellsAndNoProbeWithoutThem) {
  StartServer();
  const std::unique_ptr<client::CoordinatorConnection> connection = UserConnection();
  ASSERT_NE(connection, nullptr);
  struct Cell {
    int64_t length;
    const char* method;
    double depth;
    int64_t correct;
  };
  const std::vector<Cell> expected = {{16, "none", 0, 4}, {16, "none", 1, 4}, {32, "none", 0, 1},
                                      {32, "none", 1, 1}, {32, "yarn", 0, 3}, {32, "yarn", 1, 2}};
  int with_probe = 0, without_probe = 0;
  const json trials = GetJson("/api/sweeps/1/trials");
  for (const json& trial : trials["trials"]) {
    const std::string trial_id = trial["trial_id"].get<std::string>();
    const json diagnostics = GetJson("/api/trials/" + trial_id + "/diagnostics");
    std::vector<json> probes;
    for (const json& document : diagnostics["diagnostics"]) {
      if (document["name"] == "probe") probes.push_back(document);
    }
    if (trial["state"] != "TRIAL_STATE_SUCCEEDED") {
      EXPECT_TRUE(probes.empty()) << "trial " << trial_id << " (" << trial["state"] << ") has no final record";
      ++without_probe;
      continue;
    }
    ASSERT_EQ(probes.size(), 1u) << "trial " << trial_id;
    EXPECT_EQ(probes[0]["step"], "10") << "the final record's step";
    const json& cells = probes[0]["probe"]["results"];
    v1::GetDiagnosticsRequest request;
    request.set_trial_id(std::stoll(trial_id));
    request.add_names("probe");
    v1::GetDiagnosticsResponse stored;
    ASSERT_TRUE(connection->user().GetDiagnostics(connection->Context().get(), request, &stored).ok());
    ASSERT_EQ(stored.diagnostics_size(), 1);
    const v1::ProbeTable& table = stored.diagnostics(0).probe();
    ASSERT_EQ(cells.size(), static_cast<size_t>(table.results_size()));
    if (trial_id == "6") {
      ASSERT_EQ(cells.size(), 2u) << cells.dump();
      for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(cells[i]["probe"], "indexing");
        EXPECT_EQ(cells[i]["elements"], std::to_string(table.results(i).elements()));
        EXPECT_EQ(cells[i]["position_blind"].get<double>(), table.results(i).position_blind());
        EXPECT_EQ(cells[i]["chance"].get<double>(), 0.25);
      }
      ++with_probe;
      continue;
    }
    ASSERT_EQ(cells.size(), expected.size()) << cells.dump();
    for (size_t i = 0; i < expected.size(); ++i) {
      const json& cell = cells[i];
      const v1::ProbeResult& result = table.results(static_cast<int>(i));
      EXPECT_EQ(cell["probe"], "passkey");
      EXPECT_EQ(cell["score"], "decode");
      EXPECT_EQ(cell["length"], std::to_string(expected[i].length)) << "int64 as proto3 JSON writes it";
      EXPECT_EQ(cell["method"], expected[i].method);
      EXPECT_EQ(cell["depth"].get<double>(), expected[i].depth);
      EXPECT_EQ(cell["instances"], "4");
      EXPECT_EQ(cell["correct"], std::to_string(expected[i].correct));
      EXPECT_EQ(cell["accuracy"].get<double>(), static_cast<double>(expected[i].correct) / 4.0);
      EXPECT_EQ(cell["length"], std::to_string(result.length()));
      EXPECT_EQ(cell["method"], result.method());
      EXPECT_EQ(cell["correct"], std::to_string(result.correct()));
      EXPECT_EQ(cell["accuracy"].get<double>(), result.accuracy());
    }
    ++with_probe;
  }
  EXPECT_EQ(with_probe, 6);
  EXPECT_EQ(without_probe, 2);
}

TEST_F(DashboardHttpTest, TheRegistryEndpointListsEveryVariantFormAndMethodOfThisBuildInOrder) {
  StartServer();
  const json registry = GetJson("/api/registry");
  auto names = [](const json& rows) {
    std::vector<std::string> out;
    for (const json& row : rows) out.push_back(row["name"].get<std::string>());
    return out;
  };
  EXPECT_EQ(names(registry["positional_variants"]), PositionalVariantNames());
  EXPECT_EQ(names(registry["inverse_temperature_forms"]), InverseTemperatureFormNames());
  EXPECT_EQ(names(registry["length_extension_methods"]), LengthExtensionMethodNames());
  for (const json& variant : registry["positional_variants"]) {
    const PositionalVariant* described = FindPositionalVariant(variant["name"].get<std::string>());
    ASSERT_NE(described, nullptr);
    EXPECT_EQ(variant["label"], described->label());
    EXPECT_EQ(variant["summary"], described->summary());
    EXPECT_EQ(variant["rotary"], described->rotary());
  }
}

TEST_F(DashboardHttpTest, ControlIsRefusedWith403UnlessAllowed) {
  StartServer(/*allow_control=*/false);
  httplib::Result refused = client_->Post("/api/sweeps/2/pause", LoggedIn(), "", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  EXPECT_THAT(refused->body, HasSubstr("--allow-control"));
  httplib::Result get = client_->Get("/api/sweeps/2/pause", LoggedIn());
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);

  StartServer(/*allow_control=*/true);
  httplib::Result paused = client_->Post("/api/sweeps/2/pause", FromThePage(), "", "application/json");
  ASSERT_TRUE(paused);
  EXPECT_EQ(paused->status, 200) << paused->body;
  EXPECT_EQ(json::parse(paused->body)["state"], "SWEEP_STATE_PAUSED");
  httplib::Result resumed = client_->Post("/api/sweeps/2/resume", FromThePage(), "", "application/json");
  ASSERT_TRUE(resumed);
  EXPECT_EQ(json::parse(resumed->body)["state"], "SWEEP_STATE_ACTIVE");
}

TEST_F(DashboardHttpTest, ControlFromAnotherSitesPageIsRefusedAndChangesNothing) {
  StartServer(/*allow_control=*/true);
  ASSERT_EQ(SweepState(2), "SWEEP_STATE_ACTIVE");
  // The form another page on 127.0.0.1 can send with the cookie: refused, with or without the header.
  httplib::Headers foreign = LoggedIn();
  foreign.emplace("Origin", "http://evil.example");
  httplib::Result plain = client_->Post("/api/sweeps/2/pause", foreign, "", "text/plain");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->status, 403);
  EXPECT_THAT(json::parse(plain->body)["error"].get<std::string>(), HasSubstr("from another origin (http://evil.example"));
  foreign.emplace("X-Rung-Control", "1");
  httplib::Result with_header = client_->Post("/api/sweeps/2/pause", foreign, "", "text/plain");
  ASSERT_TRUE(with_header);
  EXPECT_EQ(with_header->status, 403);
  // Another port of the same host is another origin.
  httplib::Headers other_port = FromThePage();
  other_port.erase("Origin");
  other_port.emplace("Origin", "http://127.0.0.1:1");
  httplib::Result port = client_->Post("/api/sweeps/2/pause", other_port, "", "text/plain");
  ASSERT_TRUE(port);
  EXPECT_EQ(port->status, 403);
  // No Origin, but the browser says cross-site.
  httplib::Headers cross_site = LoggedIn();
  cross_site.emplace("Sec-Fetch-Site", "cross-site");
  cross_site.emplace("X-Rung-Control", "1");
  httplib::Result fetch_site = client_->Post("/api/sweeps/2/cancel", cross_site, "", "text/plain");
  ASSERT_TRUE(fetch_site);
  EXPECT_EQ(fetch_site->status, 403);
  EXPECT_THAT(fetch_site->body, HasSubstr("Sec-Fetch-Site: cross-site"));
  EXPECT_EQ(SweepState(2), "SWEEP_STATE_ACTIVE");
}

TEST_F(DashboardHttpTest, ControlWithoutTheControlHeaderIsRefused) {
  StartServer(/*allow_control=*/true);
  httplib::Headers same_origin = FromThePage();
  same_origin.erase("X-Rung-Control");
  httplib::Result refused = client_->Post("/api/sweeps/2/pause", same_origin, "", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);
  EXPECT_THAT(json::parse(refused->body)["error"].get<std::string>(), HasSubstr("X-Rung-Control: 1"));
  // A script (no Origin, no Sec-Fetch-Site) with the bearer token and the header is let through.
  httplib::Headers script = {{"Authorization", "Bearer " + server_->gate().token()}, {"X-Rung-Control", "1"}};
  httplib::Result paused = client_->Post("/api/sweeps/2/pause", script, "", "application/json");
  ASSERT_TRUE(paused);
  EXPECT_EQ(paused->status, 200) << paused->body;
  httplib::Result resumed = client_->Post("/api/sweeps/2/resume", FromThePage(), "", "application/json");
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->status, 200) << resumed->body;
  EXPECT_EQ(SweepState(2), "SWEEP_STATE_ACTIVE");
}

// A loopback TCP connection to the dashboard, written and read by hand. Reads wait up to 60 s.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval wait{60, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawConnection() { ::close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) { return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size()); }
  // Everything until the server closes (or 60 s pass).
  std::string ReadToEnd() {
    std::string all;
    char chunk[4096];
    for (ssize_t n; (n = ::recv(fd_, chunk, sizeof(chunk), 0)) > 0;) all.append(chunk, static_cast<size_t>(n));
    return all;
  }
  // One response's worth: until the body of a small JSON answer has arrived.
  std::string ReadResponse() {
    std::string all;
    char chunk[4096];
    while (all.find("}") == std::string::npos) {
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) break;
      all.append(chunk, static_cast<size_t>(n));
    }
    return all;
  }

 private:
  int fd_;
  bool connected_ = false;
};

TEST_F(DashboardHttpTest, TwoHundredTricklingClientsDoNotStopNormalRequestsAndAreClosedAtTheDeadline) {
  DashboardOptions options = Options();
  options.request_head_deadline = std::chrono::seconds(3);
  StartServer(/*allow_control=*/false, options);
  constexpr int kSlow = 200;
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < kSlow; ++i) {
    slow.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(slow.back()->connected()) << i;
    ASSERT_TRUE(slow.back()->Send("GET /api/info HTTP/1.1\r\n"));
  }
  // Each sends one more header line every 300 ms (well inside httplib's 5 s per-recv timeout), unauthenticated,
  // until the server closes it.
  std::atomic<bool> done{false};
  std::thread trickle([&] {
    for (int line = 0; !done; ++line) {
      for (auto& connection : slow) connection->Send("X-Line-" + std::to_string(line) + ": 1\r\n");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  // Meanwhile normal requests answer, many of them.
  for (int i = 0; i < 100; ++i) {
    httplib::Client normal("127.0.0.1", server_->port());
    normal.set_read_timeout(30, 0);
    httplib::Result result = normal.Get("/api/info", LoggedIn());
    ASSERT_TRUE(result) << "request " << i << " got no answer: " << httplib::to_string(result.error());
    EXPECT_EQ(result->status, 200);
  }
  // Every slow client is answered 408 and closed once its 3 s are up.
  for (int i = 0; i < kSlow; ++i) {
    EXPECT_THAT(slow[i]->ReadToEnd(), HasSubstr("408 Request Timeout")) << "slow client " << i;
  }
  done = true;
  trickle.join();
  ExpectStillServing();
}

TEST_F(DashboardHttpTest, IdleKeepAliveConnectionsMakeRoomForNewOnesNearTheLimit) {
  DashboardOptions options = Options();
  options.max_connections = 8;
  StartServer(/*allow_control=*/false, options);
  const std::string request =
      "GET /api/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + server_->gate().token() + "\r\n\r\n";
  // 20 clients one after another, each answered and then holding its connection open (keep-alive):
  // every one is served, the server closing the longest idle ones.
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 20; ++i) {
    held.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(held.back()->Send(request));
    EXPECT_THAT(held.back()->ReadResponse(), HasSubstr("HTTP/1.1 200")) << i;
  }
  EXPECT_EQ(held[0]->ReadToEnd(), "");  // the first was closed to make room, without a word
}

TEST_F(DashboardHttpTest, PipelinedRequestsAreEachAnswered) {
  StartServer();
  const std::string request =
      "GET /api/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + server_->gate().token() + "\r\n\r\n";
  RawConnection connection(server_->port());
  ASSERT_TRUE(connection.Send(request + request + "GET /api/info HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  const std::string all = connection.ReadToEnd();
  size_t ok = 0;
  for (size_t at = all.find("HTTP/1.1 200"); at != std::string::npos; at = all.find("HTTP/1.1 200", at + 1)) ++ok;
  EXPECT_EQ(ok, 2u) << all;
  EXPECT_THAT(all, HasSubstr("HTTP/1.1 401"));
}

TEST_F(DashboardHttpTest, IdleKeepAliveConnectionsAreClosedAtTheDeadlineWithoutAnAnswer) {
  DashboardOptions options = Options();
  options.request_head_deadline = std::chrono::seconds(1);
  StartServer(/*allow_control=*/false, options);
  RawConnection idle(server_->port());
  ASSERT_TRUE(idle.connected());
  ASSERT_TRUE(idle.Send("GET /api/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + server_->gate().token() +
                        "\r\n\r\n"));
  EXPECT_THAT(idle.ReadResponse(), HasSubstr("HTTP/1.1 200"));
  EXPECT_EQ(idle.ReadToEnd(), "");  // the server closes it, saying nothing
  RawConnection silent(server_->port());
  ASSERT_TRUE(silent.connected());
  EXPECT_EQ(silent.ReadToEnd(), "");
}

TEST_F(DashboardHttpTest, ConnectionsPastTheLimitAreAnswered503AtOnce) {
  DashboardOptions options = Options();
  options.max_connections = 8;
  options.request_head_deadline = std::chrono::seconds(1);
  StartServer(/*allow_control=*/false, options);
  const std::string request =
      "GET /api/info HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + server_->gate().token() + "\r\n\r\n";
  // 8 connections with half a request head each (the server accepts in connect order, so the ninth
  // is accepted after them).
  std::vector<std::unique_ptr<RawConnection>> open;
  for (int i = 0; i < 8; ++i) {
    open.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(open.back()->connected()) << i;
    ASSERT_TRUE(open.back()->Send("GET /api/info HTTP/1.1\r\n"));
  }
  RawConnection ninth(server_->port());
  ASSERT_TRUE(ninth.connected());
  ninth.Send(request);
  const std::string refused = ninth.ReadToEnd();
  if (!refused.empty()) {  // the 503 may be lost to the reset of a close with the request unread
    EXPECT_THAT(refused, HasSubstr("503 Service Unavailable"));
    EXPECT_THAT(refused, HasSubstr("too many connections"));
  }
  // Once one is closed by the server (its head's deadline), a new connection is served.
  EXPECT_THAT(open[0]->ReadToEnd(), HasSubstr("408 Request Timeout"));
  open.erase(open.begin());
  RawConnection next(server_->port());
  ASSERT_TRUE(next.Send(request));
  EXPECT_THAT(next.ReadResponse(), HasSubstr("HTTP/1.1 200"));
}


TEST_F(DashboardHttpTest, HttpsServesWhileUnfinishedHandshakesWaitAndAreClosedAtTheDeadline) {
  agent::testing::ScratchDir scratch;
  DashboardOptions options = Options();
  options.tls_cert_file = scratch.Path("cert.pem");
  options.tls_key_file = scratch.Path("key.pem");
  options.request_head_deadline = std::chrono::seconds(2);
  const ::rung::testing::PemPair pem = ::rung::testing::SelfSignedLocalhostCertificate();
  std::ofstream(options.tls_cert_file) << pem.certificate;
  std::ofstream(options.tls_key_file) << pem.key;
  StartServer(/*allow_control=*/false, options);
  // 100 connections that never start (or finish) their TLS handshake.
  std::vector<std::unique_ptr<RawConnection>> stalled;
  for (int i = 0; i < 100; ++i) {
    stalled.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(stalled.back()->connected());
    if (i % 2 == 0) stalled.back()->Send(std::string("\x16\x03\x01\x02\x00\x01", 6));  // half a ClientHello
  }
  for (int i = 0; i < 20; ++i) {
    httplib::SSLClient https("127.0.0.1", server_->port());
    https.enable_server_certificate_verification(false);
    https.set_read_timeout(30, 0);
    httplib::Result result = https.Get("/api/info", {{"Authorization", "Bearer " + server_->gate().token()}});
    ASSERT_TRUE(result) << "HTTPS request " << i << ": " << httplib::to_string(result.error());
    EXPECT_EQ(result->status, 200);
  }
  httplib::SSLClient keep("127.0.0.1", server_->port());  // two requests on one TLS connection
  keep.enable_server_certificate_verification(false);
  keep.set_keep_alive(true);
  for (int i = 0; i < 2; ++i) {
    httplib::Result result = keep.Get("/api/sweeps", {{"Authorization", "Bearer " + server_->gate().token()}});
    ASSERT_TRUE(result) << i;
    EXPECT_EQ(result->status, 200);
  }
  for (auto& connection : stalled) EXPECT_EQ(connection->ReadToEnd(), "");  // closed at the deadline
}

TEST_F(DashboardHttpTest, HostileRequestsGetClearErrorsAndTheServerCarriesOn) {
  StartServer();
  struct Case {
    std::string path;
    int status;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {"/api/sweeps/abc", 400, "bad sweep id 'abc'"},
           {"/api/sweeps/0", 400, "bad sweep id"},
           {"/api/sweeps/-1/trials", 400, "bad sweep id"},
           {"/api/sweeps/99999999999999999999999", 400, "bad sweep id"},
           {"/api/sweeps/999", 404, "coordinator"},
           {"/api/trials/999", 404, "coordinator"},
           {"/api/sweeps/1/nosuch", 404, "no such endpoint"},
           {"/api/sweeps/1/trials/extra", 404, "no such endpoint"},
           {"/api/sweeps/1/curves?points=abc", 400, "not a whole number"},
           {"/api/sweeps/1/curves?points=99999999", 400, "is outside 4..4000"},
           {"/api/sweeps/1/curves?points=1", 400, "outside"},
           {"/api/sweeps/1/curves?x=epochs", 400, "use step, tokens, flops or wall_time"},
           {"/api/sweeps/1/curves?trials=1,x", 400, "not a trial id"},
           {"/api/sweeps/1/results?summary=worst", 400, "final, best or last"},
           {"/api/trials/1/logs?tail=0", 400, "outside"},
           {"/api/sweeps/1/results?group_by=" + std::string(2000, 'k'), 400, "longer than"},
           {"/../../etc/passwd", 404, ""},
           {"/%2e%2e/%2e%2e/etc/passwd", 404, ""},
           {"/index.html%00.js", 404, ""},
           {"/api/sweeps/1%00/trials", 400, ""},
       }) {
    httplib::Result result = client_->Get(c.path.c_str(), LoggedIn());
    ASSERT_TRUE(result) << c.path;
    EXPECT_EQ(result->status, c.status) << c.path << ": " << result->body;
    EXPECT_THAT(result->body, HasSubstr(c.says)) << c.path;
  }
  // Junk bodies and methods.
  httplib::Result junk = client_->Post("/api/sweeps/1/pause", LoggedIn(), std::string("\x00\xff{{{", 5), "application/json");
  ASSERT_TRUE(junk);
  EXPECT_EQ(junk->status, 403);
  httplib::Result big = client_->Post("/api/sweeps/1/pause", LoggedIn(), std::string(1 << 20, '{'), "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
  httplib::Result put = client_->Put("/api/sweeps", LoggedIn(), "{}", "application/json");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  ExpectStillServing();

  // A huge header and a huge URI: refused, and the server carries on.
  httplib::Headers huge = LoggedIn();
  huge.emplace("X-Junk", std::string(100000, 'x'));
  httplib::Result huge_header = client_->Get("/api/info", huge);
  if (huge_header) {
    EXPECT_NE(huge_header->status, 200);
  }
  ExpectStillServing();
  httplib::Result huge_uri = client_->Get(("/api/sweeps?x=" + std::string(20000, 'y')).c_str(), LoggedIn());
  if (huge_uri) {
    EXPECT_EQ(huge_uri->status, 414);
  }
  ExpectStillServing();
  // Many cookies, one of them right, one wrong token in the header.
  httplib::Result mixed = client_->Get("/api/info", {{"Cookie", "a=1; rung_dashboard=wrong; b"},
                                                     {"Authorization", "Bearer " + server_->gate().token()}});
  ASSERT_TRUE(mixed);
  EXPECT_EQ(mixed->status, 200);
  // A raw request that is not HTTP at all.
  httplib::Client raw("127.0.0.1", server_->port());
  httplib::Result nonsense = raw.Get("/\r\n\r\nGARBAGE");
  (void)nonsense;
  ExpectStillServing();
}

TEST_F(DashboardHttpTest, LiveUpdatesStartWithTheSweepsSnapshot) {
  StartServer();
  std::string received;
  httplib::Client stream("127.0.0.1", server_->port());
  stream.set_read_timeout(10, 0);
  httplib::Result result = stream.Get("/api/sweeps/2/events", LoggedIn(), [&](const char* data, size_t length) {
    received.append(data, length);
    return received.find("\n\n") == std::string::npos;  // stop after the first message
  });
  EXPECT_THAT(received, HasSubstr("event: update\ndata: {"));
  EXPECT_THAT(received, HasSubstr("\"snapshot\":true"));
  httplib::Result missing = client_->Get("/api/sweeps/999/events", LoggedIn());
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  ExpectStillServing();
}

// A coordinator with a viewer token (read-only) and one small sweep.
class ViewerTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.database_path = scratch_.Path("rung.db");
    options.user_token_file = scratch_.Path("user.token");
    options.worker_token_file = scratch_.Path("worker.token");
    options.viewer_token_file = scratch_.Path("viewer.token");
    for (const std::string& file : {options.user_token_file, options.worker_token_file, options.viewer_token_file}) {
      ASSERT_TRUE(server::WriteFreshTokenFile(file).ok());
    }
    StatusOr<std::unique_ptr<server::CoordinatorServer>> started = server::CoordinatorServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    coordinator_ = std::move(started).value();
    client::ConnectionOptions user;
    user.address = coordinator_->address();
    user.token_file = options.user_token_file;
    auto connection = client::CoordinatorConnection::Open(user);
    ASSERT_TRUE(connection.ok());
    v1::SubmitSweepRequest submit;
    submit.set_spec_text("name: viewed\nmetric: {name: val_loss, goal: minimize}\ndata: {source: builtin, seq_len: 16}\n"
                         "train: {batch_size: 2, steps: 10}\nladder:\n  rungs:\n    - {layers: 1, d_model: 16, heads: 2}\n"
                         "sweep:\n  seed: [0, 1]\n");
    submit.set_spec_file_name("viewed.yaml");
    v1::SubmitSweepResponse submitted;
    ASSERT_TRUE((*connection)->user().SubmitSweep((*connection)->Context().get(), submit, &submitted).ok());
    sweep_id_ = submitted.sweep_id();
  }

  DashboardOptions ViewerOptions() const {
    DashboardOptions options;
    options.connection.address = coordinator_->address();
    options.connection.token_file = scratch_.Path("viewer.token");
    options.listen = "127.0.0.1:0";
    options.web_root = RUNG_DASHBOARD_WEB_ROOT;
    return options;
  }

  agent::testing::ScratchDir scratch_;
  std::unique_ptr<server::CoordinatorServer> coordinator_;
  int64_t sweep_id_ = 0;
};

TEST_F(ViewerTokenTest, AllowControlWithAViewerTokenIsRefusedAtStart) {
  DashboardOptions options = ViewerOptions();
  options.allow_control = true;
  StatusOr<std::unique_ptr<DashboardServer>> refused = DashboardServer::Start(options);
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(refused.status().message(), HasSubstr("--allow-control needs a user token"));
  EXPECT_THAT(refused.status().message(), HasSubstr("ROLE_VIEWER"));
}

TEST_F(ViewerTokenTest, AViewerTokenReadsEverythingAndIsRefusedAtAControlEndpoint) {
  StatusOr<std::unique_ptr<DashboardServer>> server = DashboardServer::Start(ViewerOptions());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client client("127.0.0.1", (*server)->port());
  const httplib::Headers login = {{"Authorization", "Bearer " + (*server)->gate().token()}};
  const std::string sweep = "/api/sweeps/" + std::to_string(sweep_id_);
  for (const std::string& path : {std::string("/api/info"), std::string("/api/sweeps"), sweep, sweep + "/trials",
                                  sweep + "/curves", sweep + "/results?summary=last"}) {
    httplib::Result result = client.Get(path.c_str(), login);
    ASSERT_TRUE(result) << path;
    EXPECT_EQ(result->status, 200) << path << ": " << result->body;
  }
  httplib::Result refused = client.Post((sweep + "/cancel").c_str(), login, "", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403);

  // Behind the dashboard's own refusal, the coordinator's: a viewer token cannot change a sweep.
  client::ConnectionOptions viewer = ViewerOptions().connection;
  auto connection = client::CoordinatorConnection::Open(viewer);
  ASSERT_TRUE(connection.ok());
  DashboardApi api(**connection, /*allow_control=*/true);
  ApiResponse denied = api.Handle(ApiRequest{"POST", sweep + "/pause", {}});
  EXPECT_EQ(denied.status, 403);
  EXPECT_THAT(denied.body, HasSubstr("a viewer token only reads"));
  ApiResponse still = api.Handle(ApiRequest{"GET", sweep, {}});
  EXPECT_THAT(still.body, HasSubstr("SWEEP_STATE_ACTIVE"));
}

// ViewerTokenTest's coordinator with, beside its sweep without a precision block, a precision-aimed
// one (rope against lerope on two rungs, seeds 0-2, no trial run): /precision is GetPrecision's answer
// as the coordinator gives it, a row per target (lerope at each rung, no fit yet); for the sweep
// without the block, GetPrecision's FAILED_PRECONDITION as 409 with the coordinator's words.
class PrecisionEndpointTest : public ViewerTokenTest {
 protected:
  void SetUp() override {
    ViewerTokenTest::SetUp();
    client::ConnectionOptions user;
    user.address = coordinator_->address();
    user.token_file = scratch_.Path("user.token");
    auto connection = client::CoordinatorConnection::Open(user);
    ASSERT_TRUE(connection.ok());
    connection_ = std::move(connection).value();
    v1::SubmitSweepRequest submit;
    submit.set_spec_text(
        "name: aimed\nmetric: {name: val_loss, goal: minimize}\nbaseline: {position.variant: rope}\n"
        "data: {source: builtin, seq_len: 16}\ntrain: {batch_size: 2, steps: 10}\nladder:\n  rungs:\n"
        "    - {layers: 1, d_model: 16, heads: 2}\n    - {layers: 2, d_model: 32, heads: 2}\n"
        "sweep:\n  position.variant: [rope, lerope]\n  seed: [0, 1, 2]\n"
        "precision: {target_half_width: 0.01, budget_flops: 1.0e15}\n");
    submit.set_spec_file_name("aimed.yaml");
    v1::SubmitSweepResponse submitted;
    grpc::Status status = connection_->user().SubmitSweep(connection_->Context().get(), submit, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
    aimed_id_ = submitted.sweep_id();
  }

  std::unique_ptr<client::CoordinatorConnection> connection_;
  int64_t aimed_id_ = 0;
};

TEST_F(PrecisionEndpointTest, ThePrecisionEndpointIsGetPrecisionAndA409WithoutAPrecisionBlock) {
  DashboardApi api(*connection_, /*allow_control=*/false);
  const std::string aimed = "/api/sweeps/" + std::to_string(aimed_id_);
  ApiResponse answer = api.Handle(ApiRequest{"GET", aimed + "/precision", {}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const json body = json::parse(answer.body);
  v1::GetPrecisionRequest request;
  request.set_sweep_id(aimed_id_);
  v1::GetPrecisionResponse expected;
  ASSERT_TRUE(connection_->user().GetPrecision(connection_->Context().get(), request, &expected).ok());
  EXPECT_EQ(body, client::ToJson(expected));
  EXPECT_EQ(body["precision"], "aiming");
  EXPECT_EQ(body["estimator"], "hermite");
  EXPECT_EQ(body["level"].get<double>(), 0.95);
  EXPECT_EQ(body["target_half_width"].get<double>(), 0.01);
  EXPECT_EQ(body["budget_flops"].get<double>(), 1.0e15);
  EXPECT_GT(body["planned_flops"].get<double>(), 0);
  EXPECT_EQ(body["unfinished"], "12") << "int64 as proto3 JSON writes it: 2 rungs x 2 variants x 3 seeds";
  EXPECT_EQ(body["closed_reason"], "");
  ASSERT_EQ(body["rows"].size(), 2u) << body.dump();
  for (const json& row : body["rows"]) {
    EXPECT_EQ(row["variant"], "lerope") << row.dump();
    EXPECT_FALSE(row.contains("multiplier")) << "unset without a fit: " << row.dump();
    EXPECT_EQ(row["met"], false);
    EXPECT_THAT(row["note"].get<std::string>(), HasSubstr("no fit yet")) << row.dump();
  }
  EXPECT_EQ(body["rows"][0]["rung_label"], "L1-d16");
  EXPECT_EQ(body["rows"][1]["rung_label"], "L2-d32");

  // The sweep without a precision block, an unknown sweep and a write: as /tuning answers them.
  ApiResponse plain = api.Handle(ApiRequest{"GET", "/api/sweeps/" + std::to_string(sweep_id_) + "/precision", {}});
  EXPECT_EQ(plain.status, 409) << plain.body;
  EXPECT_THAT(json::parse(plain.body)["error"].get<std::string>(), HasSubstr("coordinator: sweep 'viewed' has no precision block"));
  ApiResponse tuning = api.Handle(ApiRequest{"GET", "/api/sweeps/" + std::to_string(sweep_id_) + "/tuning", {}});
  EXPECT_EQ(tuning.status, 409) << tuning.body;
  EXPECT_EQ(api.Handle(ApiRequest{"GET", "/api/sweeps/999/precision", {}}).status, 404);
  EXPECT_EQ(api.Handle(ApiRequest{"POST", aimed + "/precision", {}}).status, 405);
  EXPECT_EQ(api.Handle(ApiRequest{"GET", aimed + "/precision/x", {}}).status, 404);

  // Served over HTTP to the page, and the sweep says it has the block.
  StatusOr<std::unique_ptr<DashboardServer>> server = DashboardServer::Start(ViewerOptions());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client client("127.0.0.1", (*server)->port());
  const httplib::Headers login = {{"Authorization", "Bearer " + (*server)->gate().token()}};
  httplib::Result served = client.Get((aimed + "/precision").c_str(), login);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200) << served->body;
  EXPECT_EQ(json::parse(served->body), body);
  httplib::Result sweep = client.Get(aimed.c_str(), login);
  ASSERT_TRUE(sweep);
  EXPECT_EQ(json::parse(sweep->body)["precision"], "aiming");
  httplib::Result other = client.Get(("/api/sweeps/" + std::to_string(sweep_id_)).c_str(), login);
  ASSERT_TRUE(other);
  EXPECT_EQ(json::parse(other->body)["precision"], "");
}

// A coordinator of its own (nothing else waits for a lease) with the two sweeps law_sweep.h plays:
// an IsoFLOP grid of rope and lerope whose final losses a known L(N, D) gives, and a ladder whose sizes
// each ran one token count. /laws is GetLaws' answer as the coordinator gives it (its defaults: 200
// bootstrap replicates, seed 0, so the same on every call), ?baseline= and ?sharing= passed through;
// for the ladder, GetLaws' FAILED_PRECONDITION as 409 with the coordinator's words.
class LawsEndpointTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new agent::testing::ScratchDir();
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.database_path = scratch_->Path("rung.db");
    options.user_token_file = scratch_->Path("user.token");
    options.worker_token_file = scratch_->Path("worker.token");
    for (const std::string& file : {options.user_token_file, options.worker_token_file}) {
      ASSERT_TRUE(server::WriteFreshTokenFile(file).ok());
    }
    StatusOr<std::unique_ptr<server::CoordinatorServer>> started = server::CoordinatorServer::Start(options);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    coordinator_ = std::move(started).value().release();
    for (auto [spec, id] : {std::pair{testing::kIsoflopLawSpec, &laws_id_}, std::pair{testing::kOneTokenCountSpec, &ladder_id_}}) {
      StatusOr<int64_t> played = testing::PlayLawSweep(coordinator_->address(), options.user_token_file,
                                                       options.worker_token_file, spec);
      ASSERT_TRUE(played.ok()) << played.status().ToString();
      *id = *played;
    }
  }
  static void TearDownTestSuite() {
    delete coordinator_;
    coordinator_ = nullptr;
    delete scratch_;
    scratch_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(coordinator_, nullptr);
    client::ConnectionOptions user;
    user.address = coordinator_->address();
    user.token_file = scratch_->Path("user.token");
    auto connection = client::CoordinatorConnection::Open(user);
    ASSERT_TRUE(connection.ok()) << connection.status().ToString();
    connection_ = std::move(connection).value();
  }

  // GetLaws' own answer, as JSON.
  json Expected(int64_t sweep_id, const std::string& baseline = "", const std::string& sharing = "") {
    v1::GetLawsRequest request;
    request.set_sweep_id(sweep_id);
    request.set_baseline(baseline);
    request.set_sharing(sharing);
    v1::GetLawsResponse expected;
    grpc::Status status = connection_->user().GetLaws(connection_->Context().get(), request, &expected);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return client::ToJson(expected);
  }

  static agent::testing::ScratchDir* scratch_;
  static server::CoordinatorServer* coordinator_;
  static int64_t laws_id_;
  static int64_t ladder_id_;
  std::unique_ptr<client::CoordinatorConnection> connection_;
};

agent::testing::ScratchDir* LawsEndpointTest::scratch_ = nullptr;
server::CoordinatorServer* LawsEndpointTest::coordinator_ = nullptr;
int64_t LawsEndpointTest::laws_id_ = 0;
int64_t LawsEndpointTest::ladder_id_ = 0;

TEST_F(LawsEndpointTest, TheLawsEndpointIsGetLawsOfAnIsoflopGridWithItsLawsMultipliersRolloutAndProfiles) {
  DashboardApi api(*connection_, /*allow_control=*/false);
  const std::string path = "/api/sweeps/" + std::to_string(laws_id_) + "/laws";
  ApiResponse answer = api.Handle(ApiRequest{"GET", path, {}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const json body = json::parse(answer.body);
  EXPECT_EQ(body, Expected(laws_id_));
  EXPECT_EQ(body["unfinished"], "0");
  const json& report = body["report"];
  EXPECT_EQ(report["source"], "sweep dashboard-laws");
  EXPECT_EQ(report["baseline"], "rope");
  EXPECT_EQ(report["level"].get<double>(), 0.95);
  // A law per variant near the one that played the runs, each with its intervals and 12 runs.
  ASSERT_EQ(report["variants"].size(), 2u) << report["variants"].dump();
  for (const json& variant : report["variants"]) {
    const std::string name = variant["variant"].get<std::string>();
    ASSERT_TRUE(name == "rope" || name == "lerope") << name;
    EXPECT_EQ(variant["points"], 12) << name;
    EXPECT_NEAR(variant["E"].get<double>(), name == "rope" ? testing::kLawTruth.e_rope : testing::kLawTruth.e_lerope, 0.1) << name;
    EXPECT_LT(variant["rmse"].get<double>(), 0.02) << name;
    for (const char* key : {"E_interval", "A_interval", "B_interval", "alpha_interval", "beta_interval"}) {
      ASSERT_TRUE(variant.contains(key)) << name << " " << key << ": " << variant.dump();
      EXPECT_LE(variant[key]["low"].get<double>(), variant[key]["high"].get<double>()) << name << " " << key;
    }
    EXPECT_TRUE(variant.contains("n_exponent")) << variant.dump();
  }
  EXPECT_EQ(report["runs"].size(), 24u);
  // lerope's multipliers against rope, at each compute under both allocations, the largest extrapolated.
  ASSERT_FALSE(report["multipliers"].empty());
  std::set<std::string> allocations;
  bool extrapolated = false, within = false;
  for (const json& row : report["multipliers"]) {
    EXPECT_EQ(row["variant"], "lerope") << row.dump();
    allocations.insert(row["allocation"].get<std::string>());
    (row["extrapolated"].get<bool>() ? extrapolated : within) = true;
  }
  EXPECT_EQ(allocations, (std::set<std::string>{"optimal", "rule"}));
  EXPECT_TRUE(extrapolated && within) << report["multipliers"].dump();
  // The rollout: the largest size held out, its 3 budgets x 2 variants predicted.
  ASSERT_TRUE(report.contains("rollout")) << report.dump();
  EXPECT_EQ(report["rollout"]["held_out_n"].size(), 1u);
  EXPECT_EQ(report["rollout"]["points"].size(), 6u) << report["rollout"].dump();
  // The IsoFLOP profiles: 3 budgets per variant, each with its N*.
  ASSERT_TRUE(report.contains("isoflop")) << report.value("isoflop_why", "");
  ASSERT_EQ(report["isoflop"]["variants"].size(), 2u);
  for (const json& variant : report["isoflop"]["variants"]) {
    ASSERT_EQ(variant["budgets"].size(), 3u) << variant.dump();
    for (const json& budget : variant["budgets"]) EXPECT_TRUE(budget.contains("n_opt")) << budget.dump();
  }

  // Served over HTTP to the page; ?baseline= and ?sharing= reach GetLaws; bad ones are 400.
  StatusOr<std::unique_ptr<DashboardServer>> server = DashboardServer::Start([&] {
    DashboardOptions options;
    options.connection.address = coordinator_->address();
    options.connection.token_file = scratch_->Path("user.token");
    options.listen = "127.0.0.1:0";
    options.web_root = RUNG_DASHBOARD_WEB_ROOT;
    return options;
  }());
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  httplib::Client client("127.0.0.1", (*server)->port());
  client.set_read_timeout(60, 0);
  const httplib::Headers login = {{"Authorization", "Bearer " + (*server)->gate().token()}};
  httplib::Result served = client.Get(path.c_str(), login);
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200) << served->body;
  EXPECT_EQ(json::parse(served->body), body);
  httplib::Result against_lerope = client.Get((path + "?baseline=lerope&sharing=exponents").c_str(), login);
  ASSERT_TRUE(against_lerope);
  ASSERT_EQ(against_lerope->status, 200) << against_lerope->body;
  const json other = json::parse(against_lerope->body);
  EXPECT_EQ(other, Expected(laws_id_, "lerope", "exponents"));
  EXPECT_EQ(other["report"]["baseline"], "lerope");
  EXPECT_EQ(other["report"]["sharing"], "exponents");
  ASSERT_FALSE(other["report"]["multipliers"].empty());
  EXPECT_EQ(other["report"]["multipliers"][0]["variant"], "rope");
  httplib::Result bad_sharing = client.Get((path + "?sharing=everything").c_str(), login);
  ASSERT_TRUE(bad_sharing);
  EXPECT_EQ(bad_sharing->status, 400) << bad_sharing->body;
  EXPECT_THAT(json::parse(bad_sharing->body)["error"].get<std::string>(), HasSubstr("GetLawsRequest.sharing"));
  httplib::Result bad_baseline = client.Get((path + "?baseline=nope").c_str(), login);
  ASSERT_TRUE(bad_baseline);
  EXPECT_EQ(bad_baseline->status, 400) << bad_baseline->body;
  EXPECT_THAT(json::parse(bad_baseline->body)["error"].get<std::string>(), HasSubstr("no trial of sweep dashboard-laws is the variant 'nope'"));
}

TEST_F(LawsEndpointTest, ALadderWhoseSizesEachRanOneTokenCountIsA409SayingWhy) {
  DashboardApi api(*connection_, /*allow_control=*/false);
  const std::string path = "/api/sweeps/" + std::to_string(ladder_id_) + "/laws";
  ApiResponse answer = api.Handle(ApiRequest{"GET", path, {}});
  EXPECT_EQ(answer.status, 409) << answer.body;
  const std::string error = json::parse(answer.body)["error"].get<std::string>();
  EXPECT_THAT(error, HasSubstr("ran on one allocation rule (its D rises with N, one D per N), so L(N, D) is not identified"));
  EXPECT_THAT(error, HasSubstr("ladder.isoflop_budgets"));
  v1::GetLawsRequest request;
  request.set_sweep_id(ladder_id_);
  v1::GetLawsResponse ignored;
  grpc::Status status = connection_->user().GetLaws(connection_->Context().get(), request, &ignored);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(error, HasSubstr(status.error_message()));
  // An unknown sweep and a write, as the other sweep endpoints answer them.
  EXPECT_EQ(api.Handle(ApiRequest{"GET", "/api/sweeps/999/laws", {}}).status, 404);
  EXPECT_EQ(api.Handle(ApiRequest{"POST", path, {}}).status, 405);
  EXPECT_EQ(api.Handle(ApiRequest{"GET", path + "/x", {}}).status, 404);
}

TEST_F(DashboardHttpTest, StartRefusesMissingPageFilesAndUnreachableCoordinators) {
  DashboardOptions options = Options();
  options.web_root = "/nonexistent-rung-dashboard";
  StatusOr<std::unique_ptr<DashboardServer>> missing = DashboardServer::Start(options);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("rung_dashboard_web"));
  options = Options();
  options.connection.address = "127.0.0.1:1";
  options.connection.timeout_seconds = 2;
  StatusOr<std::unique_ptr<DashboardServer>> unreachable = DashboardServer::Start(options);
  EXPECT_EQ(unreachable.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(unreachable.status().message(), HasSubstr("cannot reach the coordinator"));
}

}  // namespace
}  // namespace rung::dashboard

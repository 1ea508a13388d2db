#include "coordinator/dashboard/dashboard_server.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <httplib.h>

#include "coordinator/dashboard/connection_guard.h"
#include "coordinator/dashboard/gzip_body.h"
#include "coordinator/dashboard/sweep_events.h"
#include "core/common/executable_folder.h"
#include "core/common/network_address.h"

namespace rung::dashboard {
namespace {

namespace fs = std::filesystem;

// Live-update streams held open at once (each holds a server thread and a coordinator stream).
constexpr int kMaxEventStreams = 48;
constexpr int kServerThreads = kMaxEventStreams + 16;
constexpr size_t kMaxRequestBody = 64 * 1024;
constexpr auto kKeepAlive = std::chrono::seconds(3);  // also how soon a stopping server ends a stream

const char kUnauthorizedPage[] =
    "<!doctype html><meta charset=utf-8><title>rung dashboard: 401</title>"
    "<p>401: not logged in. Open the URL that <code>rung dashboard</code> printed: it carries "
    "<code>?token=...</code> and logs this browser in.</p>\n";

// Types httplib does not compress itself (gzip_body.h): SetBody gzips these.
constexpr char kJsonType[] = "application/json; charset=utf-8";
constexpr char kScriptType[] = "application/javascript; charset=utf-8";

// The response's body: gzip-compressed when it is one of the types above, long enough, and the
// request accepts gzip.
void SetBody(const httplib::Request& request, httplib::Response& response, const std::string& body,
             const std::string& type) {
  if ((type == kJsonType || type == kScriptType) && body.size() >= kMinGzipBytes &&
      AcceptsGzip(request.get_header_value("Accept-Encoding"))) {
    if (std::optional<std::string> compressed = Gzip(body)) {
      response.set_header("Content-Encoding", "gzip");
      response.set_header("Vary", "Accept-Encoding");
      response.set_content(*compressed, type);
      return;
    }
  }
  response.set_content(body, type);
}

std::string TypeOf(const std::string& name) {
  const std::string extension = fs::path(name).extension().string();
  if (extension == ".html") return "text/html; charset=utf-8";
  if (extension == ".js") return kScriptType;
  if (extension == ".css") return "text/css; charset=utf-8";
  if (extension == ".svg") return "image/svg+xml";
  if (extension == ".map" || extension == ".json") return kJsonType;
  return "application/octet-stream";
}

void SetSecurityHeaders(httplib::Response& response) {
  response.set_header("Content-Security-Policy",
                      "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
                      "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  response.set_header("X-Content-Type-Options", "nosniff");
  response.set_header("X-Frame-Options", "DENY");
  response.set_header("Referrer-Policy", "no-referrer");
  response.set_header("Cache-Control", "no-store");
}

std::string Bare(std::string host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
  return host;
}

// A control request (any method but GET, HEAD and OPTIONS) must come from the dashboard's own page:
// Origin, when sent, is this server's own (scheme://Host); Sec-Fetch-Site, when sent, is
// same-origin; and X-Rung-Control: 1 is there (a header a foreign page cannot add without a CORS
// preflight, which this server never grants). "" when it passes, else why not.
std::string RefuseForeignControl(const httplib::Request& request, bool secure) {
  if (request.method == "GET" || request.method == "HEAD" || request.method == "OPTIONS") return "";
  const std::string own = std::string(secure ? "https://" : "http://") + request.get_header_value("Host");
  if (request.has_header("Origin") && request.get_header_value("Origin") != own) {
    return "a control request from another origin (" + request.get_header_value("Origin").substr(0, 200) +
           ", this dashboard is " + own.substr(0, 200) + ") is refused";
  }
  if (request.has_header("Sec-Fetch-Site") && request.get_header_value("Sec-Fetch-Site") != "same-origin") {
    return "a control request the browser marks Sec-Fetch-Site: " +
           request.get_header_value("Sec-Fetch-Site").substr(0, 50) + " is refused: only the dashboard's own page may send one";
  }
  if (request.get_header_value("X-Rung-Control") != "1") {
    return "a control request needs the header X-Rung-Control: 1 (the dashboard's page sends it)";
  }
  return "";
}

ApiRequest ToApiRequest(const httplib::Request& request) {
  ApiRequest api;
  api.method = request.method;
  api.path = request.path;
  for (const auto& [name, value] : request.params) api.query.emplace(name, value);  // the first of each name
  return api;
}

}  // namespace

StatusOr<std::unique_ptr<DashboardServer>> DashboardServer::Start(const DashboardOptions& options) {
  RUNG_RETURN_IF_ERROR(CheckListenAddress(options));
  RUNG_ASSIGN_OR_RETURN(LoginGate gate, LoginGate::Fresh());
  auto server = std::unique_ptr<DashboardServer>(new DashboardServer(std::move(gate)));
  server->options_ = options;
  RUNG_ASSIGN_OR_RETURN(server->connection_, client::CoordinatorConnection::Open(options.connection));

  v1::ServerInfo info;
  grpc::Status asked = server->connection_->user().GetServerInfo(server->connection_->Context().get(),
                                                                 v1::GetServerInfoRequest(), &info);
  if (!asked.ok()) {
    if (asked.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        asked.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
      return Status::Unauthenticated("the coordinator at " + options.connection.address +
                                     " refused the token: " + asked.error_message());
    }
    return Status::Unavailable("cannot reach the coordinator at " + options.connection.address + ": " +
                               asked.error_message() + " (is it running? --coordinator HOST:PORT)");
  }
  if (options.allow_control && info.caller_role() != v1::ROLE_USER) {
    return Status::PermissionDenied("--allow-control needs a user token (the coordinator's --user-token-file); "
                                    "this token may only read (role " + v1::Role_Name(info.caller_role()) + ")");
  }

  const std::string web_root =
      options.web_root.empty() ? (fs::path(ExecutableFolder()) / "dashboard").string() : options.web_root;
  RUNG_RETURN_IF_ERROR(server->LoadWebFiles(web_root));
  server->api_ = std::make_unique<DashboardApi>(*server->connection_, options.allow_control);

  ConnectionLimits limits;
  limits.max_connections = options.max_connections;
  limits.head_deadline = options.request_head_deadline;
  limits.workers = kServerThreads;
  auto guarded_server = std::make_unique<GuardedServer>(limits);
  if (!options.tls_cert_file.empty() && !guarded_server->ServeTls(options.tls_cert_file, options.tls_key_file).ok()) {
    return Status::InvalidArgument("cannot serve HTTPS with --tls-cert " + options.tls_cert_file + " and --tls-key " +
                                   options.tls_key_file + ": unreadable, not PEM, or the key does not match");
  }
  GuardedServer* guarded = guarded_server.get();
  server->http_ = std::move(guarded_server);
  server->http_->set_payload_max_length(kMaxRequestBody);
  server->Route();

  const HostPort where = *SplitHostPort(options.listen);
  server->host_ = where.host;
  const int port = std::stoi(where.port);
  if (port == 0) {
    server->port_ = server->http_->bind_to_any_port(Bare(where.host));
  } else if (server->http_->bind_to_port(Bare(where.host), port)) {
    server->port_ = port;
  } else {
    server->port_ = -1;
  }
  if (server->port_ <= 0) {
    return Status::InvalidArgument("cannot listen on " + options.listen +
                                   ": the port is in use or the address is not this machine's (--listen HOST:PORT)");
  }
  guarded->WidenBacklog();
  httplib::Server* http = server->http_.get();
  server->listener_ = std::thread([http] { http->listen_after_bind(); });
  return server;
}

DashboardServer::DashboardServer(LoginGate gate) : gate_(std::move(gate)) {}

DashboardServer::~DashboardServer() {
  Stop();
  if (listener_.joinable()) listener_.join();
  http_.reset();  // a GuardedServer joins its poller and workers, which use the members below
}

std::string DashboardServer::url() const {
  const std::string scheme = options_.tls_cert_file.empty() ? "http" : "https";
  return scheme + "://" + host_ + ":" + std::to_string(port_) + "/?token=" + gate_.token();
}

void DashboardServer::Wait() {
  if (listener_.joinable()) listener_.join();
}

void DashboardServer::Stop() {
  if (http_) http_->stop();
}

Status DashboardServer::LoadWebFiles(const std::string& folder) {
  std::error_code error;
  if (!fs::is_regular_file(fs::path(folder) / "index.html", error)) {
    return Status::NotFound("the dashboard's page is missing: no " + (fs::path(folder) / "index.html").string() +
                            " (build it with `cmake --build build --target rung_dashboard_web`; it needs node and npm)");
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, error)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream stream(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << stream.rdbuf();
    const std::string name = entry.path().filename().string();
    files_["/" + name] = WebFile{bytes.str(), TypeOf(name)};
  }
  return Status::Ok();
}

void DashboardServer::Route() {
  const bool secure = !options_.tls_cert_file.empty();
  const bool control = options_.allow_control;
  http_->set_pre_routing_handler([this, secure, control](const httplib::Request& request, httplib::Response& response) {
    SetSecurityHeaders(response);
    // The login: the printed URL sets the cookie and sends the browser on without the token.
    if (request.path == "/" && request.has_param("token")) {
      if (!gate_.Matches(request.get_param_value("token"))) {
        response.status = 401;
        response.set_content(kUnauthorizedPage, "text/html; charset=utf-8");
        return httplib::Server::HandlerResponse::Handled;
      }
      response.set_header("Set-Cookie", gate_.SetCookie(secure));
      response.set_redirect("/", 303);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!gate_.Admits(request.get_header_value("Cookie"), request.get_header_value("Authorization"))) {
      response.status = 401;
      if (request.path.rfind("/api/", 0) == 0) {
        SetBody(request, response,
                ErrorResponse(401, "not logged in: open the URL that `rung dashboard` printed "
                                   "(with ?token=...), or send Authorization: Bearer <token>")
                    .body,
                kJsonType);
      } else {
        response.set_content(kUnauthorizedPage, "text/html; charset=utf-8");
      }
      return httplib::Server::HandlerResponse::Handled;
    }
    // Without --allow-control every control endpoint answers 403 anyway (dashboard_api.h).
    if (control) {
      if (const std::string refused = RefuseForeignControl(request, secure); !refused.empty()) {
        response.status = 403;
        SetBody(request, response, ErrorResponse(403, refused).body, kJsonType);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  http_->Get(R"(/api/sweeps/(\d{1,18})/events)", [this](const httplib::Request& request, httplib::Response& response) {
    const int64_t sweep_id = std::stoll(request.matches[1].str());
    ApiResponse sweep = api_->Handle(ApiRequest{"GET", "/api/sweeps/" + std::to_string(sweep_id), {}});
    if (sweep.status != 200) {
      response.status = sweep.status;
      SetBody(request, response, sweep.body, kJsonType);
      return;
    }
    if (event_streams_.fetch_add(1) >= kMaxEventStreams) {
      event_streams_.fetch_sub(1);
      response.status = 503;
      SetBody(request, response, ErrorResponse(503, "too many live-update streams open; close some dashboard tabs").body,
              kJsonType);
      return;
    }
    std::string metric = request.get_param_value("metric");
    if (metric.size() > 200) metric.clear();
    auto events = std::make_shared<SweepEvents>(*connection_, sweep_id, metric);
    response.set_header("X-Accel-Buffering", "no");
    response.set_chunked_content_provider(
        "text/event-stream",
        [events](size_t /*offset*/, httplib::DataSink& sink) {
          std::optional<std::string> message = events->Next(kKeepAlive);
          if (!message) {
            sink.done();
            return true;
          }
          return sink.write(message->data(), message->size());
        },
        [this, events](bool /*success*/) { event_streams_.fetch_sub(1); });
  });

  auto api = [this](const httplib::Request& request, httplib::Response& response) {
    ApiResponse answer = api_->Handle(ToApiRequest(request));
    response.status = answer.status;
    SetBody(request, response, answer.body, kJsonType);
  };
  http_->Get(R"(/api/.*)", api);
  http_->Post(R"(/api/.*)", api);
  http_->Put(R"(/api/.*)", api);
  http_->Delete(R"(/api/.*)", api);
  http_->Patch(R"(/api/.*)", api);

  http_->Get(R"(/[A-Za-z0-9_.-]*)", [this](const httplib::Request& request, httplib::Response& response) {
    auto found = files_.find(request.path == "/" ? "/index.html" : request.path);
    if (found == files_.end()) {
      response.status = 404;
      response.set_content("404: no such page: " + request.path.substr(0, 200) + "\n", "text/plain; charset=utf-8");
      return;
    }
    SetBody(request, response, found->second.content, found->second.type);
  });
  http_->set_error_handler([](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;
    SetBody(request, response,
            ErrorResponse(response.status, "HTTP " + std::to_string(response.status) + " for " + request.path.substr(0, 200))
                .body,
            kJsonType);
  });
}

}  // namespace rung::dashboard

#include "coordinator/dashboard/dashboard_api.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/message_json.h"
#include "coordinator/client/sweep_evaluations.h"
#include "core/config/inverse_temperature_form.h"
#include "core/config/length_extension_method.h"
#include "core/config/positional_variant.h"

namespace rung::dashboard {
namespace {

namespace pb = rung::v1;
using nlohmann::json;

constexpr int kDefaultCurvePoints = 400;
constexpr int kMaxCurvePoints = 4000;
constexpr int kDefaultLogTail = 200;
constexpr int kMaxLogTail = 5000;
constexpr int kMaxQueryValueLength = 1000;

ApiResponse Ok(const json& body) { return {200, body.dump(-1, ' ', false, json::error_handler_t::replace)}; }

ApiResponse FromGrpc(const grpc::Status& status) {
  return ErrorResponse(HttpStatusOf(status), "coordinator: " + status.error_message());
}

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) segments.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return segments;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) items.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

// A positive decimal id of at most 18 digits.
std::optional<int64_t> ParseId(const std::string& text) {
  if (text.empty() || text.size() > 18 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const int64_t id = std::stoll(text);
  if (id <= 0) return std::nullopt;
  return id;
}

// Query parameter `name` as an integer in [low, high]; `fallback` when absent; an error otherwise.
std::optional<int> IntParameter(const ApiRequest& request, const std::string& name, int fallback, int low, int high,
                                std::string* error) {
  auto found = request.query.find(name);
  if (found == request.query.end() || found->second.empty()) return fallback;
  const std::string& text = found->second;
  if (text.size() > 9 || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    *error = "query parameter " + name + "='" + text.substr(0, 40) + "' is not a whole number";
    return std::nullopt;
  }
  const int value = std::stoi(text);
  if (value < low || value > high) {
    *error = "query parameter " + name + "=" + text + " is outside " + std::to_string(low) + ".." +
             std::to_string(high);
    return std::nullopt;
  }
  return value;
}

std::string QueryText(const ApiRequest& request, const std::string& name) {
  auto found = request.query.find(name);
  return found == request.query.end() ? "" : found->second;
}

json NumberOrNull(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

}  // namespace

ApiResponse ErrorResponse(int status, const std::string& message) {
  return {status, json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace)};
}

int HttpStatusOf(const grpc::Status& status) {
  switch (status.error_code()) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::PERMISSION_DENIED:
    case grpc::StatusCode::UNAUTHENTICATED:
      return 403;
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::ALREADY_EXISTS:
      return 409;
    default:
      return 502;
  }
}

ApiResponse DashboardApi::Handle(const ApiRequest& request) {
  for (const auto& [name, value] : request.query) {
    if (value.size() > kMaxQueryValueLength) {
      return ErrorResponse(400, "query parameter " + name.substr(0, 40) + " is longer than " +
                                    std::to_string(kMaxQueryValueLength) + " characters");
    }
  }
  const std::vector<std::string> parts = SplitPath(request.path);
  if (parts.empty() || parts[0] != "api") return ErrorResponse(404, "no such endpoint: " + request.path.substr(0, 200));
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  auto wrong_method = [&](const char* allowed) {
    return ErrorResponse(405, request.method.substr(0, 16) + " " + request.path.substr(0, 200) + ": use " + allowed);
  };
  if (parts.size() == 2 && parts[1] == "info") return get ? Info() : wrong_method("GET");
  if (parts.size() == 2 && parts[1] == "sweeps") return get ? Sweeps() : wrong_method("GET");
  if (parts.size() == 2 && parts[1] == "registry") return get ? Registry() : wrong_method("GET");
  if (parts.size() >= 3 && (parts[1] == "sweeps" || parts[1] == "trials")) {
    const bool sweep = parts[1] == "sweeps";
    const std::optional<int64_t> id = ParseId(parts[2]);
    if (!id) {
      return ErrorResponse(400, std::string("bad ") + (sweep ? "sweep" : "trial") + " id '" + parts[2].substr(0, 40) +
                                    "' in " + request.path.substr(0, 200) + ": expected a positive whole number");
    }
    const std::string what = parts.size() == 3 ? "" : parts[3];
    if (parts.size() > 4) return ErrorResponse(404, "no such endpoint: " + request.path.substr(0, 200));
    if (sweep && (what == "pause" || what == "resume" || what == "cancel" || what == "retry")) {
      return post ? Control(*id, what) : wrong_method("POST");
    }
    if (!get) return wrong_method("GET");
    if (sweep) {
      if (what.empty()) return Sweep(*id);
      if (what == "trials") return Trials(*id);
      if (what == "curves") return Curves(*id, request);
      if (what == "results") return Results(*id, request);
      if (what == "fit") return Fit(*id);
      if (what == "tuning") return Tuning(*id);
      if (what == "precision") return Precision(*id);
      if (what == "laws") return Laws(*id, request);
      if (what == "extrapolation") return Extrapolation(*id);
    } else {
      if (what.empty()) return Trial(*id);
      if (what == "metrics") return Metrics(*id, request);
      if (what == "logs") return Logs(*id, request);
      if (what == "parameters") return Parameters(*id);
      if (what == "diagnostics") return Diagnostics(*id);
    }
  }
  return ErrorResponse(404, "no such endpoint: " + request.path.substr(0, 200));
}

ApiResponse DashboardApi::Info() {
  pb::ServerInfo info;
  grpc::Status status = connection_.user().GetServerInfo(connection_.Context().get(), pb::GetServerInfoRequest(), &info);
  if (!status.ok()) return FromGrpc(status);
  json body = client::ToJson(info);
  body["control"] = allow_control_;
  return Ok(body);
}

ApiResponse DashboardApi::Registry() const {
  auto entries = [](const auto& list) {
    json rows = json::array();
    for (const auto* entry : list) {
      rows.push_back({{"name", entry->name()}, {"label", entry->label()}, {"summary", entry->summary()}});
    }
    return rows;
  };
  json variants = entries(PositionalVariants());
  for (size_t i = 0; i < variants.size(); ++i) variants[i]["rotary"] = PositionalVariants()[i]->rotary();
  return Ok(json{{"positional_variants", variants},
                 {"inverse_temperature_forms", entries(InverseTemperatureForms())},
                 {"length_extension_methods", entries(LengthExtensionMethods())}});
}

ApiResponse DashboardApi::Sweeps() {
  json sweeps = json::array();
  pb::ListSweepsRequest request;
  do {
    pb::ListSweepsResponse page;
    grpc::Status status = connection_.user().ListSweeps(connection_.Context().get(), request, &page);
    if (!status.ok()) return FromGrpc(status);
    for (const pb::Sweep& sweep : page.sweeps()) sweeps.push_back(client::ToJson(sweep));
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return Ok(json{{"sweeps", sweeps}});
}

ApiResponse DashboardApi::Sweep(int64_t sweep_id) {
  pb::GetSweepRequest request;
  request.set_sweep_id(sweep_id);
  pb::Sweep sweep;
  grpc::Status status = connection_.user().GetSweep(connection_.Context().get(), request, &sweep);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(sweep));
}

ApiResponse DashboardApi::Trials(int64_t sweep_id) {
  json trials = json::array();
  pb::ListTrialsRequest request;
  request.set_sweep_id(sweep_id);
  do {
    pb::ListTrialsResponse page;
    grpc::Status status = connection_.user().ListTrials(connection_.Context().get(), request, &page);
    if (!status.ok()) return FromGrpc(status);
    // One conversion a page: protobuf's JSON printer resolves the message's types on every call.
    json converted = client::ToJson(page);
    if (converted.contains("trials") && converted["trials"].is_array()) {
      for (json& trial : converted["trials"]) trials.push_back(std::move(trial));
    }
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return Ok(json{{"trials", trials}});
}

ApiResponse DashboardApi::Curves(int64_t sweep_id, const ApiRequest& request) {
  std::string error;
  const std::optional<int> points = IntParameter(request, "points", kDefaultCurvePoints, 4, kMaxCurvePoints, &error);
  if (!points) return ErrorResponse(400, error);
  const std::string x = QueryText(request, "x").empty() ? "step" : QueryText(request, "x");
  if (x != "step" && x != "tokens" && x != "flops" && x != "wall_time") {
    return ErrorResponse(400, "query parameter x='" + x.substr(0, 40) + "': use step, tokens, flops or wall_time");
  }
  std::string metric = QueryText(request, "metric");
  std::set<int64_t> only;  // empty: every trial
  for (const std::string& text : SplitList(QueryText(request, "trials"))) {
    const std::optional<int64_t> id = ParseId(text);
    if (!id) return ErrorResponse(400, "query parameter trials: '" + text.substr(0, 40) + "' is not a trial id");
    only.insert(*id);
  }
  if (metric.empty()) {
    pb::GetSweepRequest get;
    get.set_sweep_id(sweep_id);
    pb::Sweep sweep;
    grpc::Status status = connection_.user().GetSweep(connection_.Context().get(), get, &sweep);
    if (!status.ok()) return FromGrpc(status);
    metric = sweep.metric_name();
  }
  pb::GetCurvesRequest get;
  get.set_sweep_id(sweep_id);
  get.add_names(metric);
  for (int64_t id : only) get.add_trial_ids(id);
  get.set_x_axis(x == "step"     ? pb::CURVE_AXIS_STEP
                 : x == "tokens" ? pb::CURVE_AXIS_TOKENS
                 : x == "flops"  ? pb::CURVE_AXIS_FLOPS
                                 : pb::CURVE_AXIS_WALL_TIME);
  get.set_max_points(*points);
  std::unique_ptr<grpc::ClientContext> context = connection_.Context();
  std::unique_ptr<grpc::ClientReader<pb::Curve>> reader = connection_.user().GetCurves(context.get(), get);
  json curves = json::array();
  pb::Curve curve;
  while (reader->Read(&curve)) {
    json rows = json::array();
    for (int i = 0; i < curve.steps_size() && i < curve.x_size() && i < curve.values_size(); ++i) {
      rows.push_back(json::array({curve.steps(i), curve.x(i), NumberOrNull(curve.values(i))}));
    }
    curves.push_back(json{{"trial_id", curve.trial_id()}, {"stored_points", curve.stored_points()}, {"points", rows}});
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return FromGrpc(status);
  return Ok(json{{"metric", metric}, {"x", x}, {"columns", {"step", x, "value"}}, {"trials", curves}});
}

ApiResponse DashboardApi::Results(int64_t sweep_id, const ApiRequest& request) {
  pb::QueryResultsRequest query;
  query.set_sweep_id(sweep_id);
  for (const std::string& key : SplitList(QueryText(request, "group_by"))) query.add_group_by(key);
  query.set_metric(QueryText(request, "metric"));
  const std::string summary = QueryText(request, "summary");
  if (summary.empty() || summary == "final") {
    query.set_summary(pb::METRIC_SUMMARY_FINAL);
  } else if (summary == "best") {
    query.set_summary(pb::METRIC_SUMMARY_BEST);
  } else if (summary == "last") {
    query.set_summary(pb::METRIC_SUMMARY_LAST);
  } else {
    return ErrorResponse(400, "query parameter summary='" + summary.substr(0, 40) + "': use final, best or last");
  }
  for (pb::Aggregation aggregation : {pb::AGGREGATION_MEAN, pb::AGGREGATION_STD, pb::AGGREGATION_MIN,
                                      pb::AGGREGATION_MAX, pb::AGGREGATION_COUNT}) {
    query.add_aggregations(aggregation);
  }
  pb::QueryResultsResponse results;
  grpc::Status status = connection_.user().QueryResults(connection_.Context().get(), query, &results);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(results));
}

ApiResponse DashboardApi::Fit(int64_t sweep_id) {
  pb::GetSweepRequest get;
  get.set_sweep_id(sweep_id);
  pb::Sweep sweep;
  grpc::Status status = connection_.user().GetSweep(connection_.Context().get(), get, &sweep);
  if (!status.ok()) return FromGrpc(status);
  const bool finished = sweep.finished_at().seconds() > 0;
  pb::ListFitsRequest list;
  list.set_sweep_id(sweep_id);
  list.set_with_report(true);
  pb::ListFitsResponse fits;
  status = connection_.user().ListFits(connection_.Context().get(), list, &fits);
  if (!status.ok()) return FromGrpc(status);
  // A stored fit stands for the sweep once it finished if it was made after the last trial finished.
  const auto current = [&](const pb::StoredFit& fit) {
    return fit.created_at().seconds() > sweep.finished_at().seconds() ||
           (fit.created_at().seconds() == sweep.finished_at().seconds() &&
            fit.created_at().nanos() >= sweep.finished_at().nanos());
  };
  pb::StoredFit stored;
  if (fits.fits_size() > 0 && (!finished || current(fits.fits(0)))) {
    stored = fits.fits(0);
  } else if (finished) {
    pb::FitRequest fit;
    fit.set_sweep_id(sweep_id);
    pb::FitResponse response;
    status = connection_.user().Fit(connection_.Context().get(), fit, &response);
    if (!status.ok()) return FromGrpc(status);
    stored = response.stored();
  } else {
    return ErrorResponse(409, "no fit yet: the dashboard fits the ladder once the sweep has finished (`rung fit " +
                                  std::to_string(sweep_id) + "` fits it now and stores the fit)");
  }
  json body = client::ToJson(stored);  // StoredFit, its report typed (FitReportRow)
  body["before_finish"] = !finished || !current(stored);
  return Ok(body);
}

ApiResponse DashboardApi::Tuning(int64_t sweep_id) {
  pb::GetTuningRequest request;
  request.set_sweep_id(sweep_id);
  pb::GetTuningResponse tuning;
  grpc::Status status = connection_.user().GetTuning(connection_.Context().get(), request, &tuning);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(tuning));
}

ApiResponse DashboardApi::Precision(int64_t sweep_id) {
  pb::GetPrecisionRequest request;
  request.set_sweep_id(sweep_id);
  pb::GetPrecisionResponse precision;
  grpc::Status status = connection_.user().GetPrecision(connection_.Context().get(), request, &precision);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(precision));
}

ApiResponse DashboardApi::Laws(int64_t sweep_id, const ApiRequest& request) {
  pb::GetLawsRequest get;
  get.set_sweep_id(sweep_id);
  get.set_baseline(QueryText(request, "baseline"));
  get.set_sharing(QueryText(request, "sharing"));
  pb::GetLawsResponse laws;
  grpc::Status status = connection_.user().GetLaws(connection_.Context().get(), get, &laws);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(laws));
}

ApiResponse DashboardApi::Extrapolation(int64_t sweep_id) {
  std::vector<client::TrialEvaluations> evaluated;
  grpc::Status status = client::FetchSweepEvaluations(connection_, sweep_id, &evaluated);
  if (!status.ok()) return FromGrpc(status);
  json trials = json::array();
  for (client::TrialEvaluations& entry : evaluated) {
    // The page charts each evaluation's mean; the per-position losses stay on the trial's page.
    for (pb::ExtrapolationResult& result : *entry.table.mutable_results()) result.clear_val_loss_per_position();
    trials.push_back(json{{"trial", client::ToJson(entry.trial)},
                          {"val_loss", entry.val_loss ? NumberOrNull(*entry.val_loss) : json(nullptr)},
                          {"results", client::ToJson(entry.table).value("results", json::array())}});
  }
  return Ok(json{{"trials", trials}});
}

ApiResponse DashboardApi::Trial(int64_t trial_id) {
  pb::GetTrialRequest request;
  request.set_trial_id(trial_id);
  request.set_view(pb::TRIAL_VIEW_FULL);
  pb::Trial trial;
  grpc::Status status = connection_.user().GetTrial(connection_.Context().get(), request, &trial);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(trial));
}

ApiResponse DashboardApi::Metrics(int64_t trial_id, const ApiRequest& request) {
  std::string error;
  const std::optional<int> points = IntParameter(request, "points", kDefaultCurvePoints, 2, kMaxCurvePoints, &error);
  if (!points) return ErrorResponse(400, error);
  pb::GetMetricsRequest get;
  get.set_trial_id(trial_id);
  for (const std::string& name : SplitList(QueryText(request, "names"))) get.add_names(name);
  get.set_max_points(*points);
  pb::GetMetricsResponse metrics;
  grpc::Status status = connection_.user().GetMetrics(connection_.Context().get(), get, &metrics);
  if (!status.ok()) return FromGrpc(status);
  json series = json::array();
  for (const pb::MetricSeries& one : metrics.series()) {
    json rows = json::array();
    for (const pb::MetricPoint& point : one.points()) {
      rows.push_back(json::array(
          {point.step(), point.tokens(), point.flops(), point.wall_time(), NumberOrNull(point.value())}));
    }
    series.push_back(json{{"name", one.name()}, {"points", rows}});
  }
  return Ok(json{{"trial_id", trial_id}, {"columns", {"step", "tokens", "flops", "wall_time", "value"}},
                 {"series", series}});
}

ApiResponse DashboardApi::Logs(int64_t trial_id, const ApiRequest& request) {
  std::string error;
  const std::optional<int> tail = IntParameter(request, "tail", kDefaultLogTail, 1, kMaxLogTail, &error);
  if (!tail) return ErrorResponse(400, error);
  pb::GetLogsRequest get;
  get.set_trial_id(trial_id);
  get.set_tail(*tail);
  std::unique_ptr<grpc::ClientContext> context = connection_.Context();
  std::unique_ptr<grpc::ClientReader<pb::LogEntry>> reader = connection_.user().GetLogs(context.get(), get);
  json lines = json::array();
  pb::LogEntry entry;
  while (reader->Read(&entry)) lines.push_back(client::ToJson(entry));
  grpc::Status status = reader->Finish();
  if (!status.ok()) return FromGrpc(status);
  return Ok(json{{"trial_id", trial_id}, {"lines", lines}});
}

ApiResponse DashboardApi::Parameters(int64_t trial_id) {
  pb::GetLearnedParametersRequest get;
  get.add_trial_ids(trial_id);
  pb::GetLearnedParametersResponse parameters;
  grpc::Status status = connection_.user().GetLearnedParameters(connection_.Context().get(), get, &parameters);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(parameters));
}

ApiResponse DashboardApi::Diagnostics(int64_t trial_id) {
  pb::GetDiagnosticsRequest get;
  get.set_trial_id(trial_id);
  pb::GetDiagnosticsResponse diagnostics;
  grpc::Status status = connection_.user().GetDiagnostics(connection_.Context().get(), get, &diagnostics);
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(diagnostics));
}

ApiResponse DashboardApi::Control(int64_t sweep_id, const std::string& action) {
  if (!allow_control_) {
    return ErrorResponse(403, "control is off: this dashboard only reads; restart `rung dashboard` with "
                              "--allow-control and a user token to " + action + " sweeps");
  }
  grpc::Status status;
  pb::Sweep sweep;
  const std::string reason = "from the dashboard";
  if (action == "pause") {
    pb::PauseSweepRequest request;
    request.set_sweep_id(sweep_id);
    request.set_reason(reason);
    status = connection_.user().PauseSweep(connection_.Context().get(), request, &sweep);
  } else if (action == "resume") {
    pb::ResumeSweepRequest request;
    request.set_sweep_id(sweep_id);
    status = connection_.user().ResumeSweep(connection_.Context().get(), request, &sweep);
  } else if (action == "cancel") {
    pb::CancelSweepRequest request;
    request.set_sweep_id(sweep_id);
    request.set_reason(reason);
    status = connection_.user().CancelSweep(connection_.Context().get(), request, &sweep);
  } else {
    pb::RetryTrialsRequest request;
    request.set_sweep_id(sweep_id);
    request.set_reason(reason);
    pb::RetryTrialsResponse retried;
    status = connection_.user().RetryTrials(connection_.Context().get(), request, &retried);
    sweep = retried.sweep();
  }
  if (status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    return ErrorResponse(403, "the coordinator refused to " + action + " sweep " + std::to_string(sweep_id) +
                                  " with the dashboard's token (a viewer token only reads; restart `rung dashboard` "
                                  "with a user token): " + status.error_message());
  }
  if (!status.ok()) return FromGrpc(status);
  return Ok(client::ToJson(sweep));
}

}  // namespace rung::dashboard

// coordinator/dashboard/dashboard_api.h
//
// The dashboard's JSON endpoints: each one calls the coordinator's UserService (the dashboard reads
// nothing behind the API's back; /api/registry alone answers from this build's registries) and answers the reply as JSON with the proto's field names
// (int64 fields as strings, as proto3's JSON mapping writes them). Independent of the HTTP library:
// the server (dashboard_server.h) turns requests into ApiRequest and ApiResponse into answers, and
// the tests and the fuzz target call Handle directly.
//
//   GET  /api/info                         GetServerInfo, plus {"control": allowed}
//   GET  /api/sweeps                       ListSweeps, every page
//   GET  /api/registry                     what this build of rung can run: {"positional_variants",
//                                          "inverse_temperature_forms", "length_extension_methods"}, each
//                                          [{"name", "label", "summary"}] in listing order (variants also
//                                          "rotary"): core/config/positional_variant.h and its siblings
//   GET  /api/sweeps/ID                    GetSweep
//   GET  /api/sweeps/ID/trials             ListTrials, every page (BASIC)
//   GET  /api/sweeps/ID/curves?metric=M&x=step|tokens|flops|wall_time&points=N[&trials=A,B]
//                                          GetCurves: M's curve of every trial (or of those listed) that
//                                          reported one, downsampled by the coordinator to at most N
//                                          points (default 400, 4..4000): {"metric", "x", "trials":
//                                          [{"trial_id", "stored_points", "points": [[step, x, value]]}]}
//   GET  /api/sweeps/ID/results?group_by=K1,K2&summary=final|best|last   QueryResults
//   GET  /api/sweeps/ID/fit                the fit of the ladder: the newest stored fit (ListFits) if made
//                                          after the sweep finished, else (finished) Fit with `rung fit`'s
//                                          defaults, which stores one; while it runs the newest stored fit,
//                                          "before_finish": true, or 409. "report" is what
//                                          `rung fit --format json` prints
//   GET  /api/sweeps/ID/tuning             GetTuning
//   GET  /api/sweeps/ID/precision          GetPrecision (409 for a sweep without a precision block)
//   GET  /api/sweeps/ID/laws?baseline=V&sharing=S   GetLaws with its defaults (`rung laws SWEEP`'s):
//                                          the scaling laws L(N, D) of its finished runs, refitted (and
//                                          bootstrapped) on every call; 409 with the coordinator's why
//                                          for runs that cannot give laws (one token count per size)
//   GET  /api/sweeps/ID/extrapolation      the evaluations beyond the training length of its SUCCEEDED
//                                          trials (coordinator/client/sweep_evaluations.h): {"trials":
//                                          [{"trial" (ListTrials' Trial), "val_loss" (at the training
//                                          length, null if none), "results" (ExtrapolationResult, without
//                                          val_loss_per_position)}]}, only trials that have results
//   GET  /api/sweeps/ID/events?metric=M    server-sent events (dashboard_server.h, sweep_events.h)
//   GET  /api/trials/ID                    GetTrial (FULL)
//   GET  /api/trials/ID/metrics?names=A,B&points=N   GetMetrics
//   GET  /api/trials/ID/logs?tail=N        GetLogs (not following), the last N lines per source (default 200)
//   GET  /api/trials/ID/parameters         GetLearnedParameters
//   GET  /api/trials/ID/diagnostics        GetDiagnostics
//   POST /api/sweeps/ID/pause|resume|cancel|retry   only with --allow-control (else 403)
//
// Errors are {"error": "..."} with 400 (a malformed path or parameter; the message names it), 404
// (no such endpoint, sweep or trial), 405, 403 (control is off, or the coordinator refused the
// token), 409 (FAILED_PRECONDITION), 502 (the coordinator is unreachable or failed).
//
// Thread safety: Handle may be called from many threads at once (the connection's stub is).
#pragma once

#include <map>
#include <string>

#include "coordinator/client/coordinator_connection.h"

namespace rung::dashboard {

struct ApiRequest {
  std::string method;                        // "GET", "POST", ...
  std::string path;                          // "/api/sweeps/3/trials", without the query
  std::map<std::string, std::string> query;  // decoded query parameters (the first of each name)
};

struct ApiResponse {
  int status = 200;
  std::string body;  // JSON text
};

class DashboardApi {
 public:
  DashboardApi(client::CoordinatorConnection& connection, bool allow_control)
      : connection_(connection), allow_control_(allow_control) {}

  ApiResponse Handle(const ApiRequest& request);

 private:
  ApiResponse Info();
  ApiResponse Sweeps();
  ApiResponse Registry() const;
  ApiResponse Sweep(int64_t sweep_id);
  ApiResponse Trials(int64_t sweep_id);
  ApiResponse Curves(int64_t sweep_id, const ApiRequest& request);
  ApiResponse Results(int64_t sweep_id, const ApiRequest& request);
  ApiResponse Fit(int64_t sweep_id);
  ApiResponse Tuning(int64_t sweep_id);
  ApiResponse Precision(int64_t sweep_id);
  ApiResponse Laws(int64_t sweep_id, const ApiRequest& request);
  ApiResponse Extrapolation(int64_t sweep_id);
  ApiResponse Trial(int64_t trial_id);
  ApiResponse Metrics(int64_t trial_id, const ApiRequest& request);
  ApiResponse Logs(int64_t trial_id, const ApiRequest& request);
  ApiResponse Parameters(int64_t trial_id);
  ApiResponse Diagnostics(int64_t trial_id);
  ApiResponse Control(int64_t sweep_id, const std::string& action);

  client::CoordinatorConnection& connection_;
  bool allow_control_;
};

// An error answer: {"error": message}.
ApiResponse ErrorResponse(int status, const std::string& message);

// The HTTP status for a coordinator's gRPC status (see the list above).
int HttpStatusOf(const grpc::Status& status);

}  // namespace rung::dashboard

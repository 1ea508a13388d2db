// coordinator/server/user_service.cc
#include "coordinator/server/user_service.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "coordinator/server/followers.h"
#include "coordinator/server/proto_convert.h"
#include "coordinator/domain/results_query.h"
#include "coordinator/domain/sweep_laws.h"
#include "proto/law_report_proto.h"
#include "coordinator/server/rpc_support.h"
#include "coordinator/server/storage_space.h"
#include "coordinator/store/record_rows.h"
#include "proto/trainer_record_proto.h"

namespace rung::server {
namespace {

constexpr int64_t kDefaultSweepPage = 100;
constexpr int64_t kDefaultTrialPage = 1000;
constexpr char kUserMetadata[] = "rung-user";

// "user:<name>" (or "viewer:<name>" for the viewer token) from the rung-user metadata, for the
// events table and stored fits: the record names the role.
std::string Actor(const grpc::ServerContext& context, bool viewer = false) {
  const std::string role = viewer ? "viewer:" : "user:";
  auto name = context.client_metadata().find(kUserMetadata);
  if (name == context.client_metadata().end() || name->second.empty()) return role + "anonymous";
  return role + std::string(name->second.data(), name->second.size());
}

grpc::Status Required(int64_t id, const char* field) {
  if (id > 0) return grpc::Status::OK;
  return {grpc::StatusCode::INVALID_ARGUMENT, std::string(field) + " is required (a positive id)"};
}

// A page token is the id or index the next page starts after; "" for the first page.
StatusOr<int64_t> ParsePageToken(const std::string& token, int64_t first) {
  if (token.empty()) return first;
  try {
    size_t used = 0;
    const int64_t value = std::stoll(token, &used);
    if (used == token.size()) return value;
  } catch (...) {
  }
  return Status::InvalidArgument("page_token '" + token + "' is not one this coordinator gave out");
}

// At most `max_points` of `points`, evenly spaced, the first and the last kept.
std::vector<CurvePoint> Thin(std::vector<CurvePoint> points, int32_t max_points) {
  const size_t count = points.size();
  if (max_points <= 0 || count <= static_cast<size_t>(max_points)) return points;
  if (max_points == 1) return {points.back()};
  std::vector<CurvePoint> kept;
  for (int32_t i = 0; i < max_points; ++i) {
    kept.push_back(points[static_cast<size_t>(i) * (count - 1) / static_cast<size_t>(max_points - 1)]);
  }
  return kept;
}

bool HasPrefix(const std::string& name, const std::string& prefix) { return name.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

UserServiceImpl::UserServiceImpl(Coordinator* coordinator, const BearerTokenAuthenticator* authenticator,
                                 std::chrono::system_clock::time_point started_at, int64_t max_trials_per_submission)
    : coordinator_(coordinator),
      authenticator_(authenticator),
      started_at_(started_at),
      submitter_(coordinator->sweeps(), coordinator->trials(), coordinator->tuner(), max_trials_per_submission,
                 coordinator->database_path(), coordinator->store_options().artifact_root) {}

grpc::Status UserServiceImpl::GetServerInfo(grpc::ServerContext* context, const v1::GetServerInfoRequest* /*request*/,
                                            v1::ServerInfo* response) {
  *response = MakeServerInfo(started_at_, authenticator_->CallerRole(*context),
                             std::chrono::system_clock::time_point(coordinator_->clock().Now()));
  response->set_storage_warning(DatabaseSpaceWarning(coordinator_->database_path()));
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::SubmitSweep(grpc::ServerContext* context, const v1::SubmitSweepRequest* request,
                                          v1::SubmitSweepResponse* response) {
  v1::SpecDiagnostics diagnostics;
  StatusOr<v1::SubmitSweepResponse> submitted = submitter_.Submit(*request, Actor(*context), &diagnostics);
  if (!submitted.ok()) {
    if (diagnostics.diagnostics_size() > 0) {
      context->AddTrailingMetadata(kSpecDiagnosticsMetadata, diagnostics.SerializeAsString());
    }
    return ToGrpcStatus(submitted.status());
  }
  *response = std::move(submitted).value();
  if (!request->dry_run() && response->sweep_id() > 0) {
    // A resubmission opens a closed precision aim again (sweep_manager.h). Its decision otherwise
    // waits for an attempt to end, and a sweep whose trials have all ended has none to come: it would
    // sit ACTIVE and aiming until the reaper's housekeeping. Decide now (a sweep without an open aim
    // returns at once; an error is retried by the housekeeping).
    coordinator_->precision().Decide(response->sweep_id()).status().IgnoreError();
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::ListSweeps(grpc::ServerContext* /*context*/, const v1::ListSweepsRequest* request,
                                         v1::ListSweepsResponse* response) {
  SweepFilter filter;
  for (int state : request->states()) {
    StatusOr<SweepState> parsed = FromProto(static_cast<v1::SweepState>(state));
    if (!parsed.ok()) return ToGrpcStatus(parsed.status());
    filter.states.push_back(*parsed);
  }
  filter.name = request->name();
  filter.limit = request->page_size() > 0 ? request->page_size() : kDefaultSweepPage;
  StatusOr<int64_t> before = ParsePageToken(request->page_token(), 0);
  if (!before.ok()) return ToGrpcStatus(before.status());
  filter.before_id = *before;
  StatusOr<std::vector<SweepOverview>> sweeps = coordinator_->overviews().Sweeps(filter);
  if (!sweeps.ok()) return ToGrpcStatus(sweeps.status());
  for (const SweepOverview& sweep : *sweeps) *response->add_sweeps() = ToProtoSweep(sweep, /*with_spec_text=*/false);
  if (static_cast<int64_t>(sweeps->size()) == filter.limit) {
    response->set_next_page_token(std::to_string(sweeps->back().sweep.id));
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetSweep(grpc::ServerContext* /*context*/, const v1::GetSweepRequest* request,
                                       v1::Sweep* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "GetSweepRequest.sweep_id"); !valid.ok()) return valid;
  StatusOr<SweepOverview> sweep = coordinator_->overviews().Sweep(request->sweep_id());
  if (!sweep.ok()) return ToGrpcStatus(sweep.status());
  *response = ToProtoSweep(*sweep, /*with_spec_text=*/true);
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::AnswerSweep(const Status& status, int64_t sweep_id, v1::Sweep* response) {
  if (!status.ok()) return ToGrpcStatus(status);
  StatusOr<SweepOverview> sweep = coordinator_->overviews().Sweep(sweep_id);
  if (!sweep.ok()) return ToGrpcStatus(sweep.status());
  *response = ToProtoSweep(*sweep, /*with_spec_text=*/false);
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::CancelSweep(grpc::ServerContext* context, const v1::CancelSweepRequest* request,
                                          v1::Sweep* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "CancelSweepRequest.sweep_id"); !valid.ok()) return valid;
  const std::string actor = Actor(*context);
  Status cancelled = coordinator_->sweeps().Cancel(
      request->sweep_id(), actor, request->reason().empty() ? "cancelled by " + actor : request->reason());
  return AnswerSweep(cancelled, request->sweep_id(), response);
}

grpc::Status UserServiceImpl::PauseSweep(grpc::ServerContext* context, const v1::PauseSweepRequest* request,
                                         v1::Sweep* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "PauseSweepRequest.sweep_id"); !valid.ok()) return valid;
  Status paused = coordinator_->sweeps().Pause(request->sweep_id(), Actor(*context), request->reason());
  return AnswerSweep(paused, request->sweep_id(), response);
}

grpc::Status UserServiceImpl::ResumeSweep(grpc::ServerContext* context, const v1::ResumeSweepRequest* request,
                                          v1::Sweep* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "ResumeSweepRequest.sweep_id"); !valid.ok()) return valid;
  Status resumed = coordinator_->sweeps().Resume(request->sweep_id(), Actor(*context));
  return AnswerSweep(resumed, request->sweep_id(), response);
}

grpc::Status UserServiceImpl::ListTrials(grpc::ServerContext* /*context*/, const v1::ListTrialsRequest* request,
                                         v1::ListTrialsResponse* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "ListTrialsRequest.sweep_id"); !valid.ok()) return valid;
  TrialFilter filter;
  for (int state : request->states()) {
    StatusOr<TrialState> parsed = FromProto(static_cast<v1::TrialState>(state));
    if (!parsed.ok()) return ToGrpcStatus(parsed.status());
    filter.states.push_back(*parsed);
  }
  filter.limit = request->page_size() > 0 ? request->page_size() : kDefaultTrialPage;
  StatusOr<int64_t> after = ParsePageToken(request->page_token(), -1);
  if (!after.ok()) return ToGrpcStatus(after.status());
  filter.after_index = *after;
  StatusOr<SweepRecord> sweep = coordinator_->sweeps().Get(request->sweep_id());
  if (!sweep.ok()) return ToGrpcStatus(sweep.status());
  StatusOr<std::vector<TrialOverview>> trials = coordinator_->overviews().Trials(request->sweep_id(), filter);
  if (!trials.ok()) return ToGrpcStatus(trials.status());
  const bool full = request->view() == v1::TRIAL_VIEW_FULL;
  for (const TrialOverview& trial : *trials) {
    std::vector<AttemptRecord> attempts;
    if (full) {
      StatusOr<std::vector<AttemptRecord>> listed = coordinator_->trials().Attempts(trial.trial.id);
      if (!listed.ok()) return ToGrpcStatus(listed.status());
      attempts = std::move(listed).value();
    }
    *response->add_trials() = ToProtoTrial(trial, sweep->baseline, full, attempts);
  }
  if (static_cast<int64_t>(trials->size()) == filter.limit) {
    response->set_next_page_token(std::to_string(trials->back().trial.trial_index));
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetTrial(grpc::ServerContext* /*context*/, const v1::GetTrialRequest* request,
                                       v1::Trial* response) {
  if (grpc::Status valid = Required(request->trial_id(), "GetTrialRequest.trial_id"); !valid.ok()) return valid;
  StatusOr<TrialOverview> trial = coordinator_->overviews().Trial(request->trial_id());
  if (!trial.ok()) return ToGrpcStatus(trial.status());
  StatusOr<SweepRecord> sweep = coordinator_->sweeps().Get(trial->trial.sweep_id);
  if (!sweep.ok()) return ToGrpcStatus(sweep.status());
  const bool full = request->view() != v1::TRIAL_VIEW_BASIC;
  std::vector<AttemptRecord> attempts;
  if (full) {
    StatusOr<std::vector<AttemptRecord>> listed = coordinator_->trials().Attempts(request->trial_id());
    if (!listed.ok()) return ToGrpcStatus(listed.status());
    attempts = std::move(listed).value();
  }
  *response = ToProtoTrial(*trial, sweep->baseline, full, attempts);
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::RetryTrials(grpc::ServerContext* context, const v1::RetryTrialsRequest* request,
                                          v1::RetryTrialsResponse* response) {
  int64_t sweep_id = request->sweep_id();
  if (sweep_id <= 0 && request->trial_ids_size() > 0) {
    StatusOr<TrialRecord> first = coordinator_->trials().Get(request->trial_ids(0));
    if (!first.ok()) return ToGrpcStatus(first.status());
    sweep_id = first->sweep_id;
  }
  if (grpc::Status valid = Required(sweep_id, "RetryTrialsRequest.sweep_id (or trial_ids)"); !valid.ok()) return valid;
  const std::vector<int64_t> trial_ids(request->trial_ids().begin(), request->trial_ids().end());
  StatusOr<std::vector<int64_t>> retried =
      coordinator_->sweeps().RetryTrials(sweep_id, trial_ids, Actor(*context), request->reason());
  if (!retried.ok()) return ToGrpcStatus(retried.status());
  for (int64_t trial_id : *retried) response->add_retried_trial_ids(trial_id);
  return AnswerSweep(Status::Ok(), sweep_id, response->mutable_sweep());
}

grpc::Status UserServiceImpl::StreamSweepUpdates(grpc::ServerContext* context,
                                                 const v1::StreamSweepUpdatesRequest* request,
                                                 grpc::ServerWriter<v1::SweepUpdate>* writer) {
  if (grpc::Status valid = Required(request->sweep_id(), "StreamSweepUpdatesRequest.sweep_id"); !valid.ok()) {
    return valid;
  }
  return ToGrpcStatus(FollowSweep(
      *coordinator_, request->sweep_id(), [writer](const v1::SweepUpdate& update) { return writer->Write(update); },
      [context] { return context->IsCancelled(); }));
}

grpc::Status UserServiceImpl::GetMetrics(grpc::ServerContext* /*context*/, const v1::GetMetricsRequest* request,
                                         v1::GetMetricsResponse* response) {
  if (grpc::Status valid = Required(request->trial_id(), "GetMetricsRequest.trial_id"); !valid.ok()) return valid;
  const int64_t trial_id = request->trial_id();
  if (Status found = coordinator_->trials().Get(trial_id).status(); !found.ok()) return ToGrpcStatus(found);
  std::vector<std::string> names(request->names().begin(), request->names().end());
  StatusOr<std::vector<std::string>> reported = coordinator_->metrics().MetricNames(trial_id);
  if (!reported.ok()) return ToGrpcStatus(reported.status());
  if (names.empty()) {
    names = *reported;
  } else if (Status known = CheckMetricNames(trial_id, names, *reported); !known.ok()) {
    return ToGrpcStatus(known);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& name : names) {
    StatusOr<std::vector<CurvePoint>> curve = coordinator_->metrics().Curve(trial_id, name);
    if (!curve.ok()) return ToGrpcStatus(curve.status());
    std::vector<CurvePoint> in_range;
    for (CurvePoint& point : *curve) {
      if (point.point.step < request->min_step()) continue;
      if (request->max_step() > 0 && point.point.step > request->max_step()) continue;
      in_range.push_back(std::move(point));
    }
    v1::MetricSeries* series = response->add_series();
    series->set_name(name);
    for (const CurvePoint& point : Thin(std::move(in_range), request->max_points())) {
      *series->add_points() = ToProtoMetricPoint(point.point, point.attempt);
    }
  }
  return grpc::Status::OK;
}

Status UserServiceImpl::CheckMetricNames(int64_t trial_id, const std::vector<std::string>& names,
                                         const std::vector<std::string>& reported) {
  auto listed = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  std::vector<std::string> unknown;
  for (const std::string& name : names) {
    if (!listed(reported, name)) unknown.push_back(name);
  }
  if (unknown.empty()) return Status::Ok();
  // A name another trial of the sweep reported is one this trial has not reached yet.
  RUNG_ASSIGN_OR_RETURN(TrialRecord trial, coordinator_->trials().Get(trial_id));
  RUNG_ASSIGN_OR_RETURN(std::vector<std::string> in_sweep, coordinator_->results().MetricNames(trial.sweep_id));
  if (in_sweep.empty()) return Status::Ok();  // nothing reported yet: no name can be told unknown
  for (const std::string& name : unknown) {
    if (listed(in_sweep, name)) continue;
    std::string known;
    for (const std::string& each : reported.empty() ? in_sweep : reported) known += (known.empty() ? "" : ", ") + each;
    return Status::InvalidArgument("names: no trial of sweep " + std::to_string(trial.sweep_id) +
                                   " reported a metric '" + name + "'; trial " + std::to_string(trial_id) +
                                   (reported.empty() ? " reported nothing yet; its sweep reported: " : " reported: ") +
                                   known);
  }
  return Status::Ok();
}

grpc::Status UserServiceImpl::QueryResults(grpc::ServerContext* context, const v1::QueryResultsRequest* request,
                                           v1::QueryResultsResponse* response) {
  StatusOr<ResultsQuery> query = ResultsQueryFromProto(*request);
  if (!query.ok()) return ToGrpcStatus(query.status());
  query->keep_going = [context] { return CallGoesOn(*context, "the results query"); };
  StatusOr<ResultsTable> table = rung::QueryResults(*coordinator_, *query);
  if (!table.ok()) return ToGrpcStatus(table.status());
  *response = ToProtoResults(*table);
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetLearnedParameters(grpc::ServerContext* /*context*/,
                                                   const v1::GetLearnedParametersRequest* request,
                                                   v1::GetLearnedParametersResponse* response) {
  std::vector<int64_t> trial_ids(request->trial_ids().begin(), request->trial_ids().end());
  if (trial_ids.empty()) {
    if (grpc::Status valid = Required(request->sweep_id(), "GetLearnedParametersRequest.sweep_id (or trial_ids)");
        !valid.ok()) {
      return valid;
    }
    StatusOr<std::vector<TrialRecord>> trials = coordinator_->trials().List(request->sweep_id());
    if (!trials.ok()) return ToGrpcStatus(trials.status());
    if (trials->empty()) {
      if (Status found = coordinator_->sweeps().Get(request->sweep_id()).status(); !found.ok()) {
        return ToGrpcStatus(found);
      }
    }
    for (const TrialRecord& trial : *trials) trial_ids.push_back(trial.id);
  }
  std::sort(trial_ids.begin(), trial_ids.end());
  const bool learned = request->kind() != v1::PARAMETER_KIND_DIAGNOSTIC;
  const bool diagnostic = request->kind() != v1::PARAMETER_KIND_LEARNED;
  for (int64_t trial_id : trial_ids) {
    if (Status found = coordinator_->trials().Get(trial_id).status(); !found.ok()) return ToGrpcStatus(found);
    std::vector<v1::LearnedParameter> found;
    auto add = [&](const StepTensor& tensor, v1::ParameterKind kind) {
      if (!HasPrefix(tensor.tensor.name, request->name_prefix())) return;
      v1::LearnedParameter parameter;
      parameter.set_trial_id(trial_id);
      parameter.set_step(tensor.step);
      parameter.set_kind(kind);
      *parameter.mutable_tensor() = ToProtoTensor(tensor.tensor);
      found.push_back(std::move(parameter));
    };
    if (learned) {
      StatusOr<std::vector<LearnedParamValue>> elements = coordinator_->metrics().LearnedParams(trial_id);
      if (!elements.ok()) return ToGrpcStatus(elements.status());
      for (const StepTensor& tensor : TensorsFromElements(*elements)) add(tensor, v1::PARAMETER_KIND_LEARNED);
    }
    if (diagnostic) {
      StatusOr<std::vector<Diagnostic>> diagnostics = coordinator_->metrics().Diagnostics(trial_id);
      if (!diagnostics.ok()) return ToGrpcStatus(diagnostics.status());
      for (const Diagnostic& entry : *diagnostics) {
        // Diagnostics that are not tensors (attention statistics, extrapolation tables) stay in the store.
        if (std::optional<StepTensor> tensor = TensorFromJson(entry.name, entry.value)) {
          add(*tensor, v1::PARAMETER_KIND_DIAGNOSTIC);
        }
      }
    }
    std::stable_sort(found.begin(), found.end(), [](const v1::LearnedParameter& a, const v1::LearnedParameter& b) {
      return std::make_tuple(a.tensor().name(), a.step()) < std::make_tuple(b.tensor().name(), b.step());
    });
    for (v1::LearnedParameter& parameter : found) *response->add_parameters() = std::move(parameter);
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetDiagnostics(grpc::ServerContext* /*context*/,
                                             const v1::GetDiagnosticsRequest* request,
                                             v1::GetDiagnosticsResponse* response) {
  if (grpc::Status valid = Required(request->trial_id(), "GetDiagnosticsRequest.trial_id"); !valid.ok()) return valid;
  if (Status found = coordinator_->trials().Get(request->trial_id()).status(); !found.ok()) return ToGrpcStatus(found);
  StatusOr<std::vector<Diagnostic>> diagnostics = coordinator_->metrics().Diagnostics(request->trial_id());
  if (!diagnostics.ok()) return ToGrpcStatus(diagnostics.status());
  response->set_trial_id(request->trial_id());
  for (const Diagnostic& entry : *diagnostics) {
    const auto& names = request->names();
    if (!names.empty() && std::find(names.begin(), names.end(), entry.name) == names.end()) continue;
    v1::TrialDiagnostic* diagnostic = response->add_diagnostics();
    diagnostic->set_name(entry.name);
    diagnostic->set_step(entry.step);
    diagnostic->set_layer(entry.layer);
    diagnostic->set_head(entry.head);
    StatusOr<DiagnosticDocument> document = ReadDiagnosticDocument(entry);
    if (!document.ok()) {
      diagnostic->set_error(document.status().message());  // the others still list
      continue;
    }
    std::visit(
        [&](const auto& typed) {
          using Document = std::decay_t<decltype(typed)>;
          if constexpr (std::is_same_v<Document, records::AttentionDiagnostics>) {
            // Beyond the training length in a member of its own: a reader that predates it lists it as
            // unreadable instead of taking it for a milestone.
            wire::StructToMessage(typed, typed.multiple ? diagnostic->mutable_attention_beyond()
                                                        : diagnostic->mutable_attention());
          } else if constexpr (std::is_same_v<Document, records::NiahGridDiagnostics>) {
            wire::StructToMessage(typed, diagnostic->mutable_niah_grid());
          } else if constexpr (std::is_same_v<Document, records::BandAblationDiagnostics>) {
            wire::StructToMessage(typed, diagnostic->mutable_band_ablation());
          } else if constexpr (std::is_same_v<Document, records::HeadInfluenceDiagnostics>) {
            wire::StructToMessage(typed, diagnostic->mutable_head_influence());
          } else if constexpr (std::is_same_v<Document, records::Tensor>) {
            wire::StructToMessage(typed, diagnostic->mutable_tensor());
          } else if constexpr (std::is_same_v<Document, std::vector<records::ProbeResult>>) {
            for (const records::ProbeResult& cell : typed) {
              wire::StructToMessage(cell, diagnostic->mutable_probe()->add_results());
            }
          } else {
            for (const records::ExtrapolationResult& result : typed) {
              wire::StructToMessage(result, diagnostic->mutable_extrapolation()->add_results());
            }
          }
        },
        *document);
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::Fit(grpc::ServerContext* context, const v1::FitRequest* request,
                                  v1::FitResponse* response) {
  StatusOr<FitOptions> options = FitOptionsFromProto(*request);
  if (!options.ok()) return ToGrpcStatus(options.status());
  options->keep_going = [context] { return CallGoesOn(*context, "the fit"); };
  // A read-only caller's fit: returned, not stored, and bounded (kMaxViewerFitsAtOnce, kMaxViewerBootstrap).
  const bool viewer = authenticator_->CallerRole(*context) == v1::ROLE_VIEWER;
  struct ViewerSlot {
    std::atomic<int>* held = nullptr;
    ~ViewerSlot() {
      if (held != nullptr) held->fetch_sub(1);
    }
  } slot;
  if (viewer) {
    const int replicates = options->bootstrap == 0 ? kDefaultFitBootstrap : options->bootstrap;
    if (replicates > kMaxViewerBootstrap) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "the viewer token may ask at most " + std::to_string(kMaxViewerBootstrap) +
                  " bootstrap replicates, got " + std::to_string(replicates) + " (the user token may ask more)"};
    }
    if (viewer_fits_.fetch_add(1) >= kMaxViewerFitsAtOnce) {
      viewer_fits_.fetch_sub(1);
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "the viewer token runs " + std::to_string(kMaxViewerFitsAtOnce) +
                  " fit at a time and one is running: try again when it has answered"};
    }
    slot.held = &viewer_fits_;
    options->store = false;
  }
  StatusOr<SweepFit> fit = FitSweep(*coordinator_, *options, Actor(*context, viewer));
  if (!fit.ok()) return ToGrpcStatus(fit.status());
  response->set_fit_id(fit->stored.id);
  StatusOr<v1::StoredFit> stored = ToProtoStoredFit(fit->stored, /*with_report=*/true);
  if (!stored.ok()) return ToGrpcStatus(stored.status());
  *response->mutable_stored() = std::move(stored).value();
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::ListFits(grpc::ServerContext* /*context*/, const v1::ListFitsRequest* request,
                                       v1::ListFitsResponse* response) {
  if (request->fit_id() > 0) {
    StatusOr<FitRecord> fit = GetFit(*coordinator_, request->fit_id(), request->sweep_id());
    if (!fit.ok()) return ToGrpcStatus(fit.status());
    StatusOr<v1::StoredFit> stored = ToProtoStoredFit(*fit, /*with_report=*/true);
    if (!stored.ok()) return ToGrpcStatus(stored.status());
    *response->add_fits() = std::move(stored).value();
    return grpc::Status::OK;
  }
  if (grpc::Status valid = Required(request->sweep_id(), "ListFitsRequest.sweep_id (or fit_id)"); !valid.ok()) {
    return valid;
  }
  StatusOr<std::vector<FitRecord>> fits = coordinator_->fits().List(request->sweep_id(), request->with_report());
  if (!fits.ok()) return ToGrpcStatus(fits.status());
  for (const FitRecord& fit : *fits) {
    StatusOr<v1::StoredFit> stored = ToProtoStoredFit(fit, request->with_report());
    if (!stored.ok()) {
      // One fit that no longer reads does not hide the others: it is listed with what it holds and
      // says why its report is missing (asking for it alone, by fit_id, answers the error).
      StatusOr<v1::StoredFit> bare = ToProtoStoredFit(fit, /*with_report=*/false);
      v1::StoredFit* listed = response->add_fits();
      if (bare.ok()) *listed = std::move(bare).value();
      listed->set_fit_id(fit.id);
      listed->set_sweep_id(fit.sweep_id);
      listed->set_report_text(stored.status().message());
      continue;
    }
    *response->add_fits() = std::move(stored).value();
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::Export(grpc::ServerContext* context, const v1::ExportRequest* request,
                                     grpc::ServerWriter<v1::ExportChunk>* writer) {
  StatusOr<ExportTable> table = ExportTableFromProto(request->table());
  if (!table.ok()) return ToGrpcStatus(table.status());
  const auto write = [context, writer](const std::string& data) {
    if (context->IsCancelled()) return false;
    v1::ExportChunk chunk;
    chunk.set_data(data);
    return writer->Write(chunk);
  };
  return ToGrpcStatus(ExportSweep(*coordinator_, request->sweep_id(), *table, FromProto(request->format()), write));
}

grpc::Status UserServiceImpl::ListWorkers(grpc::ServerContext* /*context*/, const v1::ListWorkersRequest* request,
                                          v1::ListWorkersResponse* response) {
  StatusOr<std::vector<WorkerRecord>> workers = coordinator_->workers().List();
  if (!workers.ok()) return ToGrpcStatus(workers.status());
  const Timestamp now = coordinator_->clock().Now();
  for (const WorkerRecord& worker : *workers) {
    v1::Worker shown = ToProtoWorker(worker, now, coordinator_->store_options().lease_duration);
    if (shown.gone() && !request->include_gone()) continue;
    *response->add_workers() = std::move(shown);
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::ReleaseWorker(grpc::ServerContext* context, const v1::ReleaseWorkerRequest* request,
                                            v1::Worker* response) {
  if (request->worker_id().empty()) {
    return {grpc::StatusCode::INVALID_ARGUMENT,
            "ReleaseWorkerRequest.worker_id is required (`rung workers` lists them)"};
  }
  StatusOr<WorkerRecord> released = coordinator_->workers().Release(request->worker_id(), Actor(*context));
  if (!released.ok()) return ToGrpcStatus(released.status());
  *response = ToProtoWorker(*released, coordinator_->clock().Now(), coordinator_->store_options().lease_duration);
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetTuning(grpc::ServerContext* /*context*/, const v1::GetTuningRequest* request,
                                        v1::GetTuningResponse* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "GetTuningRequest.sweep_id"); !valid.ok()) return valid;
  StatusOr<SweepRecord> sweep = coordinator_->sweeps().Get(request->sweep_id());
  if (!sweep.ok()) return ToGrpcStatus(sweep.status());
  StatusOr<TuningPlan> plan = coordinator_->tuner().Plan(request->sweep_id());
  if (!plan.ok()) return ToGrpcStatus(plan.status());
  StatusOr<std::shared_ptr<const ExpandedSweep>> spec = coordinator_->tuner().SpecOf(*sweep);
  if (!spec.ok()) return ToGrpcStatus(spec.status());
  const TuneSpec& tune = (*spec)->spec.tune;
  response->set_key(tune.key);
  response->set_ratio(tune.ratio);
  response->set_anchor(tune.anchor);
  response->set_tuning(sweep->tuning);
  response->set_worst_case_trials(plan->worst_case_trials);
  response->set_worst_case_flops(plan->worst_case_flops);
  // A sweep that ended (CANCELLED, FAILED) adds no value any more: its open cells say so, not what
  // they would wait for.
  const bool stopped = sweep->state == SweepState::kCancelled || sweep->state == SweepState::kFailed;
  if (stopped && sweep->tuning == kTuningSearching) {
    response->set_tuning(std::string("stopped (sweep ") + SweepStateName(sweep->state) + ")");
  }
  for (const TuningCellReport& cell : plan->cells) {
    v1::TuningCell* out = response->add_cells();
    *out = ToProtoTuningCell(cell, tune);
    if (stopped && !cell.closed()) {
      out->set_status("stopped");
      out->set_reason(std::string("the sweep is ") + SweepStateName(sweep->state) +
                      ": the search adds no value (resubmitting the spec goes on); it stood " + CellStatusName(cell.status) +
                      ": " + cell.reason);
    }
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetLaws(grpc::ServerContext* context, const v1::GetLawsRequest* request,
                                      v1::GetLawsResponse* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "GetLawsRequest.sweep_id"); !valid.ok()) return valid;
  LawsRequest laws;
  laws.sweep_id = request->sweep_id();
  laws.metric = request->metric();
  laws.variant_keys.assign(request->variant_keys().begin(), request->variant_keys().end());
  laws.law.baseline = request->baseline();
  StatusOr<fit::LawSharing> sharing = fit::ParseLawSharing(request->sharing());
  if (!sharing.ok()) return ToGrpcStatus(Status::InvalidArgument("GetLawsRequest.sharing: " + sharing.status().message()));
  laws.law.fit.sharing = *sharing;
  laws.law.bootstrap = request->bootstrap() == 0 ? laws.law.bootstrap : std::max(0, request->bootstrap());
  laws.law.seed = request->seed();
  laws.law.at.assign(request->at().begin(), request->at().end());
  if (request->tokens_per_param() != 0) laws.law.tokens_per_param = request->tokens_per_param();
  if (request->has_rollout()) {
    if (request->rollout() < 0) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "GetLawsRequest.rollout must be >= 0, got " +
                                                      std::to_string(request->rollout())};
    }
    laws.law.rollout = request->rollout();
  }
  if (request->level() != 0) laws.law.level = request->level();
  laws.law.keep_going = [context] { return CallGoesOn(*context, "the scaling-law fit"); };
  if (authenticator_->CallerRole(*context) == v1::ROLE_VIEWER && laws.law.bootstrap > kMaxViewerBootstrap) {
    return {grpc::StatusCode::RESOURCE_EXHAUSTED,
            "the viewer token may ask at most " + std::to_string(kMaxViewerBootstrap) +
                " bootstrap replicates, got " + std::to_string(laws.law.bootstrap) + " (the user token may ask more)"};
  }
  StatusOr<SweepLaws> fitted = FitSweepLaws(*coordinator_, laws);
  if (!fitted.ok()) return ToGrpcStatus(fitted.status());
  *response->mutable_report() = wire::ToProto(fitted->report);
  response->set_unfinished(fitted->unfinished);
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetPrecision(grpc::ServerContext* /*context*/, const v1::GetPrecisionRequest* request,
                                           v1::GetPrecisionResponse* response) {
  if (grpc::Status valid = Required(request->sweep_id(), "GetPrecisionRequest.sweep_id"); !valid.ok()) return valid;
  StatusOr<PrecisionReport> report = coordinator_->precision().Report(request->sweep_id());
  if (!report.ok()) return ToGrpcStatus(report.status());
  response->set_precision(report->sweep.precision);
  // A sweep that ended (CANCELLED, FAILED) adds no seed any more: its open aim says so.
  const SweepState state = report->sweep.state;
  if ((state == SweepState::kCancelled || state == SweepState::kFailed) && report->sweep.precision == kPrecisionAiming) {
    response->set_precision(std::string("stopped (sweep ") + SweepStateName(state) + ")");
  }
  response->set_status(fit::AimStatusName(report->now.status));
  response->set_why(report->now.why);
  response->set_estimator(report->spec.estimator);
  response->set_level(report->spec.level);
  response->set_target_half_width(report->spec.target_half_width);
  response->set_budget_flops(report->spec.budget_flops);
  response->set_planned_flops(report->now.planned_flops);
  response->set_in_flight(report->spec.in_flight);
  response->set_unfinished(report->unfinished);
  response->set_baseline(report->baseline);
  response->set_intervals(report->now.intervals);
  response->set_closed_reason(report->closed_reason);
  for (const fit::AimRow& row : report->now.rows) {
    v1::PrecisionRow* out = response->add_rows();
    out->set_variant(row.variant);
    out->set_rung_label(row.label);
    if (row.multiplier) out->set_multiplier(*row.multiplier);
    if (row.interval) {
      out->set_low(row.interval->low);
      out->set_high(row.interval->high);
      if (row.interval->df) out->set_df(*row.interval->df);
    }
    if (row.half_width) out->set_half_width(*row.half_width);
    if (row.projected) out->set_projected(*row.projected);
    out->set_seeds(row.seeds);
    out->set_met(row.met);
    out->set_note(row.note);
  }
  for (const fit::AimAddition& addition : report->next) {
    v1::PrecisionAddition* out = response->add_next();
    out->set_variant(addition.variant);
    out->set_rung_label(addition.label);
    out->set_seed(addition.seed);
    out->set_flops(addition.flops);
    out->set_why(addition.why);
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::GetCurves(grpc::ServerContext* context, const v1::GetCurvesRequest* request,
                                        grpc::ServerWriter<v1::Curve>* writer) {
  StatusOr<CurvesQuery> query = CurvesQueryFromProto(*request);
  if (!query.ok()) return ToGrpcStatus(query.status());
  StatusOr<std::vector<SweepCurve>> curves = ReadSweepCurves(*coordinator_, *query);
  if (!curves.ok()) return ToGrpcStatus(curves.status());
  for (const SweepCurve& curve : *curves) {
    if (context->IsCancelled() || !writer->Write(ToProtoCurve(curve, query->x_axis))) break;
  }
  return grpc::Status::OK;
}

grpc::Status UserServiceImpl::StreamMetrics(grpc::ServerContext* context, const v1::StreamMetricsRequest* request,
                                            grpc::ServerWriter<v1::MetricArrivals>* writer) {
  return ToGrpcStatus(FollowMetrics(
      *coordinator_, *request, [writer](const v1::MetricArrivals& message) { return writer->Write(message); },
      [context] { return context->IsCancelled(); }));
}

grpc::Status UserServiceImpl::GetLogs(grpc::ServerContext* context, const v1::GetLogsRequest* request,
                                      grpc::ServerWriter<v1::LogEntry>* writer) {
  if (grpc::Status valid = Required(request->trial_id(), "GetLogsRequest.trial_id"); !valid.ok()) return valid;
  return ToGrpcStatus(FollowLogs(
      *coordinator_, *request, [writer](const v1::LogEntry& entry) { return writer->Write(entry); },
      [context] { return context->IsCancelled(); }));
}

}  // namespace rung::server

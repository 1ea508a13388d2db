// coordinator/server/proto_convert.cc
#include "coordinator/server/proto_convert.h"
#include "proto/trainer_record_proto.h"

#include <cmath>
#include <limits>
#include <variant>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/time_util.h>

#include "coordinator/server/rpc_support.h"
#include "proto/config_value.h"
#include "proto/fit_report_proto.h"
#include "proto/grpc_status.h"
#include "sweeps/spec/json_path.h"

namespace rung::server {
namespace {

constexpr std::pair<SweepState, v1::SweepState> kSweepStates[] = {
    {SweepState::kActive, v1::SWEEP_STATE_ACTIVE},       {SweepState::kPaused, v1::SWEEP_STATE_PAUSED},
    {SweepState::kSucceeded, v1::SWEEP_STATE_SUCCEEDED}, {SweepState::kFailed, v1::SWEEP_STATE_FAILED},
    {SweepState::kCancelled, v1::SWEEP_STATE_CANCELLED},
};

constexpr std::pair<TrialState, v1::TrialState> kTrialStates[] = {
    {TrialState::kPending, v1::TRIAL_STATE_PENDING},     {TrialState::kLeased, v1::TRIAL_STATE_LEASED},
    {TrialState::kRunning, v1::TRIAL_STATE_RUNNING},     {TrialState::kSucceeded, v1::TRIAL_STATE_SUCCEEDED},
    {TrialState::kFailed, v1::TRIAL_STATE_FAILED},       {TrialState::kPreempted, v1::TRIAL_STATE_PREEMPTED},
    {TrialState::kStale, v1::TRIAL_STATE_STALE},         {TrialState::kCancelled, v1::TRIAL_STATE_CANCELLED},
    {TrialState::kEarlyStopped, v1::TRIAL_STATE_EARLY_STOPPED},
};

int64_t CountOf(const SweepOverview& overview, TrialState state) {
  auto found = overview.counts.find(state);
  return found == overview.counts.end() ? 0 : found->second;
}

bool IsWorkerId(const std::string& id) {
  if (id.empty()) return false;
  for (char c : id) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}


}  // namespace

google::protobuf::Timestamp ToProtoTime(Timestamp time) { return ToTimestamp(time); }

v1::SweepState ToProto(SweepState state) {
  for (const auto& [ours, theirs] : kSweepStates) {
    if (ours == state) return theirs;
  }
  return v1::SWEEP_STATE_UNSPECIFIED;
}

v1::TrialState ToProto(TrialState state) {
  for (const auto& [ours, theirs] : kTrialStates) {
    if (ours == state) return theirs;
  }
  return v1::TRIAL_STATE_UNSPECIFIED;
}

StatusOr<SweepState> FromProto(v1::SweepState state) {
  for (const auto& [ours, theirs] : kSweepStates) {
    if (theirs == state) return ours;
  }
  return Status::InvalidArgument("sweep state " + std::to_string(state) + " is not a state to filter by");
}

StatusOr<TrialState> FromProto(v1::TrialState state) {
  for (const auto& [ours, theirs] : kTrialStates) {
    if (theirs == state) return ours;
  }
  return Status::InvalidArgument("trial state " + std::to_string(state) + " is not a state to filter by");
}

v1::Sweep ToProtoSweep(const SweepOverview& overview, bool with_spec_text) {
  const SweepRecord& sweep = overview.sweep;
  v1::Sweep out;
  out.set_sweep_id(sweep.id);
  out.set_name(sweep.name);
  out.set_description(sweep.description);
  out.set_state(ToProto(sweep.state));
  out.set_spec_file_name(sweep.spec_file_name);
  if (with_spec_text) out.set_spec_text(sweep.spec_text);
  out.set_spec_hash(sweep.spec_hash);
  out.set_metric_name(sweep.metric.name);
  out.set_metric_goal(sweep.metric.goal);
  wire::ToConfigEntries(sweep.baseline, out.mutable_baseline());
  out.set_priority(sweep.policy.priority);
  out.set_max_retries(sweep.policy.max_retries);
  out.set_max_failed(sweep.policy.max_failed);
  v1::TrialCounts* counts = out.mutable_counts();
  counts->set_pending(CountOf(overview, TrialState::kPending));
  counts->set_leased(CountOf(overview, TrialState::kLeased));
  counts->set_running(CountOf(overview, TrialState::kRunning));
  counts->set_succeeded(CountOf(overview, TrialState::kSucceeded));
  counts->set_failed(CountOf(overview, TrialState::kFailed));
  counts->set_preempted(CountOf(overview, TrialState::kPreempted));
  counts->set_stale(CountOf(overview, TrialState::kStale));
  counts->set_cancelled(CountOf(overview, TrialState::kCancelled));
  counts->set_early_stopped(CountOf(overview, TrialState::kEarlyStopped));
  counts->set_total(overview.total_trials);
  out.set_total_flops(overview.total_flops);
  out.set_finished_flops(overview.finished_flops);
  *out.mutable_created_at() = ToProtoTime(sweep.created_at);
  if (overview.finished_at) *out.mutable_finished_at() = ToProtoTime(*overview.finished_at);
  out.set_state_reason(overview.state_reason);
  out.set_tuning(overview.sweep.tuning);
  out.set_precision(overview.sweep.precision);
  return out;
}

StatusOr<MetricSummary> FromProto(v1::MetricSummary summary) {
  switch (summary) {
    case v1::METRIC_SUMMARY_UNSPECIFIED:
    case v1::METRIC_SUMMARY_FINAL: return MetricSummary::kFinal;
    case v1::METRIC_SUMMARY_BEST: return MetricSummary::kBest;
    case v1::METRIC_SUMMARY_LAST: return MetricSummary::kLast;
    default: return Status::InvalidArgument("summary: unknown MetricSummary " + std::to_string(summary));
  }
}

namespace {

constexpr std::pair<v1::Aggregation, Aggregation> kAggregations[] = {
    {v1::AGGREGATION_MEAN, Aggregation::kMean},     {v1::AGGREGATION_STD, Aggregation::kStd},
    {v1::AGGREGATION_MIN, Aggregation::kMin},       {v1::AGGREGATION_MAX, Aggregation::kMax},
    {v1::AGGREGATION_MEDIAN, Aggregation::kMedian}, {v1::AGGREGATION_COUNT, Aggregation::kCount}};

v1::MetricSummary ToProto(MetricSummary summary) {
  switch (summary) {
    case MetricSummary::kBest: return v1::METRIC_SUMMARY_BEST;
    case MetricSummary::kLast: return v1::METRIC_SUMMARY_LAST;
    default: return v1::METRIC_SUMMARY_FINAL;
  }
}

}  // namespace

StatusOr<std::vector<std::string>> MetricNamesFromProto(const google::protobuf::RepeatedPtrField<std::string>& names,
                                                        const std::string& field) {
  if (names.size() > kMaxMetricNames) {
    return Status::InvalidArgument(field + " has " + std::to_string(names.size()) + " names; at most " +
                                   std::to_string(kMaxMetricNames) + " per call");
  }
  std::vector<std::string> checked;
  for (const std::string& name : names) {
    if (name.empty()) return Status::InvalidArgument(field + " has an empty name");
    if (name.size() > kMaxMetricNameBytes) {
      return Status::InvalidArgument(field + " has a name of " + std::to_string(name.size()) + " bytes; at most " +
                                     std::to_string(kMaxMetricNameBytes));
    }
    checked.push_back(name);
  }
  return checked;
}

StatusOr<CurvesQuery> CurvesQueryFromProto(const v1::GetCurvesRequest& request) {
  if (request.sweep_id() <= 0) {
    return Status::InvalidArgument("GetCurvesRequest.sweep_id is required (a positive id)");
  }
  CurvesQuery query;
  query.sweep_id = request.sweep_id();
  RUNG_ASSIGN_OR_RETURN(query.names, MetricNamesFromProto(request.names(), "GetCurvesRequest.names"));
  if (request.trial_ids_size() > kMaxCurveTrialIds) {
    return Status::InvalidArgument("GetCurvesRequest.trial_ids has " + std::to_string(request.trial_ids_size()) +
                                   " ids; at most " + std::to_string(kMaxCurveTrialIds) +
                                   " (none: every trial of the sweep)");
  }
  for (int64_t trial_id : request.trial_ids()) {
    if (trial_id <= 0) {
      return Status::InvalidArgument("GetCurvesRequest.trial_ids: " + std::to_string(trial_id) +
                                     " is not a trial id (a positive id)");
    }
    query.trial_ids.push_back(trial_id);
  }
  switch (request.x_axis()) {
    case v1::CURVE_AXIS_UNSPECIFIED:
    case v1::CURVE_AXIS_STEP: query.x_axis = CurveAxis::kStep; break;
    case v1::CURVE_AXIS_TOKENS: query.x_axis = CurveAxis::kTokens; break;
    case v1::CURVE_AXIS_FLOPS: query.x_axis = CurveAxis::kFlops; break;
    case v1::CURVE_AXIS_WALL_TIME: query.x_axis = CurveAxis::kWallTime; break;
    default:
      return Status::InvalidArgument("GetCurvesRequest.x_axis " + std::to_string(request.x_axis()) +
                                     " is not an axis this coordinator knows (step, tokens, flops, wall_time)");
  }
  if (request.max_points() < 0) {
    return Status::InvalidArgument("GetCurvesRequest.max_points " + std::to_string(request.max_points()) +
                                   " is negative (0: " + std::to_string(kDefaultCurvePoints) + " points per curve; at most " +
                                   std::to_string(kMaxCurvePoints) + ")");
  }
  query.max_points = request.max_points() == 0
                         ? kDefaultCurvePoints
                         : std::clamp(static_cast<size_t>(request.max_points()), kMinDownsampledPoints, kMaxCurvePoints);
  return query;
}

v1::CurveAxis ToProto(CurveAxis axis) {
  switch (axis) {
    case CurveAxis::kTokens: return v1::CURVE_AXIS_TOKENS;
    case CurveAxis::kFlops: return v1::CURVE_AXIS_FLOPS;
    case CurveAxis::kWallTime: return v1::CURVE_AXIS_WALL_TIME;
    case CurveAxis::kStep: break;
  }
  return v1::CURVE_AXIS_STEP;
}

v1::Curve ToProtoCurve(const SweepCurve& curve, CurveAxis axis) {
  v1::Curve out;
  out.set_trial_id(curve.trial_id);
  out.set_name(curve.name);
  out.mutable_steps()->Add(curve.steps.begin(), curve.steps.end());
  out.mutable_x()->Add(curve.x.begin(), curve.x.end());
  out.mutable_values()->Add(curve.values.begin(), curve.values.end());
  out.set_stored_points(curve.stored_points);
  out.set_x_axis(ToProto(axis));
  return out;
}

v1::MetricPoint ToProtoMetricPoint(const MetricPoint& point, int64_t attempt) {
  v1::MetricPoint out;
  out.set_step(point.step);
  out.set_value(point.value);
  out.set_tokens(point.tokens);
  out.set_flops(point.flops);
  out.set_wall_time(point.wall_time);
  out.set_attempt(attempt);
  return out;
}

StatusOr<FitOptions> FitOptionsFromProto(const v1::FitRequest& request) {
  FitOptions options;
  options.sweep_id = request.sweep_id();
  options.metric = request.metric();
  options.variant_keys.assign(request.variant_keys().begin(), request.variant_keys().end());
  RUNG_ASSIGN_OR_RETURN(options.summary, FromProto(request.summary()));
  options.baseline = request.baseline();
  options.bootstrap = request.bootstrap();
  options.seed = request.seed();
  if (request.has_fixed_e()) options.fixed_e = request.fixed_e();
  if (request.has_tuned_value()) {
    if (!(request.tuned_value() > 0) || !std::isfinite(request.tuned_value())) {
      return Status::InvalidArgument("FitRequest.tuned_value must be a positive number (rung fit --lr-policy value=X)");
    }
    options.tuned_value = request.tuned_value();
  }
  options.e_grid.assign(request.e_grid().begin(), request.e_grid().end());
  StatusOr<fit::PowerLawResiduals> residuals = fit::ParsePowerLawResiduals(request.power_law_residuals());
  if (!residuals.ok()) {
    return Status::InvalidArgument("FitRequest.power_law_residuals: " + residuals.status().message() +
                                   " (rung fit --power-law-residuals)");
  }
  options.power_law_residuals = *residuals;
  StatusOr<fit::ComputeCount> compute = fit::ParseComputeCount(request.compute());
  if (!compute.ok()) {
    return Status::InvalidArgument("FitRequest.compute: " + compute.status().message() + " (rung fit --compute)");
  }
  options.compute = *compute;
  return options;
}

StatusOr<v1::StoredFit> ToProtoStoredFit(const FitRecord& fit, bool with_report) {
  v1::StoredFit out;
  out.set_fit_id(fit.id);
  out.set_sweep_id(fit.sweep_id);
  *out.mutable_created_at() = ToProtoTime(fit.created_at);
  out.set_actor(fit.actor);
  out.set_metric(fit.metric);
  out.set_baseline(fit.baseline);
  for (const std::string& key : fit.variant_keys) out.add_variant_keys(key);
  // The options are stored as FitOptions' proto3 JSON (store/fit_store.h); keys of older releases are skipped.
  google::protobuf::util::JsonParseOptions parse;
  parse.ignore_unknown_fields = true;
  if (!google::protobuf::util::JsonStringToMessage(fit.options.dump(), out.mutable_options(), parse).ok()) {
    return Status::Internal("fit " + std::to_string(fit.id) + ": its stored options do not read as FitOptions: " +
                            fit.options.dump());
  }
  for (const FitPointRecord& point : fit.points) {
    v1::FitPoint* shown = out.add_points();
    shown->set_trial_id(point.trial_id);
    shown->set_variant(point.variant);
    shown->set_label(point.label);
    shown->set_compute(point.compute);
    shown->set_loss(point.loss);
    shown->set_seed(point.seed);
  }
  if (with_report) {
    StatusOr<std::vector<fit::ReportRow>> rows = fit::ReportRowsFromJson(fit.result);
    if (!rows.ok()) {
      return Status::Internal("fit " + std::to_string(fit.id) + ": its stored report does not read: " +
                              rows.status().message());
    }
    for (const fit::ReportRow& row : *rows) *out.add_report() = wire::ToProto(row);
    out.set_report_text(fit.result_text);
  }
  return out;
}

StatusOr<ExportTable> ExportTableFromProto(v1::ExportTable table) {
  switch (table) {
    case v1::EXPORT_TABLE_UNSPECIFIED:
    case v1::EXPORT_TABLE_TRIALS: return ExportTable::kTrials;
    case v1::EXPORT_TABLE_LADDER: return ExportTable::kLadder;
    default:
      return FromGrpcStatus(Unimplemented("rung.v1.UserService/Export of table " + v1::ExportTable_Name(table)));
  }
}

ExportFormat FromProto(v1::ExportFormat format) {
  return format == v1::EXPORT_FORMAT_JSONL ? ExportFormat::kJsonLines : ExportFormat::kCsv;
}

StatusOr<ResultsQuery> ResultsQueryFromProto(const v1::QueryResultsRequest& request) {
  ResultsQuery query;
  query.sweep_id = request.sweep_id();
  query.group_by.assign(request.group_by().begin(), request.group_by().end());
  for (const v1::ResultFilter& filter : request.filters()) {
    if (!filter.has_value()) {
      return Status::InvalidArgument("filters: '" + filter.key() + "' has no value (set ResultFilter.value)");
    }
    query.filters.push_back({filter.key(), wire::FromConfigValue(filter.value())});
  }
  for (const v1::ResultFilter& filter : request.against()) {
    if (!filter.has_value()) {
      return Status::InvalidArgument("against: '" + filter.key() + "' has no value (set ResultFilter.value)");
    }
    query.against.push_back({filter.key(), wire::FromConfigValue(filter.value())});
  }
  query.pair_on.assign(request.pair_on().begin(), request.pair_on().end());
  if (request.level() != 0.0) query.level = request.level();
  query.metric = request.metric();
  RUNG_ASSIGN_OR_RETURN(query.summary, FromProto(request.summary()));
  for (int aggregation : request.aggregations()) {
    const auto* found = std::find_if(std::begin(kAggregations), std::end(kAggregations),
                                     [&](const auto& pair) { return pair.first == aggregation; });
    if (found == std::end(kAggregations)) {
      return Status::InvalidArgument("aggregations: " + std::to_string(aggregation) +
                                     " is not an aggregation (MEAN, STD, MIN, MAX, MEDIAN, COUNT)");
    }
    query.aggregations.push_back(found->second);
  }
  return query;
}

v1::QueryResultsResponse ToProtoResults(const ResultsTable& table) {
  v1::QueryResultsResponse response;
  for (const std::string& key : table.group_by) response.add_group_by(key);
  for (Aggregation aggregation : table.aggregations) {
    const auto* found = std::find_if(std::begin(kAggregations), std::end(kAggregations),
                                     [&](const auto& pair) { return pair.second == aggregation; });
    response.add_aggregations(found->first);
  }
  response.set_metric(table.metric);
  wire::ToConfigEntries(table.baseline, response.mutable_baseline());
  response.set_summary(ToProto(table.summary));
  for (const std::string& key : table.pair_on) response.add_pair_on(key);
  response.set_level(table.level);
  for (const ResultRow& row : table.rows) {
    v1::ResultRow* out = response.add_rows();
    for (const nlohmann::json& value : row.group_values) *out->add_group_values() = wire::ToConfigValue(value);
    for (double value : row.values) out->add_values(value);
    out->set_trials(row.trials);
    for (int64_t trial_id : row.trial_ids) out->add_trial_ids(trial_id);
    out->set_flops(row.flops);
    out->set_tokens(row.tokens);
    if (row.paired_difference_mean) out->set_paired_difference_mean(*row.paired_difference_mean);
    if (row.paired_difference_sd) out->set_paired_difference_sd(*row.paired_difference_sd);
    if (row.paired_low) out->set_paired_low(*row.paired_low);
    if (row.paired_high) out->set_paired_high(*row.paired_high);
    out->set_pairs(row.pairs);
  }
  return response;
}

v1::TrialAttempt ToProtoAttempt(const AttemptRecord& attempt) {
  v1::TrialAttempt out;
  out.set_attempt(attempt.attempt);
  out.set_worker_id(attempt.worker_id);
  out.set_state(ToProto(attempt.state));
  *out.mutable_leased_at() = ToProtoTime(attempt.leased_at);
  *out.mutable_lease_expires_at() = ToProtoTime(attempt.lease_expires_at);
  if (attempt.started_at) *out.mutable_started_at() = ToProtoTime(*attempt.started_at);
  if (attempt.ended_at) *out.mutable_ended_at() = ToProtoTime(*attempt.ended_at);
  out.set_checkpoint_dir(attempt.checkpoint_dir);
  if (!attempt.provenance_json.empty()) {
    // Stored as the record's JSON (store/record_rows.h); one that no longer decodes is left unset.
    StatusOr<records::TrainerRecord> record = records::DecodeRecord(attempt.provenance_json);
    if (record.ok() && std::holds_alternative<records::ProvenanceRecord>(*record)) {
      *out.mutable_provenance() = wire::ToProto(*record).provenance();
    }
  }
  out.set_exit_reason(attempt.exit_reason);
  out.set_metric_batches(attempt.batches);
  return out;
}

v1::Trial ToProtoTrial(const TrialOverview& overview, const nlohmann::json& baseline, bool full,
                       const std::vector<AttemptRecord>& attempts) {
  const TrialRecord& trial = overview.trial;
  const TrialCell& cell = trial.cell;
  v1::Trial out;
  out.set_trial_id(trial.id);
  out.set_sweep_id(trial.sweep_id);
  out.set_index(trial.trial_index);
  out.set_rung(cell.rung);
  out.set_rung_label(cell.rung_label);
  wire::ToConfigEntries(cell.assignments, out.mutable_assignments());
  out.set_identity(cell.identity);
  out.set_baseline(MatchesBaseline(cell.config, baseline));
  if (full) wire::ToConfigEntries(cell.config, out.mutable_config()->mutable_entries());
  out.set_parameters_nonembedding(cell.n_nonembedding);
  out.set_parameters_total(cell.n_total);
  out.set_tokens(cell.tokens);
  out.set_flops(cell.flops);
  out.set_state(ToProto(trial.state));
  if (trial.early_stop) {
    switch (*trial.early_stop) {
      case EarlyStop::kAsha: out.set_early_stop(v1::EARLY_STOP_ASHA); break;
      case EarlyStop::kDivergence: out.set_early_stop(v1::EARLY_STOP_DIVERGENCE); break;
      case EarlyStop::kNonFinite: out.set_early_stop(v1::EARLY_STOP_NON_FINITE); break;
    }
  }
  out.set_attempt(trial.attempt);
  out.set_state_reason(overview.state_reason);
  out.set_latest_step(overview.latest_step.value_or(0));
  out.set_total_steps(cell.steps);
  if (overview.latest_metric) out.set_latest_metric(*overview.latest_metric);
  if (overview.final_metric && trial.state == TrialState::kSucceeded) out.set_final_metric(*overview.final_metric);
  if (overview.attempt) {
    out.set_checkpoint_dir(overview.attempt->checkpoint_dir);
    if (IsLive(overview.attempt->state)) {
      out.set_worker_id(overview.attempt->worker_id);
      *out.mutable_lease_expires_at() = ToProtoTime(overview.attempt->lease_expires_at);
    }
  }
  *out.mutable_created_at() = ToProtoTime(trial.created_at);
  if (overview.first_leased_at) *out.mutable_started_at() = ToProtoTime(*overview.first_leased_at);
  if (overview.finished_at) *out.mutable_finished_at() = ToProtoTime(*overview.finished_at);
  out.set_failures(trial.failures);
  if (full) {
    for (const AttemptRecord& attempt : attempts) *out.add_attempts() = ToProtoAttempt(attempt);
  }
  return out;
}

v1::Worker ToProtoWorker(const WorkerRecord& worker, Timestamp now, std::chrono::microseconds lease_duration) {
  const nlohmann::json& details = worker.info.details;
  v1::Worker out;
  out.set_worker_id(worker.info.id);
  out.set_host(worker.info.host);
  out.set_name(details.value("name", ""));
  out.set_cpu_slots(static_cast<int32_t>(worker.info.cpus));
  if (details.contains("gpus") && details["gpus"].is_array()) {
    for (const nlohmann::json& gpu : details["gpus"]) {
      v1::GpuDevice* device = out.add_gpus();
      device->set_index(gpu.value("index", 0));
      device->set_name(gpu.value("name", ""));
      device->set_uuid(gpu.value("uuid", ""));
      device->set_memory_bytes(gpu.value("memory_bytes", int64_t{0}));
    }
  }
  if (details.contains("labels") && details["labels"].is_object()) {
    for (auto label = details["labels"].begin(); label != details["labels"].end(); ++label) {
      if (label.value().is_string()) (*out.mutable_labels())[label.key()] = label.value().get<std::string>();
    }
  }
  out.set_build_commit(details.value("build_commit", ""));
  if (details.contains("blas_kernel") && details["blas_kernel"].is_string()) {
    out.set_blas_kernel(details["blas_kernel"].get<std::string>());
  }
  *out.mutable_registered_at() = ToProtoTime(worker.registered_at);
  *out.mutable_last_seen_at() = ToProtoTime(worker.last_seen_at);
  if (worker.quarantined_at) {
    *out.mutable_quarantined_at() = ToProtoTime(*worker.quarantined_at);
    out.set_quarantine_reason(worker.quarantine_reason);
  }
  if (worker.info.stops_at) *out.mutable_stops_at() = ToProtoTime(*worker.info.stops_at);
  for (int64_t trial_id : worker.live_trial_ids) out.add_running_trial_ids(trial_id);
  out.set_gone(now - worker.last_seen_at > lease_duration);
  return out;
}

v1::Tensor ToProtoTensor(const records::Tensor& tensor) {
  v1::Tensor out;
  out.set_name(tensor.name);
  for (int64_t extent : tensor.shape) out.add_shape(extent);
  for (double value : tensor.values) out.add_values(value);
  return out;
}

Status CheckTensor(const records::Tensor& tensor) {
  if (tensor.name.empty()) return Status::InvalidArgument("a tensor needs a name");
  int64_t size = 1;
  for (int64_t extent : tensor.shape) {
    if (extent < 0) return Status::InvalidArgument("tensor " + tensor.name + " has a negative extent");
    if (extent > 0 && size > std::numeric_limits<int64_t>::max() / extent) {
      return Status::InvalidArgument("tensor " + tensor.name + " has a shape too large to hold");
    }
    size *= extent;
  }
  if (size != static_cast<int64_t>(tensor.values.size())) {
    return Status::InvalidArgument("tensor " + tensor.name + " has " + std::to_string(tensor.values.size()) +
                                   " values for a shape of " + std::to_string(size) + " elements");
  }
  return Status::Ok();
}

StatusOr<WorkerInfo> WorkerInfoFromRequest(const v1::RegisterRequest& request) {
  if (!IsWorkerId(request.worker_id())) {
    return Status::InvalidArgument("RegisterRequest.worker_id '" + request.worker_id() +
                                   "' is not an id: use letters, digits, '.', '_' and '-', e.g. node7-gpu0");
  }
  if (request.host().empty()) {
    return Status::InvalidArgument("RegisterRequest.host is empty: send the host name other workers reach this one by");
  }
  if (request.blas_kernel().size() > 256) {
    return Status::InvalidArgument("RegisterRequest.blas_kernel has " + std::to_string(request.blas_kernel().size()) +
                                   " bytes; at most 256 (a kernel name and who chose it, e.g. \"Cooperlake (rung)\")");
  }
  if (request.cpu_slots() < 0) {
    return Status::InvalidArgument("RegisterRequest.cpu_slots is " + std::to_string(request.cpu_slots()) +
                                   "; it must be 0 or more");
  }
  if (request.cpu_slots() == 0 && request.gpus_size() == 0) {
    return Status::InvalidArgument("worker " + request.worker_id() +
                                   " offers neither CPU slots nor GPUs: nothing could be leased to it");
  }
  if (request.has_stops_at() &&
      (request.stops_at().seconds() <= 0 ||
       request.stops_at().seconds() > google::protobuf::util::TimeUtil::kTimestampMaxSeconds ||
       request.stops_at().nanos() < 0 || request.stops_at().nanos() > 999'999'999)) {
    return Status::InvalidArgument("RegisterRequest.stops_at (" + std::to_string(request.stops_at().seconds()) +
                                   " s, " + std::to_string(request.stops_at().nanos()) +
                                   " ns) is not a time after 1970: leave it unset when no end is known");
  }
  WorkerInfo worker;
  worker.id = request.worker_id();
  worker.host = request.host();
  worker.cpus = request.cpu_slots();
  worker.gpus = request.gpus_size();
  nlohmann::json gpus = nlohmann::json::array();
  for (const v1::GpuDevice& gpu : request.gpus()) {
    gpus.push_back(
        {{"index", gpu.index()}, {"name", gpu.name()}, {"uuid", gpu.uuid()}, {"memory_bytes", gpu.memory_bytes()}});
  }
  nlohmann::json labels = nlohmann::json::object();
  for (const auto& [key, value] : request.labels()) labels[key] = value;
  worker.details = {{"name", request.name()},
                    {"gpus", gpus},
                    {"labels", labels},
                    {"build_commit", request.build_commit()},
                    {"blas_kernel", request.blas_kernel()},
                    {"pid", request.pid()}};
  if (request.has_stops_at()) {
    worker.stops_at = FromUnixMicros(google::protobuf::util::TimeUtil::TimestampToMicroseconds(request.stops_at()));
  }
  return worker;
}

v1::TrialLease ToProtoLease(const Lease& lease, const google::protobuf::RepeatedField<int32_t>& free_gpus,
                            std::chrono::microseconds lease_duration) {
  v1::TrialLease out;
  out.set_trial_id(lease.trial_id);
  out.set_attempt(lease.attempt);
  out.set_sweep_id(lease.sweep_id);
  // Unset when the stored config is not a JSON object: the worker refuses a lease without one.
  const nlohmann::json config = nlohmann::json::parse(lease.config_json, nullptr, /*allow_exceptions=*/false);
  if (config.is_object()) *out.mutable_config() = wire::ToConfigObject(config);
  out.set_checkpoint_dir(lease.checkpoint_dir);
  for (const PreviousAttempt& earlier : lease.resume_from) out.add_resume_from_dirs(earlier.checkpoint_dir);
  out.set_cpu_slots(static_cast<int32_t>(lease.cpus));
  for (int64_t taken = 0; taken < lease.gpus && taken < free_gpus.size(); ++taken) out.add_gpus(free_gpus[taken]);
  *out.mutable_lease_duration() = ToDuration(lease_duration);
  *out.mutable_lease_expires_at() = ToProtoTime(lease.lease_expires_at);
  out.set_world_size(static_cast<int32_t>(lease.world_size));
  out.set_total_steps(lease.total_steps);
  if (!lease.rendezvous.empty()) {
    out.set_rank(static_cast<int32_t>(lease.rank));
    out.set_rendezvous(lease.rendezvous);
  }
  return out;
}

StatusOr<MetricBatch> MetricBatchFromProto(const v1::MetricBatch& batch, const std::string& where) {
  MetricBatch out;
  out.sequence = batch.sequence();
  std::vector<records::TrainerRecord> typed;
  typed.reserve(batch.stdout_size());
  out.lines.reserve(batch.stdout_size() + batch.stderr_lines_size());
  for (int index = 0; index < batch.stdout_size(); ++index) {
    const v1::StdoutLine& line = batch.stdout(index);
    if (line.line_case() != v1::StdoutLine::kRecord) {
      out.lines.push_back({LogSource::kRecord, line.text()});
      continue;
    }
    StatusOr<records::TrainerRecord> record = wire::FromProto(line.record());
    if (!record.ok()) {
      return Status::InvalidArgument(where + ".stdout[" + std::to_string(index) + "]: " + record.status().message());
    }
    if (const auto* final_record = std::get_if<records::FinalRecord>(&*record)) {
      for (const auto* tensors : {&final_record->positional_parameters, &final_record->frequencies}) {
        for (const records::Tensor& tensor : *tensors) {
          if (Status valid = CheckTensor(tensor); !valid.ok()) {
            return Status::InvalidArgument(where + ".stdout[" + std::to_string(index) + "] (final): " +
                                           valid.message());
          }
        }
      }
    }
    out.lines.push_back({LogSource::kRecord, records::EncodeRecord(*record)});  // the attempt's log: the line, once
    typed.push_back(std::move(record).value());
  }
  RecordRows rows = RowsFromRecords(typed);
  // One point per step and name: a step printed twice in one batch keeps its first value.
  std::set<std::pair<int64_t, std::string>> seen;
  out.points.reserve(rows.points.size());
  for (MetricPoint& point : rows.points) {
    if (seen.insert({point.step, point.name}).second) out.points.push_back(std::move(point));
  }
  out.provenance_json = std::move(rows.provenance_json);
  out.results = std::move(rows.results);
  for (const std::string& line : batch.stderr_lines()) out.lines.push_back({LogSource::kStderr, line});
  return out;
}

StatusOr<AttemptEnding> AttemptEndingFromRequest(const v1::CompleteRequest& request) {
  AttemptEnding ending;
  ending.last_batch_sequence = request.last_batch_sequence();
  ending.exit_code = request.exit_code();
  const std::string exit_code =
      request.exit_code() == 0 ? "" : " (exit code " + std::to_string(request.exit_code()) + ")";
  switch (request.outcome()) {
    case v1::OUTCOME_SUCCEEDED:
      ending.outcome = TrialState::kSucceeded;
      return ending;
    case v1::OUTCOME_FAILED:
      ending.outcome = TrialState::kFailed;
      ending.reason = (request.reason().empty() ? "the trainer failed" : request.reason()) + exit_code;
      return ending;
    case v1::OUTCOME_PREEMPTED:
      ending.outcome = TrialState::kPreempted;
      ending.reason = request.reason().empty() ? "preempted" : request.reason();
      return ending;
    default:
      return Status::InvalidArgument("CompleteRequest.outcome is unspecified: send SUCCEEDED, FAILED or PREEMPTED");
  }
}

v1::TuningCell ToProtoTuningCell(const TuningCellReport& cell, const TuneSpec& tune) {
  v1::TuningCell out;
  wire::ToConfigEntries(cell.cell, out.mutable_cell());
  out.set_rung_label(cell.rung_label);
  out.set_rung(cell.rung);
  out.set_n_total(cell.n_total);
  out.set_status(CellStatusName(cell.status));
  for (const TriedValue& tried : cell.tried) {
    v1::TunedValue* value = out.add_tried();
    value->set_grid_index(tried.index);
    value->set_value(tried.value);
    if (tried.metric) value->set_metric(*tried.metric);
    value->set_state(tried.state);
  }
  if (cell.best_value) out.set_best(*cell.best_value);
  if (cell.best_index) out.set_best_index(*cell.best_index);
  out.set_bracketed(cell.bracketed());
  out.set_reason(cell.reason);
  if (cell.next_center) out.set_next_center(tune.ValueAt(*cell.next_center));
  out.set_members(cell.members);
  out.set_followers(cell.followers);
  return out;
}

}  // namespace rung::server

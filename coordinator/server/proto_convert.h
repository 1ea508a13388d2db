// coordinator/server/proto_convert.h
//
// Translation between the wire contract (proto/rung.proto) and the store's values
// (coordinator/store/store_types.h), both ways, for both services: what a user sees of sweeps,
// trials, attempts and workers; what a worker's registration, metric batch and completion become
// in the store; what a lease looks like on the wire. Requests are checked here (INVALID_ARGUMENT
// naming the field to fix), so the services stay a few lines each.
//
// Example:
//   StatusOr<WorkerInfo> worker = WorkerInfoFromRequest(*request);
//   if (!worker.ok()) return ToGrpcStatus(worker.status());
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include <google/protobuf/timestamp.pb.h>
#include <nlohmann/json.hpp>

#include "coordinator/domain/results_query.h"
#include "coordinator/domain/curve_downsampling.h"
#include "coordinator/domain/sweep_curves.h"
#include "coordinator/domain/sweep_export.h"
#include "coordinator/domain/sweep_fits.h"
#include "coordinator/store/record_rows.h"
#include "coordinator/store/store_types.h"
#include "core/common/status.h"
#include "core/records/trainer_records.h"
#include "sweeps/tune/lr_search.h"
#include "proto/rung.pb.h"
#include "sweeps/spec/json_path.h"

namespace rung::server {

google::protobuf::Timestamp ToProtoTime(Timestamp time);

v1::SweepState ToProto(SweepState state);
v1::TrialState ToProto(TrialState state);
// INVALID_ARGUMENT for UNSPECIFIED or an unknown value.
StatusOr<SweepState> FromProto(v1::SweepState state);
StatusOr<TrialState> FromProto(v1::TrialState state);

// A sweep as users see it; spec_text only `with_spec_text` (GetSweep).
v1::Sweep ToProtoSweep(const SweepOverview& overview, bool with_spec_text);

// A trial as users see it. `full`: with its config and, when given, its attempts.
v1::Trial ToProtoTrial(const TrialOverview& overview, const nlohmann::json& baseline, bool full,
                       const std::vector<AttemptRecord>& attempts = {});
v1::TrialAttempt ToProtoAttempt(const AttemptRecord& attempt);

// QueryResults: the request as a query (INVALID_ARGUMENT for a filter value that is not JSON, an
// unknown summary or aggregation), and the table as the response.
StatusOr<MetricSummary> FromProto(v1::MetricSummary summary);
StatusOr<ResultsQuery> ResultsQueryFromProto(const v1::QueryResultsRequest& request);
v1::QueryResultsResponse ToProtoResults(const ResultsTable& table);

// Fit, ListFits: the request as fit options (INVALID_ARGUMENT for an unknown summary); a row of the
// report; a stored fit, its report only `with_report`.
StatusOr<FitOptions> FitOptionsFromProto(const v1::FitRequest& request);
// INTERNAL for a stored fit whose options or report no longer read (the message names the fit).
StatusOr<v1::StoredFit> ToProtoStoredFit(const FitRecord& fit, bool with_report);

// GetCurves: the request as a query. INVALID_ARGUMENT (naming the field) for a missing sweep id, a
// negative max_points, an unknown x axis, a bad metric name (MetricNamesFromProto), more than
// kMaxCurveTrialIds trial ids or one that is not positive. max_points 0 is the default, above
// kMaxCurvePoints it is taken as kMaxCurvePoints, under kMinDownsampledPoints as that.
inline constexpr int kMaxCurveTrialIds = 100000;
StatusOr<CurvesQuery> CurvesQueryFromProto(const v1::GetCurvesRequest& request);
v1::CurveAxis ToProto(CurveAxis axis);
v1::Curve ToProtoCurve(const SweepCurve& curve, CurveAxis axis);

// The metric names of a request (GetCurves, StreamMetrics): INVALID_ARGUMENT, naming `field`, for
// more than kMaxMetricNames, an empty one or one longer than kMaxMetricNameBytes.
inline constexpr int kMaxMetricNames = 64;
inline constexpr size_t kMaxMetricNameBytes = 256;
StatusOr<std::vector<std::string>> MetricNamesFromProto(const google::protobuf::RepeatedPtrField<std::string>& names,
                                                        const std::string& field);

// A stored point of a trial's curve as users see it.
v1::MetricPoint ToProtoMetricPoint(const MetricPoint& point, int64_t attempt);

// Export: the table asked for (TRIALS for UNSPECIFIED; UNIMPLEMENTED for a table this coordinator
// does not serve) and the format.
StatusOr<ExportTable> ExportTableFromProto(v1::ExportTable table);
ExportFormat FromProto(v1::ExportFormat format);

// `gone`: not seen for longer than a lease lasts.
v1::Worker ToProtoWorker(const WorkerRecord& worker, Timestamp now, std::chrono::microseconds lease_duration);

// A tuning cell of a sweep's search (GetTuning); `tune` gives the grid its values are on.
v1::TuningCell ToProtoTuningCell(const TuningCellReport& cell, const TuneSpec& tune);

v1::Tensor ToProtoTensor(const records::Tensor& tensor);
// INVALID_ARGUMENT for a tensor without a name, a negative extent, or values that do not fill its
// shape.
Status CheckTensor(const records::Tensor& tensor);

// ------------------------------------------------------------------------------------ worker side

// The registration as the store keeps it (stops_at unset: none, so a registration without it clears
// the one before). INVALID_ARGUMENT for an id outside [A-Za-z0-9._-]+, an empty host, negative CPU
// slots, neither CPU slots nor GPUs, or a stops_at that is not a time after 1970.
StatusOr<WorkerInfo> WorkerInfoFromRequest(const v1::RegisterRequest& request);

// The lease on the wire: the trial takes the first lease.gpus of `free_gpus`.
v1::TrialLease ToProtoLease(const Lease& lease, const google::protobuf::RepeatedField<int32_t>& free_gpus,
                            std::chrono::microseconds lease_duration);

// A metric batch as the store takes it (trial, attempt and worker are the caller's to set): what
// its typed records hold (record_rows.h; one point per step and name), and every line as log text.
// INVALID_ARGUMENT, naming `where` ("ReportMetricsRequest.batch") and the record, for a record that
// does not convert or a tensor that does not fill its shape.
StatusOr<MetricBatch> MetricBatchFromProto(const v1::MetricBatch& batch, const std::string& where);

// The end of an attempt as the store takes it. INVALID_ARGUMENT for an unspecified outcome.
StatusOr<AttemptEnding> AttemptEndingFromRequest(const v1::CompleteRequest& request);

}  // namespace rung::server

// coordinator/client/sweep_evaluations.h
//
// A sweep's evaluations beyond the training length, as `rung plot SWEEP` draws them and the
// dashboard's sweep page charts them: every SUCCEEDED trial whose final record had an `extrapolation`
// table (train.extrapolation_multiples: an evaluation sweep, train.steps 0, has nothing else to show),
// with its validation loss at the training length. Read over gRPC: ListTrials (SUCCEEDED), one
// QueryResults of the summary val_loss (one row per trial), and GetDiagnostics of each trial's
// "extrapolation" document.
//
// Example:
//   std::vector<TrialEvaluations> evaluated;
//   grpc::Status status = FetchSweepEvaluations(connection, sweep_id, &evaluated);
//   for (const TrialEvaluations& trial : evaluated) ... trial.table.results() ...
//
// Thread safety: as the connection's stub (any thread).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "coordinator/client/coordinator_connection.h"
#include "proto/rung.pb.h"

namespace rung::client {

struct TrialEvaluations {
  rung::v1::Trial trial;                // ListTrials' BASIC view: its rung, assignments, ...
  std::optional<double> val_loss;       // its final validation loss at the training length (summary val_loss)
  rung::v1::ExtrapolationTable table;   // its evaluations beyond the training length, in the order run
};

// The SUCCEEDED trials of the sweep that have a readable extrapolation table with at least one result,
// in index order (none: an empty list and OK). A sweep that stores no val_loss leaves val_loss unset.
// Errors: the first failed call's status (NOT_FOUND for an unknown sweep).
grpc::Status FetchSweepEvaluations(CoordinatorConnection& connection, int64_t sweep_id,
                                   std::vector<TrialEvaluations>* evaluated);

}  // namespace rung::client

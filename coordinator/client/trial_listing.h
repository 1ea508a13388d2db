// coordinator/client/trial_listing.h
//
// Every trial a ListTrials request selects, all pages: what the `rung` commands and the dashboard
// read when they need a sweep's trials whole.
//
// Example:
//   v1::ListTrialsRequest request;
//   request.set_sweep_id(3);
//   request.add_states(v1::TRIAL_STATE_SUCCEEDED);
//   std::vector<v1::Trial> trials;
//   grpc::Status status = ListAllTrials(connection, request, &trials);
//
// Thread safety: as the connection's stub (any thread).
#pragma once

#include <vector>

#include "coordinator/client/coordinator_connection.h"
#include "proto/rung.pb.h"

namespace rung::client {

// Appends the trials of every page, from `request`'s page token on; the first failed call's status.
grpc::Status ListAllTrials(CoordinatorConnection& connection, rung::v1::ListTrialsRequest request,
                           std::vector<rung::v1::Trial>* trials);

}  // namespace rung::client

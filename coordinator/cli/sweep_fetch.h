// coordinator/cli/sweep_fetch.h
//
// What several `rung` commands read off a coordinator about a sweep: every trial (all pages), the
// coordinator's clock, and the compute an open learning-rate search may still add. Each returns the
// RPC's status; nothing is printed.
#pragma once

#include <string>
#include <vector>

#include "coordinator/client/coordinator_connection.h"
#include "proto/rung.pb.h"

namespace rung::cli {

// Every trial of a sweep (all pages).
grpc::Status FetchTrials(client::CoordinatorConnection& connection, int64_t sweep_id,
                         std::vector<rung::v1::Trial>* trials);
// Every trial `request` selects (its sweep, its states), all pages; its page token is the first page's.
grpc::Status FetchTrials(client::CoordinatorConnection& connection, rung::v1::ListTrialsRequest request,
                         std::vector<rung::v1::Trial>* trials);

// The coordinator's clock now (ServerInfo.server_time), in seconds since the Unix epoch: what
// elapsed times and ETAs are measured against, whatever this machine's clock says; and, when
// `storage_warning` is given, ServerInfo.storage_warning ("" while its database has room).
grpc::Status FetchServerTime(client::CoordinatorConnection& connection, double* seconds,
                             std::string* storage_warning = nullptr);

// The 6ND its search may still add to a sweep whose search is open (its worst case, max_points values
// per cell, less the trials it has), or an open precision aim (its budget_flops less the trials it
// has): 0 for other sweeps, and when the coordinator does not say.
double SearchFlopsToCome(client::CoordinatorConnection& connection, const rung::v1::Sweep& sweep);

}  // namespace rung::cli

// coordinator/server/sweep_fitter.h
//
// UserService.Fit and ListFits: compute multipliers (sweeps/fit/compute_multipliers.h) of a stored
// sweep's ladder, computed on the coordinator and stored with their inputs (FitStore).
//
// The ladder: every SUCCEEDED trial with a finite value of the metric (FitRequest.summary, FINAL by
// default) is one run: its variant (named by the values of FitRequest.variant_keys; by default
// every sweep axis but seed: "rope" for one key, "position.variant=rope,train.lr=0.001" for
// several), its rung label, its compute 6 N D, its loss, its seed, and its wall-clock seconds
// (summary wall_sec) when every run has them. The baseline is FitRequest.baseline, or the variant of
// the cells the spec's baseline selects (which must be one variant).
//
// Errors: NOT_FOUND (sweep, fit); INVALID_ARGUMENT (bad options, a baseline that is not a variant,
// a spec baseline that selects several variants or none); FAILED_PRECONDITION when the baseline has
// fewer than 2 finished ladder points or no other variant has one, saying how many there are and
// how many trials are unfinished.
//
// Thread safety: reads and writes the store (thread-safe); no state of its own.
#pragma once

#include <string>

#include "coordinator/domain/coordinator.h"
#include "proto/rung.pb.h"

namespace rung::server {

// Computes, stores and returns the fit. `actor` is recorded with it ("user:<name>").
StatusOr<v1::FitResponse> FitSweep(Coordinator& coordinator, const v1::FitRequest& request, const std::string& actor);

// The stored fits of a sweep (newest first), or the one request.fit_id names.
StatusOr<v1::ListFitsResponse> ListFits(Coordinator& coordinator, const v1::ListFitsRequest& request);

// The ladder CSV `rung fit --from-csv` reads (variant,label,compute,loss,seed[,seconds]) of the
// sweep's finished trials, variants named by every sweep axis but seed; one line per run.
StatusOr<std::string> LadderCsv(Coordinator& coordinator, int64_t sweep_id);

}  // namespace rung::server

// core/train/trainer.h
//
// Trains one resolved trial and reports it as JSON lines, one record per line, flushed, each
// written by the record codec (core/records/trainer_records.h, where every field is defined):
// provenance first; step records every train.log_every steps and on evaluation steps (after a
// resume, first the steps its checkpoint remembers, marked replayed); checkpoint records as
// checkpoints are published; a diagnostics record (kind "attention") at each milestone of
// train.diagnostics_at when train.diagnostics_sequences > 0 (the start's, step 0, only by a run that
// begins there, not by one resumed from a checkpoint), and the final record; a preempted record when a stop signal
// ended the run; an error record when it failed (a non-finite loss or gradient).
//
// Data-parallel trials (resources.world_size > 1, data_parallel.h): each of world_size processes
// trains on its contiguous share of every global batch (train.batch_size rows; rank r takes rows
// [r B/W, (r+1) B/W)), its loss scaled so that the all-reduced (summed) gradients are those of the
// global batch's mean loss: the same math as one process. Rank 0 resumes or initialises and
// broadcasts parameters, optimizer moments and the data position; only rank 0 evaluates, writes
// checkpoints and prints records (the others print only error records). Every step one small
// all-reduce carries the loss and the stop requests, so all ranks stop (or fail on a non-finite
// loss) at the same step.
//
// Checkpoints hold model, optimizer, schedule position, RNG state and data position, so a resumed
// run continues the same curve: on CPU with the same thread count, the same numbers.
// Torch-free header.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "core/common/status.h"
#include "core/config/trial_config.h"

namespace rung {

struct TrainerOptions {
  std::string checkpoint_dir;      // "" = no checkpoints (a stop signal then just stops)
  std::string resume = "auto";     // "auto": newest checkpoint in checkpoint_dir; "never"; or a path
  int64_t stop_after_step = 0;     // > 0: behave as if a stop signal arrived after this step
  std::ostream* records = nullptr; // JSON lines; required
  // This process's place in a data-parallel trial (the world size is resources.world_size): its
  // rank and rank 0's rendezvous address "host:port" (required when the world size is above 1).
  int rank = 0;
  std::string rendezvous;
};

enum class TrainOutcome { kCompleted, kPreempted };

// Errors: INVALID_ARGUMENT / NOT_FOUND for unusable data or checkpoints, FAILED_PRECONDITION for a
// checkpoint of another config, ABORTED for a non-finite loss or gradient (message names the step),
// UNAVAILABLE when the data-parallel group cannot form or loses a rank, FAILED_PRECONDITION for
// world_size > 1 in a build without c10d.
StatusOr<TrainOutcome> TrainTrial(const TrialConfig& trial, const TrainerOptions& options);

}  // namespace rung

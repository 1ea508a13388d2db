// core/train/data_parallel.h
//
// The process group of a data-parallel trial: `world_size` rung-train ranks that each train on their
// share of every global batch and keep identical parameters by all-reducing gradients. Built on
// torch.distributed's c10d: a TCPStore at the rendezvous address (rank 0 serves it) and Gloo for CPU
// tensors, NCCL for CUDA tensors where the LibTorch build has it.
//
// Contract: every rank constructs its group with the same world size and rendezvous address and
// then issues the same collectives in the same order (a rank that skips one hangs the others until
// `timeout`, or fails them at once when its process exits: a closed connection is an error).
// Collectives are blocking. A world of size 1 needs no rendezvous and every collective is a no-op.
//
// Keeps c10d out of this header (a c10d TU costs most of a minute): the process group lives behind
// a pointer to an implementation in data_parallel.cc. Builds without c10d (RUNG_HAVE_C10D unset)
// compile, and Connect() then refuses a world size above 1 with FAILED_PRECONDITION.
//
// Below the group, what a data-parallel training step does with it (the trainer's side): each rank
// back-propagates ShardLoss of its ShardOf every global batch, AgreeOnStep sums the gradients and
// the losses and stop requests of the ranks, and BroadcastState hands rank 0's starting state (a
// resumed checkpoint, say) to every rank.
//
// Example:
//   RUNG_ASSIGN_OR_RETURN(std::unique_ptr<DataParallelGroup> group, DataParallelGroup::Connect(options, device));
//   RUNG_RETURN_IF_ERROR(group->Broadcast(parameters));     // rank 0's values everywhere
//   RUNG_RETURN_IF_ERROR(group->AllReduceSum(gradients));   // after backward
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/common/status.h"
#include "core/train/batch_tensors.h"

namespace rung {

struct DataParallelOptions {
  int rank = 0;
  int world_size = 1;
  std::string rendezvous;  // "host:port" of rank 0's TCPStore; required when world_size > 1
  std::chrono::milliseconds timeout{std::chrono::minutes(30)};  // rendezvous and each collective
};

// True when this build can run world_size > 1 on `device_type` ("cpu": Gloo, "cuda": NCCL).
bool DataParallelAvailable(const std::string& device_type);

class DataParallelGroup {
 public:
  // Joins the group (rank 0 serves the rendezvous; the others connect to it), waiting up to
  // options.timeout for every rank. Errors: INVALID_ARGUMENT (rank outside [0, world_size), no or
  // malformed rendezvous), FAILED_PRECONDITION (a build without c10d, or without NCCL for CUDA),
  // UNAVAILABLE (the rendezvous or the transport failed; the message has c10d's reason).
  static StatusOr<std::unique_ptr<DataParallelGroup>> Connect(const DataParallelOptions& options,
                                                              const torch::Device& device);
  ~DataParallelGroup();
  DataParallelGroup(const DataParallelGroup&) = delete;
  DataParallelGroup& operator=(const DataParallelGroup&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  // Sums each tensor in place over all ranks (one collective per tensor). REQUIRES: contiguous,
  // same shapes and dtypes on every rank. Errors: UNAVAILABLE (a peer left, a timeout).
  Status AllReduceSum(const std::vector<torch::Tensor>& tensors);

  // Overwrites each tensor in place with rank 0's (one collective per tensor). Same requirements.
  Status Broadcast(const std::vector<torch::Tensor>& tensors);

 private:
  struct Impl;
  DataParallelGroup(int rank, int world_size, std::unique_ptr<Impl> impl);

  int rank_;
  int world_size_;
  std::unique_ptr<Impl> impl_;  // null for a world of one
};

// This rank's share of a global batch: rows [rank * B / W, (rank + 1) * B / W). REQUIRES: W divides B.
TensorBatch ShardOf(const TensorBatch& batch, int rank, int world_size);

// The global batch's count of counted targets: the loss mask's sum (at least 1), else every target.
double CountedTargets(const TensorBatch& batch);

// A shard's part of the global batch's mean loss: its summed (masked) token losses over the global
// batch's count of counted targets (CountedTargets). Summed over the ranks, values and gradients
// are MeanLoss's.
torch::Tensor ShardLoss(const torch::Tensor& logits, const TensorBatch& shard, double global_count);

struct StepAgreement {
  double loss = 0.0;  // the global batch's loss: the sum of the ranks' shares
  bool stop = false;  // some rank was asked to stop
};

// A data-parallel step's collectives, after backward: sums `gradients` in place over the ranks
// (each rank's loss is its share of the global mean, so the sums are the global batch's gradients),
// then this rank's share of the loss and its stop request with everyone's. Errors: UNAVAILABLE.
StatusOr<StepAgreement> AgreeOnStep(DataParallelGroup& group, std::vector<torch::Tensor> gradients,
                                    double loss_share, bool stop_requested, const torch::Device& device);

// Hands rank 0's state to every rank: each tensor of `state` overwritten in place with rank 0's, then
// `counters` (sent as one tensor on `device`). Errors: UNAVAILABLE.
Status BroadcastState(DataParallelGroup& group, std::vector<torch::Tensor> state, std::vector<int64_t>& counters,
                      const torch::Device& device);

}  // namespace rung

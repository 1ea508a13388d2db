// core/train/training_progress.h
//
// Where a training run stands: the counters a checkpoint stores, a resume restores, rank 0 hands to
// the other ranks of a data-parallel trial, and every optimizer step advances. Torch-free.
#pragma once

#include <cstdint>

namespace rung {

struct TrainingProgress {
  int64_t step = 0;        // optimizer steps completed
  int64_t data_index = 0;  // training batches drawn (the index of the next one)
  int64_t tokens = 0;      // training tokens consumed
};

}  // namespace rung

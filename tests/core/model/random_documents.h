// tests/core/model/random_documents.h
//
// Document starts for the attention kernels' tests: row 0's documents start where a random token is 0
// (about one position in `spacing`), row 1's at 3, T/3 and T - T/5 (inside query blocks and key tiles
// at the longer lengths); every row's position 0 starts one too.
#pragma once

#include <torch/torch.h>

#include "core/model/attention.h"

namespace rung::testing_models {

inline torch::Tensor RandomDocuments(int64_t batch, int64_t time, int64_t spacing) {
  auto tokens = torch::randint(0, spacing, {batch, time}, torch::kLong);
  if (batch > 1) {
    tokens[1].fill_(1);
    for (int64_t start : {int64_t{3}, time / 3, time - time / 5}) {
      if (start > 0 && start < time) tokens[1][start] = 0;
    }
  }
  return DocumentStarts(tokens, 0);
}

}  // namespace rung::testing_models

// tests/core/model/attention_cases.h
//
// The inputs the attention kernels' tests sweep: batch 2, 4 query heads of dimension 8, for each
// length and KV-head count asked for, without and with ALiBi slopes, without and with document starts
// (RandomDocuments), at two logit scales (0.35, and 4: rows whose maximum moves between key tiles, so
// the online softmax's rescaling matters). Tensors are drawn in a fixed order from torch's generator,
// so a test that seeds it sees the same cases every run. The sweep stops at a fatal failure.
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/positional_encoding.h"
#include "tests/core/model/random_documents.h"

namespace rung::testing_models {

struct AttentionCase {
  torch::Tensor q, k, v;   // [B, H, T, D], [B, KV, T, D] x 2
  torch::Tensor slopes;    // undefined: no ALiBi
  torch::Tensor doc_start; // undefined: no document mask
  std::string where;       // "T 64 kv_heads 1 alibi 0 cross_doc_mask 1 scale 4.000000" for messages
};

template <typename Check>
void ForEachAttentionCase(const std::vector<int64_t>& times, const std::vector<int64_t>& kv_heads_list, Check check) {
  const int64_t batch = 2, heads = 4, dim = 8;
  for (int64_t time : times) {
    for (int64_t kv_heads : kv_heads_list) {
      for (bool alibi : {false, true}) {
        for (bool cross_doc_mask : {false, true}) {
          for (double scale : {0.35, 4.0}) {
            AttentionCase c;
            c.q = torch::randn({batch, heads, time, dim}) * scale;
            c.k = torch::randn({batch, kv_heads, time, dim});
            c.v = torch::randn({batch, kv_heads, time, dim});
            if (alibi) c.slopes = torch::tensor(AlibiSlopes(heads)).to(torch::kFloat);
            if (cross_doc_mask) c.doc_start = RandomDocuments(batch, time, 40);
            c.where = "T " + std::to_string(time) + " kv_heads " + std::to_string(kv_heads) + " alibi " +
                      std::to_string(alibi) + " cross_doc_mask " + std::to_string(cross_doc_mask) + " scale " +
                      std::to_string(scale);
            check(c);
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

}  // namespace rung::testing_models

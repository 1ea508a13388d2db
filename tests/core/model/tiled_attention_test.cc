// The tiled forward kernel (tiled_attention.h) against the exact composite path in double precision,
// for every masking feature, at lengths that are and are not multiples of its query blocks and key tiles.
#include "core/model/tiled_attention.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/transformer.h"
#include "tests/core/model/attention_cases.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

using testing_models::AttentionCase;
using testing_models::ForEachAttentionCase;
using testing_models::Tiny;


// The exact path (kComposite) in double on the same inputs.
torch::Tensor Reference(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& slopes, const torch::Tensor& doc_start) {
  return CausalAttention(q.to(torch::kDouble), k.to(torch::kDouble), v.to(torch::kDouble),
                         slopes.defined() ? slopes.to(torch::kDouble) : slopes, doc_start,
                         AttentionKernel::kComposite);
}

TEST(TiledAttention, MatchesTheExactPathForEveryMaskAndLength) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  torch::NoGradGuard no_grad;
  torch::manual_seed(11);
  // 7: inside one block; 64 and 256: an exact block and tile; 65 and 300 straddle their edges.
  ForEachAttentionCase({7, 64, 65, 256, 300}, {4, 1}, [](const AttentionCase& c) {
    const torch::Tensor expected = Reference(c.q, c.k, c.v, c.slopes, c.doc_start);
    const torch::Tensor actual = CausalAttention(c.q, c.k, c.v, c.slopes, c.doc_start, AttentionKernel::kCpuTiled);
    ASSERT_EQ(actual.sizes(), expected.sizes()) << c.where;
    EXPECT_TRUE(torch::allclose(actual.to(torch::kDouble), expected, 1e-4, 1e-5))
        << c.where << ": max error " << (actual.to(torch::kDouble) - expected).abs().max().item<double>();
  });
}

// A key tile the causal triangle reaches but that holds no key of some row's document (a document that
// starts in the block's last tile) leaves those rows untouched.
TEST(TiledAttention, RowsWhoseDocumentStartsInALaterTileSeeOnlyTheirDocument) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  torch::NoGradGuard no_grad;
  torch::manual_seed(12);
  const int64_t time = 700;
  auto tokens = torch::ones({1, time}, torch::kLong);
  tokens[0][600] = 0;  // rows 600.. see keys from 600 only; rows of the same query block before it see 0..
  const torch::Tensor doc_start = DocumentStarts(tokens, 0);
  auto q = torch::randn({1, 2, time, 4}) * 3, k = torch::randn({1, 2, time, 4}), v = torch::randn({1, 2, time, 4});
  const torch::Tensor actual = CausalAttention(q, k, v, {}, doc_start, AttentionKernel::kCpuTiled);
  EXPECT_TRUE(torch::allclose(actual.to(torch::kDouble), Reference(q, k, v, {}, doc_start), 1e-4, 1e-5));
  // The second document's output is its own attention, as if it were alone.
  const torch::Tensor alone =
      CausalAttention(q.narrow(2, 600, 100).contiguous(), k.narrow(2, 600, 100).contiguous(),
                      v.narrow(2, 600, 100).contiguous(), {}, {}, AttentionKernel::kCpuTiled);
  EXPECT_TRUE(torch::allclose(actual.narrow(1, 600, 100), alone, 1e-5, 1e-6));
}

// Whole models under every positional variant and inverse-temperature schedule (the per-head and
// per-sequence query multipliers reach attention through q): the tiled kernel gives the exact path's
// logits, with and without the document mask.
TEST(TiledAttention, ModelLogitsMatchTheExactPathForEveryVariantAndSchedule) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  torch::NoGradGuard no_grad;
  for (const char* variant : {"nope", "rope", "prope", "lerope", "adarope", "alibi", "absolute"}) {
    for (const char* form : {"none", "log_power", "qwen", "ssmax", "learned"}) {
      torch::manual_seed(13);
      ModelConfig config = Tiny(variant, 4, 2);
      config.seq_len = 150;
      config.inverse_temperature.form = form;
      config.inverse_temperature.xi = 0.5;
      ResolveModelConfig(&config);
      Transformer model(config);
      model->eval();
      auto tokens = torch::randint(0, 64, {2, 150}, torch::kLong);
      const torch::Tensor doc_start = DocumentStarts(tokens, 0);
      for (bool cross_doc_mask : {false, true}) {
        const torch::Tensor starts = cross_doc_mask ? doc_start : torch::Tensor();
        model->set_attention_kernel(static_cast<int>(AttentionKernel::kComposite));
        const torch::Tensor expected = model->forward(tokens, starts);
        model->set_attention_kernel(static_cast<int>(AttentionKernel::kCpuTiled));
        const torch::Tensor actual = model->forward(tokens, starts);
        EXPECT_TRUE(torch::allclose(actual, expected, 1e-4, 1e-5))
            << variant << "/" << form << " cross_doc_mask " << cross_doc_mask << ": max error "
            << (actual - expected).abs().max().item<double>();
      }
    }
  }
}

// Without gradients the slab kernel runs as the tiled one; the forward-only entry refuses inputs that
// need a gradient, which kCpuTiled hands to the tiled training kernel (tiled_attention_training.h).
TEST(TiledAttention, ServesTheNoGradPathAndLeavesGradientsToTheTrainingKernel) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  torch::manual_seed(14);
  auto q = torch::randn({1, 2, 90, 4}), k = torch::randn({1, 2, 90, 4}), v = torch::randn({1, 2, 90, 4});
  {
    torch::NoGradGuard no_grad;
    EXPECT_TRUE(torch::equal(CausalAttention(q, k, v, {}, {}, AttentionKernel::kCpuSlabs),
                             CausalAttention(q, k, v, {}, {}, AttentionKernel::kCpuTiled)));
  }
  auto q_grad = q.clone().requires_grad_(true);
  EXPECT_THROW(TiledCausalAttention(q_grad, k, v, {}, {}), c10::Error);
  const torch::Tensor forward_only = CausalAttention(q, k, v, {}, {}, AttentionKernel::kCpuTiled);
  for (AttentionKernel kernel : {AttentionKernel::kCpuSlabs, AttentionKernel::kCpuTiled}) {
    auto out = CausalAttention(q_grad, k, v, {}, {}, kernel);
    EXPECT_TRUE(out.requires_grad());
    EXPECT_TRUE(torch::allclose(out.detach(), forward_only, 1e-5, 1e-6));
  }
}

TEST(TiledAttention, RejectsADocumentStartAfterItsQuery) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  auto q = torch::randn({1, 2, 8, 4}), k = torch::randn({1, 2, 8, 4}), v = torch::randn({1, 2, 8, 4});
  auto doc_start = torch::zeros({1, 8}, torch::kLong);
  doc_start[0][2] = 3;
  EXPECT_THROW(CausalAttention(q, k, v, {}, doc_start, AttentionKernel::kCpuTiled), c10::Error);
}

}  // namespace
}  // namespace rung

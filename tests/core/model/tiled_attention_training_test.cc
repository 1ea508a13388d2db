// The tiled training kernel (tiled_attention_training.h): its output and the gradients of q, k and v
// against the exact composite path in double precision, for every masking feature and for lengths that
// are and are not multiples of its blocks and tiles; what its autograd node keeps; whole-model gradients.
#include "core/model/tiled_attention_training.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/cpu_attention.h"
#include "core/model/positional_encoding.h"
#include "core/model/tiled_attention.h"
#include "core/model/transformer.h"
#include "tests/core/model/attention_cases.h"
#include "tests/core/model/random_documents.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

using testing_models::AttentionCase;
using testing_models::ForEachAttentionCase;
using testing_models::RandomDocuments;
using testing_models::Tiny;

// An attention output and the gradients of <out, upstream> with respect to q, k and v.
struct Gradients {
  torch::Tensor out, grad_q, grad_k, grad_v;
};

Gradients Differentiate(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const torch::Tensor& slopes, const torch::Tensor& doc_start, const torch::Tensor& upstream,
                        AttentionKernel kernel, torch::ScalarType dtype) {
  auto qs = q.to(dtype).detach().clone().requires_grad_(true);
  auto ks = k.to(dtype).detach().clone().requires_grad_(true);
  auto vs = v.to(dtype).detach().clone().requires_grad_(true);
  auto out = CausalAttention(qs, ks, vs, slopes.defined() ? slopes.to(dtype) : slopes, doc_start, kernel);
  (out * upstream.to(dtype)).sum().backward();
  return {out.detach().to(torch::kDouble), qs.grad().to(torch::kDouble), ks.grad().to(torch::kDouble),
          vs.grad().to(torch::kDouble)};
}


// Float rounding against the double reference, relative to the tensor's own scale (a gradient entry
// that is a sum of large terms of both signs keeps their rounding).
void ExpectClose(const torch::Tensor& actual, const torch::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const double scale = std::max(1.0, expected.abs().max().item<double>());
  EXPECT_TRUE(torch::allclose(actual, expected, 1e-4, 1e-5 * scale))
      << what << ": max error " << (actual - expected).abs().max().item<double>() << " at scale " << scale;
}

void ExpectGradientsMatchTheExactPath(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                      const torch::Tensor& slopes, const torch::Tensor& doc_start,
                                      const std::string& where) {
  const auto upstream = torch::randn({q.size(0), q.size(2), q.size(1) * q.size(3)});
  const Gradients expected =
      Differentiate(q, k, v, slopes, doc_start, upstream, AttentionKernel::kComposite, torch::kDouble);
  const Gradients actual = Differentiate(q, k, v, slopes, doc_start, upstream, AttentionKernel::kCpuTiled, torch::kFloat);
  ExpectClose(actual.out, expected.out, "out, " + where);
  ExpectClose(actual.grad_q, expected.grad_q, "dq, " + where);
  ExpectClose(actual.grad_k, expected.grad_k, "dk, " + where);
  ExpectClose(actual.grad_v, expected.grad_v, "dv, " + where);
}

TEST(TiledAttentionTraining, GradientsMatchTheExactPathForEveryMaskAndLength) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  torch::manual_seed(21);
  // 1 and 7: inside one block; 64 and 256: an exact query block and key tile; 130 and 300 straddle them.
  ForEachAttentionCase({1, 7, 64, 130, 256, 300}, {4, 2, 1}, [](const AttentionCase& c) {
    ExpectGradientsMatchTheExactPath(c.q, c.k, c.v, c.slopes, c.doc_start, c.where);
  });
}

// Documents [0, 300), [300, 600) and [600, 700): 600 lies inside a query block (576..639) and a key tile
// (512..767), so one block holds rows of two documents; the last block's rows all start at 600 and skip
// every key tile before it. Gradients match, and the keys of earlier documents get none from later rows.
TEST(TiledAttentionTraining, DocumentsStartingInsideABlockGetGradientsFromTheirOwnRowsOnly) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  torch::manual_seed(22);
  const int64_t time = 700;
  auto tokens = torch::ones({1, time}, torch::kLong);
  tokens[0][300] = 0;
  tokens[0][600] = 0;
  const torch::Tensor doc_start = DocumentStarts(tokens, 0);
  auto q = torch::randn({1, 2, time, 8}) * 2, k = torch::randn({1, 1, time, 8}), v = torch::randn({1, 1, time, 8});
  ExpectGradientsMatchTheExactPath(q, k, v, torch::tensor(AlibiSlopes(2)).to(torch::kFloat), doc_start,
                                   "documents at 300 and 600");
  // A loss on the last document's rows alone reaches only its own keys and values.
  auto upstream = torch::zeros({1, time, 16});
  upstream.narrow(1, 600, 100).normal_();
  const Gradients last = Differentiate(q, k, v, {}, doc_start, upstream, AttentionKernel::kCpuTiled, torch::kFloat);
  EXPECT_EQ(last.grad_k.narrow(2, 0, 600).abs().max().item<double>(), 0.0);
  EXPECT_EQ(last.grad_v.narrow(2, 0, 600).abs().max().item<double>(), 0.0);
  EXPECT_GT(last.grad_k.narrow(2, 600, 100).abs().max().item<double>(), 0.0);
  EXPECT_EQ(last.grad_q.narrow(2, 0, 600).abs().max().item<double>(), 0.0);
}

// The node keeps q, k, v, the output and one logsumexp per query row: O(T) floats, where the slab
// kernel keeps P, T x T per head.
TEST(TiledAttentionTraining, KeepsNoTByTMatrixForTheBackward) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  const int64_t batch = 1, heads = 2, kv_heads = 1, time = 1024, dim = 8;
  auto q = torch::randn({batch, heads, time, dim}).requires_grad_(true);
  auto k = torch::randn({batch, kv_heads, time, dim}).requires_grad_(true);
  auto v = torch::randn({batch, kv_heads, time, dim}).requires_grad_(true);
  const auto doc_start = RandomDocuments(batch, time, 100);
  const auto out = CausalAttention(q, k, v, torch::tensor(AlibiSlopes(heads)).to(torch::kFloat), doc_start,
                                   AttentionKernel::kCpuTiled);
  const std::vector<torch::Tensor> saved = TiledAttentionSavedTensors(out);
  ASSERT_FALSE(saved.empty()) << "the output does not come from the tiled training kernel";
  int64_t saved_elements = 0;
  bool keeps_logsumexp = false;
  for (const torch::Tensor& tensor : saved) {
    if (!tensor.defined()) continue;
    EXPECT_LT(tensor.numel(), time * time / 8) << "a saved tensor of sizes " << tensor.sizes();
    saved_elements += tensor.numel();
    keeps_logsumexp = keeps_logsumexp || tensor.sizes() == torch::IntArrayRef({batch, heads, time});
  }
  EXPECT_TRUE(keeps_logsumexp);
  // q, k, v and O, one float per query row and head, the document starts and the slopes: linear in T.
  const int64_t linear = (2 * heads + 2 * kv_heads) * time * dim + heads * time + time + heads;
  EXPECT_LE(saved_elements, batch * linear);
  // The gradients still flow (and the backward frees the node's tensors).
  out.sum().backward();
  EXPECT_TRUE(q.grad().defined() && k.grad().defined() && v.grad().defined());
  EXPECT_TRUE(TiledAttentionSavedTensors(torch::randn({2})).empty());
}

// Whole models (two layers; ALiBi, rotary and NoPE; GQA; with and without the document mask): the loss
// gradient of every parameter under the tiled kernel is the composite path's.
TEST(TiledAttentionTraining, ModelParameterGradientsMatchTheExactPath) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  for (const char* variant : {"nope", "rope", "alibi"}) {
    for (bool cross_doc_mask : {false, true}) {
      torch::manual_seed(23);
      ModelConfig config = Tiny(variant, 4, 2);
      config.seq_len = 150;
      ResolveModelConfig(&config);
      Transformer model(config);
      auto tokens = torch::randint(0, 64, {2, 151}, torch::kLong);
      const auto inputs = tokens.narrow(1, 0, 150), targets = tokens.narrow(1, 1, 150);
      const torch::Tensor starts = cross_doc_mask ? DocumentStarts(inputs, 0) : torch::Tensor();
      auto gradients = [&](AttentionKernel kernel) {
        model->set_attention_kernel(static_cast<int>(kernel));
        model->zero_grad();
        auto logits = model->forward(inputs, starts);
        torch::nn::functional::cross_entropy(logits.reshape({-1, 64}), targets.reshape({-1})).backward();
        std::vector<torch::Tensor> grads;
        for (const auto& parameter : model->parameters()) {
          grads.push_back(parameter.grad().defined() ? parameter.grad().clone() : torch::zeros_like(parameter));
        }
        return grads;
      };
      const auto expected = gradients(AttentionKernel::kComposite);
      const auto actual = gradients(AttentionKernel::kCpuTiled);
      ASSERT_EQ(actual.size(), expected.size());
      for (size_t index = 0; index < actual.size(); ++index) {
        EXPECT_TRUE(torch::allclose(actual[index], expected[index], 1e-3, 1e-6))
            << variant << " cross_doc_mask " << cross_doc_mask << " parameter " << index << ": max error "
            << (actual[index] - expected[index]).abs().max().item<double>();
      }
    }
  }
}

// kAuto on fp32 CPU is kCpuAuto, which trains with the slab kernel below kTiledTrainingMinLength and with
// the tiled one from it on (the tiled node is the one that keeps a logsumexp instead of P).
TEST(TiledAttentionTraining, TheAutomaticCpuKernelTrainsTiledFromTheThresholdOn) {
  if (!TiledAttentionAvailable() || !CpuAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  ASSERT_EQ(ResolveAttentionKernel(AttentionKernel::kAuto, torch::kCPU, torch::kFloat), AttentionKernel::kCpuAuto);
  for (int64_t time : {kTiledTrainingMinLength - 1, kTiledTrainingMinLength}) {
    auto q = torch::randn({1, 1, time, 4}).requires_grad_(true);
    auto k = torch::randn({1, 1, time, 4}), v = torch::randn({1, 1, time, 4});
    const auto out = CausalAttention(q, k, v, {}, {}, AttentionKernel::kCpuAuto);
    EXPECT_EQ(TiledAttentionSavedTensors(out).empty(), time < kTiledTrainingMinLength) << "T " << time;
  }
}

TEST(TiledAttentionTraining, RejectsADocumentStartAfterItsQuery) {
  if (!TiledAttentionAvailable()) GTEST_SKIP() << "no sgemm_ in this build";
  auto q = torch::randn({1, 2, 8, 4}).requires_grad_(true), k = torch::randn({1, 2, 8, 4}),
       v = torch::randn({1, 2, 8, 4});
  auto doc_start = torch::zeros({1, 8}, torch::kLong);
  doc_start[0][2] = 3;
  EXPECT_THROW(TiledCausalAttentionTraining(q, k, v, {}, doc_start), c10::Error);
}

}  // namespace
}  // namespace rung

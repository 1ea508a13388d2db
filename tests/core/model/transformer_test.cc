// Whole-model properties: causality, parameter arithmetic, attention (with and without the
// cross-document mask) against a naive reference.
#include "core/model/transformer.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/config/model_arithmetic.h"
#include "core/model/attention.h"
#include "core/model/cpu_attention.h"
#include "core/model/tiled_attention.h"
#include "tests/core/model/test_models.h"

namespace rung {
namespace {

using testing_models::Tiny;

const char* kVariants[] = {"nope", "rope", "prope", "lerope", "adarope", "alibi", "absolute"};
const char* kForms[] = {"none", "log_power", "qwen", "ssmax", "learned"};

// Under document key counts a document's logits do not depend on what precedes it in the packed window:
// attention stays inside the document, rotary scores are relative, and beta(n) and AdaScale's L count the
// keys inside the document. Counting the window's position instead changes them.
TEST(Transformer, DocumentKeyCountsMakeADocumentsLogitsIndependentOfWhatPrecedesIt) {
  for (const char* variant : {"nope", "rope", "adarope", "alibi"}) {
    for (const char* form : {"log_power", "ssmax", "learned"}) {
      torch::manual_seed(9);
      ModelConfig config = Tiny(variant);
      config.inverse_temperature.form = form;
      config.inverse_temperature.xi = 1.0;
      config.document_key_counts = true;
      Transformer model(config);
      torch::NoGradGuard no_grad;
      if (std::string(form) == "learned") {  // a table that changes with n, so that n matters
        model->inverse_temperature()->beta_table().copy_(torch::linspace(0.5, 2.0, config.seq_len));
      }
      const int64_t separator = 63, first = 9, length = 24;
      auto tokens = torch::randint(0, 63, {1, length}, torch::kLong);
      tokens[0][0] = separator;
      tokens[0][first] = separator;
      auto packed = model->forward(tokens, DocumentStarts(tokens, separator));
      auto alone_tokens = tokens.narrow(1, first, length - first).clone();
      auto alone = model->forward(alone_tokens, DocumentStarts(alone_tokens, separator));
      EXPECT_TRUE(torch::allclose(packed.narrow(1, first, length - first), alone, 1e-4, 1e-4)) << variant << "/" << form;
      ModelConfig window = config;
      window.document_key_counts = false;
      Transformer by_window(window);
      const auto source = model->named_parameters();
      for (auto& parameter : by_window->named_parameters()) parameter.value().copy_(source[parameter.key()]);
      auto shifted = by_window->forward(tokens, DocumentStarts(tokens, separator));
      EXPECT_FALSE(torch::allclose(shifted.narrow(1, first, length - first), alone, 1e-4, 1e-4)) << variant << "/" << form;
    }
  }
}

TEST(Transformer, ChangingAFutureTokenChangesNoEarlierLogit) {
  for (const char* variant : kVariants) {
    for (const char* form : kForms) {
      torch::manual_seed(5);
      ModelConfig config = Tiny(variant, 4, 2);
      config.inverse_temperature.form = form;
      Transformer model(config);
      torch::NoGradGuard no_grad;
      auto tokens = torch::randint(0, 64, {2, 24}, torch::kLong);
      auto changed = tokens.clone();
      const int64_t position = 13;
      changed.select(1, position).add_(1).remainder_(64);
      auto before = model->forward(tokens), after = model->forward(changed);
      EXPECT_TRUE(torch::allclose(before.narrow(1, 0, position), after.narrow(1, 0, position), 0, 1e-6))
          << variant << "/" << form;
      EXPECT_FALSE(torch::allclose(before.narrow(1, position, 24 - position), after.narrow(1, position, 24 - position)))
          << variant << "/" << form;
    }
  }
}

int64_t TorchParameterCount(Transformer& model) {
  int64_t count = 0;
  for (const auto& param : model->parameters()) count += param.numel();
  return count;
}

TEST(Transformer, ParameterCountEqualsTheTorchFreeArithmetic) {
  struct Shape { int64_t layers, d_model, heads, kv_heads; std::string mlp; bool qk_norm; };
  std::vector<Shape> shapes = {{1, 16, 2, 0, "gelu", false}, {2, 32, 4, 2, "swiglu", true},
                               {3, 48, 6, 3, "gelu", true},  {2, 64, 8, 1, "swiglu", false}};
  struct Position { std::string variant, share, form; bool adascale = true, fixed_log = false, learned_base = false; };
  std::vector<Position> positions = {
      {"nope", "none", "none"},     {"rope", "none", "log_power"}, {"prope", "none", "qwen"},
      {"lerope", "none", "ssmax"},  {"adarope", "none", "learned"}, {"adarope", "layer", "none"},
      {"adarope", "global", "none", false}, {"adarope", "none", "none", true, true},
      {"adarope", "none", "none", true, false, true}, {"alibi", "none", "none"},
      {"absolute", "none", "none"},         {"absolute", "none", "learned"}};
  for (const Shape& shape : shapes) {
    for (const Position& position : positions) {
      ModelConfig config;
      config.vocab_size = 50;
      config.layers = shape.layers;
      config.d_model = shape.d_model;
      config.heads = shape.heads;
      config.kv_heads = shape.kv_heads;
      config.mlp = shape.mlp;
      config.qk_norm = shape.qk_norm;
      config.seq_len = 20;
      config.position.variant = position.variant;
      config.position.adarope.share_freq = position.share;
      config.position.adarope.adascale = position.adascale;
      config.position.adarope.fixed_log = position.fixed_log;
      config.position.adarope.learned_base = position.learned_base;
      config.inverse_temperature.form = position.form;
      config.inverse_temperature.learn_s = true;
      ResolveModelConfig(&config);
      Transformer model(config);
      EXPECT_EQ(TorchParameterCount(model), CountParameters(config).total())
          << shape.layers << "x" << shape.d_model << " " << position.variant << "/" << position.share << "/"
          << position.form;
      ParameterGroups groups = model->parameter_groups();
      int64_t grouped = 0;
      for (const auto* group : {&groups.decay, &groups.no_decay, &groups.positional, &groups.positional_freq}) {
        for (const auto& param : *group) grouped += param.numel();
      }
      EXPECT_EQ(grouped, TorchParameterCount(model)) << "every parameter belongs to exactly one optimizer group";
    }
  }
}

// softmax(q k^T / sqrt(d) - m_h (i - j)) v, one head at a time, over the keys doc_start[b, i] <= j <= i
// (0 <= j <= i when doc_start is undefined). q: [B, heads, T, d]; k, v: [B, kv_heads, T, d].
torch::Tensor NaiveAttention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const std::vector<double>& slopes, const torch::Tensor& doc_start) {
  const int64_t batch = q.size(0), heads = q.size(1), time = q.size(2), dim = q.size(3);
  const int64_t groups = heads / k.size(1);
  std::vector<torch::Tensor> rows;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<torch::Tensor> row_heads;
    for (int64_t h = 0; h < heads; ++h) {
      auto bias = torch::zeros({time, time});
      auto bias_at = bias.accessor<float, 2>();
      for (int64_t i = 0; i < time; ++i) {
        const int64_t first = doc_start.defined() ? doc_start[b][i].item<int64_t>() : 0;
        for (int64_t j = 0; j < time; ++j) {
          if (j > i || j < first) bias_at[i][j] = -INFINITY;
          else if (!slopes.empty()) bias_at[i][j] = static_cast<float>(-slopes[h] * (i - j));
        }
      }
      auto scores = torch::matmul(q[b][h], k[b][h / groups].t()) / std::sqrt(static_cast<double>(dim)) + bias;
      row_heads.push_back(torch::matmul(torch::softmax(scores, -1), v[b][h / groups]));  // [T, d]
    }
    rows.push_back(torch::stack(row_heads, 1));  // [T, heads, d]
  }
  return torch::stack(rows).view({batch, time, heads * dim});
}

// The kernels this build can run on fp32 CPU tensors.
std::vector<AttentionKernel> CpuKernels() {
  std::vector<AttentionKernel> kernels = {AttentionKernel::kComposite};
  if (CpuAttentionAvailable()) kernels.push_back(AttentionKernel::kCpuSlabs);
  if (TiledAttentionAvailable()) kernels.push_back(AttentionKernel::kCpuTiled);
  if (FusedAttentionAvailable()) kernels.push_back(AttentionKernel::kFused);
  return kernels;
}

// An attention output and the gradients of a fixed linear function of it with respect to q, k, v.
struct AttentionGradients {
  torch::Tensor out, grad_q, grad_k, grad_v;
};

using AttentionFunction =
    std::function<torch::Tensor(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&)>;

AttentionGradients Differentiate(const AttentionFunction& attention, const torch::Tensor& q, const torch::Tensor& k,
                                 const torch::Tensor& v) {
  auto qs = q.detach().clone().requires_grad_(true);
  auto ks = k.detach().clone().requires_grad_(true);
  auto vs = v.detach().clone().requires_grad_(true);
  auto out = attention(qs, ks, vs);
  (out * torch::linspace(-1, 1, out.numel()).view(out.sizes())).sum().backward();
  return {out.detach(), qs.grad(), ks.grad(), vs.grad()};
}

TEST(Attention, DocumentStartsIsTheLastDocumentStartTokenAtOrBeforeEachPosition) {
  auto tokens = torch::tensor({5, 0, 3, 3, 0, 0, 7, /**/ 1, 2, 3, 4, 5, 6, 7}, torch::kLong).view({2, 7});
  auto expected = torch::tensor({0, 1, 1, 1, 4, 5, 5, /**/ 0, 0, 0, 0, 0, 0, 0}, torch::kLong).view({2, 7});
  EXPECT_TRUE(torch::equal(DocumentStarts(tokens, 0), expected)) << DocumentStarts(tokens, 0);
}

TEST(Attention, EveryKernelMatchesANaivePerHeadReferenceForwardAndBackward) {
  torch::manual_seed(2);
  const int64_t batch = 2, heads = 6, time = 70, dim = 4;  // more than one causal row block
  // Row 0: a document starts wherever token 0 falls (about one in 8); row 1: documents [0, 3), [3, 40)
  // and [40, 70), the last one across the CPU kernel's row blocks.
  auto tokens = torch::randint(0, 8, {batch, time}, torch::kLong);
  tokens[1].fill_(1);
  tokens[1][3] = 0;
  tokens[1][40] = 0;
  const torch::Tensor documents = DocumentStarts(tokens, 0);
  for (int64_t kv_heads : {6, 3, 2, 1}) {
    for (bool alibi : {false, true}) {
      for (bool cross_doc_mask : {false, true}) {
        auto q = torch::randn({batch, heads, time, dim});
        auto k = torch::randn({batch, kv_heads, time, dim});
        auto v = torch::randn({batch, kv_heads, time, dim});
        std::vector<double> slopes = alibi ? AlibiSlopes(heads) : std::vector<double>{};
        torch::Tensor slope_tensor = alibi ? torch::tensor(slopes).to(torch::kFloat) : torch::Tensor();
        torch::Tensor doc_start = cross_doc_mask ? documents : torch::Tensor();
        AttentionGradients expected = Differentiate(
            [&](const torch::Tensor& qs, const torch::Tensor& ks, const torch::Tensor& vs) {
              return NaiveAttention(qs, ks, vs, slopes, doc_start);
            },
            q, k, v);
        for (AttentionKernel kernel : CpuKernels()) {
          AttentionGradients actual = Differentiate(
              [&](const torch::Tensor& qs, const torch::Tensor& ks, const torch::Tensor& vs) {
                return CausalAttention(qs * AttentionQueryScale(kernel, dim), ks, vs, slope_tensor, doc_start, kernel);
              },
              q, k, v);
          const std::string where = "kernel " + std::to_string(static_cast<int>(kernel)) + " kv_heads " +
                                    std::to_string(kv_heads) + " alibi " + std::to_string(alibi) +
                                    " cross_doc_mask " + std::to_string(cross_doc_mask);
          EXPECT_TRUE(torch::allclose(actual.out, expected.out, 1e-5, 1e-6)) << where;
          EXPECT_TRUE(torch::allclose(actual.grad_q, expected.grad_q, 1e-4, 1e-6)) << "dq, " << where;
          EXPECT_TRUE(torch::allclose(actual.grad_k, expected.grad_k, 1e-4, 1e-6)) << "dk, " << where;
          EXPECT_TRUE(torch::allclose(actual.grad_v, expected.grad_v, 1e-4, 1e-6)) << "dv, " << where;
        }
      }
    }
  }
}

TEST(Attention, CpuKernelRejectsADocumentStartAfterItsQuery) {
  if (!CpuAttentionAvailable()) GTEST_SKIP() << "no CPU slab kernel in this build";
  auto q = torch::randn({1, 2, 8, 4}), k = torch::randn({1, 2, 8, 4}), v = torch::randn({1, 2, 8, 4});
  auto doc_start = torch::zeros({1, 8}, torch::kLong);
  doc_start[0][2] = 3;
  EXPECT_THROW(CausalAttention(q, k, v, {}, doc_start, AttentionKernel::kCpuSlabs), c10::Error);
}

// Row 0 holds documents [0, 10) and [10, 24), row 1 [0, 6), [6, 15) and [15, 24) (token 0 starts one);
// a token of the first (row 0) and second (row 1) document changes.
TEST(Transformer, ChangingATokenOfAnEarlierDocumentChangesNoLogitOfALaterOne) {
  for (const char* variant : kVariants) {
    for (const char* form : kForms) {
      for (AttentionKernel kernel : CpuKernels()) {
        const std::string where =
            std::string(variant) + "/" + form + " kernel " + std::to_string(static_cast<int>(kernel));
        torch::manual_seed(5);
        ModelConfig config = Tiny(variant, 4, 2);
        config.inverse_temperature.form = form;
        Transformer model(config);
        model->set_attention_kernel(static_cast<int>(kernel));
        torch::NoGradGuard no_grad;
        auto tokens = torch::randint(1, 64, {2, 24}, torch::kLong);
        tokens[0][10] = 0;
        tokens[1][6] = 0;
        tokens[1][15] = 0;
        auto changed = tokens.clone();
        changed[0][4] = changed[0][4] % 63 + 1;  // another token, still not a document start
        changed[1][8] = changed[1][8] % 63 + 1;
        auto doc_start = DocumentStarts(tokens, 0);
        ASSERT_TRUE(torch::equal(doc_start, DocumentStarts(changed, 0)));
        auto before = model->forward(tokens, doc_start), after = model->forward(changed, doc_start);
        EXPECT_TRUE(torch::allclose(before[0].narrow(0, 10, 14), after[0].narrow(0, 10, 14), 0, 1e-6)) << where;
        EXPECT_TRUE(torch::allclose(before[1].narrow(0, 15, 9), after[1].narrow(0, 15, 9), 0, 1e-6)) << where;
        EXPECT_TRUE(torch::allclose(before[1].narrow(0, 0, 8), after[1].narrow(0, 0, 8), 0, 1e-6)) << where;
        // Not vacuous: the changed document sees the change, and without the mask so do the later ones.
        EXPECT_FALSE(torch::allclose(before[0].narrow(0, 4, 6), after[0].narrow(0, 4, 6))) << where;
        EXPECT_FALSE(torch::allclose(before[1].narrow(0, 8, 7), after[1].narrow(0, 8, 7))) << where;
        auto unmasked_before = model->forward(tokens), unmasked_after = model->forward(changed);
        EXPECT_FALSE(torch::allclose(unmasked_before[0].narrow(0, 10, 14), unmasked_after[0].narrow(0, 10, 14)))
            << where;
      }
    }
  }
}

TEST(Transformer, InitialisationFollowsThePublishedRecipe) {
  torch::manual_seed(0);
  ModelConfig config = Tiny("rope");
  config.d_model = 256;
  config.heads = 4;
  config.head_dim = 64;
  config.mlp_hidden = 1024;
  config.layers = 8;
  Transformer model(config);
  auto params = model->named_parameters();
  EXPECT_NEAR(params["embedding"].std().item<double>(), 1.0 / 16.0, 0.004);
  EXPECT_NEAR(params["blocks_0_qkv"].std().item<double>(), 1.0 / 16.0, 0.002);
  EXPECT_NEAR(params["blocks_0_attn_out"].std().item<double>(), 1.0 / 16.0 / 4.0, 0.001);
  EXPECT_NEAR(params["blocks_0_mlp_down"].std().item<double>(), 1.0 / 32.0 / 4.0, 0.0005);
  EXPECT_TRUE(torch::equal(params["blocks_0_attn_norm"], torch::ones({256})));
}

}  // namespace
}  // namespace rung

#include "core/diagnostics/attention_diagnostics.h"
#include "core/diagnostics/distance_bins.h"
#include "core/diagnostics/appendix_d1.h"

namespace rung {
namespace {

TEST(AttentionDiagnostics, MeasureEveryHeadOfEveryLayer) {
  torch::manual_seed(4);
  for (const char* variant : {"rope", "adarope", "nope", "alibi", "absolute"}) {
    ModelConfig config = Tiny(variant);
    config.inverse_temperature.form = "log_power";
    config.inverse_temperature.xi = 0.5;
    Transformer model(config);
    auto tokens = torch::randint(0, 64, {3, 24}, torch::kLong);
    const records::AttentionDiagnostics diagnostics = MeasureAttentionDiagnostics(model, tokens, {});
    ASSERT_EQ(diagnostics.layers.size(), 2u) << variant;
    for (const records::AttentionLayer& layer : diagnostics.layers) {
      ASSERT_EQ(layer.heads.size(), 4u);
      for (const records::AttentionHead& head : layer.heads) {
        const std::vector<double>& e2 = head.effective_length_by_position;
        ASSERT_EQ(e2.size(), 24u);
        EXPECT_NEAR(e2[0], 1.0, 1e-9);  // the first query sees one key
        for (size_t i = 0; i < e2.size(); ++i) {
          EXPECT_GE(e2[i], 1.0 - 1e-9);
          EXPECT_LE(e2[i], static_cast<double>(i + 1) + 1e-9);
        }
        EXPECT_EQ(head.pair_usage.size(), 4u);
        if (std::string(variant) == "rope" || std::string(variant) == "adarope") {
          ASSERT_TRUE(head.effective_base.has_value()) << variant;
          EXPECT_NEAR(*head.effective_base, 10000.0, 1.0) << variant;  // RoPE's base at init
          EXPECT_TRUE(head.dominant_wavelength.has_value());
        }
      }
      const records::GapCounting& gap = layer.gap_counting;
      EXPECT_TRUE(gap.xi_lambda.has_value());
      EXPECT_TRUE(gap.xi_alpha.has_value());
      EXPECT_TRUE(gap.xi_delta.has_value());
      EXPECT_EQ(gap.softmax_regime.size(), 3u);
    }
    // T = 24 is under the paper's grid: the 4 geometric points from T/8 to T, said in the record.
    EXPECT_EQ(diagnostics.grid, (std::vector<int64_t>{3, 6, 12, 24}));
    EXPECT_TRUE(diagnostics.grid_fallback);
    EXPECT_TRUE(diagnostics.warning.has_value());
    EXPECT_EQ(diagnostics.pooled.units.value_or(-1), 2 * 4) << "the 3 sequences are one batch: units (layer, head)";
    EXPECT_EQ(diagnostics.bootstrap_unit, "batch");
    EXPECT_EQ(diagnostics.batches, 1);
  }
}

// AdaRoPE's figures 1 and 5 read, on NRW, each pair's term of the QUERY's (last position) logit against
// the NEEDLE's key by their distance: given the needle of each sequence, the profile is that pair
// alone, averaged over the sequences whose needle falls in a bin, and equals the terms computed
// directly from the layer's q and k.
TEST(AttentionDiagnostics, GivenTheNeedlesThePairProfileIsTheQueryAgainstTheNeedleOnly) {
  torch::manual_seed(11);
  Transformer model(Tiny("rope"));
  const int64_t time = 24;
  const std::vector<int64_t> needles = {20, 21, 3, 15, 14};  // distances 3, 2, 20, 8, 9
  torch::Tensor tokens = torch::zeros({static_cast<int64_t>(needles.size()), time}, torch::kLong);  // BG = 0
  for (size_t b = 0; b < needles.size(); ++b) {
    tokens[static_cast<int64_t>(b)][needles[b]] = 1;  // NEEDLE
    tokens[static_cast<int64_t>(b)][time - 1] = 2;    // QUERY
  }
  DiagnosticsOptions options;
  options.failure_lengths.clear();
  options.pair_profile_bins = 6;
  const records::AttentionDiagnostics all_pairs = MeasureAttentionDiagnostics(model, tokens, {}, options);
  options.profile_keys = needles;
  const records::AttentionDiagnostics query_needle = MeasureAttentionDiagnostics(model, tokens, {}, options);
  EXPECT_EQ(all_pairs.pair_profile_reading, "all_pairs");
  EXPECT_EQ(query_needle.pair_profile_reading, "query_key");

  std::vector<torch::Tensor> qs, ks;  // per layer, as attention sees them
  {
    torch::NoGradGuard no_grad;
    model->eval();
    model->set_attention_probe([&](const AttentionProbe& probe) {
      qs.push_back(probe.q.to(torch::kDouble));
      ks.push_back(probe.k.to(torch::kDouble));
    });
    model->forward(tokens);
    model->set_attention_probe({});
  }
  const std::vector<int64_t> edges = DistanceBinEdges(time, 6);
  const std::vector<int64_t> bin_of = DistanceBinOf(edges);
  const int64_t dim = qs[0].size(3), pairs = dim / 2;
  bool differs = false;
  for (size_t layer = 0; layer < qs.size(); ++layer) {
    ASSERT_EQ(query_needle.layers[layer].pair_profile_edges, edges);
    for (int64_t h = 0; h < 4; ++h) {
      const records::AttentionHead& head = query_needle.layers[layer].heads[static_cast<size_t>(h)];
      ASSERT_EQ(head.pair_profile.size(), static_cast<size_t>(pairs));
      for (int64_t f = 0; f < pairs; ++f) {
        std::vector<double> sum(edges.size() - 1, 0.0), count(edges.size() - 1, 0.0);
        for (size_t b = 0; b < needles.size(); ++b) {
          const torch::Tensor q = qs[layer][static_cast<int64_t>(b)][h][time - 1];
          const torch::Tensor k = ks[layer][static_cast<int64_t>(b)][h][needles[b]];
          const double term = (q[2 * f] * k[2 * f] + q[2 * f + 1] * k[2 * f + 1]).item<double>() /
                              std::sqrt(static_cast<double>(dim));
          const int64_t bin = bin_of[static_cast<size_t>(time - 1 - needles[b])];
          sum[static_cast<size_t>(bin)] += term;
          count[static_cast<size_t>(bin)] += 1;
        }
        for (size_t bin = 0; bin < sum.size(); ++bin) {
          const double measured = head.pair_profile[static_cast<size_t>(f)][bin];
          if (count[bin] == 0) {
            EXPECT_TRUE(std::isnan(measured)) << "no needle at these distances, bin " << bin;
            continue;
          }
          EXPECT_NEAR(measured, sum[bin] / count[bin], 1e-12) << "layer " << layer << " head " << h << " pair " << f;
          const double everywhere =
              all_pairs.layers[layer].heads[static_cast<size_t>(h)].pair_profile[static_cast<size_t>(f)][bin];
          differs = differs || std::fabs(everywhere - measured) > 1e-9;
        }
      }
    }
  }
  EXPECT_TRUE(differs) << "the all-pairs profile averages every query row, not the needle's pair";
}

// Paper 004 (appendix B.2) resamples (evaluation batch, layer, head) units; `sequence` resamples each
// sequence's rows apart. Either way the bucket means pool the same rows, so the exponents are the same
// and only the interval differs.
TEST(AttentionDiagnostics, TheBootstrapUnitIsAnEvaluationBatchOrASequence) {
  torch::manual_seed(7);
  Transformer model(Tiny("rope"));
  const torch::Tensor tokens = torch::randint(0, 64, {6, 32}, torch::kLong);
  DiagnosticsOptions by_batch;
  by_batch.batch_sequences = 2;
  by_batch.failure_lengths.clear();
  DiagnosticsOptions by_sequence = by_batch;
  by_sequence.bootstrap_unit = kBootstrapUnitSequence;
  const records::AttentionDiagnostics batches = MeasureAttentionDiagnostics(model, tokens, {}, by_batch);
  const records::AttentionDiagnostics sequences = MeasureAttentionDiagnostics(model, tokens, {}, by_sequence);
  EXPECT_EQ(batches.pooled.units.value_or(-1), 3 * 2 * 4) << "3 batches of 2 sequences, 2 layers, 4 heads";
  EXPECT_EQ(sequences.pooled.units.value_or(-1), 6 * 2 * 4);
  EXPECT_EQ(batches.layers[0].gap_counting.units.value_or(-1), 3 * 4);
  EXPECT_EQ(batches.batches, 3);
  EXPECT_EQ(batches.bootstrap_unit, "batch");
  EXPECT_EQ(sequences.bootstrap_unit, "sequence");
  ASSERT_TRUE(batches.pooled.xi_lambda.has_value() && sequences.pooled.xi_lambda.has_value());
  EXPECT_NEAR(*batches.pooled.xi_lambda, *sequences.pooled.xi_lambda, 1e-12) << "the same rows, summed in another order";
  EXPECT_EQ(batches.pooled.rows, sequences.pooled.rows);
  EXPECT_NE(*batches.pooled.xi_lambda_half_iqr, *sequences.pooled.xi_lambda_half_iqr);
}

// A layer whose unscaled scores are constant (its query projection zeroed: every row a tie at every n)
// beside one that is not: the pooled fit is the other layer's own, bucket by bucket. Averaging the layers'
// curves by array index (what rung did before) mixed them.
TEST(AttentionDiagnostics, PooledExponentsPoolRowsWhenALayerHasOnlyTies) {
  torch::manual_seed(5);
  ModelConfig config = Tiny("alibi");
  Transformer model(config);
  {
    torch::NoGradGuard no_grad;
    model->named_parameters()["blocks_0_qkv"].narrow(0, 0, config.heads * config.head_dim).zero_();
  }
  auto tokens = torch::randint(0, 64, {3, 24}, torch::kLong);
  const records::AttentionDiagnostics diagnostics = MeasureAttentionDiagnostics(model, tokens, {});
  const records::GapCounting& first = diagnostics.layers[0].gap_counting;
  const records::GapCounting& second = diagnostics.layers[1].gap_counting;
  const records::GapCounting& pooled = diagnostics.pooled;
  EXPECT_EQ(first.rows.value_or(-1), 0);
  EXPECT_GT(first.ties.value_or(-1), 0);
  EXPECT_FALSE(first.xi_lambda.has_value());
  ASSERT_TRUE(second.xi_lambda.has_value());
  EXPECT_GT(second.rows.value_or(-1), 0);
  ASSERT_TRUE(pooled.xi_lambda.has_value());
  EXPECT_DOUBLE_EQ(*pooled.xi_lambda, *second.xi_lambda);
  EXPECT_DOUBLE_EQ(*pooled.xi_alpha, *second.xi_alpha);
  EXPECT_EQ(pooled.rows, second.rows);
  EXPECT_NEAR(pooled.tie_share.value_or(-1), 0.5, 1e-12);
}

// Per-document extension (LeRoPE D.2): under cross-document masking, each document of a window is
// extended for its own length, so its logits are those it gets evaluated alone.
TEST(LengthExtension, APerDocumentFactorGivesEachDocumentTheLogitsItHasAlone) {
  torch::manual_seed(12);
  for (const char* method : {"yarn", "ntk_by_parts", "dynamic_ntk", "pi"}) {
    for (const char* variant : {"rope", "adarope"}) {
      ModelConfig config = Tiny(variant, 4, 2);
      config.seq_len = 8;
      ResolveModelConfig(&config);
      Transformer model(config);
      model->eval();
      LengthExtension extension{method, 4.0, 8.0};
      extension.per_document = true;
      model->positional()->set_length_extension(extension);
      torch::NoGradGuard no_grad;
      auto tokens = torch::randint(0, 64, {1, 32}, torch::kLong);
      auto doc_start = torch::cat({torch::zeros({1, 12}, torch::kLong), torch::full({1, 20}, 12, torch::kLong)}, 1);
      auto window = model->forward(tokens, doc_start);
      auto first = model->forward(tokens.narrow(1, 0, 12), torch::zeros({1, 12}, torch::kLong));
      auto second = model->forward(tokens.narrow(1, 12, 20), torch::zeros({1, 20}, torch::kLong));
      EXPECT_TRUE(torch::allclose(window.narrow(1, 0, 12), first, 1e-4, 1e-4)) << method << " " << variant;
      EXPECT_TRUE(torch::allclose(window.narrow(1, 12, 20), second, 1e-4, 1e-4)) << method << " " << variant;
      // The window's factor (4 for every position) is another model of the 12-token document.
      extension.per_document = false;
      model->positional()->set_length_extension(extension);
      auto uniform = model->forward(tokens, doc_start);
      EXPECT_FALSE(torch::allclose(uniform.narrow(1, 0, 12), first, 1e-4, 1e-4)) << method << " " << variant;
      model->positional()->set_length_extension(LengthExtension{});
    }
  }
}

// A probe through one layer: Hidden stops after that layer's probe (the layers after it are not run)
// with the same probe as a full pass gives there; without a layer every layer is probed.
TEST(Transformer, AProbeThroughOneLayerStopsThePassThereWithTheFullPasssProbe) {
  torch::manual_seed(10);
  ModelConfig config = Tiny("rope", 4, 2);
  config.layers = 3;
  ResolveModelConfig(&config);
  Transformer model(config);
  model->eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor tokens = torch::randint(0, 64, {1, 12}, torch::kLong);
  std::vector<AttentionProbe> full, through;
  model->set_attention_probe([&](const AttentionProbe& probe) { full.push_back(probe); });
  EXPECT_TRUE(model->Hidden(tokens).defined());
  model->set_attention_probe([&](const AttentionProbe& probe) { through.push_back(probe); }, 1);
  EXPECT_FALSE(model->Hidden(tokens).defined());
  model->set_attention_probe({});
  ASSERT_EQ(full.size(), 3u);
  ASSERT_EQ(through.size(), 2u);
  for (size_t layer = 0; layer < 2; ++layer) {
    EXPECT_TRUE(torch::equal(through[layer].q, full[layer].q)) << layer;
    EXPECT_TRUE(torch::equal(through[layer].k, full[layer].k)) << layer;
  }
  EXPECT_TRUE(model->Hidden(tokens).defined());  // switched off: a whole pass again
}

// The pair-by-distance profile: in each distance bin, the mean over visible (query, key) pairs of
// the pair's term of the unscaled logit, recomputed here from the model's own rotated q and k.
TEST(AttentionDiagnostics, PairProfileIsTheMeanPairTermOfTheVisiblePairsInEachDistanceBin) {
  torch::manual_seed(9);
  ModelConfig config = Tiny("rope", 4, 2);
  Transformer model(config);
  auto tokens = torch::randint(0, 64, {2, 24}, torch::kLong);
  std::vector<AttentionProbe> probes;
  model->set_attention_probe([&](const AttentionProbe& probe) { probes.push_back(probe); });
  {
    torch::NoGradGuard no_grad;
    model->forward(tokens);
  }
  model->set_attention_probe({});
  DiagnosticsOptions options;
  options.pair_profile_bins = 4;
  options.failure_lengths = {};
  const records::AttentionDiagnostics diagnostics = MeasureAttentionDiagnostics(model, tokens, {}, options);
  const records::AttentionLayer& layer = diagnostics.layers[1];
  const std::vector<int64_t>& edges = layer.pair_profile_edges;
  EXPECT_EQ(edges, DistanceBinEdges(24, 4));
  const AttentionProbe& probe = probes[1];
  const torch::Tensor q = probe.q.to(torch::kDouble), k = probe.k.to(torch::kDouble);
  const int64_t head_dim = q.size(3);
  for (int64_t h : {0, 3}) {
    const std::vector<std::vector<double>>& profile = layer.heads[static_cast<size_t>(h)].pair_profile;
    ASSERT_EQ(profile.size(), static_cast<size_t>(head_dim / 2));
    for (int64_t f = 0; f < head_dim / 2; ++f) {
      ASSERT_EQ(profile[static_cast<size_t>(f)].size(), edges.size() - 1);
      for (size_t b = 0; b + 1 < edges.size(); ++b) {
        double sum = 0;
        int64_t count = 0;
        for (int64_t s = 0; s < 2; ++s) {
          for (int64_t i = 0; i < 24; ++i) {
            for (int64_t j = 0; j <= i; ++j) {
              if (i - j < edges[b] || i - j >= edges[b + 1]) continue;
              const torch::Tensor qi = q[s][h][i], kj = k[s][h / 2][j];
              sum += (qi[2 * f] * kj[2 * f] + qi[2 * f + 1] * kj[2 * f + 1]).item<double>() /
                     std::sqrt(static_cast<double>(head_dim));
              ++count;
            }
          }
        }
        ASSERT_GT(count, 0);
        EXPECT_NEAR(profile[static_cast<size_t>(f)][b], sum / static_cast<double>(count), 1e-9)
            << "head " << h << " pair " << f << " bin " << b;
      }
    }
  }
  options.pair_profile_bins = 0;
  const records::AttentionDiagnostics without = MeasureAttentionDiagnostics(model, tokens, {}, options);
  EXPECT_TRUE(without.layers[0].pair_profile_edges.empty());
  EXPECT_TRUE(without.layers[0].heads[0].pair_profile.empty());
}

// xi_beta reads the learned table: set to 2 (ln n)^0.75, both readings give 0.75.
TEST(AttentionDiagnostics, XiBetaReadsTheLearnedInverseTemperatureTable) {
  torch::manual_seed(6);
  ModelConfig config = Tiny("rope");
  config.seq_len = 128;
  config.inverse_temperature.form = "learned";
  ResolveModelConfig(&config);
  Transformer model(config);
  {
    torch::NoGradGuard no_grad;
    auto n = torch::arange(1, 129, torch::kFloat);
    model->inverse_temperature()->beta_table().copy_(2.0 * n.log().pow(0.75));
  }
  auto tokens = torch::randint(0, 64, {2, 128}, torch::kLong);
  const records::AttentionDiagnostics diagnostics = MeasureAttentionDiagnostics(model, tokens, {});
  ASSERT_TRUE(diagnostics.inverse_temperature.has_value());
  const records::InverseTemperatureRecord& temperature = *diagnostics.inverse_temperature;
  EXPECT_NEAR(temperature.xi_beta_grid.xi, 0.75, 1e-5);
  EXPECT_EQ(temperature.xi_beta_grid.lengths, (std::vector<int64_t>{64, 128}));
  EXPECT_NEAR(temperature.xi_beta_trim.xi, 0.75, 1e-5);
  EXPECT_EQ(temperature.xi_beta_trim.points, 65);
  EXPECT_TRUE(temperature.xi_beta_trim.lengths.empty()) << "more than 16 lengths are not listed";
  ModelConfig plain = Tiny("rope");
  Transformer without(plain);
  EXPECT_FALSE(MeasureAttentionDiagnostics(without, torch::randint(0, 64, {2, 24}, torch::kLong), {})
                   .inverse_temperature.has_value());
}

// The dominant pair of each frequency unit: one for a shared schedule, one per KV group and layer for
// AdaRoPE; a one-head model's pair is the head's dominant pair in the diagnostics.
TEST(AttentionDiagnostics, DominantPairsFollowTheFrequencyUnits) {
  torch::manual_seed(8);
  auto tokens = torch::randint(0, 64, {2, 24}, torch::kLong);
  Transformer rope(Tiny("rope"));
  EXPECT_EQ(MeasureDominantPairs(rope, tokens, {}).size(), 1u);
  EXPECT_EQ(MeasureDominantPairs(rope, tokens, {})[0].size(), 1u);
  Transformer adarope(Tiny("adarope", 4, 2));
  const auto per_group = MeasureDominantPairs(adarope, tokens, {});
  ASSERT_EQ(per_group.size(), 2u);
  for (const auto& layer : per_group) {
    ASSERT_EQ(layer.size(), 2u);
    for (int64_t pair : layer) EXPECT_TRUE(pair >= 0 && pair < 4) << pair;
  }
  Transformer nope(Tiny("nope"));
  EXPECT_TRUE(MeasureDominantPairs(nope, tokens, {}).empty());
  ModelConfig one_head = Tiny("lerope", 1);
  one_head.layers = 1;
  Transformer single(one_head);
  const auto pairs = MeasureDominantPairs(single, tokens, {});
  const records::AttentionDiagnostics diagnostics = MeasureAttentionDiagnostics(single, tokens, {});
  EXPECT_EQ(pairs[0][0], diagnostics.layers[0].heads[0].dominant_pair.value_or(-1));
}

// The failure modes at each milestone are appendix D.1's (core/diagnostics/appendix_d1.h): every head of
// every layer, at each context M = multiple x T and precision, from the model's own scores, equal to the
// one-head measurement of the batch's most frequent token against its next three.
TEST(AttentionDiagnostics, FailureModesAreAppendixD1sForEveryHead) {
  torch::manual_seed(10);
  for (const char* variant : {"rope", "adarope", "lerope"}) {
    ModelConfig config = Tiny(variant, 4, 2);
    Transformer model(config);
    {
      torch::NoGradGuard no_grad;  // learned frequencies away from RoPE's
      for (auto& parameter : model->positional()->named_parameters()) parameter.value().add_(0.2);
    }
    // Token 5 most frequent, then 9, 3, 7.
    std::vector<int64_t> ids;
    for (int64_t token : {5, 5, 5, 5, 5, 5, 9, 9, 9, 9, 9, 3, 3, 3, 3, 7, 7, 7, 1, 2, 4, 6, 8, 10}) ids.push_back(token);
    ids.insert(ids.end(), ids.begin(), ids.end());
    const torch::Tensor tokens = torch::tensor(ids, torch::kLong).view({2, 24});
    const records::AttentionDiagnostics diagnostics = MeasureAttentionDiagnostics(model, tokens, {}, [] {
      DiagnosticsOptions options;
      options.failure_lengths = {1.0, 2.0};
      return options;
    }());
    for (int64_t layer = 0; layer < config.layers; ++layer) {
      for (int64_t h = 0; h < config.heads; ++h) {
        const std::vector<records::HeadFailureModes>& modes = diagnostics.layers[layer].heads[h].failure_modes;
        ASSERT_EQ(modes.size(), 2u * 3u) << "2 contexts x 3 precisions";
        EXPECT_EQ(modes[0].length, 24);
        EXPECT_EQ(modes[3].length, 48);
        AppendixD1Options one;
        one.layer = layer;
        one.head = h;
        one.query_token = 5;
        one.key_tokens = {9, 3, 7};
        one.length = 48;
        StatusOr<AppendixD1Scores> scores = MeasureAppendixD1Scores(model, one);
        ASSERT_TRUE(scores.ok()) << scores.status().message();
        const AppendixD1FailureModes expected =
            MeasureAppendixD1FailureModes(*scores, {Precision::kBf16}, KeyOrder::kByNearestScore, 0, 0);
        const records::HeadFailureModes& bf16 = modes[3];
        EXPECT_EQ(bf16.procedure, "appendix_d1");
        EXPECT_EQ(bf16.precision, "bf16");
        EXPECT_EQ(bf16.samples, 1);
        EXPECT_DOUBLE_EQ(bf16.position_inversion, expected.position_inversion) << variant << " " << layer << "/" << h;
        EXPECT_DOUBLE_EQ(bf16.position_aliasing_pairs, static_cast<double>(expected.precisions[0].aliasing_pairs[0]));
        EXPECT_DOUBLE_EQ(bf16.attention_invariance, static_cast<double>(expected.precisions[0].attention_invariance.pairs));
        EXPECT_DOUBLE_EQ(bf16.token_aliasing, static_cast<double>(expected.precisions[0].token_aliasing));
      }
    }
  }
}

}  // namespace
}  // namespace rung

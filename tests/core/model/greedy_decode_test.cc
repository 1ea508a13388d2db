// The cached forward (TransformerImpl::CachedHidden, kv_cache.h) against the full forward, and greedy
// decoding with the cache against decoding by a full recompute every step (greedy_decode.h), for every
// positional variant, grouped-query attention, QK-norm, inverse temperatures, length extensions and
// weights stored in bf16; settings whose tables depend on the window's length decode through the fallback.
#include "core/model/greedy_decode.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/model/attention.h"
#include "core/model/kv_cache.h"
#include "core/model/length_extension.h"
#include "core/model/transformer.h"

namespace rung {
namespace {

constexpr int64_t kVocab = 50, kBatch = 2, kPrompt = 24, kSteps = 8;

using Configure = std::function<void(ModelConfig*)>;
using Prepare = std::function<void(Transformer&)>;

struct Setting {
  std::string name;
  std::string variant;  // position.variant
  Configure configure = [](ModelConfig*) {};
  Prepare prepare = [](Transformer&) {};
};

void PrintTo(const Setting& setting, std::ostream* out) { *out << setting.name; }

// A small model of `setting` with every learned parameter moved off its initial value (so that LeRoPE's
// scales, AdaScale, the learned temperature table and the norm gains all matter).
Transformer RandomModel(const Setting& setting) {
  ModelConfig config;
  config.vocab_size = kVocab;
  config.layers = 2;
  config.d_model = 32;
  config.heads = 4;
  config.seq_len = 64;
  config.position.variant = setting.variant;
  config.position.adarope.l_ref = 4.0;  // below the sequence: AdaScale's lambda varies with L
  setting.configure(&config);
  ResolveModelConfig(&config);
  torch::manual_seed(11);
  Transformer model(config);
  {
    torch::NoGradGuard no_grad;
    for (auto& parameter : model->parameters()) parameter.add_(0.05 * torch::randn_like(parameter));
  }
  setting.prepare(model);
  model->eval();
  return model;
}

Prepare Extended(const std::string& method, double scale, bool per_document = false) {
  return [=](Transformer& model) {
    LengthExtension extension{method, scale, /*train_length=*/16.0};
    extension.per_document = per_document;
    model->positional()->set_length_extension(extension);
  };
}

Configure GroupedQuery(int64_t heads, int64_t kv_heads) {
  return [=](ModelConfig* c) {
    c->heads = heads;
    c->kv_heads = kv_heads;
    c->d_model = 8 * heads;
  };
}

Configure Temperature(const std::string& form) {
  return [=](ModelConfig* c) {
    c->inverse_temperature.form = form;
    c->inverse_temperature.n_ref = 8;
    c->inverse_temperature.learn_s = true;        // log_power
    c->inverse_temperature.extend = "power_law";  // learned
    c->seq_len = 20;                              // the learned table ends inside the sequence
  };
}

const Configure kFixedLog = [](ModelConfig* c) { c->position.adarope.fixed_log = true; };
const Configure kSequenceLength = [](ModelConfig* c) { c->position.adarope.length = "sequence"; };
const Configure kNone = [](ModelConfig*) {};

const std::vector<Setting>& CachedSettings() {
  static const std::vector<Setting> settings = {
      {"rope", "rope"},
      {"prope", "prope"},
      {"lerope", "lerope"},
      {"adarope_query_length", "adarope"},
      {"adarope_fixed_log_query_length", "adarope", kFixedLog},
      {"alibi", "alibi"},
      {"nope", "nope"},
      {"absolute", "absolute"},
      {"rope_grouped_query", "rope", GroupedQuery(4, 2)},
      {"alibi_grouped_query_six_heads", "alibi", GroupedQuery(6, 2)},  // the slopes' rule for 6 heads
      {"adarope_grouped_query_per_group_frequencies", "adarope", GroupedQuery(4, 2)},
      {"rope_qk_norm_swiglu_three_layers", "rope",
       [](ModelConfig* c) {
         c->qk_norm = true;
         c->mlp = "swiglu";
         c->layers = 3;
         c->d_model = 64;
       }},
      {"rope_log_power_temperature", "rope", Temperature("log_power")},
      {"rope_ssmax_temperature", "rope", Temperature("ssmax")},
      {"alibi_learned_temperature_beyond_its_table", "alibi", Temperature("learned")},
      {"rope_yarn", "rope", kNone, Extended("yarn", 4.0)},
      {"rope_pi", "rope", kNone, Extended("pi", 2.0)},
      {"lerope_yarn_hf", "lerope", kNone, Extended("yarn_hf", 4.0)},
      {"rope_dynamic_ntk", "rope", kNone, Extended("dynamic_ntk", 2.0)},
      {"rope_yarn_per_document_without_documents", "rope", kNone, Extended("yarn", 4.0, true)},
      {"rope_bf16_weights", "rope", kNone,
       [](Transformer& model) {  // the backbone stored in bf16, as an import may store it; computes in fp32
         for (auto& item : model->named_parameters()) {
           if (item.key().rfind("positional.", 0) != 0 && item.key().rfind("inverse_temperature.", 0) != 0) {
             item.value().set_data(item.value().detach().to(torch::kBFloat16));
           }
         }
       }},
  };
  return settings;
}

class CachedDecode : public ::testing::TestWithParam<Setting> {};

// The sequence fed in chunks (a prefill, a few tokens at once, then one at a time): each chunk's logits
// from the cache equal the full forward's at the same positions of the sequence so far.
TEST_P(CachedDecode, LogitsOfEachNewPositionMatchTheFullForward) {
  Transformer model = RandomModel(GetParam());
  ASSERT_TRUE(model->positional()->TablesIndependentOfLength());
  torch::NoGradGuard no_grad;
  torch::manual_seed(12);
  const torch::Tensor sequence = torch::randint(0, kVocab, {kBatch, 32}, torch::kLong);
  KvCache cache;
  int64_t start = 0;
  for (int64_t chunk : {20, 3, 1, 1, 1, 4, 1, 1}) {
    const torch::Tensor cached = model->Logits(model->CachedHidden(sequence.narrow(1, start, chunk), &cache));
    const torch::Tensor full = model->forward(sequence.narrow(1, 0, start + chunk)).narrow(1, start, chunk);
    EXPECT_EQ(cache.positions, start + chunk);
    EXPECT_TRUE(torch::allclose(cached, full, 1e-4, 1e-4))
        << "positions " << start << ".." << start + chunk - 1 << ": largest difference "
        << (cached - full).abs().max().item<float>();
    start += chunk;
  }
}

TEST_P(CachedDecode, TokensEqualTheFullRecomputesEveryStep) {
  Transformer model = RandomModel(GetParam());
  torch::manual_seed(13);
  const torch::Tensor prompt = torch::randint(0, kVocab, {kBatch, kPrompt}, torch::kLong);
  const torch::Tensor cached = GreedyDecode(model, prompt, kSteps, DecodeMode::kCached);
  const torch::Tensor full = GreedyDecode(model, prompt, kSteps, DecodeMode::kFullRecompute);
  ASSERT_EQ(cached.sizes(), (std::vector<int64_t>{kBatch, kSteps}));
  EXPECT_TRUE(torch::equal(cached, full)) << "cached " << cached << "\nfull " << full;
}

INSTANTIATE_TEST_SUITE_P(Settings, CachedDecode, ::testing::ValuesIn(CachedSettings()),
                         [](const ::testing::TestParamInfo<Setting>& info) { return info.param.name; });

// xPos centres its exponents on floor(T/2) and AdaScale's sequence mode sets L = T: a position's tables
// change with the window, so the cached forward refuses them and the cached decode recomputes.
TEST(GreedyDecode, LengthDependentTablesDecodeThroughTheFullRecompute) {
  const std::vector<Setting> settings = {
      {"xpos", "xpos"},
      {"adarope_sequence_length", "adarope", kSequenceLength},
      {"adarope_fixed_log_sequence_length", "adarope",
       [](ModelConfig* c) {
         kSequenceLength(c);
         kFixedLog(c);
       }},
  };
  for (const Setting& setting : settings) {
    Transformer model = RandomModel(setting);
    EXPECT_FALSE(model->positional()->TablesIndependentOfLength()) << setting.name;
    torch::manual_seed(13);
    const torch::Tensor prompt = torch::randint(0, kVocab, {kBatch, kPrompt}, torch::kLong);
    KvCache cache;
    EXPECT_THROW(model->CachedHidden(prompt, &cache), c10::Error) << setting.name;
    EXPECT_TRUE(torch::equal(GreedyDecode(model, prompt, kSteps, DecodeMode::kCached),
                             GreedyDecode(model, prompt, kSteps, DecodeMode::kFullRecompute)))
        << setting.name;
  }
}

// Without AdaScale (nor fixed_log) AdaRoPE's sequence mode has no query multiplier to depend on T.
TEST(GreedyDecode, AdaropeSequenceLengthWithoutAdaScaleIsCached) {
  Transformer model = RandomModel({"adarope_sequence_no_adascale", "adarope", [](ModelConfig* c) {
                                     kSequenceLength(c);
                                     c->position.adarope.adascale = false;
                                   }});
  EXPECT_TRUE(model->positional()->TablesIndependentOfLength());
}

TEST(GreedyDecode, RestoresTheTrainingModeAndDecodesNothingInZeroSteps) {
  Transformer model = RandomModel({"rope", "rope"});
  const torch::Tensor prompt = torch::randint(0, kVocab, {kBatch, 5}, torch::kLong);
  for (bool training : {true, false}) {
    model->train(training);
    for (DecodeMode mode : {DecodeMode::kCached, DecodeMode::kFullRecompute}) {
      const torch::Tensor tokens = GreedyDecode(model, prompt, 2, mode);
      EXPECT_FALSE(tokens.requires_grad());
      EXPECT_EQ(model->is_training(), training);
      EXPECT_EQ(GreedyDecode(model, prompt, 0, mode).sizes(), (std::vector<int64_t>{kBatch, 0}));
    }
  }
}

// The cached path's attention: its n trailing queries over all T keys are the last n rows of full causal
// attention (ALiBi and grouped-query heads included).
TEST(TrailingCausalAttention, EqualsTheLastRowsOfFullCausalAttention) {
  torch::manual_seed(14);
  const int64_t batch = 2, heads = 6, kv_heads = 2, time = 11, dim = 8;
  const torch::Tensor q = torch::randn({batch, heads, time, dim}), k = torch::randn({batch, kv_heads, time, dim});
  const torch::Tensor v = torch::randn({batch, kv_heads, time, dim});
  const torch::Tensor slopes = torch::rand({heads});
  for (const torch::Tensor& alibi : {torch::Tensor(), slopes}) {
    const torch::Tensor full = CausalAttention(q, k, v, alibi, {}, AttentionKernel::kComposite);
    for (int64_t queries : {int64_t{1}, int64_t{3}, time}) {
      const torch::Tensor trailing =
          TrailingCausalAttention(q.narrow(2, time - queries, queries).contiguous(), k, v, alibi);
      EXPECT_TRUE(torch::allclose(trailing, full.narrow(1, time - queries, queries), 1e-5, 1e-6))
          << queries << " queries, alibi " << alibi.defined();
    }
  }
}

}  // namespace
}  // namespace rung

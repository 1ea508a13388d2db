#include "core/config/model_arithmetic.h"

#include <gtest/gtest.h>

#include "core/config/trial_config.h"

namespace rung {
namespace {

ModelConfig PublishedRung(int64_t layers, int64_t d_model) {
  ModelConfig config;
  config.vocab_size = 32000;
  config.layers = layers;
  config.d_model = d_model;
  config.heads = d_model / 64;
  config.seq_len = 2048;
  ResolveModelConfig(&config);
  return config;
}

TEST(ModelArithmetic, ReproducesThePublishedLadderParameterCounts) {
  // docs/science.md section 4: non-embedding and total parameters of the reference ladder.
  struct Row { int64_t layers, d_model; double nonembedding_m, total_m; };
  for (Row row : {Row{6, 512, 18.87, 51.64}, Row{12, 1024, 150.99, 216.53}, Row{18, 1536, 509.61, 607.91},
                  Row{24, 2048, 1207.96, 1339.03}, Row{30, 2560, 2359.30, 2523.14}}) {
    ParameterCounts counts = CountParameters(PublishedRung(row.layers, row.d_model));
    EXPECT_NEAR(counts.nonembedding() / 1e6, row.nonembedding_m, 0.01) << row.layers;
    // The table's total has no norm gains; ours counts them (a few thousand).
    EXPECT_NEAR((counts.total() - counts.norms) / 1e6, row.total_m, 0.01) << row.layers;
  }
}

TEST(ModelArithmetic, FlopsPerTokenFollowTheConventions) {
  ModelConfig config = PublishedRung(6, 512);
  FlopsPerToken flops = CountFlopsPerToken(config);
  ParameterCounts counts = CountParameters(config);
  EXPECT_DOUBLE_EQ(flops.nonembedding, 6.0 * counts.nonembedding());
  EXPECT_DOUBLE_EQ(flops.matrix, 6.0 * (counts.nonembedding() + 32000 * 512));
  EXPECT_DOUBLE_EQ(flops.attention, 6.0 * 6 * 2048 * 512);
  EXPECT_DOUBLE_EQ(flops.total(), flops.matrix + flops.attention);
}

TEST(ModelArithmetic, CountsGroupedQuerySwigluAndQkNorm) {
  ModelConfig config;
  config.vocab_size = 100;
  config.layers = 3;
  config.d_model = 64;
  config.heads = 8;
  config.kv_heads = 2;
  config.mlp = "swiglu";
  config.mlp_hidden = 96;
  config.qk_norm = true;
  config.seq_len = 32;
  ResolveModelConfig(&config);
  ParameterCounts counts = CountParameters(config);
  EXPECT_EQ(counts.attention, 3 * (64 * (64 + 2 * 16) + 64 * 64));
  EXPECT_EQ(counts.mlp, 3 * 3 * 64 * 96);
  EXPECT_EQ(counts.norms, 3 * (2 * 64 + 2 * 8) + 64);
}

TEST(ModelArithmetic, CountsLearnedPositionalParametersPerVariant) {
  ModelConfig config;
  config.vocab_size = 256;
  config.layers = 2;
  config.d_model = 32;
  config.heads = 4;
  config.kv_heads = 2;
  config.seq_len = 16;
  ResolveModelConfig(&config);  // head_dim 8: 4 pairs
  config.position.variant = "lerope";
  EXPECT_EQ(CountPositionalParameters(config), 4);
  config.position.variant = "adarope";
  EXPECT_EQ(CountPositionalParameters(config), 2 * 2 * 4 + 2 * 2 * 4);
  config.position.adarope.share_freq = "layer";
  EXPECT_EQ(CountPositionalParameters(config), 2 * 4 + 2 * 2 * 4);
  config.position.adarope.adascale = false;
  EXPECT_EQ(CountPositionalParameters(config), 2 * 4);
  config.position.adarope.learned_base = true;
  EXPECT_EQ(CountPositionalParameters(config), 2);
  config.position.variant = "rope";
  config.inverse_temperature.form = "learned";
  EXPECT_EQ(CountPositionalParameters(config), 16 + 2 * 2 * 4);
}

// docs/science.md section 13: the learned absolute position table [n_train, d_model] is an embedding
// parameter; N_nonembedding and the FLOPs of 6 N_nonembedding D do not see it.
TEST(ModelArithmetic, CountsTheAbsolutePositionTableAmongTheEmbeddingParameters) {
  ModelConfig config;
  config.vocab_size = 256;
  config.layers = 2;
  config.d_model = 32;
  config.heads = 4;
  config.seq_len = 16;
  ResolveModelConfig(&config);  // MHA, head_dim 8, mlp_hidden 128
  const ParameterCounts rope = CountParameters(config);
  const FlopsPerToken rope_flops = CountFlopsPerToken(config);
  config.position.variant = "absolute";
  const ParameterCounts absolute = CountParameters(config);
  // By hand: attention 2 x (32 x (32 + 2 x 32) + 32 x 32) = 8192; MLP 2 x 2 x 32 x 128 = 16384;
  // norms 2 x 2 x 32 + 32 = 160; token table 256 x 32 = 8192 and position table 16 x 32 = 512;
  // output head 32 x 256 = 8192.
  EXPECT_EQ(absolute.attention, 8192);
  EXPECT_EQ(absolute.mlp, 16384);
  EXPECT_EQ(absolute.norms, 160);
  EXPECT_EQ(absolute.positional, 0);
  EXPECT_EQ(absolute.embedding, 8192 + 512);
  EXPECT_EQ(absolute.output_head, 8192);
  EXPECT_EQ(absolute.nonembedding(), 8192 + 16384);
  EXPECT_EQ(absolute.total(), 8192 + 16384 + 160 + 8192 + 512 + 8192);
  EXPECT_EQ(absolute.total(), rope.total() + 16 * 32);
  EXPECT_EQ(CountPositionalParameters(config), 0);
  EXPECT_EQ(ParameterCountsToJson(absolute).at("embedding"), 8704);

  const FlopsPerToken flops = CountFlopsPerToken(config);
  EXPECT_DOUBLE_EQ(flops.nonembedding, 6.0 * (8192 + 16384));
  EXPECT_DOUBLE_EQ(flops.nonembedding, rope_flops.nonembedding);
  EXPECT_DOUBLE_EQ(flops.matrix, rope_flops.matrix);
  EXPECT_DOUBLE_EQ(flops.attention, rope_flops.attention);

  config.seq_len = 64;  // the table grows with the training length
  EXPECT_EQ(CountParameters(config).embedding, 256 * 32 + 64 * 32);
}

}  // namespace
}  // namespace rung

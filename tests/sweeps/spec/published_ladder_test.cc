// sweeps/examples/lerope-ladder.yaml against the LeRoPE paper (section 4.1, appendix A.1): the shapes and
// parameter counts of its table, the recipe, the three methods and the learning-rate protocol.
#include <cmath>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "sweeps/spec/expansion.h"

namespace rung {
namespace {

struct PublishedRung {
  std::string label;
  int64_t layers, d_model, mlp;
  double nonembedding_millions, total_millions, peak_lr;
};

// docs/science.md section 4's table.
const std::vector<PublishedRung>& Published() {
  static const std::vector<PublishedRung> rungs = {
      {"52M", 6, 512, 2048, 18.87, 51.64, 1.10e-2},      {"217M", 12, 1024, 4096, 150.99, 216.53, 2.76e-3},
      {"608M", 18, 1536, 6144, 509.61, 607.91, 9.77e-4}, {"1.3B", 24, 2048, 8192, 1208.0, 1340.0, 4.88e-4},
      {"2.5B", 30, 2560, 10240, 2360.0, 2520.0, 3.45e-4}};
  return rungs;
}

class PublishedLadder : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<ExpandedSweep> sweep = LoadSweepSpec(std::string(RUNG_SOURCE_DIR) + "/sweeps/examples/lerope-ladder.yaml");
    ASSERT_TRUE(sweep.ok()) << sweep.status().message();
    sweep_ = *sweep;
  }
  ExpandedSweep sweep_;
};

TEST_F(PublishedLadder, RungsHaveThePublishedShapesAndParameterCounts) {
  std::map<std::string, const ExpandedTrial*> by_label;
  for (const ExpandedTrial& trial : sweep_.trials) by_label.emplace(trial.rung_label, &trial);
  ASSERT_EQ(by_label.size(), Published().size());
  for (const PublishedRung& rung : Published()) {
    ASSERT_EQ(by_label.count(rung.label), 1u) << rung.label;
    const ExpandedTrial& trial = *by_label[rung.label];
    const ModelConfig& model = trial.config.model;
    EXPECT_EQ(model.layers, rung.layers) << rung.label;
    EXPECT_EQ(model.d_model, rung.d_model) << rung.label;
    EXPECT_EQ(model.mlp_hidden, rung.mlp) << rung.label;
    EXPECT_EQ(model.head_dim, 64) << rung.label;
    EXPECT_EQ(model.heads * 3, model.layers * 4) << rung.label << ": heads = 4/3 x layers";
    EXPECT_EQ(model.vocab_size, 32000);
    // The table rounds to 0.01M (0.01B for the two largest) and counts the matrices: its total is
    // N_nonembedding plus the embedding and the output head (the norm gains, and LeRoPE's d/2 scales, are
    // in rung's total but not the table's).
    const double tolerance = rung.total_millions > 1000 ? 5.0 : 0.005;
    const ParameterCounts& counts = trial.parameters;
    EXPECT_NEAR(static_cast<double>(counts.nonembedding()) / 1e6, rung.nonembedding_millions, tolerance) << rung.label;
    EXPECT_NEAR(static_cast<double>(counts.nonembedding() + counts.embedding + counts.output_head) / 1e6,
                rung.total_millions, tolerance)
        << rung.label;
    EXPECT_LT(counts.total() - (counts.nonembedding() + counts.embedding + counts.output_head), counts.total() / 2000)
        << rung.label;
    // 20 tokens per total parameter (positional parameters left out, so every variant of a rung trains
    // on the same tokens).
    EXPECT_NEAR(static_cast<double>(trial.tokens) / static_cast<double>(trial.parameters.total()), 20.0, 0.01)
        << rung.label;
  }
}

TEST_F(PublishedLadder, RecipeIsQkNormIntraDocumentMaskingAndWeightDecayEightOverS) {
  std::set<std::string> variants;
  for (const ExpandedTrial& trial : sweep_.trials) {
    const TrialConfig& config = trial.config;
    variants.insert(config.model.position.variant);
    EXPECT_TRUE(config.model.qk_norm);
    EXPECT_TRUE(config.data.cross_doc_mask);
    EXPECT_EQ(config.data.seq_len, 2048);
    EXPECT_EQ(config.train.batch_size * config.train.grad_accum, 64);
    EXPECT_EQ(config.train.weight_decay_mode, "independent");
    // weight decay 8/S, S the rung's optimizer steps, by the spec's weight_decay_over_steps rule
    const double steps = static_cast<double>(config.train.steps);
    EXPECT_DOUBLE_EQ(config.train.weight_decay_over_steps, 8.0);
    EXPECT_NEAR(config.train.weight_decay * steps / 8.0, 1.0, 1e-12) << trial.rung_label << " S = " << steps;
    if (config.model.position.variant == "prope") EXPECT_DOUBLE_EQ(config.model.position.fraction, 0.75);
  }
  EXPECT_EQ(variants, (std::set<std::string>{"rope", "prope", "lerope"}));
}

TEST_F(PublishedLadder, LearningRatesAreBracketedAroundThePublishedValuesAndTheTwoLargestExtrapolated) {
  const TuneSpec& tune = sweep_.spec.tune;
  ASSERT_TRUE(tune.set);
  EXPECT_EQ(tune.key, "train.lr");
  EXPECT_NEAR(tune.ratio, std::sqrt(2.0), 1e-15);
  EXPECT_DOUBLE_EQ(tune.anchor, 1.0);
  EXPECT_TRUE(tune.predict);
  EXPECT_EQ(tune.extrapolate_above, "608M");
  EXPECT_TRUE(tune.PerRung());
  for (const PublishedRung& rung : Published()) {
    const bool searched = rung.label == "52M" || rung.label == "217M" || rung.label == "608M";
    EXPECT_EQ(tune.center_per_rung.count(rung.label), searched ? 1u : 0u) << rung.label;
    if (searched) EXPECT_DOUBLE_EQ(tune.center_per_rung.at(rung.label), rung.peak_lr) << rung.label;
  }
}

}  // namespace
}  // namespace rung

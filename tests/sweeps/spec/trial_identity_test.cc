#include "sweeps/spec/trial_identity.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rung {
namespace {

TrialConfig Trial(const nlohmann::json& overrides = nlohmann::json::object()) {
  nlohmann::json json = {{"data", {{"source", "builtin"}, {"seq_len", 32}}},
                         {"model", {{"layers", 1}, {"d_model", 16}, {"heads", 2}}},
                         {"train", {{"steps", 10}}}};
  json.merge_patch(overrides);
  StatusOr<TrialConfig> trial = TrialConfigFromJson(json);
  EXPECT_TRUE(trial.ok()) << trial.status().message();
  return trial.value();
}

TEST(TrialIdentity, IsStableAndIgnoresResourcesAndCadence) {
  const std::string base = TrialIdentityHash(Trial());
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, TrialIdentityHash(Trial()));
  EXPECT_EQ(base, TrialIdentityHash(Trial({{"resources", {{"cpus", 8}}}})));
  EXPECT_EQ(base, TrialIdentityHash(Trial({{"train", {{"log_every", 1}, {"eval_every", 5}, {"checkpoint_every", 3}}}})));
}

// The expansion hands over the config JSON it already built; the identity must not change.
TEST(TrialIdentity, FromTheConfigJsonEqualsFromTheConfig) {
  for (const nlohmann::json& overrides :
       {nlohmann::json::object(), nlohmann::json{{"position", {{"variant", "adarope"}}}},
        nlohmann::json{{"inverse_temperature", {{"form", "qwen"}}}}, nlohmann::json{{"resources", {{"cpus", 4}}}}}) {
    const TrialConfig trial = Trial(overrides);
    EXPECT_EQ(TrialIdentityHash(trial), TrialIdentityHash(trial, TrialConfigToJson(trial))) << overrides.dump();
  }
}

TEST(TrialIdentity, ChangesWithAnythingThatChangesTheResult) {
  const std::string base = TrialIdentityHash(Trial());
  EXPECT_NE(base, TrialIdentityHash(Trial({{"train", {{"lr", 0.01}}}})));
  EXPECT_NE(base, TrialIdentityHash(Trial({{"seed", 1}})));
  EXPECT_NE(base, TrialIdentityHash(Trial({{"position", {{"variant", "lerope"}}}})));
  EXPECT_NE(base, TrialIdentityHash(Trial({{"position", {{"base", 500.0}}}})));
}

// Keys added after identities were first stored (train.init.from_trial, train.diagnostics_renyi_order)
// count only when set: a spec resubmitted to an older database still finds its SUCCEEDED cells.
TEST(TrialIdentity, LaterKeysCountOnlyWhenSet) {
  const std::string base = TrialIdentityHash(Trial());
  EXPECT_EQ(base, TrialIdentityHash(Trial({{"train", {{"diagnostics_renyi_order", 2.0}}}})));
  EXPECT_NE(base, TrialIdentityHash(Trial({{"train", {{"diagnostics_renyi_order", 3.0}}}})));
  EXPECT_NE(base, TrialIdentityHash(Trial({{"train", {{"init", {{"from_trial", "ladder/3"}}}}}})));
  const nlohmann::json identity = TrialIdentityJson(Trial());
  EXPECT_FALSE(identity["train"].contains("diagnostics_renyi_order"));
  EXPECT_FALSE(identity["train"]["init"].contains("from_trial"));
}

// The keys of the protocols release (docs/science.md sections 7-13) at their defaults leave identities
// as earlier releases stored them; set, they count.
TEST(TrialIdentity, TheProtocolKeysCountOnlyWhereTheyChangeSomething) {
  const nlohmann::json identity = TrialIdentityJson(Trial());
  for (const char* key : {"diagnostics_at", "diagnostics_lengths", "diagnostics_regime_multiples", "diagnostics_beta_trim",
                          "diagnostics_failure_lengths", "extrapolation_yarn_c", "niah_grid_instances"}) {
    EXPECT_FALSE(identity["train"].contains(key)) << key;
  }
  EXPECT_FALSE(identity["train"]["init"].contains("adarope_start"));
  EXPECT_FALSE(identity["data"].contains("cross_doc_keys"));
  const std::string base = TrialIdentityHash(Trial());
  EXPECT_NE(base, TrialIdentityHash(Trial({{"train", {{"diagnostics_at", {0.5, 1.0}}}}})));
  EXPECT_NE(base, TrialIdentityHash(Trial({{"train", {{"extrapolation_yarn_c", 0.2}}}})));
  // cross_doc_keys counts under the mask where the model reads a key count, and not where none does.
  const nlohmann::json masked = {{"data", {{"cross_doc_mask", true}}}};
  nlohmann::json with_beta = masked;
  with_beta["inverse_temperature"] = {{"form", "ssmax"}};
  EXPECT_FALSE(TrialIdentityJson(Trial(masked))["data"].contains("cross_doc_keys"));
  EXPECT_TRUE(TrialIdentityJson(Trial(with_beta))["data"].contains("cross_doc_keys"));
  nlohmann::json window = with_beta;
  window["data"]["cross_doc_keys"] = "window";
  EXPECT_NE(TrialIdentityHash(Trial(with_beta)), TrialIdentityHash(Trial(window)));
  // NRW's buffer changed meaning: a buffer > 0 is marked, so that no earlier trial matches it.
  const nlohmann::json nrw = {{"data", {{"source", "nrw"}, {"seq_len", 256}, {"nrw", {{"window_centre", 100}, {"window_width", 40}}}}},
                              {"model", {{"d_model", 8}, {"heads", 1}}}};
  nlohmann::json buffered = nrw;
  buffered["data"]["nrw"]["buffer"] = 0.5;
  EXPECT_FALSE(TrialIdentityJson(Trial(nrw))["data"]["nrw"].contains("buffer_rule"));
  EXPECT_TRUE(TrialIdentityJson(Trial(buffered))["data"]["nrw"].contains("buffer_rule"));
}

// train.extrapolation_factor counts only where a masked evaluation extends beyond the training length;
// weight_decay_over_steps and diagnostics_pair_profile_bins only when set.
// Earlier releases measured one batch of diagnostics_sequences with (sequence, layer, head) units: a
// trial set so keeps their identity; the paper's batches and units (the defaults) are another result.
TEST(TrialIdentity, TheDiagnosticsBatchesAndUnitCountWhereTheyMeasureOtherwiseThanEarlierReleases) {
  const nlohmann::json earlier = {
      {"train", {{"diagnostics_sequences", 4}, {"diagnostics_batches", 1}, {"diagnostics_bootstrap_unit", "sequence"}}}};
  const nlohmann::json identity = TrialIdentityJson(Trial(earlier));
  EXPECT_FALSE(identity["train"].contains("diagnostics_batches"));
  EXPECT_FALSE(identity["train"].contains("diagnostics_bootstrap_unit"));
  EXPECT_EQ(identity["train"]["diagnostics_sequences"], 4);
  const nlohmann::json paper = TrialIdentityJson(Trial({{"train", {{"diagnostics_sequences", 4}}}}));
  EXPECT_EQ(paper["train"]["diagnostics_batches"], 3);
  EXPECT_EQ(paper["train"]["diagnostics_bootstrap_unit"], "batch");
  nlohmann::json one_batch = earlier;
  one_batch["train"]["diagnostics_bootstrap_unit"] = "batch";
  EXPECT_NE(TrialIdentityHash(Trial(earlier)), TrialIdentityHash(Trial(one_batch)));
  const nlohmann::json off = TrialIdentityJson(Trial({{"train", {{"diagnostics_sequences", 0}}}}));
  EXPECT_FALSE(off["train"].contains("diagnostics_batches")) << "not read without diagnostics";
  EXPECT_FALSE(off["train"].contains("diagnostics_bootstrap_unit"));
}

TEST(TrialIdentity, TheExtensionFactorCountsWhereAMaskedEvaluationExtendsBeyondT) {
  const nlohmann::json extended = {{"train", {{"extrapolation_multiples", {2}}, {"extrapolation_methods", {"yarn"}}}}};
  nlohmann::json masked = extended;
  masked["data"] = {{"cross_doc_mask", true}};
  EXPECT_FALSE(TrialIdentityJson(Trial())["train"].contains("extrapolation_factor"));
  EXPECT_FALSE(TrialIdentityJson(Trial(extended))["train"].contains("extrapolation_factor"));
  EXPECT_EQ(TrialIdentityJson(Trial(masked))["train"]["extrapolation_factor"], "document");
  nlohmann::json window = masked;
  window["train"]["extrapolation_factor"] = "window";
  EXPECT_NE(TrialIdentityHash(Trial(masked)), TrialIdentityHash(Trial(window)));
  nlohmann::json none = window;
  none["train"]["extrapolation_methods"] = {"none"};
  EXPECT_FALSE(TrialIdentityJson(Trial(none))["train"].contains("extrapolation_factor"));
  for (const char* key : {"weight_decay_over_steps", "diagnostics_pair_profile_bins"}) {
    EXPECT_FALSE(TrialIdentityJson(Trial())["train"].contains(key)) << key;
  }
  EXPECT_NE(TrialIdentityHash(Trial()), TrialIdentityHash(Trial({{"train", {{"diagnostics_pair_profile_bins", 8}}}})));
  EXPECT_NE(TrialIdentityHash(Trial()), TrialIdentityHash(Trial({{"train", {{"weight_decay_over_steps", 8}}}})));
}

TEST(TrialIdentity, SettingsAVariantDoesNotReadDoNotCount) {
  EXPECT_EQ(TrialIdentityHash(Trial({{"position", {{"variant", "nope"}}}})),
            TrialIdentityHash(Trial({{"position", {{"variant", "nope"}, {"base", 500.0}}}})));
  EXPECT_EQ(TrialIdentityHash(Trial()), TrialIdentityHash(Trial({{"position", {{"fraction", 0.5}}}})));
  EXPECT_EQ(TrialIdentityHash(Trial({{"inverse_temperature", {{"form", "none"}}}})),
            TrialIdentityHash(Trial({{"inverse_temperature", {{"form", "log_power"}, {"xi", 0.0}}}})));
  EXPECT_NE(TrialIdentityHash(Trial()), TrialIdentityHash(Trial({{"inverse_temperature", {{"form", "log_power"}, {"xi", 0.5}}}})));
}

}  // namespace
}  // namespace rung

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

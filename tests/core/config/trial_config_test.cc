#include "core/config/trial_config.h"

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/config/model_arithmetic.h"
#include "core/config/yaml_document.h"

namespace rung {
namespace {

using nlohmann::json;

json MinimalTrial() {
  return json::parse(R"({"data": {"source": "builtin", "seq_len": 64},
                         "model": {"layers": 2, "d_model": 32, "heads": 4},
                         "position": {"variant": "rope"},
                         "train": {"steps": 10}})");
}

TEST(TrialConfig, ResolvesDerivedDefaults) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(MinimalTrial());
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(trial->model.vocab_size, 256);
  EXPECT_EQ(trial->model.head_dim, 8);
  EXPECT_EQ(trial->model.kv_heads, 4);
  EXPECT_EQ(trial->model.mlp_hidden, 128);
  EXPECT_EQ(trial->model.seq_len, 64);
  EXPECT_DOUBLE_EQ(trial->model.inverse_temperature.n_ref, 64.0);
}

TEST(TrialConfig, RoundTripsThroughJson) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(MinimalTrial());
  ASSERT_TRUE(trial.ok());
  json written = TrialConfigToJson(trial.value());
  StatusOr<TrialConfig> again = TrialConfigFromJson(written);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(TrialConfigToJson(again.value()), written);
}

TEST(TrialConfig, TokenDataKeysAtTheirDefaultsStayOutOfTheIdentity) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(MinimalTrial());
  ASSERT_TRUE(trial.ok());
  json identity = TrialConfigToJson(trial.value());
  ReconcileWithEarlierReleases(trial.value(), &identity);
  EXPECT_FALSE(identity["data"].contains("format"));
  EXPECT_FALSE(identity["data"].contains("eval_min_doc_tokens"));
  EXPECT_FALSE(identity["data"].contains("builtin_documents"));
  EXPECT_FALSE(identity["data"].contains("builtin_form"));
  json books = MinimalTrial();
  books["data"]["builtin_documents"] = "books";
  books["data"]["eval_min_doc_tokens"] = 4096;
  StatusOr<TrialConfig> long_documents = TrialConfigFromJson(books);
  ASSERT_TRUE(long_documents.ok()) << long_documents.status().message();
  identity = TrialConfigToJson(long_documents.value());
  ReconcileWithEarlierReleases(long_documents.value(), &identity);
  EXPECT_EQ(identity["data"]["builtin_documents"], "books");
  EXPECT_EQ(identity["data"]["eval_min_doc_tokens"], 4096);
}

TEST(TrialConfig, TokenDataKeysAreValidated) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json{{"format", "llmc"}}, "data.format"},
      {json{{"eval_min_doc_tokens", -1}}, "data.eval_min_doc_tokens"},
      {json{{"builtin_documents", "pages"}}, "data.builtin_documents"},
      {json{{"builtin_form", "words"}}, "data.builtin_form"},
      {json{{"builtin_form", "bpe-4096"}, {"builtin_documents", "books"}}, "data.builtin_documents"},
      {json{{"source", "text"}, {"path", "x"}, {"builtin_form", "bpe-4096"}}, "data.builtin_form"},
      {json{{"source", "shards"}, {"path", "x"}, {"vocab_size", 100}, {"eval_min_doc_tokens", 10}}, "data.eot_token"},
  };
  for (const auto& [data, key] : cases) {
    json config = MinimalTrial();
    config["data"].update(data);
    StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
    ASSERT_FALSE(trial.ok()) << data.dump();
    EXPECT_NE(trial.status().message().find(key), std::string::npos) << trial.status().message();
  }
}

// Evaluation and probe keys: what each refuses, by key; left at their defaults they stay out of a
// trial's identity.
TEST(TrialConfig, EvaluationAndProbeKeysAreValidatedAndStayOutOfTheIdentityUnset) {
  const std::vector<std::pair<json, std::string>> cases = {
      {json{{"data", {{"cross_doc_mask", true}}}, {"train", {{"extrapolation_scale", 4.0}}}}, "train.extrapolation_scale"},
      {json{{"train", {{"extrapolation_scale", 0.5}}}}, "train.extrapolation_scale"},
      {json{{"train", {{"init", {{"model", "checkpoint"}}}}}}, "train.init.model"},
      {json{{"train", {{"probe", {{"kind", "template"}, {"needle", "{key}"}, {"query", "q"}, {"answer", "{key}"},
                                  {"filler_text", "f"}, {"distractors", 2}}}}}}, "train.probe.distractors"},
      {json{{"train", {{"probe", {{"kind", "template"}, {"needle", "{name} {key}"}, {"query", "q"}, {"answer", "{key}"},
                                  {"filler_text", "f"}, {"distractors", 2}}}}}}, "train.probe.query"},
      {json{{"train", {{"probe", {{"kind", "passkey"}, {"instances", 0}}}}}}, "train.probe.instances"},
      {json{{"train", {{"probe", {{"kind", "passkey"}, {"distractors", 1}}}}}}, "train.probe.distractors"},
      {json{{"train", {{"probe", {{"kind", "passkey"}, {"score", "choice"}}}}}}, "train.probe.score"},
      {json{{"train", {{"probe", {{"kind", "passkey"}, {"queries", 3}}}}}}, "train.probe.queries"},
      {json{{"train", {{"probe", {{"kind", "niah"}, {"elements", {4}}}}}}}, "train.probe.elements"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"lengths", {128}}}}}}}, "train.probe.lengths"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"depths", {0.5}}}}}}}, "train.probe.depths"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"filler_text", "x"}}}}}}, "train.probe.filler_text"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"elements", {0}}}}}}}, "train.probe.elements"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"queries", 0}}}}}}, "train.probe.queries"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"elements", {8, 4}}}}}}}, "train.probe.elements"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"elements", {4, 4}}}}}}}, "train.probe.elements"},
      {json{{"train", {{"probe", {{"kind", "indexing"}, {"instances", 1000}, {"queries", 1000}}}}}}, "train.probe.queries"},
  };
  for (const auto& [patch, key] : cases) {
    json config = MinimalTrial();
    config.merge_patch(patch);
    StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
    ASSERT_FALSE(trial.ok()) << patch.dump();
    EXPECT_NE(trial.status().message().find(key), std::string::npos) << trial.status().message();
  }
  StatusOr<TrialConfig> plain = TrialConfigFromJson(MinimalTrial());
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  json identity = TrialConfigToJson(*plain);
  ReconcileWithEarlierReleases(*plain, &identity);
  EXPECT_FALSE(identity["train"].contains("probe"));
  EXPECT_FALSE(identity["train"].contains("extrapolation_scale"));
  EXPECT_FALSE(identity["train"]["init"].contains("model"));
  // The indexing probe's keys stay out of another kind's identity, and join an indexing probe's.
  json passkey = MinimalTrial();
  passkey["train"]["probe"] = {{"kind", "passkey"}};
  StatusOr<TrialConfig> with_passkey = TrialConfigFromJson(passkey);
  ASSERT_TRUE(with_passkey.ok()) << with_passkey.status().message();
  identity = TrialConfigToJson(*with_passkey);
  ReconcileWithEarlierReleases(*with_passkey, &identity);
  EXPECT_FALSE(identity["train"]["probe"].contains("elements"));
  EXPECT_FALSE(identity["train"]["probe"].contains("queries"));
  json indexing = MinimalTrial();
  indexing["train"]["probe"] = {{"kind", "indexing"}, {"elements", {4, 8}}, {"score", "choice"}};
  StatusOr<TrialConfig> with_indexing = TrialConfigFromJson(indexing);
  ASSERT_TRUE(with_indexing.ok()) << with_indexing.status().message();
  identity = TrialConfigToJson(*with_indexing);
  ReconcileWithEarlierReleases(*with_indexing, &identity);
  EXPECT_EQ(identity["train"]["probe"]["elements"], json({4, 8}));
  EXPECT_EQ(identity["train"]["probe"]["queries"], 10);
}

TEST(TrialConfig, BuiltinBpeFormHasItsVocabularyAndJoinsTheIdentity) {
  json config = MinimalTrial();
  config["data"]["builtin_form"] = "bpe-4096";
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(trial->model.vocab_size, kBuiltinBpeVocabSize);
  json identity = TrialConfigToJson(trial.value());
  ReconcileWithEarlierReleases(trial.value(), &identity);
  EXPECT_EQ(identity["data"]["builtin_form"], "bpe-4096");
  config["model"]["vocab_size"] = 256;
  StatusOr<TrialConfig> narrow = TrialConfigFromJson(config);
  ASSERT_FALSE(narrow.ok());
  EXPECT_NE(narrow.status().message().find("model.vocab_size"), std::string::npos) << narrow.status().message();
}

TEST(TrialConfig, DerivesStepsFromTokens) {
  json config = MinimalTrial();
  config["train"] = {{"tokens", 10000}, {"batch_size", 4}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(trial->train.steps, (10000 + 255) / 256);
}

TEST(TrialConfig, WeightDecayOverStepsIsThatNumberOverTheTrialsSteps) {
  json config = MinimalTrial();
  config["train"] = {{"tokens", 10000}, {"batch_size", 4}, {"weight_decay", 0.5}, {"weight_decay_over_steps", 8}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  ASSERT_EQ(trial->train.steps, 40);  // ceil(10000 / (4 x 64))
  EXPECT_DOUBLE_EQ(trial->train.weight_decay, 8.0 / 40.0);
  // The rule survives a round trip through the trial's JSON (what a worker receives).
  StatusOr<TrialConfig> again = TrialConfigFromJson(TrialConfigToJson(trial.value()));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_DOUBLE_EQ(again->train.weight_decay, 0.2);
  // Off by default: weight_decay is what the config says.
  EXPECT_DOUBLE_EQ(TrialConfigFromJson(MinimalTrial())->train.weight_decay, 0.1);
  config["train"]["weight_decay_over_steps"] = -1;
  StatusOr<TrialConfig> negative = TrialConfigFromJson(config);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("train.weight_decay_over_steps"), std::string::npos);
}

TEST(TrialConfig, AWorldSizeMustSplitTheBatchEvenly) {
  json config = MinimalTrial();
  config["train"]["batch_size"] = 12;
  config["resources"] = {{"world_size", 4}};
  EXPECT_TRUE(TrialConfigFromJson(config).ok());
  config["resources"]["world_size"] = 5;
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("resources.world_size: must divide train.batch_size (12)"), std::string::npos)
      << trial.status().message();
}

TEST(TrialConfig, TheRenyiOrderOfTheDiagnosticsMustExceedOne) {
  json config = MinimalTrial();
  config["train"]["diagnostics_renyi_order"] = 1.0;
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("train.diagnostics_renyi_order: must be > 1"), std::string::npos)
      << trial.status().message();
  config["train"]["diagnostics_renyi_order"] = 2.5;
  ASSERT_TRUE(TrialConfigFromJson(config).ok());
  EXPECT_DOUBLE_EQ(TrialConfigFromJson(config)->train.diagnostics_renyi_order, 2.5);
}

TEST(TrialConfig, RefusesDiagnosticsSettingsThatMeanNothing) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"diagnostics_at", {-0.5}}},
       "train.diagnostics_at: each milestone is 0 (the start), a fraction of training in (0, 1] or a step in 2..10, got "
       "-0.5"},
      {{{"diagnostics_at", {2.5}}}, "train.diagnostics_at: each milestone"},
      {{{"diagnostics_batches", 0}}, "train.diagnostics_batches: must lie in [1, 64]"},
      {{{"diagnostics_bootstrap_unit", "document"}}, "train.diagnostics_bootstrap_unit: must be batch"},
      {{{"diagnostics_at", {500}}}, "got 500"},
      {{{"diagnostics_at", "end"}}, "train.diagnostics_at: expected a list of numbers"},
      {{{"diagnostics_lengths", {64, 1}}}, "train.diagnostics_lengths: each length is a number of keys >= 2, got 1"},
      {{{"diagnostics_lengths", json::array()}}, "train.diagnostics_lengths: give 1 to 64 lengths"},
      {{{"diagnostics_regime_multiples", {1.0, -2.0}}}, "train.diagnostics_regime_multiples: each multiple"},
      {{{"diagnostics_beta_trim", 1}}, "train.diagnostics_beta_trim: must be >= 2"},
      {{{"diagnostics_multiples", {2, 0}}}, "train.diagnostics_multiples: each evaluated length is a multiple >= 1"},
      {{{"diagnostics_multiples", {2, 4, 2}}}, "train.diagnostics_multiples: multiple 2 is given twice"},
      {{{"diagnostics_multiples", {2}}, {"diagnostics_at", {0.5}}},
       "train.diagnostics_multiples: measured at the end, beside the end's diagnostics at the training length"},
      {{{"diagnostics_multiples", {2}}, {"extrapolation_methods", json::array()}},
       "train.extrapolation_methods: give at least one method"},
      {{{"diagnostics_multiples", {int64_t{1} << 40}}}, "train.diagnostics_multiples: multiple 1099511627776 x data.seq_len"},
      {{{"diagnostics_grid_ratios", {0.25, 0.0, 1.0, 0.5}}}, "train.diagnostics_grid_ratios: each ratio n / L"},
      {{{"diagnostics_grid_ratios", {0.25, 1.5, 1.0, 0.5}}}, "got 1.5"},
      {{{"diagnostics_grid_ratios", {0.5, 1.0, 0.5, 1.0}}}, "train.diagnostics_grid_ratios: give at least 4 distinct ratios"},
  };
  for (const auto& [train, expected] : cases) {
    json config = MinimalTrial();
    config["train"].update(train);
    StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
    ASSERT_FALSE(trial.ok()) << train.dump();
    EXPECT_NE(trial.status().message().find(expected), std::string::npos) << trial.status().message();
  }
}

// Beyond the training length: every multiple > 1 with every method; at 1x only a method that changes the
// model there (a factor set apart from the multiple); and the end must be a milestone.
TEST(DiagnosticsMilestones, TheLengthsBeyondTheTrainingLengthAreThoseThatChangeSomething) {
  TrainConfig train;
  train.steps = 100;
  EXPECT_TRUE(DiagnosesTheEnd(train));
  EXPECT_TRUE(DiagnosesBeyond(train, 2, "none"));
  EXPECT_TRUE(DiagnosesBeyond(train, 4, "dynamic_ntk"));
  EXPECT_FALSE(DiagnosesBeyond(train, 1, "none"));
  EXPECT_FALSE(DiagnosesBeyond(train, 1, "pi")) << "its factor is the multiple: 1, nothing changes";
  train.extrapolation_scale = 4;
  EXPECT_TRUE(DiagnosesBeyond(train, 1, "pi"));
  EXPECT_FALSE(DiagnosesBeyond(train, 1, "none"));
  train.diagnostics_multiples = {1, 4};
  train.extrapolation_methods = {"none", "pi"};
  const std::vector<DiagnosedLength> points = DiagnosedLengthsBeyond(train);
  ASSERT_EQ(points.size(), 3u);  // 1x pi, 4x none, 4x pi
  EXPECT_EQ(points[0].multiple, 1);
  EXPECT_EQ(points[0].method, "pi");
  EXPECT_EQ(points[2].multiple, 4);
  EXPECT_EQ(points[2].method, "pi");
  train.diagnostics_at = {0.5};
  EXPECT_FALSE(DiagnosesTheEnd(train));
  train.diagnostics_at = {0.5, 100};
  EXPECT_TRUE(DiagnosesTheEnd(train));
  train.diagnostics_sequences = 0;
  EXPECT_FALSE(DiagnosesTheEnd(train));
  EXPECT_TRUE(DiagnosedLengthsBeyond(train).empty());
}

TEST(DiagnosticsMilestones, FractionsAndStepsBecomeStepsAndTheLastStepIsTheEnd) {
  TrainConfig train;
  train.steps = 100;
  train.diagnostics_at = {0.25, 1.0, 50, 0.5, 0.001};
  const std::vector<DiagnosticsMilestone> milestones = DiagnosticsMilestones(train);
  ASSERT_EQ(milestones.size(), 4u);
  EXPECT_EQ(milestones[0].step, 1);
  EXPECT_EQ(milestones[0].name, "frac 0.001");
  EXPECT_EQ(milestones[1].step, 25);
  EXPECT_EQ(milestones[1].name, "frac 0.25");
  EXPECT_EQ(milestones[2].step, 50);
  EXPECT_EQ(milestones[2].name, "step 50");
  EXPECT_EQ(milestones[3].step, 100);
  EXPECT_EQ(milestones[3].name, "end");
  train.diagnostics_at = {0.5};
  ASSERT_EQ(DiagnosticsMilestones(train).size(), 1u);
  EXPECT_EQ(DiagnosticsMilestones(train)[0].name, "frac 0.5");
  train.diagnostics_sequences = 0;
  EXPECT_TRUE(DiagnosticsMilestones(train).empty());
}

// Paper 004 reads its checkpoints from iteration 0: 0 is the start, before the first optimizer step.
TEST(DiagnosticsMilestones, ZeroIsTheStartBeforeTheFirstStep) {
  TrainConfig train;
  train.steps = 100;
  train.diagnostics_at = {1.0, 0.0, 0.001};
  const std::vector<DiagnosticsMilestone> milestones = DiagnosticsMilestones(train);
  ASSERT_EQ(milestones.size(), 3u);
  EXPECT_EQ(milestones[0].step, 0);
  EXPECT_EQ(milestones[0].name, "start");
  EXPECT_EQ(milestones[1].step, 1) << "a small fraction is still the first step, not the start";
  EXPECT_EQ(milestones[2].name, "end");
  json config = MinimalTrial();
  config["train"]["diagnostics_at"] = {0, 1};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  EXPECT_TRUE(trial.ok()) << trial.status().ToString();
}

TEST(TrialConfig, LoraAdaptersAreCheckedAgainstTheModelsProjections) {
  json config = MinimalTrial();
  config["train"]["lora"] = {{"rank", 4}, {"targets", {"q", "k", "v", "o", "up", "down"}}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(trial->train.lora.rank, 4);
  EXPECT_DOUBLE_EQ(trial->train.lora.scaling(), 4.0);  // alpha 16 / rank 4
  // A RoPE model with its backbone frozen still trains its adapters.
  config["train"]["freeze_backbone"] = true;
  EXPECT_TRUE(TrialConfigFromJson(config).ok());

  auto refusal = [&](json lora) {
    json bad = MinimalTrial();
    bad["train"]["lora"] = std::move(lora);
    StatusOr<TrialConfig> refused = TrialConfigFromJson(bad);
    return refused.ok() ? std::string("accepted") : refused.status().message();
  };
  EXPECT_NE(refusal({{"rank", 4}, {"targets", {"gate"}}}).find("train.lora.targets: gate is a SwiGLU MLP's; model.mlp is gelu"),
            std::string::npos);
  // head_dim 8 x 4 heads: q is 32 x 32.
  EXPECT_NE(refusal({{"rank", 33}}).find("train.lora.rank: 33 exceeds q's smaller dimension 32"), std::string::npos);
  EXPECT_NE(refusal({{"rank", 2}, {"targets", {"q", "q"}}}).find("train.lora.targets: names q twice"), std::string::npos);
  EXPECT_NE(refusal({{"rank", 2}, {"targets", json::array()}}).find("train.lora.targets: name at least one"),
            std::string::npos);
  EXPECT_NE(refusal({{"rank", 2}, {"targets", {"qkv"}}}).find("train.lora.targets"), std::string::npos);
  EXPECT_NE(refusal({{"rank", 2}, {"alpha", 0}}).find("train.lora.alpha: must be a positive number"), std::string::npos);
  EXPECT_NE(refusal({{"rank", 2}, {"dropout", 1.0}}).find("train.lora.dropout: must lie in [0, 1)"), std::string::npos);
  EXPECT_NE(refusal({{"rank", -1}}).find("train.lora.rank: must be >= 1, or 0 for no adapters"), std::string::npos);
}

TEST(TrialConfig, AConfigWithoutAdaptersKeepsTheIdentityOfEarlierReleases) {
  StatusOr<TrialConfig> trial = TrialConfigFromJson(MinimalTrial());
  ASSERT_TRUE(trial.ok());
  json identity = TrialConfigToJson(*trial);
  ReconcileWithEarlierReleases(*trial, &identity);
  EXPECT_FALSE(identity["train"].contains("lora"));
  json config = MinimalTrial();
  config["train"]["lora"] = {{"rank", 2}};
  StatusOr<TrialConfig> adapted = TrialConfigFromJson(config);
  ASSERT_TRUE(adapted.ok());
  json adapted_identity = TrialConfigToJson(*adapted);
  ReconcileWithEarlierReleases(*adapted, &adapted_identity);
  EXPECT_EQ(adapted_identity["train"]["lora"]["rank"], 2);
}

TEST(TrialConfig, AdaptersIdentityIsTheirTargetSetWithTheBackboneFrozenEitherWay) {
  json config = MinimalTrial();
  config["train"]["lora"] = {{"rank", 2}, {"targets", {"v", "q"}}};
  json other = MinimalTrial();
  other["train"]["lora"] = {{"rank", 2}, {"targets", {"q", "v"}}};
  other["train"]["freeze_backbone"] = true;
  auto identity = [](const json& written) {
    StatusOr<TrialConfig> trial = TrialConfigFromJson(written);
    EXPECT_TRUE(trial.ok()) << trial.status().message();
    json reconciled = TrialConfigToJson(*trial);
    ReconcileWithEarlierReleases(*trial, &reconciled);
    return reconciled;
  };
  EXPECT_EQ(identity(config), identity(other));
  EXPECT_EQ(identity(config)["train"]["lora"]["targets"], json({"q", "v"}));
  // Dropout draws the same masks on every rank: refused for a data-parallel trial.
  config["train"]["lora"]["dropout"] = 0.1;
  config["resources"] = {{"world_size", 2}};
  StatusOr<TrialConfig> gang = TrialConfigFromJson(config);
  ASSERT_FALSE(gang.ok());
  EXPECT_NE(gang.status().message().find("train.lora.dropout: a data-parallel trial (resources.world_size 2) trains "
                                         "its adapters without dropout; set 0"),
            std::string::npos)
      << gang.status().message();
}

TEST(TrialConfig, AnIdentityReadsBackWithItsMarkersTakenOut) {
  json config = MinimalTrial();
  config["data"] = {{"source", "nrw"}, {"seq_len", 64}, {"nrw", {{"buffer", 0.5}, {"window_centre", 30}, {"window_width", 8}}}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  json identity = TrialConfigToJson(*trial);
  ReconcileWithEarlierReleases(*trial, &identity);
  ASSERT_TRUE(identity["data"]["nrw"].contains("buffer_rule"));
  EXPECT_FALSE(TrialConfigFromJson(identity).ok());
  StatusOr<TrialConfig> read = TrialConfigFromIdentity(identity);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_DOUBLE_EQ(read->data.nrw.buffer, 0.5);
}

TEST(TrialConfig, SharedAdaScaleCountsOnePairPerLayerOrOneInAllAndNeedsALearnedScale) {
  json config = MinimalTrial();
  config["position"] = {{"variant", "adarope"}, {"adarope", {{"share_scale", "layer"}}}};
  StatusOr<TrialConfig> layer = TrialConfigFromJson(config);
  ASSERT_TRUE(layer.ok()) << layer.status().message();
  config["position"]["adarope"]["share_scale"] = "none";
  StatusOr<TrialConfig> per_head = TrialConfigFromJson(config);
  ASSERT_TRUE(per_head.ok());
  // 2 layers x 4 heads x (tau, gamma) per head, against 2 layers x (tau, gamma).
  EXPECT_EQ(CountPositionalParameters(per_head->model) - CountPositionalParameters(layer->model), 2 * 2 * 4 - 2 * 2);
  config["position"]["adarope"] = {{"share_scale", "global"}, {"fixed_log", true}};
  StatusOr<TrialConfig> fixed = TrialConfigFromJson(config);
  ASSERT_FALSE(fixed.ok());
  EXPECT_NE(fixed.status().message().find("position.adarope.share_scale: shares AdaScale's learned tau and gamma; "
                                          "with fixed_log nothing is learned to share"),
            std::string::npos)
      << fixed.status().message();
  // The default leaves identities as they were.
  json identity = TrialConfigToJson(*per_head);
  ReconcileWithEarlierReleases(*per_head, &identity);
  EXPECT_FALSE(identity["position"]["adarope"].contains("share_scale"));
}

TEST(TrialConfig, AnAdaRopeStartIsAGlobalScheduleAtAFactorTheModelCanHold) {
  json config = MinimalTrial();
  config["position"] = {{"variant", "adarope"}, {"adarope", {{"l_ref", 32}}}};
  config["train"]["init"] = {{"checkpoint", "/tmp/source"}, {"adarope_start", "ntk_by_parts"}, {"adarope_scale", 3}};
  StatusOr<TrialConfig> start = TrialConfigFromJson(config);
  ASSERT_TRUE(start.ok()) << start.status().message();
  EXPECT_EQ(start->train.init.adarope_start, "ntk_by_parts");
  EXPECT_DOUBLE_EQ(start->train.init.adarope_scale, 3.0);
  json identity = TrialConfigToJson(*start);
  ReconcileWithEarlierReleases(*start, &identity);
  EXPECT_EQ(identity["train"]["init"]["adarope_scale"], 3.0);
  // Each refusal names its key and why.
  auto refused = [&](json changed, const std::string& expected) {
    StatusOr<TrialConfig> trial = TrialConfigFromJson(changed);
    ASSERT_FALSE(trial.ok()) << expected;
    EXPECT_NE(trial.status().message().find(expected), std::string::npos) << trial.status().message();
  };
  json bad = config;
  bad["train"]["init"]["adarope_scale"] = 0.5;
  refused(bad, "train.init.adarope_scale: must be 0");
  bad = config;
  bad["train"]["init"]["adarope_start"] = "trained";
  refused(bad, "train.init.adarope_scale: is the factor of an extension's start");
  bad = config;
  bad["position"]["adarope"]["learned_base"] = true;
  refused(bad, "train.init.adarope_start: ntk_by_parts changes each frequency by its own factor");
  bad = config;
  bad["train"]["init"]["adarope_start"] = "yarn";
  bad["position"]["adarope"]["adascale"] = false;
  refused(bad, "train.init.adarope_start: yarn's logit factor is AdaScale's tau");
  bad = config;
  bad["position"]["adarope"]["fixed_log"] = true;
  refused(bad, "position.adarope.fixed_log scales logits from the start");
  bad = config;
  bad["position"] = {{"variant", "lerope"}};
  refused(bad, "ntk_by_parts starts AdaRoPE's frequencies and tau; position.variant is lerope");
  bad = config;
  bad["train"]["init"] = {{"adarope_start", "pi"}};
  refused(bad, "pi extends a trained model");
  // The default factor stays out of the identity.
  config["train"]["init"].erase("adarope_scale");
  StatusOr<TrialConfig> defaults = TrialConfigFromJson(config);
  ASSERT_TRUE(defaults.ok());
  identity = TrialConfigToJson(*defaults);
  ReconcileWithEarlierReleases(*defaults, &identity);
  EXPECT_FALSE(identity["train"]["init"].contains("adarope_scale"));
}

TEST(TrialConfig, AFrozenBackboneNeedsLearnedPositionalParameters) {
  json config = MinimalTrial();
  config["train"]["freeze_backbone"] = true;
  StatusOr<TrialConfig> rope = TrialConfigFromJson(config);
  ASSERT_FALSE(rope.ok());
  EXPECT_NE(rope.status().message().find("train.freeze_backbone: leaves nothing to train: position.variant rope"),
            std::string::npos)
      << rope.status().message();
  config["position"]["variant"] = "lerope";
  EXPECT_TRUE(TrialConfigFromJson(config).ok());
  config["position"]["freeze"] = true;
  EXPECT_FALSE(TrialConfigFromJson(config).ok());
  config["position"] = {{"variant", "rope"}};
  config["inverse_temperature"] = {{"form", "learned"}};
  EXPECT_TRUE(TrialConfigFromJson(config).ok());
}

TEST(TrialConfig, TheAbsolutePositionTableRefusesOrClampsBeyondTheTrainingLength) {
  json config = MinimalTrial();
  config["position"] = {{"variant", "absolute"}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(trial->model.position.absolute.beyond, "refuse");
  EXPECT_EQ(TrialConfigToJson(*trial).at("position").at("absolute").at("beyond"), "refuse");

  config["position"]["absolute"] = {{"beyond", "wrap"}};
  trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("position.absolute.beyond: 'wrap' is not one of: refuse, clamp"),
            std::string::npos)
      << trial.status().message();
  config["position"]["absolute"] = {{"beyond", "clamp"}, {"bejond", "refuse"}};
  trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("position.absolute.bejond: unknown key (did you mean 'beyond'?)"),
            std::string::npos)
      << trial.status().message();

  // Evaluating beyond the table is refused at validation under `refuse`, naming both keys.
  config["position"]["absolute"] = {{"beyond", "refuse"}};
  config["train"]["extrapolation_multiples"] = {1, 2, 4};
  trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  const std::string message = trial.status().message();
  EXPECT_NE(message.find("train.extrapolation_multiples: multiple 2 evaluates beyond the training length"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("position.absolute.beyond is refuse"), std::string::npos) << message;
  EXPECT_EQ(message.find("multiple 4"), std::string::npos) << "one error for the list: " << message;
  config["position"]["absolute"]["beyond"] = "clamp";
  trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(trial->model.position.absolute.beyond, "clamp");
  config["position"]["absolute"]["beyond"] = "refuse";
  config["train"]["extrapolation_multiples"] = {1};  // the training length only
  EXPECT_TRUE(TrialConfigFromJson(config).ok());
  config["position"] = {{"variant", "rope"}, {"absolute", {{"beyond", "refuse"}}}};
  config["train"]["extrapolation_multiples"] = {1, 2};  // other variants do not read the setting
  EXPECT_TRUE(TrialConfigFromJson(config).ok());

  // The table is an embedding parameter: with the backbone frozen nothing trains.
  config = MinimalTrial();
  config["position"] = {{"variant", "absolute"}};
  config["train"]["freeze_backbone"] = true;
  trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("train.freeze_backbone: leaves nothing to train: position.variant "
                                          "absolute has no learned parameters besides its position table"),
            std::string::npos)
      << trial.status().message();
}

TEST(TrialConfig, ReportsEveryErrorWithItsPathAndASuggestion) {
  json config = MinimalTrial();
  config["model"]["hedas"] = 4;
  config["model"]["layers"] = "two";
  config["position"]["variant"] = "ropee";
  config["position"]["fraction"] = 1.5;
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  const std::string& message = trial.status().message();
  EXPECT_NE(message.find("model.hedas: unknown key (did you mean 'heads'?)"), std::string::npos) << message;
  EXPECT_NE(message.find("model.layers: expected an integer"), std::string::npos) << message;
  EXPECT_NE(message.find("position.variant: 'ropee' is not a positional variant"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean 'rope'"), std::string::npos) << message;
}

TEST(TrialConfig, RejectsImpossibleShapes) {
  json config = MinimalTrial();
  config["model"] = {{"layers", 2}, {"d_model", 30}, {"heads", 4}, {"head_dim", 7}, {"kv_heads", 3}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  const std::string& message = trial.status().message();
  EXPECT_NE(message.find("model.kv_heads: must divide heads"), std::string::npos) << message;
  EXPECT_NE(message.find("model.head_dim: rotary variant 'rope' needs an even head dimension"), std::string::npos)
      << message;
  EXPECT_NE(message.find("model.heads: heads x head_dim"), std::string::npos) << message;
}

TEST(TrialConfig, ValidatesThePartialRotaryFraction) {
  json config = MinimalTrial();
  config["position"] = {{"variant", "prope"}, {"fraction", 0.0}};
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("position.fraction: must lie in (0, 1]"), std::string::npos);
}

TEST(TrialConfig, AcceptsTheCrossDocumentMaskWhereDocumentsHaveAOneTokenStart) {
  json config = MinimalTrial();
  config["data"]["cross_doc_mask"] = true;
  StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(DocumentStartToken(trial->data), 0x0C);  // the default separator "\f"
  config["data"] = {{"source", "shards"}, {"path", "tokens.bin"}, {"vocab_size", 100}, {"eot_token", 99},
                    {"cross_doc_mask", true}};
  trial = TrialConfigFromJson(config);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  EXPECT_EQ(DocumentStartToken(trial->data), 99);
}

TEST(TrialConfig, RejectsTheCrossDocumentMaskWithoutAOneTokenDocumentStart) {
  struct Case {
    json data;
    std::string expected;
  };
  std::vector<Case> cases = {
      {{{"source", "text"}, {"path", "corpus.txt"}, {"doc_separator", "\n\n"}, {"cross_doc_mask", true}},
       "data.doc_separator: must be one byte when cross_doc_mask is on"},
      {{{"source", "shards"}, {"path", "tokens.bin"}, {"vocab_size", 100}, {"cross_doc_mask", true}},
       "data.eot_token: source 'shards' with cross_doc_mask needs the token between documents"},
      {{{"source", "shards"}, {"path", "tokens.bin"}, {"vocab_size", 100}, {"eot_token", 100}},
       "data.eot_token: must be below vocab_size 100"},
      {{{"source", "position_index"}, {"cross_doc_mask", true}},
       "data.cross_doc_mask: synthetic task 'position_index' has no documents"},
  };
  for (const Case& c : cases) {
    json config = MinimalTrial();
    config["data"] = c.data;
    StatusOr<TrialConfig> trial = TrialConfigFromJson(config);
    ASSERT_FALSE(trial.ok()) << c.expected;
    EXPECT_NE(trial.status().message().find(c.expected), std::string::npos) << trial.status().message();
  }
}

TEST(ConfigFile, NamesFileLineAndColumnOfABadKey) {
  std::string path = testing::TempDir() + "/bad_trial.yaml";
  std::ofstream(path) << "data:\n  seq_len: 64\nmodel:\n  layers: 2\n  d_modle: 32\ntrain:\n  steps: 5\n";
  StatusOr<ConfigDocument> document = ReadConfigDocument(path);
  ASSERT_TRUE(document.ok()) << document.status().message();
  StatusOr<TrialConfig> trial = TrialConfigFromJson(
      document->json, [&](const std::string& key) { return document->Locate(key); });
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find(path + ":5:3: model.d_modle: unknown key (did you mean 'd_model'?)"),
            std::string::npos)
      << trial.status().message();
}

TEST(ConfigFile, RefusesAKeyWrittenTwiceAtTheSecondOne) {
  std::string path = testing::TempDir() + "/twice.yaml";
  std::ofstream(path) << "data:\n  seq_len: 64\ntrain:\n  steps: 5\n  steps: 50\n";
  StatusOr<ConfigDocument> document = ReadConfigDocument(path);
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().message(), path + ":5:3: duplicate key 'steps' (first at " + path + ":4:3)");
}

TEST(ConfigFile, ReportsYamlSyntaxErrorsWithTheirPosition) {
  std::string path = testing::TempDir() + "/broken.yaml";
  std::ofstream(path) << "data:\n  seq_len: [64\nmodel: {}\n";
  StatusOr<ConfigDocument> document = ReadConfigDocument(path);
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(document.status().message().find(path + ":"), std::string::npos) << document.status().message();
}

}  // namespace
}  // namespace rung

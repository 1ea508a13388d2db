// Hugging Face model folders imported into rung's model compute what the Hugging Face architecture
// computes: every architecture and rope_scaling type against an independent plain-PyTorch forward
// (tests/hf/hf_reference.py, Debian's python3-torch), within 1e-4 on every logit; the export writes a
// folder that imports to the same logits and that the independent forward reads to the same logits;
// bad folders are refused naming the file and what is wrong.
#include "core/hf/hf_import.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/hf/hf_export.h"
#include "core/hf/hf_model_options.h"
#include "core/model/length_extension.h"
#include "core/model/attention.h"
#include "core/train/checkpoint_io.h"
#include "core/train/window_loss.h"
#include "tests/core/hf/python_reference_fixture.h"

namespace rung::hf {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

class HfImportTest : public PythonReferenceTest {
 protected:
  // Runs hf_reference.py with `arguments`; fails the test where it fails.
  void RunReference(const std::string& arguments) { RunPython("hf_reference.py", arguments); }

  std::string MakeModel(const std::string& name, const std::string& arguments) {
    const std::string dir = (folder_ / name).string();
    RunReference("make --out " + dir + " " + arguments);
    return dir;
  }

  static std::vector<int64_t> Tokens(int64_t count, int64_t vocab, uint32_t seed = 7) {
    std::mt19937 generator(seed);
    std::vector<int64_t> tokens(count);
    for (auto& token : tokens) token = static_cast<int64_t>(generator() % static_cast<uint32_t>(vocab));
    return tokens;
  }

  // The reference's logits [T, vocab] and mean loss for `tokens`.
  nlohmann::json ReferenceForward(const std::string& model, const std::vector<int64_t>& tokens, bool bos = false) {
    std::string list;
    for (int64_t token : tokens) list += (list.empty() ? "" : ",") + std::to_string(token);
    const std::string out = (folder_ / "reference.json").string();
    RunReference("forward --model " + model + " --tokens " + list + " --out " + out + (bos ? " --bos" : ""));
    std::string text;
    EXPECT_TRUE(ReadFileBytes(out, "reference", &text).ok());
    return nlohmann::json::parse(text);
  }

  // rung's logits of the imported model, with the folder's rope_scaling applied for T tokens.
  // (A sliding window narrower than the tokens masks as transformers' does: SlidingWindowStarts.)
  static torch::Tensor RungLogits(ImportedModel& imported, const std::vector<int64_t>& tokens) {
    const int64_t time = static_cast<int64_t>(tokens.size());
    imported.model->positional()->set_length_extension(ConfiguredExtension(imported.hf, time));
    const torch::Tensor starts = imported.hf.sliding_window && *imported.hf.sliding_window < time
                                     ? SlidingWindowStarts(1, time, *imported.hf.sliding_window, torch::kCPU)
                                     : torch::Tensor();
    torch::NoGradGuard no_grad;
    return imported.model->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0), starts).squeeze(0);
  }

  // Imports `model` and compares every logit with the reference's.
  void ExpectSameLogits(const std::string& model, int64_t time) {
    StatusOr<ImportedModel> imported = ImportHfModel(model);
    ASSERT_TRUE(imported.ok()) << imported.status().message();
    const std::vector<int64_t> tokens = Tokens(time, imported->config.vocab_size);
    const nlohmann::json reference = ReferenceForward(model, tokens);
    const torch::Tensor expected = torch::tensor(FlattenLogits(reference["logits"])).view({time, -1});
    const torch::Tensor logits = RungLogits(*imported, tokens);
    ASSERT_EQ(logits.sizes(), expected.sizes());
    const double difference = (logits - expected).abs().max().item<double>();
    EXPECT_LT(difference, 1e-4) << model << ": the largest logit difference";
    // Not a vacuous agreement: the logits differ between positions and are not tiny.
    EXPECT_GT((expected[time - 1] - expected[0]).abs().max().item<double>(), 1e-2);
  }

  static std::vector<float> FlattenLogits(const nlohmann::json& rows) {
    std::vector<float> flat;
    for (const auto& row : rows) {
      for (const auto& value : row) flat.push_back(value.get<float>());
    }
    return flat;
  }

};

TEST_F(HfImportTest, EveryArchitectureComputesTheReferenceLogitsFromBf16Weights) {
  ExpectSameLogits(MakeModel("llama", "--arch llama --seed 1"), 40);
  ExpectSameLogits(MakeModel("smollm", "--arch smollm --seed 2"), 40);
  ExpectSameLogits(MakeModel("mistral", "--arch mistral --seed 3"), 40);
  ExpectSameLogits(MakeModel("qwen2", "--arch qwen2 --seed 4"), 40);
  ExpectSameLogits(MakeModel("qwen3", "--arch qwen3 --seed 5"), 40);
}

// Mistral's sliding window of 8 keys over 24 tokens: the window's mask, and rung eval's windows under it.
TEST_F(HfImportTest, MistralsSlidingWindowMasksAsTheReferenceDoes) {
  const std::string model = MakeModel("mistral", "--arch mistral --sliding-window 8 --seed 14");
  ExpectSameLogits(model, 24);
  StatusOr<ImportedModel> imported = ImportHfModel(model);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const std::vector<int64_t> tokens = Tokens(25, imported->config.vocab_size);
  WindowLossOptions options;
  options.seq_len = 24;
  options.sliding_window = 8;
  const WindowLoss windowed = EvaluateWindows(imported->model, 25, [&](int64_t i) { return tokens[i]; }, nullptr, options);
  EXPECT_NEAR(windowed.mean_loss(), ReferenceForward(model, tokens)["mean_loss"].get<double>(), 1e-5);
  options.sliding_window = 0;
  const WindowLoss whole = EvaluateWindows(imported->model, 25, [&](int64_t i) { return tokens[i]; }, nullptr, options);
  EXPECT_GT(std::fabs(whole.mean_loss() - windowed.mean_loss()), 1e-4) << "the window changes what is attended";
}

// Phi-3 with a partial rotary factor of 0.75: 12 of 16 dimensions rotate, as p-RoPE.
TEST_F(HfImportTest, PhiThreesPartialRotationIsPRopeAndComputesTheReferenceLogits) {
  const std::string model =
      MakeModel("phi3", "--arch phi3 --hidden 64 --heads 4 --kv-heads 2 --partial-rotary-factor 0.75 --rope-theta 500 --seed 15");
  ExpectSameLogits(model, 32);
  StatusOr<ImportedModel> imported = ImportHfModel(model);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->config.position.variant, "prope");
  EXPECT_EQ(imported->config.position.fraction, 0.75);
  EXPECT_NEAR(imported->config.position.base, std::pow(500.0, 16.0 / 12.0), 1e-9);
  ExpectSameLogits(MakeModel("phi3_whole", "--arch phi3 --seed 16"), 24);
}

TEST_F(HfImportTest, Fp16Fp32AndShardedFoldersComputeTheReferenceLogits) {
  ExpectSameLogits(MakeModel("f16", "--arch llama --dtype f16 --seed 6"), 24);
  ExpectSameLogits(MakeModel("f32", "--arch qwen2 --dtype f32 --seed 7"), 24);
  ExpectSameLogits(MakeModel("sharded", "--arch qwen3 --shards 3 --seed 8"), 24);
}

// Each rope_scaling type as transformers computes it; head_dim 16 (8 pairs) so the ramps cut between pairs.
TEST_F(HfImportTest, EveryRopeScalingTypeComputesTheReferenceLogits) {
  const std::string shape = "--arch llama --hidden 64 --heads 4 --kv-heads 2 --max-pos 32 --rope-theta 500 ";
  ExpectSameLogits(MakeModel("linear", shape + "--rope-scaling '{\"rope_type\": \"linear\", \"factor\": 3.0}'"), 48);
  // dynamic: default at T <= max_position_embeddings, the rescaled base beyond.
  ExpectSameLogits(MakeModel("dynamic", shape + "--rope-scaling '{\"type\": \"dynamic\", \"factor\": 2.0}'"), 48);
  ExpectSameLogits(MakeModel("dynamic_short", shape + "--rope-scaling '{\"type\": \"dynamic\", \"factor\": 2.0}'"), 20);
  ExpectSameLogits(MakeModel("yarn", shape + "--rope-scaling '{\"rope_type\": \"yarn\", \"factor\": 4.0}'"), 48);
  ExpectSameLogits(MakeModel("yarn_original", shape + "--rope-scaling '{\"rope_type\": \"yarn\", \"factor\": 2.0, "
                                                      "\"original_max_position_embeddings\": 8, \"beta_fast\": 16, "
                                                      "\"mscale\": 1.0, \"mscale_all_dim\": 0.5, \"truncate\": false}'"),
                   48);
  ExpectSameLogits(MakeModel("llama3", shape + "--rope-scaling '{\"rope_type\": \"llama3\", \"factor\": 8.0, "
                                               "\"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0, "
                                               "\"original_max_position_embeddings\": 16}'"),
                   48);
}

TEST_F(HfImportTest, AWindowWithBosScoresItsTokensAsTheReferenceDoes) {
  const std::string model = MakeModel("llama", "--arch llama --seed 9");
  StatusOr<ImportedModel> imported = ImportHfModel(model);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const std::vector<int64_t> tokens = Tokens(32, imported->config.vocab_size);
  const nlohmann::json reference = ReferenceForward(model, tokens, /*bos=*/true);
  WindowLossOptions options;
  options.seq_len = 32;
  options.bos = 1;
  const WindowLoss loss = EvaluateWindows(imported->model, 32, [&](int64_t i) { return tokens[i]; }, nullptr, options);
  EXPECT_EQ(loss.windows, 1);
  EXPECT_EQ(loss.tokens_scored, 32);
  EXPECT_NEAR(loss.mean_loss(), reference["mean_loss"].get<double>(), 1e-5);
  // Without BOS the window of 32 predictions reads 33 tokens: none fits in 32.
  options.bos.reset();
  EXPECT_EQ(CountWindows(32, options), 0);
}

TEST_F(HfImportTest, SlidingWindowsScoreEveryTokenOnceAndConsecutiveOnesTheirOwn) {
  const std::string model = MakeModel("llama", "--arch llama --seed 10");
  StatusOr<ImportedModel> imported = ImportHfModel(model);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const std::vector<int64_t> tokens = Tokens(101, imported->config.vocab_size);
  auto token = [&](int64_t i) { return tokens[i]; };
  WindowLossOptions options;
  options.seq_len = 20;
  const WindowLoss consecutive = EvaluateWindows(imported->model, 101, token, nullptr, options);
  EXPECT_EQ(consecutive.windows, 5);  // tokens [0, 20], [20, 40], ..., [80, 100]
  EXPECT_EQ(consecutive.tokens_scored, 100);
  // The first window alone is the reference's loss over those 21 tokens.
  const nlohmann::json first = ReferenceForward(model, std::vector<int64_t>(tokens.begin(), tokens.begin() + 21));
  EXPECT_EQ(consecutive.position_count[0], 5);
  options.stride = 5;
  const WindowLoss sliding = EvaluateWindows(imported->model, 101, token, nullptr, options);
  EXPECT_EQ(sliding.windows, 17);  // starts 0, 5, ..., 80
  EXPECT_EQ(sliding.tokens_scored, 20 + 16 * 5);
  // A later window scores only its last 5 positions: position 0 is scored by the first window alone.
  EXPECT_EQ(sliding.position_count[0], 1);
  EXPECT_EQ(sliding.position_count[19], 17);
  options.stride = 0;
  options.max_windows = 1;
  const WindowLoss one = EvaluateWindows(imported->model, 101, token, nullptr, options);
  EXPECT_NEAR(one.mean_loss(), first["mean_loss"].get<double>(), 1e-5);
}

TEST_F(HfImportTest, AnExportedModelImportsToTheSameLogitsAndTheReferenceReadsIt) {
  for (const std::string kind : {"llama", "tied_qkv_bias", "qk_norm", "partial"}) {
    ModelConfig config;
    config.vocab_size = 61;
    config.layers = 2;
    config.d_model = 32;
    config.heads = 4;
    config.kv_heads = 2;
    config.head_dim = kind == "qk_norm" ? 12 : 0;
    config.mlp = "swiglu";
    config.mlp_hidden = 40;
    config.seq_len = 32;
    config.qkv_bias = kind == "tied_qkv_bias";
    config.tie_embeddings = kind == "tied_qkv_bias";
    config.qk_norm = kind == "qk_norm";
    config.position.base = 300;
    if (kind == "partial") {
      config.position.variant = "prope";
      config.position.fraction = 0.5;  // 2 of 4 pairs (head_dim 8) rotate
    }
    ResolveModelConfig(&config);
    torch::manual_seed(3);
    Transformer model(config);
    {
      torch::NoGradGuard no_grad;  // biases and norm gains away from their initial values
      for (auto& parameter : model->parameters()) parameter.add_(torch::randn_like(parameter) * 0.2);
    }
    const std::string out = (folder_ / kind).string();
    const Status exported = ExportHfModel(model, out);
    ASSERT_TRUE(exported.ok()) << kind << ": " << exported.message();
    StatusOr<ImportedModel> imported = ImportHfModel(out);
    ASSERT_TRUE(imported.ok()) << imported.status().message();
    const std::vector<int64_t> tokens = Tokens(24, config.vocab_size);
    torch::NoGradGuard no_grad;
    const torch::Tensor original = model->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0)).squeeze(0);
    const torch::Tensor again = RungLogits(*imported, tokens);
    EXPECT_LT((original - again).abs().max().item<double>(), 1e-5) << kind;
    const nlohmann::json reference = ReferenceForward(out, tokens);
    const torch::Tensor expected = torch::tensor(FlattenLogits(reference["logits"])).view({24, -1});
    EXPECT_LT((original - expected).abs().max().item<double>(), 1e-4) << kind << ": against the reference";
  }
}

// A checkpoint rung-train wrote (a real run) read alone, exported, imported again: the same logits at
// every stage, and `rung eval` (rung-model) gives the checkpoint and the exported folder the same loss.
TEST_F(HfImportTest, ATrainedCheckpointExportsAndEvaluatesToTheSameLoss) {
  const nlohmann::json trial = {
      {"seed", 1},
      {"data", {{"source", "builtin"}, {"seq_len", 32}}},
      {"model", {{"layers", 1}, {"d_model", 32}, {"heads", 2}, {"kv_heads", 1}, {"mlp", "swiglu"}, {"qk_norm", true}}},
      {"position", {{"variant", "rope"}, {"base", 500}}},
      {"train", {{"steps", 6}, {"batch_size", 4}, {"lr", 3e-3}, {"eval_every", 6}, {"eval_batches", 1}, {"log_every", 3},
                 {"diagnostics_sequences", 0}}},
      {"resources", {{"cpus", 1}}}};
  ASSERT_NO_FATAL_FAILURE(TrainCheckpoints(trial));
  const std::string checkpoints = Checkpoints();
  StatusOr<CheckpointModel> loaded = LoadCheckpointModel(checkpoints);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->step, 6);
  const std::string exported = (folder_ / "exported").string();
  ASSERT_TRUE(ExportHfModel(loaded->model, exported).ok());
  StatusOr<ImportedModel> imported = ImportHfModel(exported);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(HfArchitectureName(imported->hf.architecture), std::string("Qwen3ForCausalLM"));
  const std::vector<int64_t> tokens = Tokens(32, 256);
  torch::NoGradGuard no_grad;
  const torch::Tensor trained = loaded->model->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0)).squeeze(0);
  EXPECT_LT((trained - RungLogits(*imported, tokens)).abs().max().item<double>(), 1e-5);

  // The same tokens as a raw shard, evaluated through rung-model from each.
  const std::string shard = (folder_ / "tokens.bin").string();
  {
    std::ofstream out(shard, std::ios::binary);
    for (int64_t token : Tokens(200, 256, 11)) {
      const uint16_t id = static_cast<uint16_t>(token);
      out.write(reinterpret_cast<const char*>(&id), 2);
    }
  }
  auto eval_loss = [&](const std::string& model) {
    const std::string out = (folder_ / "eval.json").string();
    const std::string command = BinaryFolder() + "/rung-model eval --model " + model + " --tokens " + shard +
                                " --seq-len 32 --format json --threads 1 >" + out;
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    std::string text;
    EXPECT_TRUE(ReadFileBytes(out, "eval", &text).ok());
    const nlohmann::json result = nlohmann::json::parse(text);
    EXPECT_EQ(result["windows"], 6);
    return result["mean_loss"].get<double>();
  };
  const double from_checkpoint = eval_loss(checkpoints);
  EXPECT_NEAR(eval_loss(exported), from_checkpoint, 1e-6);
  EXPECT_TRUE(std::isfinite(from_checkpoint));
}

// train.init.checkpoint naming a folder: a trial model of the folder's options starts as the folder's
// model; one that differs is refused listing what to set.
TEST_F(HfImportTest, TrainInitFromAFolderCopiesItsWeightsIntoAModelOfItsOptions) {
  const std::string folder = MakeModel("qwen2", "--arch qwen2 --seed 13");
  StatusOr<ImportedModel> imported = ImportHfModel(folder);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ModelConfig config = imported->config;
  config.seq_len = 16;  // a trial's own length: not a model option
  Transformer trial_model(config);
  InitConfig init;
  init.checkpoint = folder;
  ASSERT_TRUE(InitializeFromCheckpoint(init, trial_model).ok());
  const std::vector<int64_t> tokens = Tokens(16, config.vocab_size);
  torch::NoGradGuard no_grad;
  const torch::Tensor logits = trial_model->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0)).squeeze(0);
  EXPECT_LT((logits - RungLogits(*imported, tokens)).abs().max().item<double>(), 1e-5);

  config.position.base = 500;
  config.norm_eps = 1e-5;
  Transformer other(config);
  const Status status = InitializeFromCheckpoint(init, other);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("is a Qwen2ForCausalLM this trial's model is not; set"));
  EXPECT_THAT(status.message(), HasSubstr("\n  position.base: 10000.0 (here 500.0)"));
  EXPECT_THAT(status.message(), HasSubstr("\n  model.norm_eps: 1e-06 (here 1e-05)"));

  // A partially rotated folder (Phi-3's 12 of 16 dimensions) needs the same share of rotated pairs.
  const std::string partial = MakeModel("phi3", "--arch phi3 --hidden 64 --heads 4 --partial-rotary-factor 0.75 --seed 17");
  StatusOr<ImportedModel> phi3 = ImportHfModel(partial);
  ASSERT_TRUE(phi3.ok()) << phi3.status().message();
  ModelConfig half = phi3->config;
  half.position.fraction = 0.5;
  Transformer half_rotated(half);
  init.checkpoint = partial;
  EXPECT_THAT(InitializeFromCheckpoint(init, half_rotated).message(), HasSubstr("\n  position.fraction: 0.75 (here 0.5)"));
}

// A positional variant changed at initialisation (AdaRoPE section 5): every architecture's RoPE model
// started as LeRoPE, AdaRoPE (per-group frequencies, exp tau, or a learned base) computes the folder's
// logits until it trains; the source is named as converted; a variant that does not start as RoPE is
// refused.
TEST_F(HfImportTest, ARopeFolderStartedAsAnotherVariantComputesTheFoldersLogits) {
  const std::vector<std::pair<std::string, std::string>> folders = {
      {"llama", "--arch llama --seed 21"}, {"smollm", "--arch smollm --seed 22"}, {"mistral", "--arch mistral --seed 23"},
      {"qwen2", "--arch qwen2 --seed 24"}, {"qwen3", "--arch qwen3 --seed 25"}};
  for (const auto& [name, arguments] : folders) {
    const std::string folder = MakeModel(name, arguments);
    StatusOr<ImportedModel> imported = ImportHfModel(folder);
    ASSERT_TRUE(imported.ok()) << imported.status().message();
    const std::vector<int64_t> tokens = Tokens(24, imported->config.vocab_size);
    const torch::Tensor expected = RungLogits(*imported, tokens);
    std::vector<ModelConfig> targets;
    ModelConfig lerope = imported->config;
    lerope.position.variant = "lerope";
    targets.push_back(lerope);
    ModelConfig adarope = imported->config;
    adarope.position.variant = "adarope";
    targets.push_back(adarope);
    adarope.position.adarope.tau_param = "exp";
    adarope.position.adarope.share_freq = "global";
    targets.push_back(adarope);
    adarope.position.adarope.learned_base = true;
    targets.push_back(adarope);
    for (ModelConfig config : targets) {
      config.seq_len = 24;
      ResolveModelConfig(&config);
      Transformer converted(config);
      InitConfig init;
      init.checkpoint = folder;
      std::string converted_from;
      const Status status = InitializeFromCheckpoint(init, converted, 0.1, &converted_from);
      ASSERT_TRUE(status.ok()) << name << " as " << config.position.variant << ": " << status.message();
      EXPECT_EQ(converted_from, "rope");
      torch::NoGradGuard no_grad;
      const torch::Tensor logits = converted->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0)).squeeze(0);
      EXPECT_LT((logits - expected).abs().max().item<double>(), 1e-4) << name << " as " << config.position.variant;
    }
    if (name != "llama") continue;
    ModelConfig fixed = imported->config;  // AdaScale's fixed log scales logits from the start
    fixed.position.variant = "adarope";
    fixed.position.adarope.fixed_log = true;
    fixed.seq_len = 24;
    Transformer refused(fixed);
    InitConfig init;
    init.checkpoint = folder;
    EXPECT_THAT(InitializeFromCheckpoint(init, refused).message(), HasSubstr("position.variant: \"rope\" (here \"adarope\")"));
  }
}

// A RoPE folder converted to AdaRoPE at a global schedule's start (train.init.adarope_start, factor
// train.init.adarope_scale, from the folder's original context) computes the folder's model under that
// extension at 4x its context: the head-wise extension study's training-free arms, on a pretrained model.
TEST_F(HfImportTest, ARopeFolderStartedAtAGlobalScheduleComputesTheFolderUnderThatExtension) {
  const std::string folder = MakeModel("llama_start", "--arch llama --hidden 64 --heads 4 --kv-heads 2 --max-pos 16 --seed 26");
  StatusOr<ImportedModel> imported = ImportHfModel(folder);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  const int64_t context = hf::OriginalContext(imported->hf);
  const std::vector<int64_t> tokens = Tokens(4 * context, imported->config.vocab_size);
  for (const char* schedule : {"pi", "ntk_by_parts", "yarn"}) {
    SCOPED_TRACE(schedule);
    LengthExtension extension{schedule, 4.0, static_cast<double>(context)};
    extension.yarn_c = 0.1;
    imported->model->positional()->set_length_extension(extension);
    torch::NoGradGuard no_grad;
    const torch::Tensor expected =
        imported->model->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0)).squeeze(0);
    ModelConfig config = imported->config;
    config.position.variant = "adarope";
    config.position.adarope.l_ref = static_cast<double>(context);
    config.seq_len = context;
    ResolveModelConfig(&config);
    Transformer converted(config);
    InitConfig init;
    init.checkpoint = folder;
    init.adarope_start = schedule;
    init.adarope_scale = 4.0;
    const Status status = InitializeFromCheckpoint(init, converted, 0.1);
    ASSERT_TRUE(status.ok()) << status.message();
    const torch::Tensor logits = converted->forward(torch::tensor(tokens, torch::kLong).unsqueeze(0)).squeeze(0);
    EXPECT_LT((logits - expected).abs().max().item<double>(), 1e-4);
  }
}

// A trial sets its own extension per evaluation: a folder whose rope_scaling changes the frequencies at
// every length would run as another model, so a trial refuses it (train.init, and the model block taken
// from it), naming rung eval; dynamic scaling (nothing within max_position_embeddings) is run.
TEST_F(HfImportTest, ATrialRefusesAFolderWhoseRopeScalingChangesEveryLength) {
  const std::string shape = "--arch llama --hidden 64 --heads 4 --kv-heads 2 --max-pos 32 ";
  const std::string llama3 = MakeModel("llama3", shape + "--rope-scaling '{\"rope_type\": \"llama3\", \"factor\": 8.0, "
                                                        "\"original_max_position_embeddings\": 16}'");
  StatusOr<ImportedModel> imported = ImportHfModel(llama3);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ModelConfig config = imported->config;
  config.seq_len = 16;
  Transformer model(config);
  InitConfig init;
  init.checkpoint = llama3;
  const Status status = InitializeFromCheckpoint(init, model);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("rope_scaling 'llama3'"));
  EXPECT_THAT(status.message(), HasSubstr("--extension as-configured"));
  EXPECT_EQ(HfFolderModelKeys(llama3, nlohmann::json()).status().code(), StatusCode::kFailedPrecondition);

  const std::string dynamic = MakeModel("dynamic", shape + "--rope-scaling '{\"type\": \"dynamic\", \"factor\": 2.0}'");
  StatusOr<ImportedModel> qwen_like = ImportHfModel(dynamic);
  ASSERT_TRUE(qwen_like.ok()) << qwen_like.status().message();
  ModelConfig plain = qwen_like->config;
  plain.seq_len = 16;
  Transformer runs(plain);
  init.checkpoint = dynamic;
  EXPECT_TRUE(InitializeFromCheckpoint(init, runs).ok());
  EXPECT_TRUE(HfFolderModelKeys(dynamic, nlohmann::json()).ok());
}

TEST_F(HfImportTest, WhatTheArchitecturesCannotExpressIsNotExported) {
  ModelConfig config;
  config.vocab_size = 61;
  config.seq_len = 32;
  config.mlp = "gelu";
  ResolveModelConfig(&config);
  Transformer gelu(config);
  Status status = ExportHfModel(gelu, (folder_ / "gelu").string());
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("model.mlp gelu"));
  config.mlp = "swiglu";
  config.position.variant = "lerope";
  EXPECT_THAT(CheckExportable(config).message(), HasSubstr("position.variant lerope"));
  config.position.variant = "prope";
  config.qk_norm = true;
  EXPECT_THAT(CheckExportable(config).message(), HasSubstr("p-RoPE with QK-norm"));
  config.qk_norm = false;
  EXPECT_FALSE(fs::exists(folder_ / "gelu"));
  // An existing non-empty folder is not written into.
  config.position.variant = "rope";
  Transformer rope(config);
  fs::create_directories(folder_ / "full");
  std::ofstream(folder_ / "full" / "keep") << "x";
  EXPECT_EQ(ExportHfModel(rope, (folder_ / "full").string()).code(), StatusCode::kInvalidArgument);
}

TEST_F(HfImportTest, AFolderWhoseTensorsDisagreeWithItsConfigIsRefusedNamingFileAndTensor) {
  const std::string model = MakeModel("llama", "--arch llama --seed 11");
  std::string text;
  ASSERT_TRUE(ReadFileBytes(model + "/config.json", "config", &text).ok());
  nlohmann::json config = nlohmann::json::parse(text);
  config["intermediate_size"] = 50;
  std::ofstream(model + "/config.json") << config.dump();
  StatusOr<ImportedModel> imported = ImportHfModel(model);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kDataLoss);
  EXPECT_THAT(imported.status().message(), HasSubstr("model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight' "
                                                     "has shape [48, 32], "));
  EXPECT_THAT(imported.status().message(), HasSubstr("implies [50, 32]"));

  config["intermediate_size"] = 48;
  config["tie_word_embeddings"] = false;  // smollm-style folders have no lm_head
  const std::string tied = MakeModel("smollm", "--arch smollm --seed 12");
  std::ofstream(tied + "/config.json") << config.dump();
  imported = ImportHfModel(tied);
  ASSERT_FALSE(imported.ok());
  EXPECT_THAT(imported.status().message(), HasSubstr("no tensor 'lm_head.weight'"));

  config["tie_word_embeddings"] = true;
  config["attention_bias"] = true;
  std::ofstream(tied + "/config.json") << config.dump();
  imported = ImportHfModel(tied);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(imported.status().message(), HasSubstr("o_proj bias"));
}

}  // namespace
}  // namespace rung::hf

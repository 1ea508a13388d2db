// config.json of the architectures rung imports, as the published models ship it (SmolLM2-135M,
// Llama-3.1-8B, Mistral-7B-v0.1, Qwen2.5-0.5B, Qwen3-0.6B), and the mistakes it refuses by key.
#include "core/hf/hf_model_config.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace rung::hf {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSmolLM2 = R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu", "hidden_size": 576,
  "initializer_range": 0.041666666666666664, "intermediate_size": 1536, "is_llama_config": true,
  "max_position_embeddings": 8192, "model_type": "llama", "num_attention_heads": 9, "num_hidden_layers": 30,
  "num_key_value_heads": 3, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_interleaved": false,
  "rope_scaling": null, "rope_theta": 100000, "tie_word_embeddings": true, "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1", "use_cache": true, "vocab_size": 49152})";

constexpr const char* kLlama31 = R"({"architectures": ["LlamaForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 128000, "eos_token_id": 128001, "hidden_act": "silu",
  "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336, "max_position_embeddings": 131072,
  "mlp_bias": false, "model_type": "llama", "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 8, "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": {"factor": 8.0,
  "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
  "rope_theta": 500000.0, "tie_word_embeddings": false, "torch_dtype": "bfloat16", "vocab_size": 128256})";

constexpr const char* kMistral = R"({"architectures": ["MistralForCausalLM"], "bos_token_id": 1, "eos_token_id": 2,
  "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02, "intermediate_size": 14336,
  "max_position_embeddings": 32768, "model_type": "mistral", "num_attention_heads": 32, "num_hidden_layers": 32,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "sliding_window": 4096,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true, "vocab_size": 32000})";

constexpr const char* kQwen25 = R"({"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896,
  "initializer_range": 0.02, "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
  "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})";

constexpr const char* kQwen3 = R"({"architectures": ["Qwen3ForCausalLM"], "attention_bias": false,
  "attention_dropout": 0.0, "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072, "max_position_embeddings": 40960,
  "max_window_layers": 28, "model_type": "qwen3", "num_attention_heads": 16, "num_hidden_layers": 28,
  "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000,
  "sliding_window": null, "tie_word_embeddings": true, "torch_dtype": "bfloat16", "use_cache": true,
  "use_sliding_window": false, "vocab_size": 151936})";

HfModelConfig Parse(const char* text) {
  StatusOr<HfModelConfig> config = ParseHfModelConfig(text, "m/config.json");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return config.ok() ? *config : HfModelConfig();
}

std::string Refused(const std::string& text) {
  StatusOr<HfModelConfig> config = ParseHfModelConfig(text, "m/config.json");
  EXPECT_FALSE(config.ok()) << text;
  return config.ok() ? "" : config.status().message();
}

TEST(HfModelConfig, SmolLM2IsALlamaWithATiedHeadAndGroupedQueries) {
  const HfModelConfig config = Parse(kSmolLM2);
  EXPECT_EQ(config.architecture, HfArchitecture::kLlama);
  EXPECT_EQ(config.hidden_size, 576);
  EXPECT_EQ(config.num_attention_heads, 9);
  EXPECT_EQ(config.num_key_value_heads, 3);
  EXPECT_EQ(config.head_dim, 64);
  EXPECT_EQ(config.RotaryDims(), 64);
  EXPECT_TRUE(config.tie_word_embeddings);
  EXPECT_DOUBLE_EQ(config.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(config.rope_theta, 1e5);
  EXPECT_EQ(config.rope_scaling.type, "default");
  EXPECT_EQ(config.bos_token_id, 0);
  EXPECT_EQ(config.eos_token_ids, (std::vector<int64_t>{0}));
  EXPECT_FALSE(config.qkv_bias || config.mlp_bias || config.qk_norm || config.sliding_window);
}

TEST(HfModelConfig, Llama31CarriesItsLlama3RopeScaling) {
  const HfModelConfig config = Parse(kLlama31);
  EXPECT_EQ(config.rope_scaling.type, "llama3");
  EXPECT_DOUBLE_EQ(config.rope_scaling.factor, 8.0);
  EXPECT_DOUBLE_EQ(config.rope_scaling.low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(config.rope_scaling.high_freq_factor, 4.0);
  EXPECT_EQ(config.rope_scaling.original_max_position_embeddings, 8192);
  EXPECT_EQ(config.head_dim, 128);
  EXPECT_FALSE(config.tie_word_embeddings);
}

TEST(HfModelConfig, MistralSlidesItsWindowAndQwenOnlyWhenAsked) {
  EXPECT_EQ(Parse(kMistral).sliding_window, 4096);
  const HfModelConfig qwen2 = Parse(kQwen25);
  EXPECT_FALSE(qwen2.sliding_window);
  EXPECT_TRUE(qwen2.qkv_bias);
  EXPECT_FALSE(qwen2.output_bias);
  EXPECT_EQ(qwen2.head_dim, 64);
}

TEST(HfModelConfig, Qwen3HasAnExplicitHeadDimAndPerHeadQKNorm) {
  const HfModelConfig config = Parse(kQwen3);
  EXPECT_EQ(config.architecture, HfArchitecture::kQwen3);
  EXPECT_EQ(config.head_dim, 128);  // not 1024 / 16 = 64
  EXPECT_TRUE(config.qk_norm);
  EXPECT_FALSE(config.qkv_bias);
  EXPECT_FALSE(config.sliding_window);
}

TEST(HfModelConfig, KeysLeftOutTakeTheArchitecturesClassDefaults) {
  const HfModelConfig mistral = Parse(R"({"architectures": ["MistralForCausalLM"]})");
  EXPECT_EQ(mistral.num_key_value_heads, 8);
  EXPECT_EQ(mistral.intermediate_size, 14336);
  EXPECT_EQ(mistral.sliding_window, 4096);
  const HfModelConfig llama = Parse(R"({"architectures": ["LlamaForCausalLM"], "num_attention_heads": 8})");
  EXPECT_EQ(llama.num_key_value_heads, 8);
  EXPECT_EQ(llama.head_dim, 512);
  EXPECT_EQ(Parse(R"({"architectures": ["Qwen3ForCausalLM"]})").head_dim, 128);
}

TEST(HfModelConfig, RopeScalingTypesReadTheirParameters) {
  const HfModelConfig yarn = Parse(R"({"architectures": ["Qwen2ForCausalLM"], "rope_scaling": {"type": "yarn",
    "factor": 4.0, "original_max_position_embeddings": 32768}})");
  EXPECT_EQ(yarn.rope_scaling.type, "yarn");
  EXPECT_DOUBLE_EQ(yarn.rope_scaling.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(yarn.rope_scaling.beta_slow, 1.0);
  EXPECT_FALSE(yarn.rope_scaling.attention_factor);
  EXPECT_EQ(Parse(R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "linear", "factor": 2}})")
                .rope_scaling.type,
            "linear");
  EXPECT_EQ(Parse(R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"type": "dynamic", "factor": 2}})")
                .rope_scaling.type,
            "dynamic");
}

// Phi-4-mini's config.json (Phi3ForCausalLM): a partial rotary factor, no sliding window, and ids that
// are null where the file says null (not the class defaults).
TEST(HfModelConfig, PhiThreeReadsItsPartialRotaryFactorAndNullIds) {
  StatusOr<HfModelConfig> config = ParseHfModelConfig(
      R"({"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 24,
          "num_key_value_heads": 8, "intermediate_size": 8192, "num_hidden_layers": 32, "vocab_size": 200064,
          "partial_rotary_factor": 0.75, "rope_theta": 10000.0, "sliding_window": 262144, "bos_token_id": 199999,
          "eos_token_id": null, "tie_word_embeddings": true, "max_position_embeddings": 131072})",
      "m/config.json");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->architecture, HfArchitecture::kPhi3);
  EXPECT_EQ(config->head_dim, 128);
  EXPECT_EQ(config->RotaryDims(), 96);
  EXPECT_EQ(config->sliding_window, 262144);
  EXPECT_EQ(config->bos_token_id, 199999);
  EXPECT_TRUE(config->eos_token_ids.empty());
  EXPECT_TRUE(config->tie_word_embeddings);
}

TEST(HfModelConfig, MistakesAreRefusedNamingTheFileAndKey) {
  EXPECT_THAT(Refused(R"({"architectures": ["GemmaForCausalLM"]})"),
              HasSubstr("m/config.json: key 'architectures': 'GemmaForCausalLM' is not supported (LlamaForCausalLM, "
                        "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, Phi3ForCausalLM)"));
  EXPECT_THAT(Refused(R"({"model_type": "llama"})"), HasSubstr("key 'architectures': must name one architecture"));
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "longrope", "factor": 2}})"),
              HasSubstr("rope_type 'longrope' is not supported (none, default, linear, dynamic, yarn, llama3)"));
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "linear"}})"),
              HasSubstr("key 'factor': missing"));
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "rope_scaling": {"rope_type": "llama3", "factor": 8}})"),
              HasSubstr("original_max_position_embeddings"));
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": -4})"),
              HasSubstr("key 'hidden_size': -4 is not a positive integer"));
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "num_attention_heads": 6, "num_key_value_heads": 4})"),
              HasSubstr("does not divide"));
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "hidden_act": "gelu"})"), HasSubstr("'gelu' is not supported"));
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "eos_token_id": 40000})"),
              HasSubstr("outside the vocabulary"));
  EXPECT_THAT(Refused(R"({"architectures": )"), HasSubstr("m/config.json: byte"));
  // A number past a double's range (nlohmann's out_of_range, not a parse_error) is refused, not thrown.
  EXPECT_THAT(Refused(R"({"architectures": ["LlamaForCausalLM"], "rope_theta": 1e999})"),
              HasSubstr("m/config.json: not valid JSON: [json.exception.out_of_range.406] number overflow"));
}

TEST(HfModelConfig, AFolderWithoutConfigJsonIsNotFound) {
  StatusOr<HfModelConfig> config = ReadHfModelConfig(testing::TempDir() + "/no-such-model-folder");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(config.status().message(), HasSubstr("config.json"));
  EXPECT_THAT(config.status().message(), HasSubstr("a Hugging Face model folder holds config.json"));
}

}  // namespace
}  // namespace rung::hf

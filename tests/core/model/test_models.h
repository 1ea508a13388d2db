// tests/core/model/test_models.h: small model configs shared by the model tests.
#pragma once

#include <string>

#include "core/config/model_config.h"

namespace rung::testing_models {

inline ModelConfig Tiny(const std::string& variant, int64_t heads = 4, int64_t kv_heads = 0) {
  ModelConfig config;
  config.vocab_size = 64;
  config.layers = 2;
  config.d_model = 32;
  config.heads = heads;
  config.kv_heads = kv_heads;
  config.seq_len = 24;
  config.position.variant = variant;
  ResolveModelConfig(&config);
  return config;
}

}  // namespace rung::testing_models

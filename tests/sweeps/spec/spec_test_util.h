// tests/sweeps/spec/spec_test_util.h: expanding specs written inline in tests.
#pragma once

#include <string>

#include "sweeps/spec/expansion.h"

namespace rung::spec_testing {

// A minimal valid spec; tests append blocks to it.
inline std::string BaseSpec() {
  return "name: test\n"
         "data: {source: builtin, seq_len: 32}\n"
         "model: {layers: 1, d_model: 16, heads: 2}\n"
         "train: {steps: 10, batch_size: 4}\n";
}

inline StatusOr<ExpandedSweep> Expand(const std::string& text) { return ExpandSweepSpecText(text, "spec.yaml"); }

}  // namespace rung::spec_testing

// core/hf/hf_weights.h
//
// The weights of a Hugging Face model folder: `model.safetensors`, or the shards that
// `model.safetensors.index.json` names ({"metadata": {...}, "weight_map": {tensor: file}}), each mapped
// read-only (core/hf/safetensors.h). A tensor is found by its name in whichever file holds it.
//
// Checked when the folder is opened: the index is a JSON object whose weight_map maps names to plain
// file names in the folder (no directories: "../x" and "/x" are refused), every named file opens and
// parses, every tensor the index names is in the file it names, and no tensor is in two files.
// Errors name the file: "m/model.safetensors.index.json: tensor 'lm_head.weight' is mapped to
// 'model-00002-of-00002.safetensors', which does not hold it".
//
// Conversion: ToFloats copies a BF16, F16 or F32 tensor to floats (exactly: every value of those types
// is a float); other dtypes are refused naming the tensor and its dtype.
//
// Thread safety: an opened folder is immutable; any thread may read it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"
#include "core/hf/safetensors.h"

namespace rung::hf {

class HfWeights {
 public:
  // Errors: NOT_FOUND when the folder has neither file; INVALID_ARGUMENT / DATA_LOSS as above.
  static StatusOr<HfWeights> Open(const std::string& folder);

  // Every tensor's name, sorted.
  std::vector<std::string> Names() const;
  // The tensor and the file that holds it, or null.
  const SafetensorsTensor* Find(const std::string& name, const SafetensorsFile** file = nullptr) const;
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  std::vector<SafetensorsFile> files_;
  std::map<std::string, std::pair<size_t, size_t>> by_name_;  // name -> (file, tensor) indexes
};

// model.safetensors.index.json's weight_map (tensor name -> shard file name), checked as Open checks it
// (plain file names, at least one tensor); `source` names the file in messages.
StatusOr<std::map<std::string, std::string>> ParseWeightIndex(std::string_view text, const std::string& source);

// The tensor's values as floats, in its row-major order. INVALID_ARGUMENT for dtypes other than BF16,
// F16 and F32, naming the file and the tensor.
StatusOr<std::vector<float>> ToFloats(const SafetensorsFile& file, const SafetensorsTensor& tensor);

// One bf16 or IEEE half value (its bits) as a float.
float Bf16ToFloat(uint16_t bits);
float HalfToFloat(uint16_t bits);

}  // namespace rung::hf

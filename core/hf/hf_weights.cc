#include "core/hf/hf_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "core/common/file_bytes.h"
#include "core/hf/json_keys.h"

namespace rung::hf {
namespace {

using nlohmann::json;

bool Exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

// A shard's name as the index may give it: a plain file name in the folder.
bool PlainFileName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

float Bf16ToFloat(uint16_t bits) {
  const uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

float HalfToFloat(uint16_t bits) {
  const uint32_t sign = (bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  const uint32_t mantissa = bits & 0x3ffu;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // zero and subnormals
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  uint32_t word;
  std::memcpy(&word, &magnitude, sizeof(word));
  word |= sign;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

StatusOr<std::vector<float>> ToFloats(const SafetensorsFile& file, const SafetensorsTensor& tensor) {
  const unsigned char* bytes = file.Data(tensor);
  const size_t count = static_cast<size_t>(tensor.elements());
  std::vector<float> out(count);
  switch (tensor.dtype) {
    case SafetensorsDtype::kF32:
      std::memcpy(out.data(), bytes, count * sizeof(float));
      return out;
    case SafetensorsDtype::kBF16:
    case SafetensorsDtype::kF16:
      for (size_t i = 0; i < count; ++i) {
        const uint16_t bits = static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
        out[i] = tensor.dtype == SafetensorsDtype::kBF16 ? Bf16ToFloat(bits) : HalfToFloat(bits);
      }
      return out;
    default:
      return Status::InvalidArgument(file.path() + ": tensor '" + tensor.name + "' is " +
                                     SafetensorsDtypeName(tensor.dtype) + "; model weights are read as BF16, F16 or F32");
  }
}

StatusOr<std::map<std::string, std::string>> ParseWeightIndex(std::string_view text, const std::string& source) {
  RUNG_ASSIGN_OR_RETURN(const json index, ParseJson(text, source));
  if (!index.is_object() || !index.contains("weight_map") || !index.at("weight_map").is_object()) {
    return Status::InvalidArgument(source + ": no weight_map object (tensor name -> shard file)");
  }
  std::map<std::string, std::string> weight_map;
  for (const auto& [name, file] : index.at("weight_map").items()) {
    if (!file.is_string() || !PlainFileName(file.get<std::string>())) {
      return Status::InvalidArgument(source + ": tensor '" + name + "' is mapped to " + file.dump() +
                                     ", not a file name in the model's folder");
    }
    weight_map[name] = file.get<std::string>();
  }
  if (weight_map.empty()) return Status::InvalidArgument(source + ": the weight_map names no tensor");
  return weight_map;
}

StatusOr<HfWeights> HfWeights::Open(const std::string& folder) {
  HfWeights weights;
  const std::string single = folder + "/model.safetensors";
  const std::string index_path = folder + "/model.safetensors.index.json";
  std::map<std::string, std::string> weight_map;
  std::vector<std::string> names;
  if (Exists(index_path)) {
    std::string text;
    RUNG_RETURN_IF_ERROR(ReadFileBytes(index_path, "weight index", &text));
    RUNG_ASSIGN_OR_RETURN(weight_map, ParseWeightIndex(text, index_path));
    for (const auto& [name, file] : weight_map) {
      if (std::find(names.begin(), names.end(), file) == names.end()) names.push_back(file);
    }
  } else if (Exists(single)) {
    names.push_back("model.safetensors");
  } else {
    return Status::NotFound(folder + ": neither model.safetensors nor model.safetensors.index.json (a Hugging Face "
                            "model folder holds its weights in one of them)");
  }
  for (const std::string& name : names) {
    const std::string path = folder + "/" + name;
    if (!Exists(path)) {
      return Status::InvalidArgument((weight_map.empty() ? path : index_path) + ": names shard '" + name +
                                     "', which is not in the folder");
    }
    RUNG_ASSIGN_OR_RETURN(SafetensorsFile file, SafetensorsFile::Open(path));
    weights.files_.push_back(std::move(file));
  }
  for (size_t index = 0; index < weights.files_.size(); ++index) {
    const std::vector<SafetensorsTensor>& tensors = weights.files_[index].tensors();
    for (size_t t = 0; t < tensors.size(); ++t) {
      const SafetensorsTensor& tensor = tensors[t];
      const auto [it, added] = weights.by_name_.emplace(tensor.name, std::make_pair(index, t));
      if (!added) {
        return Status::InvalidArgument(weights.files_[index].path() + ": tensor '" + tensor.name + "' is also in " +
                                       weights.files_[it->second.first].path());
      }
    }
  }
  for (const auto& [name, file] : weight_map) {
    const auto it = weights.by_name_.find(name);
    if (it == weights.by_name_.end() || weights.files_[it->second.first].path() != folder + "/" + file) {
      return Status::InvalidArgument(index_path + ": tensor '" + name + "' is mapped to '" + file +
                                     "', which does not hold it");
    }
  }
  return weights;
}

std::vector<std::string> HfWeights::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, where] : by_name_) names.push_back(name);
  return names;
}

const SafetensorsTensor* HfWeights::Find(const std::string& name, const SafetensorsFile** file) const {
  const auto it = by_name_.find(name);
  if (it == by_name_.end()) return nullptr;
  if (file != nullptr) *file = &files_[it->second.first];
  return &files_[it->second.first].tensors()[it->second.second];
}

}  // namespace rung::hf

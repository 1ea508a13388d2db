#include "sweeps/spec/json_path.h"

#include <functional>

namespace rung {

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string::npos) dot = path.size();
    parts.push_back(path.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

const nlohmann::json* FindPath(const nlohmann::json& root, const std::string& path) {
  const nlohmann::json* node = &root;
  for (const std::string& part : SplitPath(path)) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(part);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

namespace {
void Merge(nlohmann::json* target, const std::string& path, const nlohmann::json& value,
           const std::function<void(const std::string&)>& on_leaf) {
  if (value.is_object() && (target->is_object() || target->is_null())) {
    if (target->is_null()) *target = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it) {
      Merge(&(*target)[it.key()], path + "." + it.key(), it.value(), on_leaf);
    }
    return;
  }
  *target = value;
  if (on_leaf) on_leaf(path);
}
}  // namespace

void MergeAtPath(nlohmann::json* root, const std::string& path, const nlohmann::json& value,
                 const std::function<void(const std::string&)>& on_leaf) {
  nlohmann::json* node = root;
  for (const std::string& part : SplitPath(path)) {
    if (!node->is_object()) *node = nlohmann::json::object();
    node = &(*node)[part];
  }
  Merge(node, path, value, on_leaf);
}

void ErasePath(nlohmann::json* root, const std::string& path) {
  std::vector<std::string> parts = SplitPath(path);
  nlohmann::json* node = root;
  for (size_t index = 0; index + 1 < parts.size(); ++index) {
    if (!node->is_object() || !node->contains(parts[index])) return;
    node = &(*node)[parts[index]];
  }
  if (node->is_object()) node->erase(parts.back());
}

bool MatchesBaseline(const nlohmann::json& config, const nlohmann::json& selector) {
  if (!selector.is_object() || selector.empty()) return false;
  for (auto key = selector.begin(); key != selector.end(); ++key) {
    const nlohmann::json* value = FindPath(config, key.key());
    if (value == nullptr || *value != key.value()) return false;
  }
  return true;
}

bool ParseKeyValue(const std::string& condition, std::string* key, nlohmann::json* value) {
  const size_t equals = condition.find('=');
  if (equals == std::string::npos || equals == 0) return false;
  *key = condition.substr(0, equals);
  const std::string text = condition.substr(equals + 1);
  *value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value->is_discarded()) *value = text;
  return true;
}

}  // namespace rung

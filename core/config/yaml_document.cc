#include "core/config/yaml_document.h"

#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

namespace rung {
namespace {

std::string Where(const std::string& file, const YAML::Mark& mark) {
  return file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

nlohmann::json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted: always a string
  if (text == "~" || text == "null" || text.empty()) return nullptr;
  if (text == "true" || text == "True") return true;
  if (text == "false" || text == "False") return false;
  try {
    size_t used = 0;
    long long integer = std::stoll(text, &used);
    if (used == text.size()) return integer;
  } catch (...) {
  }
  try {
    size_t used = 0;
    double real = std::stod(text, &used);
    if (used == text.size()) return real;
  } catch (...) {
  }
  return text;
}

nlohmann::json Convert(const YAML::Node& node, const std::string& file, const std::string& path,
                       std::map<std::string, std::string>* locations) {
  (*locations)[path] = Where(file, node.Mark());
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& entry : node) {
        std::string key = entry.first.as<std::string>();
        std::string child = path.empty() ? key : path + "." + key;
        (*locations)[child] = Where(file, entry.first.Mark());
        object[key] = Convert(entry.second, file, child, locations);
        (*locations)[child] = Where(file, entry.first.Mark());
      }
      return object;
    }
    case YAML::NodeType::Sequence: {
      nlohmann::json array = nlohmann::json::array();
      for (size_t index = 0; index < node.size(); ++index) {
        array.push_back(Convert(node[index], file, path + "[" + std::to_string(index) + "]", locations));
      }
      return array;
    }
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    default:
      return nullptr;
  }
}

}  // namespace

std::string ConfigDocument::Locate(const std::string& path) const {
  std::string current = path;
  while (true) {
    auto it = locations.find(current);
    if (it != locations.end()) return it->second;
    size_t dot = current.rfind('.');
    if (dot == std::string::npos) break;
    current = current.substr(0, dot);
  }
  auto root = locations.find("");
  return root == locations.end() ? std::string() : root->second;
}

StatusOr<ConfigDocument> ParseConfigDocument(const std::string& text, const std::string& name) {
  ConfigDocument document;
  try {
    YAML::Node root = YAML::Load(text);
    document.json = Convert(root, name, "", &document.locations);
  } catch (const YAML::Exception& error) {
    return Status::InvalidArgument(Where(name, error.mark) + ": " + error.msg);
  }
  if (!document.json.is_object()) {
    return Status::InvalidArgument(name + ":1:1: expected a mapping of blocks (data, model, ...)");
  }
  return document;
}

StatusOr<ConfigDocument> ReadConfigDocument(const std::string& path) {
  std::ifstream stream(path);
  if (!stream) return Status::NotFound("cannot open " + path);
  std::stringstream text;
  text << stream.rdbuf();
  return ParseConfigDocument(text.str(), path);
}

}  // namespace rung

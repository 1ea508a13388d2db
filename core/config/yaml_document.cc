#include "core/config/yaml_document.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "core/common/utf8.h"
#include "core/config/yaml_preflight.h"

namespace rung {
namespace {

// Keys and strings must be UTF-8 (as JSON's are): what follows (messages, identities, the store)
// relies on it. Checked after the loader decoded escapes, so "\uDC00" is refused too.
// `what`: "key" or "value", for the message.
void RequireUtf8(const YAML::Node& node, const std::string& text, const char* what) {
  if (const size_t valid = ValidUtf8Prefix(text); valid != text.size()) {
    throw YAML::ParserException(node.Mark(), "not UTF-8 text (byte " + std::to_string(valid + 1) + " of this " +
                                                 what + ")");
  }
}

nlohmann::json ScalarToJson(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  RequireUtf8(node, text, "value");
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
  // A real as strtod reads it. Only finite values are numbers: "inf" and "nan" stay strings (YAML's
  // core schema spells them .inf and .nan, which rung does not take), and digits beyond double's range
  // (either way: 1e400, 1e-400) are refused here, where the document says where they are.
  errno = 0;
  char* end = nullptr;
  const double real = std::strtod(text.c_str(), &end);
  if (end == text.c_str() + text.size()) {
    if (errno == ERANGE) {
      throw YAML::ParserException(node.Mark(), "the number " + text +
                                                   " is outside the range of a double (magnitude 2.2e-308 .. 1.8e308)");
    }
    if (std::isfinite(real)) return real;
  }
  return text;
}

nlohmann::json Convert(const YAML::Node& node, const std::string& file, const std::string& path,
                       std::map<std::string, std::string>* locations) {
  (*locations)[path] = YamlMarkLocation(file, node.Mark());
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& entry : node) {
        std::string key = entry.first.as<std::string>();
        RequireUtf8(entry.first, key, "key");
        std::string child = path.empty() ? key : path + "." + key;
        (*locations)[child] = YamlMarkLocation(file, entry.first.Mark());
        object[key] = Convert(entry.second, file, child, locations);
        (*locations)[child] = YamlMarkLocation(file, entry.first.Mark());
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
  // Bounds what the loader and Convert() below can be made to build (size, depth, expanded aliases)
  // and refuses duplicate keys, which the loader would resolve silently.
  RUNG_RETURN_IF_ERROR(PreflightYamlDocument(text, name));
  ConfigDocument document;
  try {
    YAML::Node root = YAML::Load(text);
    document.json = Convert(root, name, "", &document.locations);
  } catch (const YAML::Exception& error) {
    return Status::InvalidArgument(YamlMarkLocation(name, error.mark) + ": " + error.msg);
  }
  if (!document.json.is_object()) {
    return Status::InvalidArgument(name + ":1:1: expected a mapping of blocks (data, model, ...)");
  }
  return document;
}

StatusOr<std::string> ReadConfigText(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) return Status::NotFound("cannot open " + path);
  // At most one byte past the limit: enough to refuse a bigger file (or pipe) without reading it all.
  std::string text(kMaxConfigDocumentBytes + 1, '\0');
  stream.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(stream.gcount()));
  if (text.size() > kMaxConfigDocumentBytes) return PreflightYamlDocument(text, path);  // the size refusal
  return text;
}

StatusOr<ConfigDocument> ReadConfigDocument(const std::string& path) {
  RUNG_ASSIGN_OR_RETURN(const std::string text, ReadConfigText(path));
  return ParseConfigDocument(text, path);
}

}  // namespace rung

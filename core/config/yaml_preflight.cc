#include "core/config/yaml_preflight.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "core/common/checked_arithmetic.h"

namespace rung {

std::string YamlMarkLocation(const std::string& name, int line, int column) {
  return name + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1);
}

std::string YamlMarkLocation(const std::string& name, const YAML::Mark& mark) {
  return YamlMarkLocation(name, mark.line, mark.column);
}

namespace {

// Thrown from the event handler to stop the parse at the first problem.
struct Refusal {
  Status status;
};

// Follows the parser's events: the open mappings and sequences, the expanded size of every anchored
// node, and the keys of every open mapping.
class PreflightHandler final : public YAML::EventHandler {
 public:
  explicit PreflightHandler(const std::string& name) : name_(name) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnAnchor(const YAML::Mark&, const std::string& anchor_name) override { pending_anchor_name_ = anchor_name; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Key(mark, std::nullopt);
    Leaf(mark, anchor, std::nullopt);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    Key(mark, value);
    Leaf(mark, anchor, value);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const auto known = anchors_.find(anchor);
    const std::string alias = "*" + (known == anchors_.end() ? std::string("?") : known->second.name);
    if (known == anchors_.end() || !known->second.closed) {
      Refuse(mark, "alias " + alias + " is used inside the node it names (a cycle)");
    }
    Key(mark, known->second.scalar);
    Count(mark, known->second.nodes, alias);
    if (!stack_.empty()) stack_.back().nodes += known->second.nodes;
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*mapping=*/false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*mapping=*/true);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Anchor {
    std::string name;
    bool closed = false;
    int64_t nodes = 0;                  // expanded, once closed
    std::optional<std::string> scalar;  // a scalar's text (an alias used as a key)
  };
  struct Frame {
    bool mapping = false;
    YAML::anchor_t anchor = YAML::NullAnchor;
    int64_t nodes = 1;  // expanded nodes so far, itself included
    bool next_is_key = true;
    std::map<std::string, std::string> keys;  // key -> where it was written
  };

  [[noreturn]] void Refuse(const YAML::Mark& mark, const std::string& message) {
    throw Refusal{Status::InvalidArgument(YamlMarkLocation(name_, mark) + ": " + message)};
  }

  // Records the anchor a node starts with (its size is set when the node closes).
  void Name(YAML::anchor_t anchor) {
    if (anchor == YAML::NullAnchor) return;
    anchors_[anchor] = Anchor{pending_anchor_name_, false, 0, std::nullopt};
    pending_anchor_name_.clear();
  }

  // A node that is a mapping's key: refused when the mapping has it already. `text` is the key's
  // text when it is a scalar (keys that are not are refused by the loader).
  void Key(const YAML::Mark& mark, const std::optional<std::string>& text) {
    if (stack_.empty() || !stack_.back().mapping) return;
    Frame& mapping = stack_.back();
    const bool is_key = mapping.next_is_key;
    mapping.next_is_key = !mapping.next_is_key;
    if (!is_key || !text) return;
    auto [first, inserted] = mapping.keys.emplace(*text, YamlMarkLocation(name_, mark));
    if (!inserted) Refuse(mark, "duplicate key '" + *text + "' (first at " + first->second + ")");
  }

  // Adds `nodes` expanded nodes at `mark` (an alias: `alias` names it) to the document's count;
  // refused past the limit. Every frame's count is at most this one, so theirs cannot overflow.
  void Count(const YAML::Mark& mark, int64_t nodes, const std::string& alias = "") {
    const std::optional<int64_t> total = CheckedAdd(total_, nodes);
    if (!total || *total > kMaxConfigDocumentNodes) {
      Refuse(mark, (alias.empty() ? std::string("the document has")
                                  : "alias " + alias + " expands to " + std::to_string(nodes) +
                                        " nodes: the document would have") +
                       " more than " + std::to_string(kMaxConfigDocumentNodes) +
                       " nodes once its aliases are expanded (the fixed limit for a spec or trial config)");
    }
    total_ = *total;
  }

  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const std::optional<std::string>& scalar) {
    Name(anchor);
    if (anchor != YAML::NullAnchor) {
      Anchor& named = anchors_[anchor];
      named.closed = true;
      named.nodes = 1;
      named.scalar = scalar;
    }
    Count(mark, 1);
    if (!stack_.empty()) stack_.back().nodes += 1;
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool mapping) {
    Key(mark, std::nullopt);
    Name(anchor);
    Count(mark, 1);  // into its parent's count when it closes
    if (static_cast<int>(stack_.size()) >= kMaxConfigDocumentDepth) {
      Refuse(mark, "nested deeper than " + std::to_string(kMaxConfigDocumentDepth) +
                       " mappings and sequences (the fixed limit for a spec or trial config)");
    }
    Frame frame;
    frame.mapping = mapping;
    frame.anchor = anchor;
    stack_.push_back(std::move(frame));
  }

  void Close() {
    const Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (frame.anchor != YAML::NullAnchor) {
      Anchor& named = anchors_[frame.anchor];
      named.closed = true;
      named.nodes = frame.nodes;
    }
    if (!stack_.empty()) stack_.back().nodes += frame.nodes;
  }

  const std::string& name_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Anchor> anchors_;
  std::string pending_anchor_name_;
  int64_t total_ = 0;
};

}  // namespace

Status PreflightYamlDocument(const std::string& text, const std::string& name) {
  if (text.size() > kMaxConfigDocumentBytes) {
    return Status::InvalidArgument(name + ":1:1: the document is larger than the fixed limit of " +
                                   std::to_string(kMaxConfigDocumentBytes) +
                                   " bytes (1 MiB) for a spec or trial config");
  }
  std::istringstream stream(text);
  PreflightHandler handler(name);
  try {
    YAML::Parser parser(stream);
    parser.HandleNextDocument(handler);
  } catch (const Refusal& refusal) {
    return refusal.status;
  } catch (const YAML::Exception& error) {
    return Status::InvalidArgument(YamlMarkLocation(name, error.mark) + ": " + error.msg);
  }
  return Status::Ok();
}

}  // namespace rung

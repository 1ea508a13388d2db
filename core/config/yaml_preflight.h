// core/config/yaml_preflight.h
//
// Checks a YAML text (a sweep spec or a trial config) before it is loaded, so that no input of a
// few hundred bytes can make the loader use unbounded time, memory or stack. One event pass over
// the text (yaml-cpp's parser, no node tree), refusing with INVALID_ARGUMENT at file:line:col:
//   - a text over kMaxConfigDocumentBytes (checked before anything is parsed);
//   - nesting deeper than kMaxConfigDocumentDepth mappings and sequences (yaml-cpp 0.7 itself stops
//     at 2000 levels with "bad file"; this says what is wrong, long before);
//   - more than kMaxConfigDocumentNodes nodes once every alias is expanded ("billion laughs": aliases
//     of aliases): each anchored node's expanded size is computed once, when it closes, and an alias
//     adds that size, so the count is known before anything is built; refused at the alias;
//   - an alias of a node from inside that node (a cycle; loading it would recurse forever);
//   - a key that appears twice in one mapping: at the second occurrence (YAML says keys are unique;
//     the loader would silently keep one of them);
//   - a YAML syntax error, as the loader would report it.
// The limits are fixed: no legitimate spec or trial config comes near them.
//
// Example:
//   RUNG_RETURN_IF_ERROR(PreflightYamlDocument(text, "spec.yaml"));
//   YAML::Node root = YAML::Load(text);   // now bounded
//
// Thread safety: pure function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <yaml-cpp/mark.h>

#include "core/common/status.h"

namespace rung {

inline constexpr size_t kMaxConfigDocumentBytes = size_t{1} << 20;  // 1 MiB
inline constexpr int kMaxConfigDocumentDepth = 64;                  // nested mappings and sequences
inline constexpr int64_t kMaxConfigDocumentNodes = 1'000'000;       // after alias expansion

// OK, or INVALID_ARGUMENT "name:line:col: what is wrong" for the first problem above.
Status PreflightYamlDocument(const std::string& text, const std::string& name);

// "name:line:col" of a yaml-cpp mark's 0-based line and column.
std::string YamlMarkLocation(const std::string& name, int line, int column);
// The same for a mark of yaml-cpp (0-based line and column).
std::string YamlMarkLocation(const std::string& name, const YAML::Mark& mark);

}  // namespace rung

// What a YAML spec or trial config may not do before it is loaded (core/config/yaml_preflight.h),
// through ParseConfigDocument and ReadConfigDocument, which every front end uses.
#include "core/config/yaml_preflight.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/config/yaml_document.h"

namespace rung {
namespace {

// Nine levels of aliases, each nine times the last: 9^9 (387 million) scalars from 318 bytes.
std::string BillionLaughs() {
  std::string text = "name: laughs\na: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char level = 'b'; level <= 'i'; ++level) {
    const char previous = static_cast<char>(level - 1);
    text += std::string(1, level) + ": &" + level + " [";
    for (int copy = 0; copy < 9; ++copy) text += std::string(copy == 0 ? "" : ", ") + "*" + previous;
    text += "]\n";
  }
  return text;
}

std::string Nested(int levels) {
  return "name: deep\nx: " + std::string(static_cast<size_t>(levels), '[') +
         std::string(static_cast<size_t>(levels), ']') + "\n";
}

TEST(YamlPreflight, RefusesNestedAliasesAtTheAliasBeforeExpandingThem) {
  const auto start = std::chrono::steady_clock::now();
  StatusOr<ConfigDocument> document = ParseConfigDocument(BillionLaughs(), "spec.yaml");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), StatusCode::kInvalidArgument);
  // a to e add about 75,000 nodes and f's nine aliases of e 597,870 more; the first alias of f
  // (597,871 nodes) on line 8 passes the budget.
  EXPECT_EQ(document.status().message().rfind("spec.yaml:8:8: alias *f expands to 597871 nodes", 0), 0u)
      << document.status().message();
  EXPECT_NE(document.status().message().find("alias *f expands to"), std::string::npos) << document.status().message();
  EXPECT_NE(document.status().message().find("1000000 nodes"), std::string::npos) << document.status().message();
  EXPECT_LT(seconds, 5.0);
}

TEST(YamlPreflight, ExpandsAliasesWithinTheBudget) {
  StatusOr<ConfigDocument> document = ParseConfigDocument("a: &a [1, 2]\nb: [*a, *a]\n", "spec.yaml");
  ASSERT_TRUE(document.ok()) << document.status().message();
  EXPECT_EQ(document->json["b"], nlohmann::json::parse("[[1, 2], [1, 2]]"));
}

TEST(YamlPreflight, CountsEveryAliasOfASharedAnchorTowardsTheBudget) {
  // One anchor of 500,001 nodes used twice: each alias alone is within the budget, both are not.
  std::string text = "a: &a [";
  for (int i = 0; i < 500000; ++i) text += i == 0 ? "0" : ",0";
  text += "]\nb: *a\n";
  ASSERT_LT(text.size(), kMaxConfigDocumentBytes);
  StatusOr<ConfigDocument> document = ParseConfigDocument(text, "spec.yaml");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().message().rfind("spec.yaml:2:4: alias *a expands to 500001 nodes", 0), 0u)
      << document.status().message().substr(0, 300);
}

TEST(YamlPreflight, RefusesAnAliasUsedInsideTheNodeItNames) {
  StatusOr<ConfigDocument> document = ParseConfigDocument("a: &a [1, *a]\n", "spec.yaml");
  ASSERT_FALSE(document.ok());
  EXPECT_NE(document.status().message().find("spec.yaml:1:11: alias *a is used inside the node it names"),
            std::string::npos)
      << document.status().message();
}

TEST(YamlPreflight, AcceptsSixtyFourLevelsAndRefusesSixtyFive) {
  // The top-level mapping is the first level.
  EXPECT_TRUE(ParseConfigDocument(Nested(63), "spec.yaml").ok());
  StatusOr<ConfigDocument> document = ParseConfigDocument(Nested(64), "spec.yaml");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(
      document.status().message(),
      "spec.yaml:2:67: nested deeper than 64 mappings and sequences (the fixed limit for a spec or trial config)");
}

TEST(YamlPreflight, RefusesAHundredThousandLevelsWithoutExhaustingTheStack) {
  StatusOr<ConfigDocument> flow = ParseConfigDocument(Nested(100000), "spec.yaml");
  ASSERT_FALSE(flow.ok());
  EXPECT_NE(flow.status().message().find("nested deeper than 64"), std::string::npos) << flow.status().message();
  std::string block = "x:\n  ";
  for (int level = 0; level < 100000; ++level) block += "- ";
  block += "v\n";
  StatusOr<ConfigDocument> document = ParseConfigDocument(block, "spec.yaml");
  ASSERT_FALSE(document.ok());
  EXPECT_NE(document.status().message().find("nested deeper than 64"), std::string::npos)
      << document.status().message();
}

TEST(YamlPreflight, RefusesADuplicateKeyAtItsSecondOccurrence) {
  StatusOr<ConfigDocument> document = ParseConfigDocument("a: 1\nb: {c: 1, d: 2}\na: 3\n", "spec.yaml");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().message(), "spec.yaml:3:1: duplicate key 'a' (first at spec.yaml:1:1)");
  StatusOr<ConfigDocument> nested = ParseConfigDocument("model: {layers: 1, layers: 2}\n", "spec.yaml");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().message(), "spec.yaml:1:20: duplicate key 'layers' (first at spec.yaml:1:9)");
  // The same key in two mappings, or as a value, is no duplicate.
  EXPECT_TRUE(ParseConfigDocument("a: {x: 1}\nb: {x: 1}\nc: [a, a]\nd: a\n", "spec.yaml").ok());
}

TEST(YamlPreflight, RefusesADocumentOverOneMebibyteBeforeParsingIt) {
  // Over the limit and not even YAML: the size is refused first.
  const std::string text = "[" + std::string(kMaxConfigDocumentBytes, ' ');
  StatusOr<ConfigDocument> document = ParseConfigDocument(text, "spec.yaml");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(
      document.status().message().rfind("spec.yaml:1:1: the document is larger than the fixed limit of 1048576", 0), 0u)
      << document.status().message();
  const std::string at_limit = "a: 1\n" + std::string(kMaxConfigDocumentBytes - 6, '#') + "\n";
  ASSERT_EQ(at_limit.size(), kMaxConfigDocumentBytes);
  EXPECT_TRUE(ParseConfigDocument(at_limit, "spec.yaml").ok());
}

TEST(YamlPreflight, ReadsNoMoreOfABigFileThanTheLimit) {
  const std::string path = testing::TempDir() + "/big_spec.yaml";
  {
    std::ofstream file(path);
    file << "a: 1\n";
    const std::string comment(1023, '#');
    for (int line = 0; line < 4096; ++line) file << comment << "\n";  // 4 MiB
  }
  StatusOr<ConfigDocument> document = ReadConfigDocument(path);
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(document.status().message().find(path + ":1:1: the document is larger than"), std::string::npos);
}

TEST(YamlPreflight, TextThatIsNotUtf8IsRefusedAtItsKeyOrValue) {
  for (const auto& [text, where] : std::vector<std::pair<std::string, std::string>>{
           {"name: ab\xff\n", "t.yaml:1:7"},           // a raw byte
           {"name: x\nk\xc3: 1\n", "t.yaml:2:1"}}) {  // a key cut in the middle of a character
    StatusOr<ConfigDocument> document = ParseConfigDocument(text, "t.yaml");
    ASSERT_FALSE(document.ok()) << text;
    EXPECT_EQ(document.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(document.status().message().find(where + ": not UTF-8 text"), std::string::npos)
        << document.status().message();
  }
  // Characters, and escapes the loader decodes into them, are text like any other.
  StatusOr<ConfigDocument> accented = ParseConfigDocument("name: \"caf\xc3\xa9 \\xff\"\n", "t.yaml");
  ASSERT_TRUE(accented.ok()) << accented.status().ToString();
  EXPECT_EQ(accented->json["name"], "caf\xc3\xa9 \xc3\xbf");
}

}  // namespace
}  // namespace rung

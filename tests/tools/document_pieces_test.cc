// rung-data's long documents in pieces (tools/rung-data/document_pieces.h) and --split-on's escapes
// (tools/rung-data/separator_escapes.h).
#include "tools/rung-data/document_pieces.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tools/rung-data/separator_escapes.h"

namespace rung::data_tool {
namespace {

std::string Joined(const std::vector<std::string_view>& pieces) {
  std::string text;
  for (std::string_view piece : pieces) text += piece;
  return text;
}

TEST(DocumentPiecesTest, CutsAfterTheLastNewlineThatFits) {
  const std::string text = "first line\nsecond line\nthird line that is long\nend";
  const std::vector<std::string_view> pieces = DocumentPieces(text, 25);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0], "first line\nsecond line\n");
  EXPECT_EQ(pieces[1], "third line that is long\n");
  EXPECT_EQ(pieces[2], "end");
}

TEST(DocumentPiecesTest, ALineLongerThanTheLimitIsCutWhereARunOfSpacesStarts) {
  const std::string text = "alpha beta  gamma\tdelta epsilon";
  const std::vector<std::string_view> pieces = DocumentPieces(text, 12);
  // Each word keeps the whitespace before it, as SentencePiece's pieces do.
  EXPECT_EQ(pieces, (std::vector<std::string_view>{"alpha beta", "  gamma", "\tdelta", " epsilon"}));
}

TEST(DocumentPiecesTest, TextWithoutSpacesIsCutBetweenUtf8Characters) {
  std::string text;
  for (int c = 0; c < 50; ++c) text += "\xE6\x97\xA5\xF0\x9F\x8E\x89";  // 3- and 4-byte characters
  const std::vector<std::string_view> pieces = DocumentPieces(text, 10);
  EXPECT_EQ(Joined(pieces), text);
  for (std::string_view piece : pieces) {
    EXPECT_LE(piece.size(), 10u);
    EXPECT_GT(piece.size(), 0u);
    EXPECT_NE(static_cast<unsigned char>(piece.front()) & 0xC0, 0x80) << "a piece starts inside a character";
  }
}

TEST(DocumentPiecesTest, ADocumentWithinTheLimitIsOnePieceItself) {
  const std::string text = "short\ntext";
  const std::vector<std::string_view> pieces = DocumentPieces(text, text.size());
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].data(), text.data());
  EXPECT_EQ(pieces[0].size(), text.size());
}

TEST(SeparatorEscapesTest, KnownEscapesBecomeTheirCharactersAndOthersAreRefused) {
  EXPECT_EQ(*UnescapeSeparator("\\f"), "\f");
  EXPECT_EQ(*UnescapeSeparator("a\\n\\t\\r\\\\b"), "a\n\t\r\\b");
  EXPECT_EQ(*UnescapeSeparator("plain ---"), "plain ---");
  StatusOr<std::string> unknown = UnescapeSeparator("ab\\x");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("'\\x' at byte offset 2 is not an escape"), std::string::npos)
      << unknown.status().ToString();
  StatusOr<std::string> lone = UnescapeSeparator("end\\");
  ASSERT_FALSE(lone.ok());
  EXPECT_NE(lone.status().message().find("a lone backslash ends it"), std::string::npos) << lone.status().ToString();
}

}  // namespace
}  // namespace rung::data_tool

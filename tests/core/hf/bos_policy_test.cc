// hf::FolderAddsBos: tokenizer_config.json's add_bos_token decides where it says; else a tokenizer.json
// template that starts with the BOS; else no BOS.
#include "core/hf/bos_policy.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/core/data/test_files.h"

namespace rung::hf {
namespace {

using data_test::TempFolder;
using data_test::WriteBytes;

// A tokenizer.json whose template puts `prefix` ("<s>" = 1, or nothing) before the text.
std::string TokenizerJsonWithTemplate(bool prefix) {
  const std::string single = prefix ? R"([{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}])"
                                    : R"([{"Sequence": {"id": "A", "type_id": 0}}])";
  return R"({"added_tokens": [{"id": 1, "content": "<s>", "special": true}],
             "post_processor": {"type": "TemplateProcessing", "single": )" + single + R"(,
                                "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
             "model": {"type": "BPE", "vocab": {"a": 0, "<s>": 1}, "merges": []}})";
}

TEST(FolderAddsBosTest, TokenizerConfigDecidesWhereItSays) {
  TempFolder folder;
  WriteBytes(folder / "tokenizer.json", TokenizerJsonWithTemplate(true));
  WriteBytes(folder / "tokenizer_config.json", R"({"add_bos_token": false})");
  EXPECT_FALSE(FolderAddsBos(folder.path(), 1));
  WriteBytes(folder / "tokenizer_config.json", R"({"add_bos_token": true})");
  EXPECT_TRUE(FolderAddsBos(folder.path(), 1));
}

TEST(FolderAddsBosTest, ATemplateStartingWithTheBosAddsItWhereTheConfigIsSilent) {
  TempFolder folder;
  WriteBytes(folder / "tokenizer_config.json", R"({"bos_token": "<s>"})");
  WriteBytes(folder / "tokenizer.json", TokenizerJsonWithTemplate(true));
  EXPECT_TRUE(FolderAddsBos(folder.path(), 1));
  EXPECT_FALSE(FolderAddsBos(folder.path(), 0));  // a template that starts with another token
  WriteBytes(folder / "tokenizer.json", TokenizerJsonWithTemplate(false));
  EXPECT_FALSE(FolderAddsBos(folder.path(), 1));
}

TEST(FolderAddsBosTest, AFolderWithoutTokenizerFilesOrWithBrokenOnesAddsNone) {
  TempFolder folder;
  EXPECT_FALSE(FolderAddsBos(folder.path(), 1));
  WriteBytes(folder / "tokenizer_config.json", "{not json");
  WriteBytes(folder / "tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 1e400}}})");
  EXPECT_FALSE(FolderAddsBos(folder.path(), 1));
}

}  // namespace
}  // namespace rung::hf

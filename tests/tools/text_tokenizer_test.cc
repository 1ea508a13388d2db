// LoadTextTokenizer (tools/rung-data/text_tokenizer.h): which file of a path or model folder is read
// (a Hugging Face tokenizer.json before a tokenizer.model, rung-data's own description of its model
// never taken for one), where the end-of-text and BOS tokens come from (--eot, tokenizer_config.json,
// generation_config.json, a SentencePiece model's </s>), whether each document starts with the BOS,
// and the errors for what cannot be used.
#include "tools/rung-data/text_tokenizer.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/core/data/test_files.h"
#include "tests/tools/hf_tiny_folder.h"
#include "tools/rung-data/tokenizer.h"

namespace rung::data_tool {
namespace {

using data_test::TempFolder;
using data_test::WriteBytes;
using hf_tiny::EditedHfTinyJson;
using hf_tiny::HfTinyConfig;
using hf_tiny::HfTinyJson;
using hf_tiny::WriteHfFolder;

bool Contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

// A small SentencePiece model as `rung-data tokenizer train` writes it: `folder`/tokenizer.model and,
// beside it, the tokenizer.json that describes it (not a Hugging Face file).
void WriteRungDataTokenizer(const std::string& folder) {
  std::string text;
  for (int line = 0; line < 60; ++line) text += "the river ran past a mill where nobody lived, said Elizabeth\n";
  TokenizerTrainOptions options;
  options.vocab_size = 300;
  StatusOr<std::string> model = TrainTokenizer({text}, options);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  WriteBytes(folder + "/tokenizer.model", *model);
  const nlohmann::json about = {{"type", "bpe"}, {"vocab_size", 300}, {"seed", 0}, {"threads", 1},
                                {"sha256", "0"}, {"documents", 1}, {"sources", nlohmann::json::array()}};
  WriteBytes(folder + "/tokenizer.json", about.dump(1) + "\n");
}

TEST(LoadTextTokenizerTest, ATokenizerJsonFileIsReadAsHuggingFaces) {
  TempFolder folder;
  WriteBytes(folder / "tokenizer.json", HfTinyJson());
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder / "tokenizer.json", "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->path, folder / "tokenizer.json");
  EXPECT_EQ(loaded->file_name, "tokenizer.json");
  EXPECT_EQ(loaded->bytes, HfTinyJson());
  EXPECT_EQ(loaded->type, "sentencepiece-bpe");
  EXPECT_EQ(loaded->tokenizer->vocab_size(), 40);
  EXPECT_EQ(loaded->tokenizer->PrefixIds(), std::vector<int>{1});  // the template's <s>
  EXPECT_TRUE(loaded->tokenizer->SuffixIds().empty());
}

TEST(LoadTextTokenizerTest, AModelFolderPrefersItsTokenizerJsonOverItsTokenizerModel) {
  TempFolder folder;
  WriteRungDataTokenizer(folder.path());
  WriteBytes(folder / "tokenizer.json", HfTinyJson());  // replaces the description with a Hugging Face file
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->path, folder / "tokenizer.json");
  EXPECT_EQ(loaded->file_name, "tokenizer.json");
  EXPECT_EQ(loaded->type, "sentencepiece-bpe");
  EXPECT_EQ(loaded->tokenizer->vocab_size(), 40);
}

TEST(LoadTextTokenizerTest, RungDatasOwnFolderIsReadAsItsSentencePieceModelNotItsDescription) {
  TempFolder folder;
  WriteRungDataTokenizer(folder.path());
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->path, folder / "tokenizer.model");
  EXPECT_EQ(loaded->file_name, "tokenizer.model");
  EXPECT_EQ(loaded->bytes, data_test::ReadBytes(folder / "tokenizer.model"));
  EXPECT_EQ(loaded->type, "bpe");  // from the description
  EXPECT_EQ(loaded->tokenizer->vocab_size(), 300);
  ASSERT_TRUE(loaded->eot_id.has_value());
  EXPECT_EQ(*loaded->eot_id, 2);  // the model's </s>
  EXPECT_EQ(loaded->eot_token, "</s>");
  EXPECT_FALSE(loaded->bos_added);
  EXPECT_TRUE(loaded->tokenizer->PrefixIds().empty());
}

TEST(LoadTextTokenizerTest, RungDatasDescriptionGivenAsAFileIsDataLossSayingItIsNotAHuggingFaceFile) {
  TempFolder folder;
  WriteRungDataTokenizer(folder.path());
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder / "tokenizer.json", "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE(Contains(loaded.status().message(), folder / "tokenizer.json")) << loaded.status().ToString();
  EXPECT_TRUE(Contains(loaded.status().message(), "not a Hugging Face tokenizer.json")) << loaded.status().ToString();
  EXPECT_TRUE(Contains(loaded.status().message(), "tokenizer.model")) << loaded.status().ToString();
}

TEST(LoadTextTokenizerTest, AFolderWithNeitherFileIsNotFound) {
  TempFolder folder;
  WriteBytes(folder / "config.json", "{}");
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(loaded.status().message(), "neither a Hugging Face tokenizer.json nor a tokenizer.model"))
      << loaded.status().ToString();
  EXPECT_EQ(LoadTextTokenizer(folder / "missing", "").status().code(), StatusCode::kNotFound);
}

TEST(LoadTextTokenizerTest, AFolderWhoseOnlyTokenizerJsonIsRungDatasDescriptionIsNotFound) {
  TempFolder folder;
  WriteRungDataTokenizer(folder.path());
  std::filesystem::remove(folder / "tokenizer.model");
  EXPECT_EQ(LoadTextTokenizer(folder.path(), "").status().code(), StatusCode::kNotFound);
}

TEST(LoadTextTokenizerTest, ATokenizerJsonThatIsNotJsonIsDataLossAtItsByteOffsetAsAFileAndInAFolder) {
  TempFolder folder;
  const std::string broken = "{\"model\": {\"type\": \"BPE\",, }}";  // the second comma, byte 25
  WriteBytes(folder / "tokenizer.json", broken);
  WriteRungDataTokenizer(folder / "with-model");
  WriteBytes(folder / "with-model/tokenizer.json", broken);  // not taken for rung-data's description
  for (const std::string& path : {folder / "tokenizer.json", folder.path(), folder / "with-model"}) {
    StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(path, "");
    ASSERT_FALSE(loaded.ok()) << path;
    EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss) << loaded.status().ToString();
    EXPECT_TRUE(Contains(loaded.status().message(), "tokenizer.json: byte 25: not valid JSON"))
        << loaded.status().ToString();
  }
}

TEST(LoadTextTokenizerTest, ATokenizerJsonRungCannotEncodeIsInvalidArgumentNamingTheComponentAndPath) {
  TempFolder folder;
  WriteHfFolder(folder.path(), HfTinyConfig(), "", EditedHfTinyJson([](nlohmann::json& tokenizer) {
                  tokenizer["pre_tokenizer"] = {{"type", "Whitespace"}};
                }));
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(loaded.status().message(), "key 'pre_tokenizer.type': 'Whitespace' is not supported"))
      << loaded.status().ToString();
}

TEST(LoadTextTokenizerTest, EotComesFromTheEotFlagFirst) {
  TempFolder folder;
  WriteHfFolder(folder.path(), HfTinyConfig(), R"({"eos_token_id": 0})");
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "<s>");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->eot_id.has_value());
  EXPECT_EQ(*loaded->eot_id, 1);
  EXPECT_EQ(loaded->eot_token, "<s>");
  // A vocabulary entry that is not an added token will do too.
  loaded = LoadTextTokenizer(folder.path(), "\xE2\x96\x81the");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->eot_id, 32);
}

TEST(LoadTextTokenizerTest, EotComesFromTokenizerConfigsEosTokenAsAStringOrAnAddedToken) {
  for (const std::string config :
       {R"({"eos_token": "</s>"})",
        R"({"eos_token": {"content": "</s>", "lstrip": false, "normalized": false, "special": true}})"}) {
    TempFolder folder;
    WriteHfFolder(folder.path(), config, R"({"eos_token_id": 0})");  // tokenizer_config.json comes first
    StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ASSERT_TRUE(loaded->eot_id.has_value()) << config;
    EXPECT_EQ(*loaded->eot_id, 2) << config;
    EXPECT_EQ(loaded->eot_token, "</s>") << config;
  }
}

TEST(LoadTextTokenizerTest, EotComesFromGenerationConfigsEosTokenIdAsAnIntegerOrTheFirstOfAList) {
  for (const std::string generation : {R"({"eos_token_id": 2})", R"({"eos_token_id": [2, 1]})"}) {
    TempFolder folder;
    WriteHfFolder(folder.path(), R"({"add_bos_token": true})", generation);
    StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    ASSERT_TRUE(loaded->eot_id.has_value()) << generation;
    EXPECT_EQ(*loaded->eot_id, 2) << generation;
    EXPECT_EQ(loaded->eot_token, "id 2") << generation;
    StatusOr<int64_t> eot = RequireEot(*loaded);
    ASSERT_TRUE(eot.ok()) << eot.status().ToString();
    EXPECT_EQ(*eot, 2);
  }
}

TEST(LoadTextTokenizerTest, ATokenizerJsonWhoseFolderNamesNoEotHasNoneAndRequireEotNamesTheFlag) {
  TempFolder folder;
  WriteHfFolder(folder.path(), "");
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(loaded->eot_id.has_value());
  // No config names a BOS: the template's first token (<s>) is the one each document starts with.
  EXPECT_EQ(loaded->bos_id, std::optional<int64_t>(1));
  EXPECT_TRUE(loaded->bos_added);
  StatusOr<int64_t> eot = RequireEot(*loaded);
  ASSERT_FALSE(eot.ok());
  EXPECT_EQ(eot.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(eot.status().message(), "--eot")) << eot.status().ToString();
  EXPECT_TRUE(Contains(eot.status().message(), folder / "tokenizer_config.json")) << eot.status().ToString();
  EXPECT_TRUE(Contains(eot.status().message(), folder / "generation_config.json")) << eot.status().ToString();
}

TEST(LoadTextTokenizerTest, AnEosTokenNotInTheVocabularyIsInvalidArgumentNamingTheFileAndKey) {
  TempFolder folder;
  WriteHfFolder(folder.path(), R"({"eos_token": "<|endoftext|>"})");
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(loaded.status().message(), folder / "tokenizer_config.json" + " key 'eos_token'"))
      << loaded.status().ToString();
  EXPECT_TRUE(Contains(loaded.status().message(), "\"<|endoftext|>\" is not in")) << loaded.status().ToString();

  // An --eot that is not in the vocabulary names the flag.
  StatusOr<LoadedTokenizer> flagged = LoadTextTokenizer(hf_tiny::HfTinyPath("tokenizer.json"), "<eot>");
  ASSERT_FALSE(flagged.ok());
  EXPECT_EQ(flagged.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(flagged.status().message(), "--eot: token \"<eot>\" is not in")) << flagged.status().ToString();

  // An eos_token_id outside the ids.
  TempFolder outside;
  WriteHfFolder(outside.path(), "", R"({"eos_token_id": [40]})");
  StatusOr<LoadedTokenizer> far = LoadTextTokenizer(outside.path(), "");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(far.status().message(), outside / "generation_config.json" + ": key 'eos_token_id'"))
      << far.status().ToString();
}

TEST(LoadTextTokenizerTest, BosIsAddedWhereTheTemplatesPrefixHoldsIt) {
  TempFolder folder;
  WriteHfFolder(folder.path(), HfTinyConfig());
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  ASSERT_TRUE(loaded->bos_id.has_value());
  EXPECT_EQ(*loaded->bos_id, 1);
  EXPECT_TRUE(loaded->bos_added);
  EXPECT_EQ(loaded->eot_id, 2);

  // The same BOS named by a config silent on add_bos_token, and a tokenizer.json without a
  // post-processor: not added.
  const std::string silent = R"({"bos_token": "<s>", "eos_token": "</s>"})";
  const std::string no_template =
      EditedHfTinyJson([](nlohmann::json& tokenizer) { tokenizer["post_processor"] = nullptr; });
  TempFolder plain;
  WriteHfFolder(plain.path(), silent, "", no_template);
  loaded = LoadTextTokenizer(plain.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->bos_id, 1);
  EXPECT_FALSE(loaded->bos_added);
  EXPECT_TRUE(loaded->tokenizer->PrefixIds().empty());
}

TEST(LoadTextTokenizerTest, AddBosTokenDecidesOverTheTemplateAsTransformersDoes) {
  // add_bos_token true without a template: added (transformers rebuilds the template from it).
  TempFolder added;
  WriteHfFolder(added.path(), R"({"add_bos_token": true, "bos_token": "<s>", "eos_token": "</s>"})", "",
                EditedHfTinyJson([](nlohmann::json& tokenizer) { tokenizer["post_processor"] = nullptr; }));
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(added.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->bos_added);
  EXPECT_EQ(loaded->tokenizer->PrefixIds(), std::vector<int>{1});
  // add_bos_token false with a template that starts with <s>: not added.
  TempFolder dropped;
  WriteHfFolder(dropped.path(), R"({"add_bos_token": false, "bos_token": "<s>", "eos_token": "</s>"})");
  loaded = LoadTextTokenizer(dropped.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_FALSE(loaded->bos_added);
  EXPECT_TRUE(loaded->tokenizer->PrefixIds().empty());
}

TEST(LoadTextTokenizerTest, ASentencePieceModelWithAddBosTokenStartsEachDocumentWithItsBos) {
  TempFolder folder;
  WriteRungDataTokenizer(folder.path());
  WriteBytes(folder / "tokenizer_config.json", R"({"add_bos_token": true, "bos_token": "<s>"})");
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->file_name, "tokenizer.model");
  EXPECT_EQ(loaded->bos_id, 1);
  EXPECT_TRUE(loaded->bos_added);
  EXPECT_EQ(loaded->tokenizer->PrefixIds(), std::vector<int>{1});
  EXPECT_TRUE(loaded->tokenizer->SuffixIds().empty());

  // Without add_bos_token, or with one that is not true or false, the BOS is recorded but not added.
  for (const std::string config : {R"({"bos_token": "<s>"})", R"({"bos_token": "<s>", "add_bos_token": "yes"})"}) {
    WriteBytes(folder / "tokenizer_config.json", config);
    loaded = LoadTextTokenizer(folder.path(), "");
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_EQ(loaded->bos_id, 1) << config;
    EXPECT_FALSE(loaded->bos_added) << config;
    EXPECT_TRUE(loaded->tokenizer->PrefixIds().empty()) << config;
  }
}

TEST(LoadTextTokenizerTest, ATokenizerConfigThatIsNotJsonIsInvalidArgumentAtItsByteOffset) {
  TempFolder folder;
  WriteHfFolder(folder.path(), "{\"eos_token\": \"</s>\",,}");  // the second comma, byte 21
  StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(loaded.status().message(), folder / "tokenizer_config.json" + ": byte 21: not valid JSON"))
      << loaded.status().ToString();

  // A number past a double's range is nlohmann's out_of_range, not a parse_error: refused, not thrown.
  WriteBytes(folder / "tokenizer_config.json", R"({"eos_token": "</s>", "model_max_length": 1e999})");
  loaded = LoadTextTokenizer(folder.path(), "");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(loaded.status().message(), folder / "tokenizer_config.json" + ": not valid JSON: "))
      << loaded.status().ToString();
}

TEST(LoadTextTokenizerTest, ATokenizerJsonWithANumberPastADoublesRangeIsDataLossNotThrown) {
  TempFolder folder;
  WriteHfFolder(folder.path(), HfTinyConfig(), "",
                EditedHfTinyJson([](nlohmann::json& tokenizer) { tokenizer["model"]["dropout"] = "DROPOUT"; }));
  std::string text = data_test::ReadBytes(folder / "tokenizer.json");
  text.replace(text.find("\"DROPOUT\""), 9, "1e400");
  WriteBytes(folder / "tokenizer.json", text);
  for (const std::string& path : {folder / "tokenizer.json", folder.path()}) {
    StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(path, "");
    ASSERT_FALSE(loaded.ok()) << path;
    EXPECT_EQ(loaded.status().code(), StatusCode::kDataLoss);
    EXPECT_TRUE(Contains(loaded.status().message(), "tokenizer.json: not valid JSON: ")) << loaded.status().ToString();
  }
}

}  // namespace
TEST(LoadTextTokenizerTest, AFolderWhereAConfigFileShouldBeIsRefusedNotAborted) {
  for (const std::string name : {"tokenizer_config.json", "generation_config.json"}) {
    TempFolder folder;
    WriteHfFolder(folder.path(), "");
    std::filesystem::create_directories(folder / name);
    StatusOr<LoadedTokenizer> loaded = LoadTextTokenizer(folder.path(), "");
    ASSERT_FALSE(loaded.ok()) << name;
    EXPECT_TRUE(Contains(loaded.status().message(), "it is a folder")) << loaded.status().ToString();
  }
}

}  // namespace rung::data_tool

#include "core/train/probe_evaluation.h"

#include <filesystem>

#include "core/common/file_bytes.h"
#include "core/common/utf8.h"
#include "core/common/rung_data_encode.h"
#include "core/data/builtin_corpus.h"
#include "core/hf/hf_import.h"

namespace rung {
namespace {

constexpr uintmax_t kMaxFillerFileBytes = uintmax_t{64} << 20;

bool HoldsTokenizer(const std::string& folder) {
  std::error_code error;
  return std::filesystem::is_directory(folder, error) &&
         (std::filesystem::exists(std::filesystem::path(folder) / "tokenizer.json", error) ||
          std::filesystem::exists(std::filesystem::path(folder) / "tokenizer.model", error));
}

// The tokenizer the probe's texts are encoded with (see the header): a path, "bytes", or an error.
StatusOr<std::string> ProbeTokenizer(const TrialConfig& trial) {
  const ProbeConfig& probe = trial.train.probe;
  if (!probe.tokenizer.empty()) return probe.tokenizer;
  const std::string& init = trial.train.init.checkpoint;
  if (!init.empty() && hf::IsHfModelFolder(init) && HoldsTokenizer(init)) return init;
  const DataConfig& data = trial.data;
  if (data.source == "shards" && HoldsTokenizer(data.path)) return data.path;
  if (data.source == "builtin" && data.builtin_form != "bytes") {
    RUNG_ASSIGN_OR_RETURN(const BuiltinCorpusFiles files, LocateBuiltinCorpus());
    return (std::filesystem::path(files.text_path).parent_path() / kBuiltinBpeFolder).string();
  }
  if (data.source == "builtin" || data.source == "text") return std::string("bytes");
  return Status::InvalidArgument(
      "train.probe.tokenizer: this trial has no tokenizer rung can find (data.source " + data.source +
      (init.empty() ? "" : ", train.init.checkpoint " + init) +
      "); give the tokenizer its token ids come from (a tokenizer.json, a tokenizer.model or a model folder)");
}

StatusOr<std::vector<std::vector<int32_t>>> EncodeBytes(const std::vector<std::string>& texts) {
  std::vector<std::vector<int32_t>> ids;
  for (const std::string& text : texts) {
    std::vector<int32_t> bytes;
    for (unsigned char byte : text) bytes.push_back(byte);
    ids.push_back(std::move(bytes));
  }
  return ids;
}

// Ids the model has, with the template/prefix/... named by `what`.
Status CheckIds(const TrialConfig& trial, const std::vector<int32_t>& ids, const std::string& what, const std::string& tokenizer) {
  for (int32_t id : ids) {
    if (id < 0 || id >= trial.model.vocab_size) {
      return Status::InvalidArgument("train.probe: the " + what + " encodes to id " + std::to_string(id) + " with " +
                                     tokenizer + ", outside model.vocab_size " + std::to_string(trial.model.vocab_size) +
                                     " (the tokenizer is not the model's)");
    }
  }
  return Status::Ok();
}

// An indexing probe's ids are the model's. (Its prompts and the answer tokens fed after them fit a
// learned absolute table: EncodeIndexingProbe's IndexingLimits::positions saw to that.)
Status CheckIndexingIds(const TrialConfig& trial, const IndexingTokens& indexing, const std::string& tokenizer) {
  for (const IndexingLength& length : indexing.lengths) {
    for (const IndexingPrompt& prompt : length.prompts) {
      RUNG_RETURN_IF_ERROR(CheckIds(trial, prompt.tokens, "indexing prompt", tokenizer));
      RUNG_RETURN_IF_ERROR(CheckIds(trial, prompt.answer, "indexing answer", tokenizer));
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::unique_ptr<PreparedProbe>> PrepareProbe(const TrialConfig& trial) {
  const ProbeConfig& config = trial.train.probe;
  if (config.kind == "none") return std::unique_ptr<PreparedProbe>();
  auto prepared = std::make_unique<PreparedProbe>();
  prepared->config = config;
  RUNG_ASSIGN_OR_RETURN(prepared->tokenizer, ProbeTokenizer(trial));
  const std::string tokenizer = prepared->tokenizer;
  const ProbeTextEncoder encode = [&](const std::vector<std::string>& texts, bool special_tokens)
      -> StatusOr<std::vector<std::vector<int32_t>>> {
    if (tokenizer == "bytes") return EncodeBytes(texts);
    return EncodeTextsWithRungData(tokenizer, texts, special_tokens, "train.probe: encoding with " + tokenizer);
  };
  if (config.kind == "indexing") {
    IndexingLimits limits;
    limits.context = trial.data.seq_len;
    const PositionConfig& position = trial.model.position;
    if (position.variant == "absolute" && position.absolute.beyond == "refuse") limits.positions = trial.model.seq_len;
    RUNG_ASSIGN_OR_RETURN(prepared->indexing, EncodeIndexingProbe(config, encode, limits, tokenizer));
    RUNG_RETURN_IF_ERROR(CheckIndexingIds(trial, prepared->indexing, tokenizer));
    return prepared;
  }
  std::string filler_text;
  if (!config.filler.empty() && config.filler != "data") {
    std::error_code error;
    const auto status = std::filesystem::status(config.filler, error);
    if (!error && std::filesystem::is_regular_file(status)) {
      const auto size = std::filesystem::file_size(config.filler, error);
      if (!error && size > kMaxFillerFileBytes) {
        return Status::InvalidArgument("train.probe.filler " + config.filler + " holds " + std::to_string(size) +
                                       " bytes, more than the " + std::to_string(kMaxFillerFileBytes) +
                                       " a probe reads (a prompt uses only its length in tokens); give an excerpt");
      }
    } else if (!error) {
      return Status::InvalidArgument("train.probe.filler " + config.filler + " is not a regular file");
    }
    RUNG_RETURN_IF_ERROR(ReadFileBytes(config.filler, "train.probe.filler", &filler_text));
    if (filler_text.empty()) return Status::InvalidArgument("train.probe.filler " + config.filler + " is empty");
    const size_t valid = ValidUtf8Prefix(filler_text);
    if (valid != filler_text.size()) {
      return Status::InvalidArgument("train.probe.filler " + config.filler + " is not UTF-8 text: byte offset " +
                                     std::to_string(valid));
    }
  }
  RUNG_ASSIGN_OR_RETURN(prepared->tokens, EncodeProbe(config, encode, filler_text));
  // Where the filler is the kind's segment but the data is asked for (or niah's default), the
  // segment gives way to the trial's validation tokens.
  const bool from_data = config.filler == "data" || (config.filler.empty() && config.filler_text.empty() && config.kind == "niah");
  if (from_data) {
    if (trial.data.synthetic()) {
      return Status::InvalidArgument("train.probe.filler: data.source " + trial.data.source +
                                     " is a synthetic task, not text to hide a needle in; give filler_text or a file");
    }
    prepared->tokens.segment.clear();
  } else if (prepared->tokens.segment.empty()) {
    return Status::InvalidArgument("train.probe.filler_text encodes to no tokens");
  }
  // Each length must hold the texts; under a learned absolute table that refuses positions past it, each
  // prompt and the answer tokens fed after it must fit too.
  const PositionConfig& position = trial.model.position;
  const bool table_refuses = position.variant == "absolute" && position.absolute.beyond == "refuse";
  const int64_t after = config.score == "decode" ? prepared->tokens.LongestAnswer() - 1 : prepared->tokens.answer_shared;
  const int64_t needed = prepared->tokens.MinimumLength();
  for (const ProbeSetting& setting : ProbeSettings(config, trial.data.seq_len, trial.train.extrapolation_methods)) {
    if (table_refuses && setting.length + after > trial.model.seq_len) {
      return Status::InvalidArgument(
          "train.probe.lengths: a prompt of " + std::to_string(setting.length) + " tokens and the " +
          std::to_string(after) + " answer tokens fed after it need " + std::to_string(setting.length + after) +
          " positions; position.variant absolute has " + std::to_string(trial.model.seq_len) +
          " and refuses more (position.absolute.beyond: refuse): give shorter lengths, or beyond: clamp");
    }
    if (setting.length < needed) {
      return Status::InvalidArgument("train.probe.lengths: " + std::to_string(setting.length) +
                                     " tokens cannot hold the probe's texts, which need " + std::to_string(needed) +
                                     " tokens before any filler (" + tokenizer + ")");
    }
  }
  auto check = [&](const std::vector<int32_t>& ids, const char* what) { return CheckIds(trial, ids, what, tokenizer); };
  RUNG_RETURN_IF_ERROR(check(prepared->tokens.bos, "template"));
  RUNG_RETURN_IF_ERROR(check(prepared->tokens.prefix, "prefix"));
  RUNG_RETURN_IF_ERROR(check(prepared->tokens.segment, "filler"));
  for (const ProbeInstanceTokens& instance : prepared->tokens.instances) {
    RUNG_RETURN_IF_ERROR(check(instance.needle, "needle"));
    RUNG_RETURN_IF_ERROR(check(instance.query, "query"));
    RUNG_RETURN_IF_ERROR(check(instance.answer, "answer"));
    for (const auto& distractor : instance.distractors) RUNG_RETURN_IF_ERROR(check(distractor, "distractor"));
  }
  return prepared;
}

}  // namespace rung

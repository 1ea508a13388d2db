// rung-data: tokenizers and token shards (docs/cli.md, "Tokens: rung-data"). A separate binary because
// Debian's libsentencepiece carries its own copy of protobuf's symbols: it links SentencePiece and the
// torch-free core/common and core/data pieces, never LibTorch, gRPC or rung's protos.
//
//   rung-data tokenizer train --input PATH... --vocab-size V [--type bpe|unigram] [--seed S]
//                             [--text-field F] [--split-on SEP] [--threads N] --out DIR
//   rung-data prepare --tokenizer PATH --input PATH... --out DIR [--eot TOKEN] [--val-fraction F]
//                     [--shard-tokens N] [--seed S] [--split-on SEP] [--text-field F] [--threads N]
//                     [--token-bytes 2|4] [--max-document-bytes B]
//   rung-data encode --tokenizer PATH --input PATH... --out FILE|- [--format jsonl|bin] [--eot TOKEN]
//                    [--no-special-tokens] [--split-on SEP] [--text-field F] [--threads N]
//                    [--token-bytes 2|4] [--max-document-bytes B] [--token-byte-lengths FILE]
// --tokenizer: a SentencePiece model, a Hugging Face tokenizer.json, or a model folder holding either
// (tools/rung-data/text_tokenizer.h).
//
// Exit codes (rung's table): 0 done; 2 bad usage (a flag out of range or malformed, an --out that is a
// file, a vocabulary too small for the text; INVALID_ARGUMENT) or another prepare writing the same
// --out (UNAVAILABLE); 4 unusable input (NOT_FOUND, DATA_LOSS: the message names the file and byte
// offset); 5 no space left on device at the path it names (RESOURCE_EXHAUSTED: a full disk or a file
// past the size limit); 1 anything else (a file that cannot be written for another reason).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
#include "core/common/command_line.h"
#include "core/common/sha256.h"
#include "tools/rung-data/encode.h"
#include "tools/rung-data/output_folder.h"
#include "tools/rung-data/prepare.h"
#include "tools/rung-data/separator_escapes.h"
#include "tools/rung-data/text_documents.h"
#include "tools/rung-data/tokenizer.h"

namespace {

using rung::Status;
using rung::StatusCode;

int Fail(const Status& status) {
  std::fprintf(stderr, "rung-data: %s\n", status.ToString().c_str());
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kUnavailable:
      return 2;
    case StatusCode::kNotFound:
    case StatusCode::kDataLoss:
      return 4;
    case StatusCode::kResourceExhausted:  // a full disk (core/common/write_error.h), as rung-train's 5
      return 5;
    default:
      return 1;
  }
}

// A --split-on value with its escapes (separator_escapes.h); bad usage names the flag.
rung::StatusOr<std::string> SplitOn(const std::string& text) {
  rung::StatusOr<std::string> separator = rung::data_tool::UnescapeSeparator(text);
  if (!separator.ok()) return Status::InvalidArgument("--split-on '" + text + "': " + separator.status().message());
  return separator;
}

struct TrainArguments {
  std::vector<std::string> inputs;
  rung::data_tool::TokenizerTrainOptions options;
  rung::data_tool::DocumentOptions documents;
  std::string out;
};

int RunTrain(const TrainArguments& arguments) {
  if (Status status = rung::data_tool::CheckTokenizerTrainOptions(arguments.options); !status.ok()) return Fail(status);
  if (Status status = rung::data_tool::CheckOutputFolder(arguments.out); !status.ok()) return Fail(status);
  rung::data_tool::DocumentOptions reading = arguments.documents;
  reading.exclude.push_back(arguments.out);
  auto text = rung::data_tool::ReadTextDocuments(arguments.inputs, reading);
  if (!text.ok()) return Fail(text.status());
  for (const std::string& folder : text->skipped_folders) {
    std::fprintf(stderr, "rung-data: not reading %s (rung-data's own output)\n", folder.c_str());
  }
  auto model = rung::data_tool::TrainTokenizer(text->documents, arguments.options);
  if (!model.ok()) return Fail(model.status());
  std::error_code error;
  std::filesystem::create_directories(arguments.out, error);
  if (error) return Fail(Status::Internal("cannot create " + arguments.out + ": " + error.message()));
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& source : text->sources) {
    sources.push_back({{"path", source.path}, {"bytes", source.bytes}, {"sha256", source.sha256}});
  }
  const nlohmann::json about = {{"type", arguments.options.type},
                                {"vocab_size", arguments.options.vocab_size},
                                {"seed", arguments.options.seed},
                                {"threads", arguments.options.threads},
                                {"sha256", rung::Sha256Hex(*model)},
                                {"documents", text->documents.size()},
                                {"sources", sources}};
  const std::string model_path = (std::filesystem::path(arguments.out) / "tokenizer.model").string();
  const std::string about_path = (std::filesystem::path(arguments.out) / "tokenizer.json").string();
  if (Status status = rung::WriteFileAtomically(model_path, {*model}); !status.ok()) return Fail(status);
  const std::string about_text = about.dump(1) + "\n";
  if (Status status = rung::WriteFileAtomically(about_path, {about_text}); !status.ok()) return Fail(status);
  std::printf("rung-data: trained %s tokenizer, %lld ids, on %zu document%s (%lld bytes): %s (sha256 %s)\n",
              arguments.options.type.c_str(), static_cast<long long>(arguments.options.vocab_size),
              text->documents.size(), text->documents.size() == 1 ? "" : "s", static_cast<long long>(text->bytes),
              model_path.c_str(),
              about["sha256"].get<std::string>().c_str());
  return 0;
}

int RunPrepare(const rung::data_tool::PrepareOptions& options) {
  auto summary = rung::data_tool::Prepare(options);
  if (!summary.ok()) return Fail(summary.status());
  const double rate = summary->encode_seconds > 0 ? static_cast<double>(summary->tokens[0] + summary->tokens[1]) /
                                                        summary->encode_seconds
                                                  : 0.0;
  std::printf("rung-data: prepared %s: %lld train and %lld val documents, %lld and %lld tokens (eot %s id %lld, "
              "vocabulary %lld); %lld shards written, %lld already there; encoded %lld bytes in %.2f s (%.0f tokens/s)\n",
              options.out.c_str(), static_cast<long long>(summary->documents[0]),
              static_cast<long long>(summary->documents[1]), static_cast<long long>(summary->tokens[0]),
              static_cast<long long>(summary->tokens[1]), summary->eot_token.c_str(),
              static_cast<long long>(summary->eot_id),
              static_cast<long long>(summary->vocab_size), static_cast<long long>(summary->shards_written),
              static_cast<long long>(summary->shards_kept), static_cast<long long>(summary->encoded_bytes),
              summary->encode_seconds, rate);
  if (summary->documents_split > 0) {
    std::printf("rung-data: %lld document%s longer than --max-document-bytes %lld encoded in pieces\n",
                static_cast<long long>(summary->documents_split), summary->documents_split == 1 ? "" : "s",
                static_cast<long long>(options.max_document_bytes));
  }
  return 0;
}

int RunEncode(const rung::data_tool::EncodeOptions& options) {
  auto summary = rung::data_tool::Encode(options);
  if (!summary.ok()) return Fail(summary.status());
  const double rate = summary->encode_seconds > 0 ? static_cast<double>(summary->tokens) / summary->encode_seconds : 0.0;
  // With the ids on standard output, the summary goes to standard error.
  std::FILE* report = options.out == "-" ? stderr : stdout;
  std::fprintf(report,
               "rung-data: encoded %lld document%s, %lld tokens (vocabulary %lld) into %s (%s); %lld bytes in %.2f s "
               "(%.0f tokens/s)\n",
               static_cast<long long>(summary->documents), summary->documents == 1 ? "" : "s",
               static_cast<long long>(summary->tokens), static_cast<long long>(summary->vocab_size),
               options.out.c_str(), options.format.c_str(), static_cast<long long>(summary->encoded_bytes),
               summary->encode_seconds, rate);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rung-data: tokenizers (SentencePiece models, Hugging Face tokenizer.json) and llm.c token shards "
               "for rung-train.\n"
               "Exit codes (docs/cli.md): 0 done, 1 an unexpected failure, 2 bad usage, 4 input unusable, "
               "5 no space left on device at the path it names."};
  app.require_subcommand(1);

  CLI::App* tokenizer = app.add_subcommand("tokenizer", "Tokenizers");
  tokenizer->require_subcommand(1);
  TrainArguments train;
  std::string train_split_on;
  CLI::App* train_command = tokenizer->add_subcommand(
      "train", "Train a SentencePiece model (identity normalisation, no whitespace folding, byte fallback: "
               "decoding gives back each document's bytes); writes DIR/tokenizer.model and DIR/tokenizer.json");
  train_command->add_option("--input", train.inputs, "Text files, folders (every file below), or JSON-lines files")
      ->required();
  train_command->add_option("--vocab-size", train.options.vocab_size,
                            "Vocabulary size: at least 259 + the distinct characters of the text")
      ->required();
  train_command->add_option("--type", train.options.type, "bpe or unigram")
      ->check(CLI::IsMember({"bpe", "unigram"}))
      ->capture_default_str();
  train_command->add_option("--seed", train.options.seed, "SentencePiece's random seed")->capture_default_str();
  train_command->add_option("--threads", train.options.threads, "Training threads, 1 to 128 (1 is deterministic)")
      ->capture_default_str();
  train_command->add_option("--text-field", train.documents.text_field,
                            "Inputs are JSON-lines; each line's string field F is a document");
  train_command->add_option("--split-on", train_split_on,
                            "Cut files into documents at SEP (escapes \\n \\t \\f \\r \\\\)");
  train_command->add_option("--out", train.out, "Output folder")->required();

  rung::data_tool::PrepareOptions prepare;
  std::string prepare_split_on;
  CLI::App* prepare_command = app.add_subcommand(
      "prepare", "Encode documents in parallel into llm.c shards (train_*.bin, val_*.bin), an end-of-text token "
                 "before each document, split by document, with manifest.json for rung-train");
  const std::string tokenizer_help =
      "A SentencePiece model (tokenizer.model: rung-data tokenizer train's, or a model's), a Hugging Face "
      "tokenizer.json (BPE: GPT-2, Llama 2/3, Mistral, Qwen2/3, SmolLM), or a model folder holding either";
  const std::string eot_help =
      "The end-of-text token written between documents (default: the folder's tokenizer_config.json eos_token, "
      "else generation_config.json's eos_token_id, else the model's </s>)";
  prepare_command->add_option("--tokenizer", prepare.tokenizer, tokenizer_help)->required();
  prepare_command->add_option("--eot", prepare.eot, eot_help);
  prepare_command->add_option("--input", prepare.inputs, "Text files, folders (every file below), or JSON-lines files")
      ->required();
  prepare_command->add_option("--out", prepare.out, "Output folder")->required();
  prepare_command->add_option("--val-fraction", prepare.val_fraction, "Share of documents held out")
      ->capture_default_str();
  prepare_command->add_option("--shard-tokens", prepare.shard_tokens, "Most tokens per shard")->capture_default_str();
  prepare_command->add_option("--seed", prepare.seed, "Seeds the split by document")->capture_default_str();
  prepare_command->add_option("--split-on", prepare_split_on,
                              "Cut files into documents at SEP (escapes \\n \\t \\f \\r \\\\)");
  prepare_command->add_option("--text-field", prepare.documents.text_field,
                              "Inputs are JSON-lines; each line's string field F is a document");
  prepare_command->add_option("--threads", prepare.threads, "Encoding threads, 0 to 1024 (0: every core)")
      ->capture_default_str();
  prepare_command->add_option("--token-bytes", prepare.token_bytes,
                              "2 (uint16, magic 20240520) or 4 (uint32, magic 20240801); 0: 2 when the vocabulary fits")
      ->capture_default_str();
  prepare_command->add_option("--max-document-bytes", prepare.max_document_bytes,
                              "Encode a longer document in pieces of at most this many bytes, cut at lines, "
                              "else spaces, else characters")
      ->capture_default_str();

  rung::data_tool::EncodeOptions encode;
  std::string encode_split_on;
  bool no_special_tokens = false;
  CLI::App* encode_command = app.add_subcommand(
      "encode", "Encode documents into their ids, with no split or shards: JSON lines (one array of ids per "
                "document) or one llm.c shard (the end-of-text id between documents)");
  encode_command->add_option("--tokenizer", encode.tokenizer, tokenizer_help)->required();
  encode_command->add_option("--input", encode.inputs, "Text files, folders (every file below), or JSON-lines files")
      ->required();
  encode_command->add_option("--out", encode.out, "Output file; - for standard output (jsonl)")->required();
  encode_command->add_option("--format", encode.format, "jsonl or bin (an llm.c shard)")
      ->check(CLI::IsMember({"jsonl", "bin"}))
      ->capture_default_str();
  encode_command->add_option("--eot", encode.eot, eot_help);
  encode_command->add_flag("--no-special-tokens", no_special_tokens,
                           "Leave out the tokenizer's template tokens (its BOS) around each document");
  encode_command->add_option("--split-on", encode_split_on,
                             "Cut files into documents at SEP (escapes \\n \\t \\f \\r \\\\)");
  encode_command->add_option("--text-field", encode.documents.text_field,
                             "Inputs are JSON-lines; each line's string field F is a document");
  encode_command->add_option("--threads", encode.threads, "Encoding threads, 0 to 1024 (0: every core)")
      ->capture_default_str();
  encode_command->add_option("--token-bytes", encode.token_bytes,
                             "bin: 2 (uint16) or 4 (uint32); 0: 2 when the vocabulary fits")
      ->capture_default_str();
  encode_command->add_option("--max-document-bytes", encode.max_document_bytes,
                             "Encode a longer document in pieces of at most this many bytes")
      ->capture_default_str();
  encode_command->add_option("--token-byte-lengths", encode.token_byte_lengths_out,
                             "Also write each id's decoded length in bytes to FILE (a JSON array), for bits per byte");

  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  if (encode_command->parsed()) {
    rung::StatusOr<std::string> split_on = SplitOn(encode_split_on);
    if (!split_on.ok()) return Fail(split_on.status());
    encode.documents.split_on = *split_on;
    encode.special_tokens = !no_special_tokens;
    return RunEncode(encode);
  }
  if (train_command->parsed()) {
    rung::StatusOr<std::string> split_on = SplitOn(train_split_on);
    if (!split_on.ok()) return Fail(split_on.status());
    train.documents.split_on = *split_on;
    return RunTrain(train);
  }
  rung::StatusOr<std::string> split_on = SplitOn(prepare_split_on);
  if (!split_on.ok()) return Fail(split_on.status());
  prepare.documents.split_on = *split_on;
  return RunPrepare(prepare);
}

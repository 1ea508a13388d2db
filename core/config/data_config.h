// core/config/data_config.h
//
// Where a trial's tokens come from (the `data` block): the builtin corpus, raw text, token shards,
// or a synthetic task generated in process (docs/science.md section 8). Plain data, torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/config_error.h"

namespace rung {

// NRW: needle retrieval from a window.
struct NrwConfig {
  int64_t window_centre = 512;   // c, a distance back from QUERY
  int64_t window_width = 64;     // W
  double buffer = 0.0;           // r: NO only beyond (1 + r) W/2 from the centre (AdaRoPE appendix D)
};

// The largest NRW buffer r accepted.
inline constexpr double kMaxNrwBuffer = 1000.0;

// Multi-key needle in a haystack.
struct NiahConfig {
  int64_t max_distractors = 31;  // distractor key-value pairs drawn in 0..max
  int64_t key_symbols = 32;      // key alphabet size (> max_distractors: keys are distinct)
  int64_t value_symbols = 16;    // value alphabet size
  int64_t filler_symbols = 32;   // filler alphabet size
};

// Position indexing: a list of symbols from {0..3}; "what is at position k".
struct PositionIndexConfig {
  int64_t symbols = 4;
};

struct DataConfig {
  std::string source = "builtin";  // builtin | text | shards | nrw | niah | position_index
  std::string path;                // text: file or folder; shards: file or folder of *.bin
  std::string val_path;            // shards: optional separate validation shard(s)
  int64_t token_bytes = 2;         // shards: 2 (uint16) or 4 (uint32), little-endian: headerless files
  // shards: how files are read (core/data/llmc_shard_format.h): auto (an llm.c header if the magic is
  // there, else raw of token_bytes), llmc (the header required), raw16, raw32 (headerless, that width).
  std::string format = "auto";
  int64_t vocab_size = 0;          // shards: required (a prepared folder's manifest gives it)
  int64_t seq_len = 128;           // training sequence length T
  double val_fraction = 0.05;      // share of documents (text) or tokens (shards) held out
  uint64_t split_seed = 0;         // seeds the document split
  std::string doc_separator = "\f";  // text files split into documents at this string
  // Attention stays inside each document of a packed window (cross-document masking, docs/science.md
  // section 4). A document starts at the input token DocumentStartToken() returns; that token belongs
  // to the document it starts. Needs a one-byte doc_separator (builtin, text) or eot_token (shards);
  // synthetic tasks have no documents.
  bool cross_doc_mask = false;
  // Under cross_doc_mask, the key count n that beta(n) and AdaScale's L read (docs/science.md section 1):
  // "document", the keys the query sees inside its document; "window", its position in the window + 1.
  std::string cross_doc_keys = "document";
  int64_t eot_token = -1;          // shards: the token id between documents (-1: none; a prepared
                                   // folder's manifest gives it)
  // Validation windows only in documents of at least this many tokens, each window starting at a
  // document's start (docs/science.md section 9: positions beyond T then belong to one document);
  // 0 = every window of the validation stream. Needs documents (a separator or eot_token).
  int64_t eval_min_doc_tokens = 0;
  // builtin: one document per chapter, or per book (the six novels, for long-document evaluation).
  std::string builtin_documents = "chapters";
  // builtin: "bytes" (one token a byte) or "bpe-4096", the corpus as `make corpus` tokenizes it
  // (core/data/builtin_corpus.h: a prepared folder beside the text, read as shards through its manifest).
  std::string builtin_form = "bytes";
  NrwConfig nrw;
  NiahConfig niah;
  PositionIndexConfig position_index;

  bool synthetic() const { return source == "nrw" || source == "niah" || source == "position_index"; }
};

// The builtin corpus's BPE form (data.builtin_form: bpe-4096, deploy/build-builtin-tokens.sh): its
// vocabulary and the end-of-text id that `rung-data prepare` writes before each document (SentencePiece's
// </s>, id 2 in the models `rung-data tokenizer train` makes).
inline constexpr int64_t kBuiltinBpeVocabSize = 4096;
inline constexpr int64_t kBuiltinBpeEotId = 2;

// The input token that starts a document in the stream: the first byte of doc_separator (builtin
// bytes, text: each document is preceded by the separator), kBuiltinBpeEotId (builtin bpe-4096),
// eot_token (shards; -1 when unset), -1 for synthetic tasks.
int64_t DocumentStartToken(const DataConfig& config);

// Source shards on a prepared folder (one holding the manifest.json of `rung-data prepare`): the
// vocabulary and the end-of-text id from its manifest where the config leaves them out (0, -1). A value
// the config states that the manifest contradicts is an error at that key naming both. A path that is
// not a prepared folder here (shards files, or a folder only the workers can read), or a manifest that
// does not read (the data's reader says why, as unusable data), is left to the config's own values.
void ResolvePreparedFolder(DataConfig* data, std::vector<ConfigError>* errors);

void ValidateDataConfig(const DataConfig& config, std::vector<ConfigError>* errors);

}  // namespace rung

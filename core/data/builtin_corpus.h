// core/data/builtin_corpus.h
//
// The builtin corpus: Jane Austen's six novels as one byte-level text file, one document per chapter
// (form-feed separated), built from Debian's r-cran-janeaustenr by deploy/fetch-builtin-corpus.sh. It
// lets every installation train and test without downloading data. With data.builtin_documents: books
// each novel is one document (its chapters joined, without separators), from the manifest's
// book_first_documents: the long documents of long-context evaluation (data.eval_min_doc_tokens).
//
// Lookup order for builtin/austen.txt (first existing wins):
//   1. $RUNG_DATA_DIR/builtin/austen.txt
//   2. <folder of the running executable>/../data/builtin/austen.txt   (a build tree: build/bin/..)
//   3. /usr/local/share/rung/builtin/austen.txt
//   4. /usr/share/rung/builtin/austen.txt
// Beside it, the manifest austen.json: {"package": "r-cran-janeaustenr", "version": ..., "sha256": ...}.
//
// Its BPE form (data.builtin_form: bpe-4096), from `make corpus` (deploy/build-builtin-tokens.sh): the
// folder austen-bpe-4096/ beside the text, prepared by rung-data from it (one document per chapter,
// SentencePiece BPE of 4096 ids trained single-threaded with seed 0, split by document at the byte
// form's defaults, val_fraction 0.05 and split_seed 0, so both forms hold out the same chapters), read
// as shards through its manifest (token_shards.h): val_bpb of the two forms is on the same text.
//
// Example:
//   StatusOr<std::unique_ptr<BatchSource>> source = LoadBuiltinCorpus(config, seed);
//
// Thread safety: the functions are reentrant; the loaded source is immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/config/data_config.h"
#include "core/data/batch_source.h"

namespace rung {

// A located builtin corpus and its manifest.
struct BuiltinCorpusFiles {
  std::string text_path;      // .../builtin/austen.txt
  std::string manifest_path;  // .../builtin/austen.json
  std::string package;        // manifest "package"
  std::string version;        // manifest "version"
  std::string sha256;         // manifest "sha256" of austen.txt
  // manifest "book_first_documents": the index of each book's first document (its front matter), in
  // the chapter split at "\f"; empty in manifests written before it.
  std::vector<int64_t> book_first_documents;
};

// The BPE form's folder beside austen.txt.
inline constexpr char kBuiltinBpeFolder[] = "austen-bpe-4096";

// The candidate paths of austen.txt, in lookup order (see above).
std::vector<std::string> BuiltinCorpusCandidates();

// The first candidate that exists, with its manifest read.
// Errors: NOT_FOUND if no candidate exists (listing them, and saying to run `make corpus` or
// deploy/fetch-builtin-corpus.sh) or if the manifest is missing; DATA_LOSS if the manifest is not a
// JSON object with string "package", "version" and "sha256".
StatusOr<BuiltinCorpusFiles> FindBuiltinCorpus(const std::vector<std::string>& candidates);

// FindBuiltinCorpus(BuiltinCorpusCandidates()).
StatusOr<BuiltinCorpusFiles> LocateBuiltinCorpus();

// Locates and loads the builtin corpus as a byte-level source named "builtin" (a ByteCorpus; config.path
// is ignored, config.doc_separator, val_fraction, split_seed, seq_len, builtin_documents and
// eval_min_doc_tokens apply). Describe() adds "package", "version", "manifest" (and "documents_are":
// "books"). Errors: those of LocateBuiltinCorpus and ByteCorpus::LoadFiles; DATA_LOSS if the text does
// not match the manifest's sha256; NOT_FOUND for books from a manifest without book boundaries.
// data.builtin_form: bpe-4096 loads the BPE form (a TokenShards, Describe() of the shards) instead: NOT_FOUND
// when it is not built; DATA_LOSS when its manifest was not prepared from this text with the constants of
// data_config.h; INVALID_ARGUMENT for a val_fraction or split_seed other than the manifest's.
StatusOr<std::unique_ptr<BatchSource>> LoadBuiltinCorpus(const DataConfig& config, uint64_t seed);

// Loads a builtin corpus already located (for tests and tools).
StatusOr<std::unique_ptr<BatchSource>> LoadBuiltinCorpusFrom(const BuiltinCorpusFiles& files,
                                                            const DataConfig& config, uint64_t seed);

}  // namespace rung

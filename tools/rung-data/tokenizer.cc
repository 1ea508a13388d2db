#include "tools/rung-data/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <unordered_map>

namespace rung::data_tool {
namespace {

// SentencePiece's whitespace mark, U+2581.
constexpr std::string_view kSpaceMark = "\xE2\x96\x81";

// The lines of the documents, one sentence each (SentencePiece trains on sentences without newlines).
class LineIterator : public sentencepiece::SentenceIterator {
 public:
  explicit LineIterator(const std::vector<std::string>& documents) : documents_(documents) { Advance(); }
  bool done() const override { return document_ >= documents_.size(); }
  void Next() override { Advance(); }
  const std::string& value() const override { return line_; }
  sentencepiece::util::Status status() const override { return sentencepiece::util::Status(); }

 private:
  // Moves to the next non-empty line.
  void Advance() {
    while (document_ < documents_.size()) {
      const std::string& text = documents_[document_];
      if (offset_ >= text.size()) {
        ++document_;
        offset_ = 0;
        continue;
      }
      size_t end = text.find('\n', offset_);
      if (end == std::string::npos) end = text.size();
      line_.assign(text, offset_, end - offset_);
      offset_ = end + 1;
      if (!line_.empty()) return;
    }
  }

  const std::vector<std::string>& documents_;
  size_t document_ = 0;
  size_t offset_ = 0;
  std::string line_;
};

// True when `piece` carries whitespace marks only in a leading run ("▁▁the", "▁", "the", not "a▁b").
bool MarksOnlyLead(std::string_view piece) {
  size_t at = 0;
  while (at < piece.size()) {
    const size_t mark = WhitespaceMarkLength(piece, at);
    if (mark == 0) break;
    at += mark;
  }
  for (; at < piece.size(); ++at) {
    if (WhitespaceMarkLength(piece, at) != 0) return false;
  }
  return true;
}

// Whether word-by-word encoding equals whole-text encoding for `processor` (see the header).
bool PiecesStayWithinWords(const sentencepiece::SentencePieceProcessor& processor) {
  for (int id = 0; id < processor.GetPieceSize(); ++id) {
    if (processor.IsControl(id) || processor.IsUnknown(id) || processor.IsByte(id) || processor.IsUnused(id)) {
      continue;
    }
    if (!MarksOnlyLead(processor.IdToPiece(id))) return false;
  }
  // A unigram model picks the segmentation of highest score summed over the whole text, and two of
  // equal sum can come out either way with the rounding of what precedes them: encoding word by word
  // is then not exact. SentencePiece offers n-best segmentations for unigram models alone (BPE, word
  // and char models merge or split within a word, with no sum).
  std::vector<std::vector<int>> nbest;
  if (processor.NBestEncode("x y", 2, &nbest).ok()) return false;
  // A dummy prefix puts a mark before a text that starts without a space.
  std::vector<std::string> pieces;
  if (!processor.Encode("x y", &pieces).ok() || pieces.empty() || WhitespaceMarkLength(pieces.front(), 0) != 0) {
    return false;
  }
  // Whitespace runs at either end and inside, tabs and newlines, and characters NFKC-style normalizers
  // change (a ligature, a full-width letter, a circled digit, a decomposed accent, no-break and
  // ideographic spaces, a zero-width space) must come back as they went in.
  const std::string probe =
      "  x  y\t z\n\n \xEF\xAC\x81 \xEF\xBC\xA1 \xE2\x91\xA0 e\xCC\x81 \xC2\xA0 \xE3\x80\x80 \xE2\x80\x8B end  ";
  std::vector<int> ids;
  std::string decoded;
  if (!processor.Encode(probe, &ids).ok() || !processor.Decode(ids, &decoded).ok()) return false;
  return decoded == probe;
}

}  // namespace

size_t WhitespaceMarkLength(std::string_view text, size_t at) {
  if (at >= text.size()) return 0;
  if (text[at] == ' ') return 1;
  return text.compare(at, kSpaceMark.size(), kSpaceMark) == 0 ? kSpaceMark.size() : 0;
}

StatusOr<std::string> TrainTokenizer(const std::vector<std::string>& documents, const TokenizerTrainOptions& options) {
  if (options.type != "bpe" && options.type != "unigram") {
    return Status::InvalidArgument("--type must be bpe or unigram, got '" + options.type + "'");
  }
  if (options.vocab_size < 260 || options.vocab_size > (int64_t{1} << 24)) {
    return Status::InvalidArgument("--vocab-size must lie in [260, 2^24] (256 byte tokens and the control tokens "
                                   "come first), got " + std::to_string(options.vocab_size));
  }
  sentencepiece::SetRandomGeneratorSeed(static_cast<unsigned int>(options.seed));
  const std::unordered_map<std::string, std::string> arguments = {
      {"model_type", options.type},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "false"},
      {"byte_fallback", "true"},
      {"character_coverage", "1.0"},
      {"split_digits", "false"},
      {"allow_whitespace_only_pieces", "true"},
      {"max_sentence_length", "65536"},
      {"shuffle_input_sentence", "false"},
      {"num_threads", std::to_string(options.threads)},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      {"minloglevel", "2"},
  };
  LineIterator lines(documents);
  std::string model;
  const sentencepiece::util::Status status = sentencepiece::SentencePieceTrainer::Train(arguments, &lines, &model);
  if (!status.ok()) return Status::InvalidArgument("sentencepiece training failed: " + status.ToString());
  return model;
}

struct Tokenizer::Impl {
  sentencepiece::SentencePieceProcessor processor;
  bool pieces_stay_within_words = false;
};

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

StatusOr<std::unique_ptr<Tokenizer>> Tokenizer::Load(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  const sentencepiece::util::Status status = impl->processor.Load(path);
  if (!status.ok()) {
    if (status.code() == sentencepiece::util::StatusCode::kNotFound) {
      return Status::NotFound("tokenizer " + path + ": " + status.ToString());
    }
    // SentencePiece's own message names its source file and line, which says nothing to a user.
    return Status::InvalidArgument("tokenizer " + path +
                                   " is not a SentencePiece model (rung-data tokenizer train writes one: "
                                   "OUT/tokenizer.model)");
  }
  if (impl->processor.eos_id() < 0) {
    return Status::InvalidArgument("tokenizer " + path + " has no </s> (eos) token to end documents with");
  }
  impl->pieces_stay_within_words = PiecesStayWithinWords(impl->processor);
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

int64_t Tokenizer::vocab_size() const { return impl_->processor.GetPieceSize(); }
int64_t Tokenizer::eot_id() const { return impl_->processor.eos_id(); }
bool Tokenizer::pieces_stay_within_words() const { return impl_->pieces_stay_within_words; }

std::vector<int32_t> Tokenizer::TokenByteLengths() const {
  const sentencepiece::SentencePieceProcessor& processor = impl_->processor;
  std::vector<int32_t> lengths(static_cast<size_t>(processor.GetPieceSize()));
  for (int id = 0; id < processor.GetPieceSize(); ++id) {
    if (processor.IsByte(id)) {
      lengths[id] = 1;
    } else if (processor.IsControl(id) || processor.IsUnknown(id)) {
      lengths[id] = 0;
    } else {
      const std::string& piece = processor.IdToPiece(id);
      int32_t bytes = 0;
      for (size_t at = 0; at < piece.size();) {
        // A whitespace mark decodes to one space; any other byte to itself.
        at += std::max<size_t>(1, WhitespaceMarkLength(piece, at));
        bytes += 1;
      }
      lengths[id] = bytes;
    }
  }
  return lengths;
}

Status Tokenizer::Encode(std::string_view text, std::vector<int>* ids) const {
  const sentencepiece::util::Status status = impl_->processor.Encode(text, ids);
  if (!status.ok()) return Status::Internal("sentencepiece encode failed: " + status.ToString());
  return Status::Ok();
}

}  // namespace rung::data_tool

#include "tools/rung-data/tokenizer.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <utility>

namespace rung::data_tool {
namespace {

// SentencePiece's whitespace mark, U+2581.
constexpr std::string_view kSpaceMark = "\xE2\x96\x81";
// SentencePiece's stand-in for rare characters, U+2585: its trainer skips a line that holds one.
constexpr std::string_view kReservedUnknown = "\xE2\x96\x85";
// The longest line SentencePiece trains on (max_sentence_length); longer lines are skipped.
constexpr size_t kMaxSentenceBytes = 65536;
// The pieces every model has before those it learns: <unk>, <s>, </s> and the 256 byte tokens.
constexpr int64_t kMetaPieces = 3 + 256;

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

Status CheckTokenizerTrainOptions(const TokenizerTrainOptions& options) {
  if (options.type != "bpe" && options.type != "unigram") {
    return Status::InvalidArgument("--type must be bpe or unigram, got '" + options.type + "'");
  }
  if (options.vocab_size < kMetaPieces + 1 || options.vocab_size > (int64_t{1} << 24)) {
    return Status::InvalidArgument("--vocab-size must lie in [260, 2^24] (3 control tokens, 256 byte tokens and a "
                                   "token for each character of the text come first), got " +
                                   std::to_string(options.vocab_size));
  }
  if (options.threads < 1 || options.threads > 128) {
    return Status::InvalidArgument("--threads must lie in [1, 128] for tokenizer training, got " +
                                   std::to_string(options.threads));
  }
  return Status::Ok();
}

StatusOr<int64_t> MinimumVocabSize(const std::vector<std::string>& documents) {
  // SentencePiece's own pieces, which it blanks out of a sentence before counting its characters.
  std::vector<std::string> meta = {"<unk>", "<s>", "</s>"};
  for (int byte = 0; byte < 256; ++byte) {
    char piece[8];
    std::snprintf(piece, sizeof(piece), "<0x%02X>", byte);
    meta.push_back(piece);
  }
  std::unordered_map<char32_t, int64_t> counts;
  int64_t all = 0, trained_lines = 0;
  LineIterator lines(documents);
  for (; !lines.done(); lines.Next()) {
    const std::string& line = lines.value();
    if (line.size() > kMaxSentenceBytes || line.find(kReservedUnknown) != std::string::npos) continue;
    ++trained_lines;
    for (size_t at = 0; at < line.size();) {
      size_t matched = 0;
      if (line[at] == '<') {
        for (const std::string& piece : meta) {
          if (piece.size() > matched && line.compare(at, piece.size(), piece) == 0) matched = piece.size();
        }
      }
      char32_t c = U'\t';  // what a blanked piece becomes
      if (matched == 0) {
        const auto lead = static_cast<unsigned char>(line[at]);
        matched = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
        c = lead < 0x80 ? lead : lead < 0xE0 ? lead & 0x1F : lead < 0xF0 ? lead & 0x0F : lead & 0x07;
        for (size_t b = 1; b < matched && at + b < line.size(); ++b) {
          c = (c << 6) | (static_cast<unsigned char>(line[at + b]) & 0x3F);
        }
        if (c == U' ') c = 0x2581;  // the normalizer's whitespace mark
      }
      at += matched;
      if (c == 0) continue;
      ++counts[c];
      ++all;
    }
  }
  if (trained_lines == 0) {
    return Status::DataLoss("the documents hold no line a tokenizer can be trained on: SentencePiece trains on "
                            "lines of at most " + std::to_string(kMaxSentenceBytes) +
                            " bytes that do not hold U+2585, and every line here is longer or holds one");
  }
  // Characters by count, most frequent first, taken until their share of all characters reaches the
  // character coverage of 1.0 as a float does; tabs count toward the share but need no token.
  std::vector<std::pair<int64_t, char32_t>> sorted;
  for (const auto& [c, count] : counts) sorted.push_back({count, c});
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  int64_t covered = 0, required = 0;
  for (const auto& [count, c] : sorted) {
    if (static_cast<float>(1.0 * static_cast<double>(covered) / static_cast<double>(all)) >= 1.0f) break;
    covered += count;
    if (c != U'\t') ++required;
  }
  return kMetaPieces + required;
}

StatusOr<std::string> TrainTokenizer(const std::vector<std::string>& documents, const TokenizerTrainOptions& options) {
  RUNG_RETURN_IF_ERROR(CheckTokenizerTrainOptions(options));
  RUNG_ASSIGN_OR_RETURN(const int64_t minimum, MinimumVocabSize(documents));
  if (options.vocab_size < minimum) {
    return Status::InvalidArgument(
        "--vocab-size " + std::to_string(options.vocab_size) + " is too small for these documents: a " + options.type +
        " tokenizer of them needs at least " + std::to_string(minimum) + " ids (3 control tokens, 256 byte tokens and " +
        std::to_string(minimum - kMetaPieces) + " for the distinct characters of the text)");
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
      {"max_sentence_length", std::to_string(kMaxSentenceBytes)},
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
  if (!status.ok()) {
    // SentencePiece's message starts with its source file, line and failed condition; the reason follows.
    std::string reason = status.message();
    const size_t condition = reason.find("] ");
    if (reason.find(".cc(") != std::string::npos && condition != std::string::npos &&
        condition + 2 < reason.size()) {
      reason = reason.substr(condition + 2);
    }
    return Status::InvalidArgument("SentencePiece cannot train a " + options.type + " tokenizer of " +
                                   std::to_string(options.vocab_size) + " ids on these documents: " + reason);
  }
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
    return Status::DataLoss("tokenizer " + path +
                            " is not a SentencePiece model (rung-data tokenizer train writes one: OUT/tokenizer.model)");
  }
  if (impl->processor.eos_id() < 0) {
    return Status::DataLoss("tokenizer " + path + " has no </s> (eos) token to end documents with");
  }
  impl->pieces_stay_within_words = PiecesStayWithinWords(impl->processor);
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::move(impl)));
}

int64_t Tokenizer::vocab_size() const { return impl_->processor.GetPieceSize(); }
int64_t Tokenizer::eot_id() const { return impl_->processor.eos_id(); }
std::optional<int64_t> Tokenizer::PieceId(const std::string& piece) const {
  const int id = impl_->processor.PieceToId(piece);
  if (id < 0 || impl_->processor.IdToPiece(id) != piece) return std::nullopt;  // PieceToId answers <unk> for none
  return id;
}

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

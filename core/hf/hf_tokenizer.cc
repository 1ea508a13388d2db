#include "core/hf/hf_tokenizer.h"

#include <unicode/utf8.h>

#include "core/hf/added_token_matcher.h"
#include "core/hf/bpe_model.h"
#include "core/hf/byte_level_alphabet.h"
#include "core/hf/pre_tokenizer.h"
#include "core/hf/text_normalizer.h"

namespace rung::hf {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // "▁", U+2581

// True when `token` holds "▁" only in a leading run ("▁▁the", "▁", "the"; not "a▁b", "a▁").
bool MarksOnlyLead(std::string_view token) {
  size_t at = 0;
  while (token.compare(at, kSpaceMark.size(), kSpaceMark) == 0) at += kSpaceMark.size();
  return token.find(kSpaceMark, at) == std::string_view::npos;
}

}  // namespace

struct HfTokenizer::Parts {
  explicit Parts(const TokenizerJson& definition, TextNormalizer normalizer_in)
      : model(definition), normalizer(std::move(normalizer_in)) {}
  BpeModel model;
  TextNormalizer normalizer;
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  std::unique_ptr<AddedTokenMatcher> raw_tokens, normalized_tokens;  // hold special tokens too
};

struct HfTokenizer::Session::State {
  std::unique_ptr<PreTokenizer::Matchers> matchers;
  std::unordered_map<std::string, std::vector<int32_t>> cache;
  std::string key;  // the cache's lookup key
  std::string normalized;
  std::vector<PreToken> pieces;
};

HfTokenizer::HfTokenizer(TokenizerJson definition, std::unique_ptr<Parts> parts)
    : definition_(std::move(definition)), parts_(std::move(parts)) {}
HfTokenizer::~HfTokenizer() = default;

StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::FromJson(std::string_view text, const std::string& source) {
  RUNG_ASSIGN_OR_RETURN(TokenizerJson definition, ParseTokenizerJson(text, source));
  RUNG_ASSIGN_OR_RETURN(TextNormalizer normalizer, TextNormalizer::Create(definition.normalizer));
  auto parts = std::make_unique<Parts>(definition, std::move(normalizer));
  RUNG_ASSIGN_OR_RETURN(parts->pre_tokenizer, PreTokenizer::Create(definition.pre_tokenizer, source));
  std::vector<AddedToken> raw, normalized;
  for (const AddedToken& token : definition.added_tokens) {
    // Special tokens are matched, then left as text (added_token_matcher.h).
    if (!token.normalized) {
      raw.push_back(token);
      continue;
    }
    AddedToken as_normalized = token;  // matched in normalized text, so in its normalized form
    RUNG_RETURN_IF_ERROR(parts->normalizer.Apply(token.content, &as_normalized.content));
    if (!as_normalized.content.empty()) normalized.push_back(std::move(as_normalized));
  }
  parts->raw_tokens = std::make_unique<AddedTokenMatcher>(std::move(raw));
  parts->normalized_tokens = std::make_unique<AddedTokenMatcher>(std::move(normalized));
  std::unique_ptr<HfTokenizer> tokenizer(new HfTokenizer(std::move(definition), std::move(parts)));
  const TokenizerJson& d = tokenizer->definition_;
  bool words = d.family == TokenizerFamily::kSentencePieceBpe && !d.ignore_merges &&
               d.continuing_subword_prefix.empty() && d.end_of_word_suffix.empty() &&
               d.vocab.count(std::string(kSpaceMark)) > 0;
  for (auto it = d.vocab.begin(); words && it != d.vocab.end(); ++it) words = MarksOnlyLead(it->first);
  tokenizer->splits_words_ = words;
  return tokenizer;
}

HfTokenizer::Session::Session() : state_(std::make_unique<State>()) {}
HfTokenizer::Session::~Session() = default;

std::unique_ptr<HfTokenizer::Session> HfTokenizer::NewSession() const {
  std::unique_ptr<Session> session(new Session());
  session->state_->matchers = parts_->pre_tokenizer->NewMatchers();
  return session;
}

std::optional<int64_t> HfTokenizer::TokenId(std::string_view content) const {
  for (const AddedToken& token : definition_.added_tokens) {
    if (token.content == content) return token.id;
  }
  const auto id = parts_->model.TokenId(content);
  if (!id) return std::nullopt;
  return *id;
}

void HfTokenizer::EncodeCached(std::string_view piece, Session& session, std::vector<int32_t>* ids) const {
  if (piece.size() >= kMaxCachedPieceBytes) {
    parts_->model.Encode(piece, ids);
    return;
  }
  std::string& key = session.state_->key;  // reused: no allocation per lookup
  key.assign(piece);
  const auto hit = session.state_->cache.find(key);
  if (hit != session.state_->cache.end()) {
    ids->insert(ids->end(), hit->second.begin(), hit->second.end());
    return;
  }
  if (session.state_->cache.size() >= kMaxCachedPieces) session.state_->cache.clear();
  std::vector<int32_t>& entry = session.state_->cache[key];
  parts_->model.Encode(piece, &entry);
  ids->insert(ids->end(), entry.begin(), entry.end());
}

void HfTokenizer::EncodePiece(const std::string& piece, Session& session, std::vector<int32_t>* ids) const {
  if (!splits_words_) {
    EncodeCached(piece, session, ids);
    return;
  }
  // Words start at a "▁" that follows anything else.
  size_t word = 0;
  bool after_other = false;
  for (size_t at = 0; at < piece.size();) {
    if (piece.compare(at, kSpaceMark.size(), kSpaceMark) == 0) {
      if (after_other) {
        EncodeCached(std::string_view(piece).substr(word, at - word), session, ids);
        word = at;
      }
      after_other = false;
      at += kSpaceMark.size();
    } else {
      after_other = true;
      ++at;
    }
  }
  EncodeCached(std::string_view(piece).substr(word), session, ids);
}

Status HfTokenizer::Encode(std::string_view text, bool add_special_tokens, Session& session,
                           std::vector<int32_t>* ids, bool continues) const {
  ids->clear();
  if (add_special_tokens) {
    for (const int64_t id : definition_.prefix_ids) ids->push_back(static_cast<int32_t>(id));
  }
  for (const TextSegment& segment : parts_->raw_tokens->Find(text)) {
    if (segment.id) {
      ids->push_back(*segment.id);
      continue;
    }
    if (segment.begin == segment.end) continue;
    const bool continued = continues && segment.begin == 0;
    RUNG_RETURN_IF_ERROR(parts_->normalizer.Apply(text.substr(segment.begin, segment.end - segment.begin),
                                                  &session.state_->normalized, continued));
    const std::string& normalized = session.state_->normalized;  // nothing below changes it
    for (const TextSegment& part : parts_->normalized_tokens->Find(normalized)) {
      if (part.id) {
        ids->push_back(*part.id);
        continue;
      }
      if (part.begin == part.end) continue;
      RUNG_RETURN_IF_ERROR(parts_->pre_tokenizer->Split(std::string_view(normalized).substr(part.begin, part.end - part.begin),
                                                        !continues && segment.begin == 0 && part.begin == 0,
                                                        continued && part.begin == 0, *session.state_->matchers,
                                                        &session.state_->pieces));
      for (const PreToken& piece : session.state_->pieces) EncodePiece(piece.text, session, ids);
    }
  }
  if (add_special_tokens) {
    for (const int64_t id : definition_.suffix_ids) ids->push_back(static_cast<int32_t>(id));
  }
  return Status::Ok();
}

std::vector<int32_t> HfTokenizer::TokenByteLengths() const {
  std::vector<int32_t> lengths(static_cast<size_t>(definition_.vocab_size), 0);
  for (const auto& [token, id] : definition_.vocab) {
    int32_t bytes = 0;
    if (definition_.family == TokenizerFamily::kByteLevelBpe) {
      int32_t at = 0;
      const auto size = static_cast<int32_t>(token.size());
      while (at < size) {
        const int32_t begin = at;
        UChar32 c;
        U8_NEXT(token.data(), at, size, c);
        bytes += ByteOfByteLevelCharacter(static_cast<uint32_t>(c)) >= 0 ? 1 : at - begin;
      }
    } else if (token.size() == 6 && token.compare(0, 3, "<0x") == 0 && token[5] == '>') {
      bytes = 1;
    } else {
      bytes = static_cast<int32_t>(token.size());
      for (size_t found = token.find(kSpaceMark); found != std::string::npos; found = token.find(kSpaceMark, found + 1)) {
        bytes -= static_cast<int32_t>(kSpaceMark.size()) - 1;
      }
    }
    lengths[static_cast<size_t>(id)] = bytes;
  }
  if (definition_.unk_token) lengths[static_cast<size_t>(definition_.vocab.at(*definition_.unk_token))] = 0;
  for (const AddedToken& token : definition_.added_tokens) {
    lengths[static_cast<size_t>(token.id)] = token.special ? 0 : static_cast<int32_t>(token.content.size());
  }
  return lengths;
}

}  // namespace rung::hf

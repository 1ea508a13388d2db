// fuzz/hf_tokenizer_fuzzer.cc: rung's tokenizer.json reader and encoder (core/hf/hf_tokenizer.h), what
// `rung-data encode` and `prepare` run on a Hugging Face tokenizer.json. The input is a tokenizer.json,
// optionally followed by a NUL byte and a text: the bytes before the first NUL go to
// HfTokenizer::FromJson; where it loads, fixed texts (spaces, non-ASCII, special tokens' text, a piece
// longer than the cache takes), texts made of its own added tokens and vocabulary entries, and the
// input's text (its invalid UTF-8 bytes replaced by U+FFFD: Encode takes valid UTF-8) are encoded,
// with and without the template's tokens. Errors are fine; beyond "no crash": every id is in the
// vocabulary, the template's tokens are around the ids where asked for, the same text gives the same
// ids again from a session whose cache holds its pieces and from a fresh one, and TokenByteLengths has
// one non-negative length per id.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/utf8.h"
#include "core/hf/hf_tokenizer.h"

namespace {

using rung::hf::HfTokenizer;

// `text` with every byte that does not start a valid UTF-8 character replaced by U+FFFD.
std::string ValidUtf8(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const size_t valid = rung::ValidUtf8Prefix(text);
    out.append(text.substr(0, valid));
    if (valid == text.size()) break;
    out += "\xEF\xBF\xBD";
    text.remove_prefix(valid + 1);
  }
  return out;
}

bool StartsWith(const std::vector<int32_t>& ids, const std::vector<int64_t>& prefix) {
  if (ids.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (ids[i] != prefix[i]) return false;
  }
  return true;
}

bool EndsWith(const std::vector<int32_t>& ids, const std::vector<int64_t>& suffix) {
  if (ids.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i) {
    if (ids[ids.size() - suffix.size() + i] != suffix[i]) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view json = input.substr(0, nul);
  auto loaded = HfTokenizer::FromJson(json, "fuzz/tokenizer.json");
  if (!loaded.ok()) return 0;
  const HfTokenizer& tokenizer = **loaded;
  const rung::hf::TokenizerJson& definition = tokenizer.definition();
  const int64_t vocab_size = tokenizer.vocab_size();

  const std::vector<int32_t> lengths = tokenizer.TokenByteLengths();
  if (static_cast<int64_t>(lengths.size()) != vocab_size) std::abort();
  for (int32_t length : lengths) {
    if (length < 0) std::abort();
  }

  std::vector<std::string> texts = {
      "",
      " ",
      "the tinker sat in the sun.",
      "  leading, double  and trailing spaces  ",
      "lines\nand\ttabs\r\n\v\f end",
      "caf\xC3\xA9 na\xC3\xAFve e\xCC\x81 \xEF\xAC\x81 \xE2\x91\xA0 \xF0\x9F\x8E\x89 \xE6\x97\xA5\xE6\x9C\xAC",
      "<s> </s> <unk> <|endoftext|> <|begin_of_text|> <0x41>",
      "\xE2\x96\x81\xE2\x96\x81x\xE2\x96\x81 y",
      "it's 1813, isn't it? 12345 6.7",
      std::string(300, 'a') + " \xFF" + std::string(200, 'b'),  // pieces over the cache's limit; U+FFFD
  };
  // Its own added tokens' and vocabulary entries' text, run together and apart.
  std::string added, entries;
  for (size_t i = 0; i < definition.added_tokens.size() && i < 8; ++i) {
    added += definition.added_tokens[i].content + (i % 2 == 0 ? " " : "");
  }
  size_t taken = 0;
  for (const auto& [entry, id] : definition.vocab) {
    if (taken++ == 16) break;
    entries += entry + (taken % 3 == 0 ? " " : "");
  }
  texts.push_back(added);
  texts.push_back(entries);
  if (nul != std::string_view::npos) texts.push_back(std::string(input.substr(nul + 1)));
  for (std::string& text : texts) text = ValidUtf8(text);

  std::unique_ptr<HfTokenizer::Session> session = tokenizer.NewSession();
  std::vector<std::optional<std::vector<int32_t>>> first(texts.size());
  for (size_t t = 0; t < texts.size(); ++t) {
    for (const bool special : {true, false}) {
      std::vector<int32_t> ids;
      if (!tokenizer.Encode(texts[t], special, *session, &ids).ok()) continue;
      for (int32_t id : ids) {
        if (id < 0 || id >= vocab_size) std::abort();
      }
      if (special && (!StartsWith(ids, definition.prefix_ids) || !EndsWith(ids, definition.suffix_ids))) std::abort();
      if (special) first[t] = ids;
    }
  }
  // Again, with the pieces now cached, and from a fresh session.
  std::unique_ptr<HfTokenizer::Session> fresh = tokenizer.NewSession();
  for (size_t t = texts.size(); t-- > 0;) {
    for (HfTokenizer::Session* again : {session.get(), fresh.get()}) {
      std::vector<int32_t> ids;
      if (!tokenizer.Encode(texts[t], true, *again, &ids).ok()) continue;
      if (first[t] && ids != *first[t]) std::abort();
    }
  }
  return 0;
}

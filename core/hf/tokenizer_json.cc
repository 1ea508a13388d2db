#include "core/hf/tokenizer_json.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/hf/json_keys.h"

namespace rung::hf {
namespace {

using nlohmann::json;

// Where a component sits in the file, for messages: "t/tokenizer.json: in 'pre_tokenizer.pretokenizers[1]'".
std::string In(const std::string& source, const std::string& path) { return source + ": in '" + path + "'"; }

Status Unsupported(const std::string& source, const std::string& path, const std::string& type,
                   const std::string& supported) {
  return Status::InvalidArgument(source + ": key '" + path + ".type': '" + type + "' is not supported (" + supported +
                                 ")");
}

// Sequences nest at most this deep (the library's JSON reader refuses past 128 levels of nesting).
constexpr int kMaxSequenceDepth = 32;
// Ids may skip at most this many values in all (real vocabularies skip none, or a few).
constexpr int64_t kMaxIdGap = int64_t{1} << 16;

// The steps of a component: itself, or the members of a Sequence (`list_key`).
StatusOr<std::vector<std::pair<std::string, const json*>>> Steps(const json& component, const std::string& path,
                                                                 const std::string& list_key, const std::string& source,
                                                                 int depth = 0) {
  std::vector<std::pair<std::string, const json*>> steps;
  if (depth > kMaxSequenceDepth) {
    return Status::InvalidArgument(source + ": key '" + path.substr(0, 200) + "...': Sequences nested more than " +
                                   std::to_string(kMaxSequenceDepth) + " deep");
  }
  if (component.is_null()) return steps;
  if (!component.is_object() || !component.contains("type") || !component.at("type").is_string()) {
    return Status::InvalidArgument(source + ": key '" + path + "': not an object with a type");
  }
  if (component.at("type") != "Sequence") {
    steps.emplace_back(path, &component);
    return steps;
  }
  if (!component.contains(list_key) || !component.at(list_key).is_array()) {
    return Status::InvalidArgument(source + ": key '" + path + "." + list_key + "': not a list");
  }
  for (size_t i = 0; i < component.at(list_key).size(); ++i) {
    const std::string member = path + "." + list_key + "[" + std::to_string(i) + "]";
    RUNG_ASSIGN_OR_RETURN(auto inner, Steps(component.at(list_key)[i], member, list_key, source, depth + 1));
    steps.insert(steps.end(), inner.begin(), inner.end());
  }
  return steps;
}

// True when `text` is one UTF-8 character.
bool IsOneCharacter(const std::string& text) {
  if (text.empty()) return false;
  const auto lead = static_cast<unsigned char>(text[0]);
  const size_t length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;
  return text.size() == length;
}

// A Split's or Replace's pattern: {"Regex": ...} or {"String": ...}.
Status ReadPattern(const json& object, const std::string& path, const std::string& source, std::string* pattern,
                   bool* is_regex) {
  const json& value = object.contains("pattern") ? object.at("pattern") : json();
  if (value.is_object() && value.size() == 1 && value.begin().value().is_string() &&
      (value.begin().key() == "Regex" || value.begin().key() == "String")) {
    *is_regex = value.begin().key() == "Regex";
    *pattern = value.begin().value().get<std::string>();
    if (pattern->empty()) {  // the library matches it at every character; rung does not encode that
      return Status::InvalidArgument(source + ": key '" + path + ".pattern': an empty pattern is not supported");
    }
    return Status::Ok();
  }
  return Status::InvalidArgument(source + ": key '" + path + ".pattern': not {\"Regex\": ...} or {\"String\": ...}");
}

StatusOr<std::vector<NormalizerStep>> ReadNormalizer(const json& root, const std::string& source) {
  std::vector<NormalizerStep> out;
  if (!root.contains("normalizer")) return out;
  RUNG_ASSIGN_OR_RETURN(auto steps, Steps(root.at("normalizer"), "normalizer", "normalizers", source));
  for (const auto& [path, step] : steps) {
    const std::string type = step->at("type").get<std::string>();
    const JsonKeys keys(*step, In(source, path));
    NormalizerStep normalizer;
    if (type == "NFC") {
      normalizer.kind = NormalizerStep::Kind::kNfc;
    } else if (type == "NFKC") {
      normalizer.kind = NormalizerStep::Kind::kNfkc;
    } else if (type == "Prepend") {
      normalizer.kind = NormalizerStep::Kind::kPrepend;
      RUNG_ASSIGN_OR_RETURN(normalizer.prepend, keys.String("prepend", ""));
    } else if (type == "Replace") {
      normalizer.kind = NormalizerStep::Kind::kReplace;
      bool regex = false;
      RUNG_RETURN_IF_ERROR(ReadPattern(*step, path, source, &normalizer.pattern, &regex));
      if (regex) return Status::InvalidArgument(source + ": key '" + path + ".pattern': a Regex replacement is not supported (String)");
      RUNG_ASSIGN_OR_RETURN(normalizer.content, keys.String("content", ""));
    } else {
      return Unsupported(source, path, type, "NFC, NFKC, Prepend, Replace, Sequence of them");
    }
    out.push_back(normalizer);
  }
  return out;
}

StatusOr<std::vector<PreTokenizerStep>> ReadPreTokenizer(const json& root, const std::string& source) {
  std::vector<PreTokenizerStep> out;
  if (!root.contains("pre_tokenizer")) return out;
  RUNG_ASSIGN_OR_RETURN(auto steps, Steps(root.at("pre_tokenizer"), "pre_tokenizer", "pretokenizers", source));
  for (const auto& [path, step] : steps) {
    const std::string type = step->at("type").get<std::string>();
    const JsonKeys keys(*step, In(source, path));
    PreTokenizerStep pre;
    if (type == "Split") {
      pre.kind = PreTokenizerStep::Kind::kSplit;
      RUNG_RETURN_IF_ERROR(ReadPattern(*step, path, source, &pre.pattern, &pre.pattern_is_regex));
      RUNG_ASSIGN_OR_RETURN(pre.behavior, keys.String("behavior", "Isolated"));
      static const std::set<std::string> kBehaviors = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext",
                                                       "Contiguous"};
      if (!kBehaviors.count(pre.behavior)) return keys.Error("behavior", "'" + pre.behavior + "' is not a Split behavior");
      RUNG_ASSIGN_OR_RETURN(pre.invert, keys.Flag("invert", false));
    } else if (type == "Digits") {
      pre.kind = PreTokenizerStep::Kind::kDigits;
      RUNG_ASSIGN_OR_RETURN(pre.individual_digits, keys.Flag("individual_digits", false));
    } else if (type == "ByteLevel") {
      pre.kind = PreTokenizerStep::Kind::kByteLevel;
      RUNG_ASSIGN_OR_RETURN(pre.add_prefix_space, keys.Flag("add_prefix_space", true));
      RUNG_ASSIGN_OR_RETURN(pre.use_regex, keys.Flag("use_regex", true));
    } else if (type == "Metaspace") {
      pre.kind = PreTokenizerStep::Kind::kMetaspace;
      RUNG_ASSIGN_OR_RETURN(pre.replacement, keys.String("replacement", "\xE2\x96\x81"));
      if (!IsOneCharacter(pre.replacement)) {  // the library reads a char
        return keys.Error("replacement", json(pre.replacement).dump() + " is not one character");
      }
      // Files written before prepend_scheme existed say add_prefix_space instead (false: never).
      RUNG_ASSIGN_OR_RETURN(const bool add_prefix_space, keys.Flag("add_prefix_space", true));
      RUNG_ASSIGN_OR_RETURN(pre.prepend_scheme, keys.String("prepend_scheme", add_prefix_space ? "always" : "never"));
      if (pre.prepend_scheme != "always" && pre.prepend_scheme != "first" && pre.prepend_scheme != "never") {
        return keys.Error("prepend_scheme", "'" + pre.prepend_scheme + "' is not always, first or never");
      }
      RUNG_ASSIGN_OR_RETURN(pre.split, keys.Flag("split", true));
    } else {
      return Unsupported(source, path, type, "Split, Digits, ByteLevel, Metaspace, Sequence of them");
    }
    out.push_back(pre);
  }
  return out;
}

// TemplateProcessing's "single" template: the special tokens before and after $A, by name; their ids
// are resolved by ResolveTemplateIds once the vocabulary is read.
Status ReadTemplate(const json& root, const std::string& source, TokenizerJson* out,
                    std::vector<std::pair<std::string, const json*>> maps[2]) {
  if (!root.contains("post_processor")) return Status::Ok();
  RUNG_ASSIGN_OR_RETURN(auto steps, Steps(root.at("post_processor"), "post_processor", "processors", source));
  for (const auto& [path, step] : steps) {
    const std::string type = step->at("type").get<std::string>();
    if (type == "ByteLevel") continue;  // offsets only
    if (type != "TemplateProcessing") return Unsupported(source, path, type, "TemplateProcessing, ByteLevel, Sequence of them");
    const json single = step->value("single", json::array());
    if (!single.is_array()) return Status::InvalidArgument(source + ": key '" + path + ".single': not a list");
    bool after = false;
    for (const json& piece : single) {
      if (piece.is_object() && piece.contains("Sequence")) {
        after = true;
      } else if (piece.is_object() && piece.contains("SpecialToken") && piece.at("SpecialToken").is_object() &&
                 piece.at("SpecialToken").contains("id") && piece.at("SpecialToken").at("id").is_string()) {
        (after ? out->suffix_tokens : out->prefix_tokens).push_back(piece.at("SpecialToken").at("id").get<std::string>());
        maps[after ? 1 : 0].emplace_back(path, step->contains("special_tokens") ? &step->at("special_tokens") : nullptr);
      } else {
        return Status::InvalidArgument(source + ": key '" + path + ".single': " + piece.dump() +
                                       " is neither a Sequence nor a SpecialToken");
      }
    }
  }
  return Status::Ok();
}

// The ids of one template token: its special_tokens entry's ids, else the added token or vocabulary
// entry of that content.
Status ResolveTemplateIds(const std::string& name, const std::string& path, const json* map, const TokenizerJson& tokenizer,
                          const std::string& source, std::vector<int64_t>* ids) {
  if (map != nullptr && !map->is_object()) {
    return Status::InvalidArgument(source + ": key '" + path + ".special_tokens': not an object");
  }
  if (map != nullptr && map->contains(name)) {
    const json& entry = map->at(name);
    if (!entry.is_object() || !entry.contains("ids") || !entry.at("ids").is_array()) {
      return Status::InvalidArgument(source + ": key '" + path + ".special_tokens." + name + ".ids': not a list");
    }
    for (const json& id : entry.at("ids")) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= tokenizer.vocab_size) {
        return Status::InvalidArgument(source + ": key '" + path + ".special_tokens." + name + ".ids': " + id.dump() +
                                       " is not an id of the vocabulary");
      }
      ids->push_back(id.get<int64_t>());
    }
    return Status::Ok();
  }
  for (const AddedToken& token : tokenizer.added_tokens) {
    if (token.content == name) {
      ids->push_back(token.id);
      return Status::Ok();
    }
  }
  const auto in_vocab = tokenizer.vocab.find(name);
  if (in_vocab == tokenizer.vocab.end()) {
    return Status::InvalidArgument(source + ": key '" + path + "': its token " + json(name).dump() + " is not in the vocabulary");
  }
  ids->push_back(in_vocab->second);
  return Status::Ok();
}

}  // namespace

StatusOr<TokenizerJson> ParseTokenizerJson(std::string_view text, const std::string& source) {
  RUNG_ASSIGN_OR_RETURN(const json root, ParseJson(text, source));
  if (!root.is_object() || !root.contains("model") || !root.at("model").is_object()) {
    return Status::InvalidArgument(source + ": no 'model' object (a Hugging Face tokenizer.json has one)");
  }
  TokenizerJson out;
  const json& model = root.at("model");
  const JsonKeys model_keys(model, In(source, "model"));
  RUNG_ASSIGN_OR_RETURN(std::string type, model_keys.String("type", "BPE"));
  if (type != "BPE") return Unsupported(source, "model", type, "BPE");
  RUNG_ASSIGN_OR_RETURN(out.byte_fallback, model_keys.Flag("byte_fallback", false));
  RUNG_ASSIGN_OR_RETURN(out.fuse_unk, model_keys.Flag("fuse_unk", false));
  RUNG_ASSIGN_OR_RETURN(out.ignore_merges, model_keys.Flag("ignore_merges", false));
  RUNG_ASSIGN_OR_RETURN(out.continuing_subword_prefix, model_keys.String("continuing_subword_prefix", ""));
  RUNG_ASSIGN_OR_RETURN(out.end_of_word_suffix, model_keys.String("end_of_word_suffix", ""));
  RUNG_ASSIGN_OR_RETURN(std::string unk, model_keys.String("unk_token", ""));
  if (!unk.empty()) out.unk_token = unk;
  RUNG_ASSIGN_OR_RETURN(const double dropout, model_keys.Number("dropout", 0.0, 0.0, 1.0));
  if (dropout != 0.0) {
    return model_keys.Error("dropout", "BPE dropout makes encoding random; rung encodes deterministically");
  }

  if (!model.contains("vocab") || !model.at("vocab").is_object()) return model_keys.Error("vocab", "not an object");
  std::set<int64_t> ids;
  for (const auto& [token, id] : model.at("vocab").items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= (int64_t{1} << 31)) {
      return model_keys.Error("vocab", "token " + json(token).dump() + " has id " + id.dump() + ", not a token id");
    }
    if (!ids.insert(id.get<int64_t>()).second) {
      return model_keys.Error("vocab", "id " + id.dump() + " is given to two tokens");
    }
    out.vocab.emplace(token, id.get<int64_t>());
  }
  if (!model.contains("merges") || !model.at("merges").is_array()) return model_keys.Error("merges", "not a list");
  const json& merges = model.at("merges");
  out.merges.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& merge = merges[rank];
    std::pair<std::string, std::string> parts;
    if (merge.is_string()) {  // "a b": split at the first space (neither part holds a space)
      const std::string& text_merge = merge.get_ref<const std::string&>();
      const size_t space = text_merge.find(' ');
      if (space == std::string::npos || space == 0 || space + 1 >= text_merge.size() ||
          text_merge.find(' ', space + 1) != std::string::npos) {
        return model_keys.Error("merges", "merge " + std::to_string(rank) + " " + merge.dump() + " is not \"a b\"");
      }
      parts = {text_merge.substr(0, space), text_merge.substr(space + 1)};
    } else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      parts = {merge[0].get<std::string>(), merge[1].get<std::string>()};
    } else {
      return model_keys.Error("merges", "merge " + std::to_string(rank) + " " + merge.dump() + " is not \"a b\" or [a, b]");
    }
    // The merged token, as the library forms it: the second part loses continuing_subword_prefix.
    if (parts.second.size() < out.continuing_subword_prefix.size()) {
      return model_keys.Error("merges", "merge " + std::to_string(rank) + " " + merge.dump() +
                                            ": its second part is shorter than continuing_subword_prefix");
    }
    const std::string merged = parts.first + parts.second.substr(out.continuing_subword_prefix.size());
    for (const std::string& token : {parts.first, parts.second, merged}) {
      if (!out.vocab.count(token)) {
        return model_keys.Error("merges", "merge " + std::to_string(rank) + " " + merge.dump() + ": " + json(token).dump() +
                                              " is not in the vocabulary");
      }
    }
    out.merges.push_back(std::move(parts));
  }

  if (root.contains("added_tokens") && !root.at("added_tokens").is_null()) {
    if (!root.at("added_tokens").is_array()) return Status::InvalidArgument(source + ": key 'added_tokens': not a list");
    std::unordered_map<std::string, int64_t> added_ids;
    int64_t largest_added = -1;
    for (size_t i = 0; i < root.at("added_tokens").size(); ++i) {
      const json& entry = root.at("added_tokens")[i];
      const std::string path = "added_tokens[" + std::to_string(i) + "]";
      if (!entry.is_object() || !entry.contains("id") || !entry.at("id").is_number_integer() || entry.at("id").get<int64_t>() < 0 ||
          !entry.contains("content") || !entry.at("content").is_string() || entry.at("content").get<std::string>().empty()) {
        return Status::InvalidArgument(source + ": key '" + path + "': needs an id and a non-empty content");
      }
      const JsonKeys keys(entry, In(source, path));
      AddedToken token;
      token.id = entry.at("id").get<int64_t>();
      token.content = entry.at("content").get<std::string>();
      RUNG_ASSIGN_OR_RETURN(token.special, keys.Flag("special", false));
      RUNG_ASSIGN_OR_RETURN(token.single_word, keys.Flag("single_word", false));
      RUNG_ASSIGN_OR_RETURN(token.lstrip, keys.Flag("lstrip", false));
      RUNG_ASSIGN_OR_RETURN(token.rstrip, keys.Flag("rstrip", false));
      RUNG_ASSIGN_OR_RETURN(token.normalized, keys.Flag("normalized", !token.special));
      // The library ignores the file's id: a content it already knows keeps that id (an earlier added
      // token's, else the vocabulary's), a new one takes the next id after the vocabulary and the added
      // tokens so far. A file that says otherwise would give ids the library does not.
      int64_t library_id = 0;
      if (const auto known = added_ids.find(token.content); known != added_ids.end()) {
        library_id = known->second;
      } else if (const auto in_vocab = out.vocab.find(token.content); in_vocab != out.vocab.end()) {
        library_id = in_vocab->second;
      } else {
        const auto vocab_entries = static_cast<int64_t>(out.vocab.size());
        library_id = added_ids.empty() || largest_added < vocab_entries ? vocab_entries : largest_added + 1;
      }
      if (library_id != token.id) {
        return keys.Error("id", std::to_string(token.id) + " for " + json(token.content).dump() +
                                    " is not the id Hugging Face tokenizers gives it (" + std::to_string(library_id) +
                                    ": a known content keeps its id, a new one follows the vocabulary and the added "
                                    "tokens before it), so rung cannot give the library's ids");
      }
      if (added_ids.emplace(token.content, token.id).second) largest_added = std::max(largest_added, token.id);
      ids.insert(token.id);
      out.added_tokens.push_back(std::move(token));
    }
  }
  if (out.unk_token && !out.vocab.count(*out.unk_token)) {
    return model_keys.Error("unk_token", json(*out.unk_token).dump() + " is not in the vocabulary");
  }

  RUNG_ASSIGN_OR_RETURN(out.normalizer, ReadNormalizer(root, source));
  RUNG_ASSIGN_OR_RETURN(out.pre_tokenizer, ReadPreTokenizer(root, source));
  out.vocab_size = ids.empty() ? 0 : *ids.rbegin() + 1;
  // Every table indexed by id (byte lengths, shard widths) is this long: ids far past the entries are
  // refused rather than allocated.
  if (out.vocab_size > static_cast<int64_t>(ids.size()) + kMaxIdGap) {
    return Status::InvalidArgument(source + ": the largest id, " + std::to_string(out.vocab_size - 1) + ", lies more than " +
                                   std::to_string(kMaxIdGap) + " past the " + std::to_string(ids.size()) +
                                   " ids the vocabulary and added tokens hold");
  }
  std::vector<std::pair<std::string, const json*>> template_maps[2];  // prefix, suffix
  RUNG_RETURN_IF_ERROR(ReadTemplate(root, source, &out, template_maps));
  for (size_t i = 0; i < out.prefix_tokens.size(); ++i) {
    RUNG_RETURN_IF_ERROR(ResolveTemplateIds(out.prefix_tokens[i], template_maps[0][i].first, template_maps[0][i].second,
                                            out, source, &out.prefix_ids));
  }
  for (size_t i = 0; i < out.suffix_tokens.size(); ++i) {
    RUNG_RETURN_IF_ERROR(ResolveTemplateIds(out.suffix_tokens[i], template_maps[1][i].first, template_maps[1][i].second,
                                            out, source, &out.suffix_ids));
  }
  const bool byte_level = std::any_of(out.pre_tokenizer.begin(), out.pre_tokenizer.end(), [](const PreTokenizerStep& step) {
    return step.kind == PreTokenizerStep::Kind::kByteLevel;
  });
  out.family = byte_level ? TokenizerFamily::kByteLevelBpe : TokenizerFamily::kSentencePieceBpe;
  return out;
}

}  // namespace rung::hf

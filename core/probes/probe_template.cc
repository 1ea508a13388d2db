#include "core/probes/probe_template.h"

#include <algorithm>
#include <array>

#include "core/data/sampling.h"

namespace rung {
namespace {

constexpr uint64_t kProbeDomain = 0x70726f6265ULL;  // "probe": instance i's facts come from (this, i)

constexpr std::array<const char*, 32> kAdjectives = {
    "amber", "brisk", "calm", "dusty", "eager", "faint", "gentle", "hollow", "icy", "jolly", "keen",
    "lofty", "mellow", "nimble", "olive", "proud", "quiet", "rustic", "silver", "tidy", "upbeat", "vivid",
    "wary", "young", "zesty", "bold", "crisp", "deep", "early", "fancy", "grand", "humble"};
constexpr std::array<const char*, 32> kNouns = {
    "anchor", "badger", "candle", "dragon", "engine", "falcon", "garden", "harbor", "island", "jacket",
    "kettle", "lantern", "meadow", "needle", "orchard", "pepper", "quarry", "river", "saddle", "tunnel",
    "umbrella", "valley", "walnut", "yarrow", "zephyr", "beacon", "cellar", "desert", "ember", "forest",
    "glacier", "hammer"};

std::string Digits(CounterRng& rng, int64_t count) {
  std::string key(1, static_cast<char>('1' + rng.Below(9)));
  while (static_cast<int64_t>(key.size()) < count) key += static_cast<char>('0' + rng.Below(10));
  return key;
}

std::string Name(CounterRng& rng) {
  return std::string(kAdjectives[rng.Below(kAdjectives.size())]) + "-" + kNouns[rng.Below(kNouns.size())];
}

void ReplaceAll(std::string* text, const std::string& from, const std::string& to) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size())) {
    text->replace(at, from.size(), to);
  }
}

}  // namespace

ProbeTexts ProbeTextsOf(const ProbeConfig& probe) {
  ProbeTexts texts;
  if (probe.kind == "passkey") {
    texts.prefix = "There is an important info hidden inside a lot of irrelevant text. Find it and memorize them. "
                   "I will quiz you about the important information there.";
    texts.filler_text = " The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.";
    texts.needle = " The pass key is {key}. Remember it. {key} is the pass key.";
    texts.query = " What is the pass key? The pass key is";
    texts.answer = " {key}";
  } else if (probe.kind == "niah") {
    texts.prefix = "Some special magic numbers are hidden within the following text. Make sure to memorize it. "
                   "I will quiz you about the numbers afterwards.";
    texts.needle = " One of the special magic numbers for {name} is: {key}.";
    texts.query = " What is the special magic number for {name} mentioned in the provided text? The special magic "
                  "number for {name} mentioned in the provided text is";
    texts.answer = " {key}";
  } else {
    texts.prefix = probe.prefix;
    texts.needle = probe.needle;
    texts.query = probe.query;
    texts.answer = probe.answer;
  }
  if (!probe.filler_text.empty()) texts.filler_text = probe.filler_text;
  return texts;
}

ProbeInstanceFacts ProbeInstance(const ProbeConfig& probe, int64_t instance) {
  CounterRng rng(MixKey(kProbeDomain, static_cast<uint64_t>(instance)));
  ProbeInstanceFacts facts;
  facts.key = Digits(rng, probe.key_digits);
  facts.name = Name(rng);
  std::vector<std::string> keys = {facts.key}, names = {facts.name};
  for (int64_t d = 0; d < probe.distractors; ++d) {
    std::string key = Digits(rng, probe.key_digits), name = Name(rng);
    // Distinct names always (a name asks for one key); distinct keys where there are enough of them.
    for (int tries = 0; tries < 64 && std::find(names.begin(), names.end(), name) != names.end(); ++tries) name = Name(rng);
    for (int tries = 0; tries < 64 && std::find(keys.begin(), keys.end(), key) != keys.end(); ++tries) {
      key = Digits(rng, probe.key_digits);
    }
    keys.push_back(key);
    names.push_back(name);
    facts.distractor_keys.push_back(key);
    facts.distractor_names.push_back(name);
  }
  return facts;
}

std::string FillProbeText(const std::string& text, const std::string& key, const std::string& name) {
  std::string filled = text;
  ReplaceAll(&filled, "{key}", key);
  ReplaceAll(&filled, "{name}", name);
  return filled;
}

}  // namespace rung

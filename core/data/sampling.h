// core/data/sampling.h
//
// Internal to core/data. Counter-based randomness and the window arithmetic shared by the token-stream
// sources (text, builtin, shards).
//
// Every random draw is a pure function of a key built from integers (seed, batch index, row, ...), so
// any batch can be regenerated without replaying the ones before it. SplitMix64 (Steele, Lea & Flood
// 2014) both mixes the key and steps the stream.
//
// Windows: a batch row is seq_len + 1 consecutive tokens of a split's stream; inputs are the first
// seq_len, targets the last seq_len. Training rows start at a position drawn from
// (seed, index, row); validation rows enumerate the non-overlapping windows [w*seq_len, w*seq_len +
// seq_len] in order, w = (index * batch_size + row) mod window_count. A stream shorter than seq_len + 1
// is read circularly (position p means p mod stream_tokens), so every request gets a full batch.
// With data.eval_min_doc_tokens, validation windows start inside the long documents only
// (DocumentWindowStart).
//
// Thread safety: values and pure functions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/data/batch_source.h"

namespace rung {

// SplitMix64's output function: a bijective avalanche mix of a 64-bit word.
inline uint64_t SplitMix64Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Folds one more integer into a key. Order matters: MixKey(MixKey(k, a), b) != MixKey(MixKey(k, b), a).
inline uint64_t MixKey(uint64_t key, uint64_t value) {
  return SplitMix64Mix(key ^ SplitMix64Mix(value + 0x9E3779B97F4A7C15ULL));
}

// Domain constants keep the key streams of different uses apart.
inline constexpr uint64_t kTrainWindowDomain = 0x7261696E57696E64ULL;      // "rainWind"
inline constexpr uint64_t kDocumentSplitDomain = 0x446F6353706C6974ULL;    // "DocSplit"
inline constexpr uint64_t kSyntheticTrainDomain = 0x53796E547261696EULL;   // "SynTrain"
inline constexpr uint64_t kSyntheticValidationDomain = 0x53796E56616C6964ULL;  // "SynValid"

// A SplitMix64 stream started at a key.
class CounterRng {
 public:
  explicit CounterRng(uint64_t key) : state_(key) {}

  uint64_t Next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    return SplitMix64Mix(state_);
  }

  // Uniform in [0, n), unbiased (rejects the top partial block of the 64-bit range).
  // REQUIRES: n > 0.
  uint64_t Below(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t draw = Next();
    while (draw >= limit) draw = Next();
    return draw % n;
  }

  // Uniform in [0, 1), 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

// First stream position of training row `row` of batch `index`. REQUIRES: stream_tokens > 0.
inline int64_t TrainWindowStart(uint64_t seed, int64_t index, int64_t row, int64_t stream_tokens,
                                int64_t seq_len) {
  CounterRng rng(MixKey(MixKey(MixKey(seed, kTrainWindowDomain), static_cast<uint64_t>(index)),
                        static_cast<uint64_t>(row)));
  const int64_t starts = stream_tokens > seq_len ? stream_tokens - seq_len : stream_tokens;
  return static_cast<int64_t>(rng.Below(static_cast<uint64_t>(starts)));
}

// First stream position of validation row `row` of batch `index`. REQUIRES: stream_tokens > 0.
inline int64_t ValidationWindowStart(int64_t index, int64_t batch_size, int64_t row, int64_t stream_tokens,
                                     int64_t seq_len) {
  const uint64_t windows = static_cast<uint64_t>(std::max<int64_t>(1, (stream_tokens - 1) / seq_len));
  const uint64_t window =
      (static_cast<uint64_t>(index) * static_cast<uint64_t>(batch_size) + static_cast<uint64_t>(row)) % windows;
  return static_cast<int64_t>(window) * seq_len;
}

// The documents of a stream of `stream_tokens` tokens with at least `min_tokens` tokens, in order. A
// document starts at each position p where starts_document(p) holds and runs to the next such position
// (or the stream's end); tokens before the first start belong to no document.
template <typename StartsDocument>
std::vector<DocumentSpan> LongDocuments(int64_t stream_tokens, int64_t min_tokens, const StartsDocument& starts_document) {
  std::vector<DocumentSpan> documents;
  int64_t start = -1;
  auto close = [&](int64_t end) {
    if (start >= 0 && end - start >= min_tokens) documents.push_back({start, end - start});
  };
  for (int64_t p = 0; p < stream_tokens; ++p) {
    if (starts_document(p)) {
      close(p);
      start = p;
    }
  }
  close(stream_tokens);
  return documents;
}

// First stream position of validation row `row` of batch `index` when validation keeps to `documents`
// (data.eval_min_doc_tokens): each document holds the non-overlapping windows of seq_len + 1 tokens
// starting at its start that fit inside it (at least one, from its start), enumerated document by
// document; w = (index * batch_size + row) mod their count. REQUIRES: documents is not empty.
inline int64_t DocumentWindowStart(const std::vector<DocumentSpan>& documents, int64_t index, int64_t batch_size,
                                   int64_t row, int64_t seq_len) {
  auto windows_in = [seq_len](const DocumentSpan& document) {
    return std::max<int64_t>(1, (document.tokens - 1) / seq_len);
  };
  uint64_t total = 0;
  for (const DocumentSpan& document : documents) total += static_cast<uint64_t>(windows_in(document));
  uint64_t window =
      (static_cast<uint64_t>(index) * static_cast<uint64_t>(batch_size) + static_cast<uint64_t>(row)) % total;
  for (const DocumentSpan& document : documents) {
    const auto count = static_cast<uint64_t>(windows_in(document));
    if (window < count) return document.start + static_cast<int64_t>(window) * seq_len;
    window -= count;
  }
  return documents.front().start;  // not reached
}

// Builds a batch of windows over a stream of `stream_tokens` tokens (see the file comment); validation
// windows keep to `eval_documents` when it is given and not empty (DocumentWindowStart).
// copy(start, count, out) writes stream tokens [start, start + count) to out; it is only called with
// 0 <= start and start + count <= stream_tokens. REQUIRES: stream_tokens > 0, batch_size >= 0, seq_len >= 1.
template <typename CopyTokens>
TokenBatch MakeWindowBatch(Split split, int64_t index, int64_t batch_size, int64_t seq_len, uint64_t seed,
                           int64_t stream_tokens, const CopyTokens& copy,
                           const std::vector<DocumentSpan>* eval_documents = nullptr) {
  const bool by_document = eval_documents != nullptr && !eval_documents->empty();
  TokenBatch batch;
  batch.batch_size = batch_size;
  batch.seq_len = seq_len;
  batch.inputs.resize(static_cast<size_t>(batch_size * seq_len));
  batch.targets.resize(static_cast<size_t>(batch_size * seq_len));
  std::vector<int32_t> window(static_cast<size_t>(seq_len + 1));
  for (int64_t row = 0; row < batch_size; ++row) {
    int64_t position = split == Split::kTrain ? TrainWindowStart(seed, index, row, stream_tokens, seq_len)
                       : by_document ? DocumentWindowStart(*eval_documents, index, batch_size, row, seq_len)
                                     : ValidationWindowStart(index, batch_size, row, stream_tokens, seq_len);
    for (int64_t filled = 0; filled < seq_len + 1;) {
      const int64_t count = std::min(seq_len + 1 - filled, stream_tokens - position);
      copy(position, count, window.data() + filled);
      filled += count;
      position = 0;  // only a stream shorter than the window (or a document near its end) wraps
    }
    std::copy(window.begin(), window.end() - 1, batch.inputs.begin() + row * seq_len);
    std::copy(window.begin() + 1, window.end(), batch.targets.begin() + row * seq_len);
  }
  return batch;
}

}  // namespace rung

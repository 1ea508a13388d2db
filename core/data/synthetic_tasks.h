// core/data/synthetic_tasks.h
//
// The synthetic tasks of docs/science.md section 8, generated in process: "nrw" (needle retrieval from a
// window), "niah" (multi-key needle in a haystack) and "position_index". Each batch row is one
// instance: seq_len + 1 tokens t[0..seq_len], inputs t[0, seq_len), targets t[1, seq_len]. Only the
// last input position (seq_len - 1) is scored: loss_mask is 1 there and 0 elsewhere, and its target is
// the answer. Targets elsewhere are still the next input token, so "targets are inputs shifted by one"
// holds everywhere but at the answer.
//
// Randomness: row r of batch i is a pure function of (key, i, r, seq_len) and does not depend on the
// batch size. Training keys come from the trial seed; validation keys from data.split_seed and a
// different domain constant, so validation instances come from their own stream and are the same for
// every training seed of a sweep (paired comparisons). Small tasks (NRW has only about 2 * seq_len
// distinct instances) repeat instances within and across splits all the same.
//
// Token layouts (vocab_size() == DataVocabSize(config) of core/config/trial_config.h):
//
//   nrw             ids: BG=0, NEEDLE=1, QUERY=2, YES=3, NO=4.
//                   BG ... NEEDLE ... BG QUERY | answer. The only NEEDLE sits delta positions before
//                   QUERY (input position seq_len - 1 - delta, 1 <= delta <= seq_len - 1). Answer YES iff
//                   |delta - c| <= W/2 (c = window_centre, W = window_width), NO iff |delta - c| >
//                   (1 + r) W/2 (r = buffer, AdaRoPE appendix D); distances in between are never drawn. Each
//                   instance is YES or NO with probability 1/2; delta is uniform over the allowed
//                   distances of its class.
//
//   niah            ids: filler [0, F), keys [F, F+K), values [F+K, F+K+V), KEY_MARK = F+K+V,
//                   VALUE_MARK = F+K+V+1, QUERY = F+K+V+2, BOS = F+K+V+3 (F, K, V: filler_symbols,
//                   key_symbols, value_symbols).
//                   BOS, haystack of seq_len - 3 tokens, QUERY key | value. The haystack is iid uniform
//                   filler holding 1 + D key-value pairs "KEY_MARK key VALUE_MARK value" with distinct
//                   keys and uniform values: the needle, whose KEY_MARK starts at haystack offset
//                   round(depth * (seq_len - 7)) with depth uniform in {0, 0.1, ..., 1}, and D
//                   distractors, D uniform in [0, max_distractors], placed at random in the rest of the
//                   haystack. The query asks for the needle's key; the answer is its value. Needs
//                   seq_len >= 4 * (max_distractors + 1) + 3; near that length a distractor that cannot fit
//                   beside the needle is dropped (Instance().niah_distractors counts those placed).
//
//   position_index  ids: symbols [0, S), QUERY = S, BOS = S + 1 (S = symbols).
//                   BOS, n list symbols (iid uniform), QUERY, k written as D base-S digits (most
//                   significant first, symbol ids as digits) | list[k]. D is the smallest D >= 1 with
//                   S^D >= n, and n = seq_len - 2 - D, so the list fills the sequence; k is uniform in
//                   [0, n). Chance accuracy 1/S. Needs seq_len >= 4.
//
// A Batch() asked for a seq_len shorter than MinSeqLen() cannot hold an instance: such rows are all
// token 0 with loss_mask 0 everywhere.
//
// Thread safety: immutable after creation; const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/data_config.h"
#include "core/data/batch_source.h"

namespace rung {

// NRW token ids.
struct NrwTokens {
  static constexpr int32_t kBackground = 0;
  static constexpr int32_t kNeedle = 1;
  static constexpr int32_t kQuery = 2;
  static constexpr int32_t kYes = 3;
  static constexpr int32_t kNo = 4;
};

// One generated instance and the facts it was built from (for tests and per-condition evaluation,
// e.g. NIAH accuracy by depth and distractor count). Facts of other tasks stay -1.
struct SyntheticInstance {
  std::vector<int32_t> tokens;  // seq_len + 1 tokens; empty if seq_len < MinSeqLen()
  int64_t answer_position = 0;  // the input position whose target is the answer: seq_len - 1

  int64_t nrw_delta = -1;            // NEEDLE's distance back from QUERY
  int64_t niah_depth_tenths = -1;    // needle depth, 0..10 tenths of the usable haystack
  int64_t niah_distractors = -1;     // distractor pairs placed
  int64_t niah_needle_offset = -1;   // token index of the needle's KEY_MARK in `tokens`
  int64_t position_index_k = -1;     // the queried list position
};

// Base of the three tasks: batching, keys and description; subclasses generate instances.
class SyntheticTask : public BatchSource {
 public:
  // Builds the task named by config.source ("nrw", "niah", "position_index").
  // Errors: INVALID_ARGUMENT if config.seq_len < MinSeqLen() or the settings leave nothing to draw
  // (e.g. an NRW buffer that excludes every YES distance).
  static StatusOr<std::unique_ptr<SyntheticTask>> Create(const DataConfig& config, uint64_t seed);

  // Row `row` of batch `index` of a split at length seq_len.
  SyntheticInstance Instance(Split split, int64_t index, int64_t row, int64_t seq_len) const;

  // Shortest seq_len that holds an instance.
  virtual int64_t MinSeqLen() const = 0;

  int64_t vocab_size() const override { return vocab_size_; }
  TokenBatch Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const override;
  int64_t SplitTokens(Split) const override { return 0; }  // unbounded

  // {"source", "vocab_size", "seq_len", "settings": {task block}, "train_seed", "validation_seed",
  //  "layout": one line describing the token layout}
  nlohmann::json Describe() const override;

 protected:
  SyntheticTask(const DataConfig& config, uint64_t seed, int64_t vocab_size);

  // Fills instance->tokens (seq_len + 1 tokens) and the task's facts from draws of `key`'s stream.
  // REQUIRES: seq_len >= MinSeqLen().
  virtual void Generate(uint64_t key, int64_t seq_len, SyntheticInstance* instance) const = 0;

  // The key of row `row` of batch `index` of a split; instances are pure functions of it.
  uint64_t InstanceKey(Split split, int64_t index, int64_t row) const;

  // A batch of `batch_size` rows of `seq_len` zeros with an all-zero loss mask, for PutRow to fill.
  static TokenBatch EmptyBatch(int64_t batch_size, int64_t seq_len);
  // Writes `instance` as row `row` of `batch` (inputs, targets, the loss mask at the answer).
  static void PutRow(const SyntheticInstance& instance, int64_t row, TokenBatch* batch);
  virtual nlohmann::json Settings() const = 0;
  virtual std::string Layout() const = 0;

  const DataConfig config_;

 private:
  uint64_t seed_;
  int64_t vocab_size_;
};

class NrwTask : public SyntheticTask {
 public:
  NrwTask(const DataConfig& config, uint64_t seed);
  int64_t MinSeqLen() const override;

  // Allowed needle distances at a sequence length: YES draws from [yes_min, yes_max], NO draws from
  // [1, no_below_max] and [no_above_min, seq_len - 1] (an empty range has min > max).
  struct Distances {
    int64_t yes_min, yes_max;
    int64_t no_below_max;
    int64_t no_above_min, no_above_max;
    int64_t yes_count() const { return yes_max >= yes_min ? yes_max - yes_min + 1 : 0; }
    int64_t no_count() const {
      return (no_below_max >= 1 ? no_below_max : 0) + (no_above_max >= no_above_min ? no_above_max - no_above_min + 1 : 0);
    }
  };
  Distances AllowedDistances(int64_t seq_len) const;

  // Whether a needle at distance delta means YES (|delta - c| <= W/2).
  bool InsideWindow(int64_t delta) const;

 protected:
  void Generate(uint64_t key, int64_t seq_len, SyntheticInstance* instance) const override;
  nlohmann::json Settings() const override;
  std::string Layout() const override;

 private:
  int64_t yes_max_offset_;  // YES: |delta - c| <= yes_max_offset_
  int64_t no_min_offset_;   // NO:  |delta - c| >= no_min_offset_
};

class NiahTask : public SyntheticTask {
 public:
  NiahTask(const DataConfig& config, uint64_t seed);
  int64_t MinSeqLen() const override { return 7; }  // BOS, one pair, QUERY key, answer
  int64_t MinSeqLenForAllDistractors() const { return 4 * (config_.niah.max_distractors + 1) + 3; }

  int32_t key_mark() const { return first_special_; }
  int32_t value_mark() const { return first_special_ + 1; }
  int32_t query() const { return first_special_ + 2; }
  int32_t bos() const { return first_special_ + 3; }
  int32_t first_key() const { return static_cast<int32_t>(config_.niah.filler_symbols); }
  int32_t first_value() const { return static_cast<int32_t>(config_.niah.filler_symbols + config_.niah.key_symbols); }

  // `count` validation instances of one cell of the evaluation grid: the needle at depth `depth_tenths`
  // (0..10) with `distractors` distractor pairs (as many as fit where the haystack holds fewer; each
  // instance's niah_distractors says how many). Row r of cell (depth, distractors) is the same at every
  // call, for every training seed. `instances`, when given, receives the instances.
  TokenBatch GridBatch(int64_t depth_tenths, int64_t distractors, int64_t count, int64_t seq_len,
                       std::vector<SyntheticInstance>* instances = nullptr) const;

 protected:
  void Generate(uint64_t key, int64_t seq_len, SyntheticInstance* instance) const override;
  // Generate with the depth and the distractor count given (-1: drawn).
  void GenerateAt(uint64_t key, int64_t seq_len, int64_t depth_tenths, int64_t distractors,
                  SyntheticInstance* instance) const;
  nlohmann::json Settings() const override;
  std::string Layout() const override;

 private:
  int32_t first_special_;
};

class PositionIndexTask : public SyntheticTask {
 public:
  PositionIndexTask(const DataConfig& config, uint64_t seed);
  int64_t MinSeqLen() const override { return 4; }  // BOS, one symbol, QUERY, one digit, answer

  int32_t query() const { return static_cast<int32_t>(config_.position_index.symbols); }
  int32_t bos() const { return static_cast<int32_t>(config_.position_index.symbols + 1); }

  // D, the number of base-S digits of the index at a sequence length, and n = seq_len - 2 - D.
  int64_t IndexDigits(int64_t seq_len) const;
  int64_t ListLength(int64_t seq_len) const { return seq_len - 2 - IndexDigits(seq_len); }

 protected:
  void Generate(uint64_t key, int64_t seq_len, SyntheticInstance* instance) const override;
  nlohmann::json Settings() const override;
  std::string Layout() const override;
};

}  // namespace rung

#include "core/data/synthetic_tasks.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/config/trial_config.h"
#include "core/data/sampling.h"

namespace rung {
namespace {

// Slack for the floating-point outer edge: (1 + r) W/2 computed in double lands within this of the exact
// value, and an exact integer edge must count as reached.
constexpr double kEdgeSlack = 1e-9;

// Places `blocks` non-overlapping 4-token pairs in a segment of `length` tokens starting at `origin`;
// returns their start positions, uniform over the arrangements of the gaps.
std::vector<int64_t> PlaceBlocks(CounterRng* rng, int64_t origin, int64_t length, int64_t blocks) {
  std::vector<int64_t> starts(static_cast<size_t>(blocks));
  const int64_t free_tokens = length - 4 * blocks;
  for (int64_t& start : starts) start = static_cast<int64_t>(rng->Below(static_cast<uint64_t>(free_tokens + 1)));
  std::sort(starts.begin(), starts.end());
  for (int64_t b = 0; b < blocks; ++b) starts[static_cast<size_t>(b)] += origin + 4 * b;
  return starts;
}

}  // namespace

// ---- SyntheticTask ----------------------------------------------------------------------------------

SyntheticTask::SyntheticTask(const DataConfig& config, uint64_t seed, int64_t vocab_size)
    : config_(config), seed_(seed), vocab_size_(vocab_size) {}

StatusOr<std::unique_ptr<SyntheticTask>> SyntheticTask::Create(const DataConfig& config, uint64_t seed) {
  std::unique_ptr<SyntheticTask> task;
  if (config.source == "nrw") {
    if (config.nrw.window_width <= 0 || config.nrw.window_centre <= 0) {
      return Status::InvalidArgument("data.nrw: window_centre and window_width must be positive");
    }
    if (!(config.nrw.buffer >= 0.0 && config.nrw.buffer <= kMaxNrwBuffer)) {
      return Status::InvalidArgument("data.nrw.buffer must lie in [0, " + std::to_string(static_cast<int>(kMaxNrwBuffer)) +
                                     "] (r of the NO band beyond (1 + r) W/2)");
    }
    auto nrw = std::make_unique<NrwTask>(config, seed);
    if (nrw->AllowedDistances(config.seq_len).no_count() == 0) {
      return Status::InvalidArgument("data.nrw.buffer = " + std::to_string(config.nrw.buffer) +
                                     " leaves no NO distance inside data.seq_len = " + std::to_string(config.seq_len));
    }
    task = std::move(nrw);
  } else if (config.source == "niah") {
    const NiahConfig& niah = config.niah;
    if (niah.filler_symbols < 1 || niah.key_symbols < 1 || niah.value_symbols < 1 || niah.max_distractors < 0) {
      return Status::InvalidArgument("data.niah: needs filler, key and value symbols >= 1, max_distractors >= 0");
    }
    if (niah.key_symbols < niah.max_distractors + 1) {
      return Status::InvalidArgument("data.niah.key_symbols = " + std::to_string(niah.key_symbols) +
                                     " cannot give max_distractors + 1 = " + std::to_string(niah.max_distractors + 1) +
                                     " distinct keys");
    }
    auto needle = std::make_unique<NiahTask>(config, seed);
    if (config.seq_len < needle->MinSeqLenForAllDistractors()) {
      return Status::InvalidArgument("data.seq_len = " + std::to_string(config.seq_len) + " cannot hold " +
                                     std::to_string(niah.max_distractors + 1) +
                                     " key-value pairs of 4 tokens plus BOS, QUERY and key: needs >= " +
                                     std::to_string(needle->MinSeqLenForAllDistractors()));
    }
    task = std::move(needle);
  } else if (config.source == "position_index") {
    if (config.position_index.symbols < 2) {
      return Status::InvalidArgument("data.position_index.symbols must be >= 2");
    }
    task = std::make_unique<PositionIndexTask>(config, seed);
  } else {
    return Status::InvalidArgument("'" + config.source + "' is not a synthetic task (nrw, niah, position_index)");
  }
  if (task->vocab_size() != DataVocabSize(config)) {
    return Status::Internal("synthetic task '" + config.source + "' emits " + std::to_string(task->vocab_size()) +
                            " token ids but DataVocabSize says " + std::to_string(DataVocabSize(config)));
  }
  if (config.seq_len < task->MinSeqLen()) {
    return Status::InvalidArgument("data.seq_len = " + std::to_string(config.seq_len) + " is too short for task '" +
                                   config.source + "': needs >= " + std::to_string(task->MinSeqLen()));
  }
  return task;
}

uint64_t SyntheticTask::InstanceKey(Split split, int64_t index, int64_t row) const {
  const uint64_t split_key = split == Split::kTrain ? MixKey(seed_, kSyntheticTrainDomain)
                                                    : MixKey(config_.split_seed, kSyntheticValidationDomain);
  return MixKey(MixKey(split_key, static_cast<uint64_t>(index)), static_cast<uint64_t>(row));
}

SyntheticInstance SyntheticTask::Instance(Split split, int64_t index, int64_t row, int64_t seq_len) const {
  SyntheticInstance instance;
  instance.answer_position = seq_len - 1;
  if (seq_len < MinSeqLen()) return instance;
  Generate(InstanceKey(split, index, row), seq_len, &instance);
  return instance;
}

TokenBatch SyntheticTask::EmptyBatch(int64_t batch_size, int64_t seq_len) {
  TokenBatch batch;
  batch.batch_size = batch_size;
  batch.seq_len = seq_len;
  const auto size = static_cast<size_t>(batch_size * seq_len);
  batch.inputs.assign(size, 0);
  batch.targets.assign(size, 0);
  batch.loss_mask.assign(size, 0.0f);
  return batch;
}

void SyntheticTask::PutRow(const SyntheticInstance& instance, int64_t row, TokenBatch* batch) {
  if (instance.tokens.empty()) return;
  const auto offset = static_cast<size_t>(row * batch->seq_len);
  std::copy(instance.tokens.begin(), instance.tokens.end() - 1, batch->inputs.begin() + offset);
  std::copy(instance.tokens.begin() + 1, instance.tokens.end(), batch->targets.begin() + offset);
  batch->loss_mask[offset + static_cast<size_t>(instance.answer_position)] = 1.0f;
}

TokenBatch SyntheticTask::Batch(Split split, int64_t index, int64_t batch_size, int64_t seq_len) const {
  TokenBatch batch = EmptyBatch(batch_size, seq_len);
  for (int64_t row = 0; row < batch_size; ++row) PutRow(Instance(split, index, row, seq_len), row, &batch);
  return batch;
}

nlohmann::json SyntheticTask::Describe() const {
  return {{"source", config_.source},       {"vocab_size", vocab_size_},
          {"seq_len", config_.seq_len},     {"settings", Settings()},
          {"train_seed", seed_},            {"validation_seed", config_.split_seed},
          {"layout", Layout()}};
}

// ---- NRW --------------------------------------------------------------------------------------------

NrwTask::NrwTask(const DataConfig& config, uint64_t seed) : SyntheticTask(config, seed, 5) {
  // AdaRoPE appendix D: YES when |delta - c| <= W/2, NO when |delta - c| > (1 + r) W/2, nothing between.
  const double half_width = static_cast<double>(config.nrw.window_width) / 2.0;
  yes_max_offset_ = static_cast<int64_t>(std::floor(half_width));
  // The smallest integer offset strictly beyond (1 + r) W/2 (an exact integer edge is not beyond it).
  no_min_offset_ = static_cast<int64_t>(std::floor((1.0 + config.nrw.buffer) * half_width + kEdgeSlack)) + 1;
}

NrwTask::Distances NrwTask::AllowedDistances(int64_t seq_len) const {
  const int64_t centre = config_.nrw.window_centre;
  Distances d{};
  if (yes_max_offset_ >= 0) {
    d.yes_min = std::max<int64_t>(1, centre - yes_max_offset_);
    d.yes_max = std::min(seq_len - 1, centre + yes_max_offset_);
  } else {
    d.yes_min = 1;
    d.yes_max = 0;
  }
  d.no_below_max = std::min(seq_len - 1, centre - no_min_offset_);
  d.no_above_min = centre + no_min_offset_;
  d.no_above_max = seq_len - 1;
  return d;
}

bool NrwTask::InsideWindow(int64_t delta) const {
  return 2 * std::abs(delta - config_.nrw.window_centre) <= config_.nrw.window_width;
}

int64_t NrwTask::MinSeqLen() const {
  if (yes_max_offset_ < 0) return INT64_MAX;
  const int64_t centre = config_.nrw.window_centre;
  const int64_t for_yes = std::max<int64_t>(1, centre - yes_max_offset_) + 1;
  const int64_t for_no = centre - no_min_offset_ >= 1 ? 2 : centre + no_min_offset_ + 1;
  return std::max({int64_t{2}, for_yes, for_no});
}

void NrwTask::Generate(uint64_t key, int64_t seq_len, SyntheticInstance* instance) const {
  CounterRng rng(key);
  const Distances allowed = AllowedDistances(seq_len);
  const bool yes = rng.Below(2) == 1;
  int64_t delta = 0;
  if (yes) {
    delta = allowed.yes_min + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(allowed.yes_count())));
  } else {
    const int64_t below = std::max<int64_t>(0, allowed.no_below_max);
    const auto draw = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(allowed.no_count())));
    delta = draw < below ? 1 + draw : allowed.no_above_min + (draw - below);
  }
  std::vector<int32_t>& tokens = instance->tokens;
  tokens.assign(static_cast<size_t>(seq_len + 1), NrwTokens::kBackground);
  tokens[static_cast<size_t>(seq_len - 1)] = NrwTokens::kQuery;
  tokens[static_cast<size_t>(seq_len - 1 - delta)] = NrwTokens::kNeedle;
  tokens[static_cast<size_t>(seq_len)] = yes ? NrwTokens::kYes : NrwTokens::kNo;
  instance->nrw_delta = delta;
}

nlohmann::json NrwTask::Settings() const {
  return {{"window_centre", config_.nrw.window_centre},
          {"window_width", config_.nrw.window_width},
          {"buffer", config_.nrw.buffer},
          {"yes_max_offset", yes_max_offset_},
          {"no_min_offset", no_min_offset_}};
}

std::string NrwTask::Layout() const {
  return "BG=0 NEEDLE=1 QUERY=2 YES=3 NO=4; BG.. NEEDLE (delta before QUERY) ..BG QUERY -> YES iff |delta - c| <= "
         "W/2";
}

// ---- NIAH -------------------------------------------------------------------------------------------

NiahTask::NiahTask(const DataConfig& config, uint64_t seed)
    : SyntheticTask(config, seed,
                    config.niah.filler_symbols + config.niah.key_symbols + config.niah.value_symbols + 4),
      first_special_(static_cast<int32_t>(config.niah.filler_symbols + config.niah.key_symbols +
                                          config.niah.value_symbols)) {}

// Grid instances live in their own range of validation batch indices, one per cell.
constexpr int64_t kNiahGridIndexBase = int64_t{1} << 40;

TokenBatch NiahTask::GridBatch(int64_t depth_tenths, int64_t distractors, int64_t count, int64_t seq_len,
                               std::vector<SyntheticInstance>* instances) const {
  TokenBatch batch = EmptyBatch(count, seq_len);
  const int64_t cell = kNiahGridIndexBase + depth_tenths * (config_.niah.max_distractors + 1) + distractors;
  for (int64_t row = 0; row < count; ++row) {
    SyntheticInstance instance;
    instance.answer_position = seq_len - 1;
    if (seq_len >= MinSeqLen()) {
      GenerateAt(InstanceKey(Split::kValidation, cell, row), seq_len, depth_tenths, distractors, &instance);
    }
    PutRow(instance, row, &batch);
    if (instances != nullptr) instances->push_back(std::move(instance));
  }
  return batch;
}

void NiahTask::Generate(uint64_t key, int64_t seq_len, SyntheticInstance* instance) const {
  GenerateAt(key, seq_len, -1, -1, instance);
}

void NiahTask::GenerateAt(uint64_t key, int64_t seq_len, int64_t forced_depth, int64_t forced_distractors,
                          SyntheticInstance* instance) const {
  const NiahConfig& niah = config_.niah;
  CounterRng rng(key);
  std::vector<int32_t>& tokens = instance->tokens;
  tokens.resize(static_cast<size_t>(seq_len + 1));

  // BOS, haystack [1, 1 + haystack), QUERY key | value.
  const int64_t haystack = seq_len - 3;
  tokens[0] = bos();
  for (int64_t t = 1; t <= haystack; ++t) {
    tokens[static_cast<size_t>(t)] = static_cast<int32_t>(rng.Below(static_cast<uint64_t>(niah.filler_symbols)));
  }

  // The needle at its depth; distractors in the space left on either side, as far as whole pairs fit.
  const auto depth_tenths = forced_depth >= 0 ? forced_depth : static_cast<int64_t>(rng.Below(11));
  const int64_t needle_start = 1 + (depth_tenths * (haystack - 4) + 5) / 10;
  const int64_t left_length = needle_start - 1;
  const int64_t right_length = 1 + haystack - (needle_start + 4);
  int64_t left_room = left_length / 4;
  int64_t right_room = right_length / 4;
  const int64_t wanted = forced_distractors >= 0
                             ? forced_distractors
                             : static_cast<int64_t>(rng.Below(static_cast<uint64_t>(niah.max_distractors + 1)));
  const int64_t distractors = std::min(wanted, left_room + right_room);
  int64_t left_count = 0;
  for (int64_t d = 0; d < distractors; ++d) {
    if (rng.Below(static_cast<uint64_t>(left_room + right_room)) < static_cast<uint64_t>(left_room)) {
      --left_room;
      ++left_count;
    } else {
      --right_room;
    }
  }
  std::vector<int64_t> starts = PlaceBlocks(&rng, 1, left_length, left_count);
  const std::vector<int64_t> right = PlaceBlocks(&rng, needle_start + 4, right_length, distractors - left_count);
  starts.insert(starts.end(), right.begin(), right.end());

  // Distinct keys (a partial Fisher-Yates shuffle): the first is the needle's.
  std::vector<int32_t> keys(static_cast<size_t>(niah.key_symbols));
  std::iota(keys.begin(), keys.end(), 0);
  for (int64_t k = 0; k <= distractors; ++k) {
    const auto pick = k + static_cast<int64_t>(rng.Below(static_cast<uint64_t>(niah.key_symbols - k)));
    std::swap(keys[static_cast<size_t>(k)], keys[static_cast<size_t>(pick)]);
  }
  auto write_pair = [&](int64_t start, int32_t key_id) {
    const auto value_id = static_cast<int32_t>(rng.Below(static_cast<uint64_t>(niah.value_symbols)));
    tokens[static_cast<size_t>(start)] = key_mark();
    tokens[static_cast<size_t>(start + 1)] = first_key() + key_id;
    tokens[static_cast<size_t>(start + 2)] = value_mark();
    tokens[static_cast<size_t>(start + 3)] = first_value() + value_id;
  };
  write_pair(needle_start, keys[0]);
  for (size_t d = 0; d < starts.size(); ++d) write_pair(starts[d], keys[d + 1]);

  tokens[static_cast<size_t>(seq_len - 2)] = query();
  tokens[static_cast<size_t>(seq_len - 1)] = first_key() + keys[0];
  tokens[static_cast<size_t>(seq_len)] = tokens[static_cast<size_t>(needle_start + 3)];
  instance->niah_depth_tenths = depth_tenths;
  instance->niah_distractors = distractors;
  instance->niah_needle_offset = needle_start;
}

nlohmann::json NiahTask::Settings() const {
  return {{"max_distractors", config_.niah.max_distractors},
          {"key_symbols", config_.niah.key_symbols},
          {"value_symbols", config_.niah.value_symbols},
          {"filler_symbols", config_.niah.filler_symbols}};
}

std::string NiahTask::Layout() const {
  return "filler [0,F) keys [F,F+K) values [F+K,F+K+V) KEY_MARK VALUE_MARK QUERY BOS; BOS haystack(filler, pairs "
         "KEY_MARK key VALUE_MARK value) QUERY key -> value";
}

// ---- Position indexing ------------------------------------------------------------------------------

PositionIndexTask::PositionIndexTask(const DataConfig& config, uint64_t seed)
    : SyntheticTask(config, seed, config.position_index.symbols + 2) {}

int64_t PositionIndexTask::IndexDigits(int64_t seq_len) const {
  const int64_t symbols = config_.position_index.symbols;
  int64_t power = symbols;  // symbols^digits, saturated
  for (int64_t digits = 1;; ++digits) {
    const int64_t list_length = seq_len - 2 - digits;
    if (list_length <= power) return digits;
    power = power > INT64_MAX / symbols ? INT64_MAX : power * symbols;
  }
}

void PositionIndexTask::Generate(uint64_t key, int64_t seq_len, SyntheticInstance* instance) const {
  const int64_t symbols = config_.position_index.symbols;
  CounterRng rng(key);
  const int64_t digits = IndexDigits(seq_len);
  const int64_t list_length = seq_len - 2 - digits;
  std::vector<int32_t>& tokens = instance->tokens;
  tokens.resize(static_cast<size_t>(seq_len + 1));
  tokens[0] = bos();
  for (int64_t t = 1; t <= list_length; ++t) {
    tokens[static_cast<size_t>(t)] = static_cast<int32_t>(rng.Below(static_cast<uint64_t>(symbols)));
  }
  tokens[static_cast<size_t>(list_length + 1)] = query();
  const auto k = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(list_length)));
  int64_t rest = k;
  for (int64_t d = digits - 1; d >= 0; --d) {  // least significant digit last
    tokens[static_cast<size_t>(list_length + 2 + d)] = static_cast<int32_t>(rest % symbols);
    rest /= symbols;
  }
  tokens[static_cast<size_t>(seq_len)] = tokens[static_cast<size_t>(1 + k)];
  instance->position_index_k = k;
}

nlohmann::json PositionIndexTask::Settings() const { return {{"symbols", config_.position_index.symbols}}; }

std::string PositionIndexTask::Layout() const {
  return "symbols [0,S) QUERY=S BOS=S+1; BOS list QUERY k (base-S digits, most significant first) -> list[k]";
}

}  // namespace rung

#include "core/diagnostics/failure_modes.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>

namespace rung {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// RopeScores splits distances into blocks of this many (and blocks into groups of this many blocks).
constexpr int64_t kScoreBlock = 64;

bool AllFinite(const std::vector<double>& values) {
  return std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); });
}

// Runs of equal values in `sorted` (ascending): calls visit(begin, end) for each run of length >= 2.
template <typename Visit>
void ForEachEqualRun(const std::vector<double>& sorted, Visit visit) {
  size_t begin = 0;
  while (begin < sorted.size()) {
    size_t end = begin + 1;
    while (end < sorted.size() && sorted[end] == sorted[begin]) ++end;
    if (end - begin >= 2) visit(begin, end);
    begin = end;
  }
}

Status CheckHead(const RopeHeadVectors& head) {
  const size_t dim = head.query.size();
  if (dim == 0 || dim % 2 != 0) {
    return Status::InvalidArgument("failure modes: the query has " + std::to_string(dim) +
                                   " entries; the head dimension must be even and positive");
  }
  if (head.key.size() != dim || head.key1.size() != dim || head.key2.size() != dim) {
    return Status::InvalidArgument("failure modes: key, key1 and key2 must have the query's " +
                                   std::to_string(dim) + " entries");
  }
  if (head.theta.size() * 2 != dim) {
    return Status::InvalidArgument("failure modes: theta has " + std::to_string(head.theta.size()) +
                                   " frequencies; a head of dimension " + std::to_string(dim) +
                                   " needs " + std::to_string(dim / 2));
  }
  if (!AllFinite(head.query) || !AllFinite(head.key) || !AllFinite(head.key1) || !AllFinite(head.key2) ||
      !AllFinite(head.theta)) {
    return Status::InvalidArgument("failure modes: query, keys and theta must be finite");
  }
  return Status::Ok();
}

Status CheckGrid(const FailureModeGrid& grid) {
  if (grid.lengths.empty() || grid.bases.empty() || grid.precisions.empty()) {
    return Status::InvalidArgument("failure modes: lengths, bases and precisions must each be non-empty");
  }
  for (int64_t length : grid.lengths) {
    if (length < 2) {
      return Status::InvalidArgument("failure modes: length " + std::to_string(length) + " is below 2");
    }
  }
  for (double base : grid.bases) {
    if (!(base > 0.0) || !std::isfinite(base)) {
      return Status::InvalidArgument("failure modes: base " + std::to_string(base) + " is not positive and finite");
    }
  }
  if (grid.head_dim < 2 || grid.head_dim % 2 != 0) {
    return Status::InvalidArgument("failure modes: head_dim " + std::to_string(grid.head_dim) +
                                   " must be even and at least 2");
  }
  if (grid.draws < 1) return Status::InvalidArgument("failure modes: draws must be at least 1");
  if (grid.heat_map_bins < 0) return Status::InvalidArgument("failure modes: heat_map_bins must not be negative");
  return Status::Ok();
}

}  // namespace

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kBf16: return "bf16";
    case Precision::kFp16: return "fp16";
    case Precision::kFp32: return "fp32";
  }
  return "unknown";
}

int FractionBits(Precision precision) {
  switch (precision) {
    case Precision::kBf16: return 7;
    case Precision::kFp16: return 10;
    case Precision::kFp32: return 23;
  }
  return 0;
}

double RoundToBinaryFormat(double x, int fraction_bits, int min_exponent, int max_exponent) {
  assert(fraction_bits >= 1 && fraction_bits <= 51 && min_exponent < max_exponent);
  assert(min_exponent - fraction_bits > -1022 && max_exponent < 1024);
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  const uint64_t sign = bits & (uint64_t{1} << 63);
  const uint64_t magnitude = bits & ~sign;  // the bits of |x|: ordered as |x| is
  const int exponent_field = static_cast<int>(magnitude >> 52);
  if (exponent_field == 0x7ff || magnitude == 0) return x;  // NaN, +-inf, +-0
  uint64_t rounded = 0;
  if (exponent_field - 1023 >= min_exponent) {
    // A normal result: drop the low 52 - fraction_bits bits, adding half a quantum less one, plus
    // the kept last bit, first (ties to even); a carry moves into the exponent as it should.
    const int drop = 52 - fraction_bits;
    const uint64_t half = uint64_t{1} << (drop - 1);
    rounded = (magnitude + (half - 1) + ((magnitude >> drop) & 1)) & ~((uint64_t{1} << drop) - 1);
  } else {
    // Below the normal range: the quantum is 2^(min_exponent - fraction_bits) whatever |x|.
    uint64_t significand = magnitude & ((uint64_t{1} << 52) - 1);
    int exponent = -1022;  // |x| = significand * 2^(exponent - 52), double subnormals included
    if (exponent_field != 0) {
      significand |= uint64_t{1} << 52;
      exponent = exponent_field - 1023;
    }
    const int quantum_exponent = min_exponent - fraction_bits;
    const int drop = quantum_exponent - (exponent - 52);  // > 52 - fraction_bits
    double value = 0.0;
    if (drop <= 60) {  // otherwise significand < 2^53 <= half a quantum: rounds to zero
      uint64_t kept = significand >> drop;
      const uint64_t remainder = significand & ((uint64_t{1} << drop) - 1);
      const uint64_t half = uint64_t{1} << (drop - 1);
      if (remainder > half || (remainder == half && (kept & 1) != 0)) ++kept;
      value = std::ldexp(static_cast<double>(kept), quantum_exponent);
    }
    std::memcpy(&rounded, &value, sizeof rounded);
  }
  const uint64_t largest = (static_cast<uint64_t>(max_exponent + 1023) << 52) |
                           (((uint64_t{1} << fraction_bits) - 1) << (52 - fraction_bits));
  if (rounded > largest) rounded = uint64_t{0x7ff} << 52;  // +inf
  rounded |= sign;
  double result = 0.0;
  std::memcpy(&result, &rounded, sizeof result);
  return result;
}

double RoundToBf16(double x) { return RoundToBinaryFormat(x, 7, -126, 127); }
double RoundToFp16(double x) { return RoundToBinaryFormat(x, 10, -14, 15); }
double RoundToFp32(double x) { return static_cast<double>(static_cast<float>(x)); }

double RoundToPrecision(double x, Precision precision) {
  switch (precision) {
    case Precision::kBf16: return RoundToBf16(x);
    case Precision::kFp16: return RoundToFp16(x);
    case Precision::kFp32: return RoundToFp32(x);
  }
  return x;
}

std::vector<double> RoundScores(const std::vector<double>& scores, Precision precision) {
  std::vector<double> rounded(scores.size());
  for (size_t m = 0; m < scores.size(); ++m) rounded[m] = RoundToPrecision(scores[m], precision);
  return rounded;
}

std::vector<double> RopeFrequencySchedule(double base, int64_t head_dim) {
  assert(base > 0.0 && head_dim >= 2 && head_dim % 2 == 0);
  std::vector<double> theta(static_cast<size_t>(head_dim / 2));
  for (int64_t f = 0; f < head_dim / 2; ++f) {
    theta[f] = std::pow(base, -2.0 * static_cast<double>(f) / static_cast<double>(head_dim));
  }
  return theta;
}

std::vector<double> RopeScores(const std::vector<double>& query, const std::vector<double>& key,
                               const std::vector<double>& theta, int64_t length) {
  const size_t pairs = theta.size();
  assert(pairs > 0 && query.size() == 2 * pairs && key.size() == 2 * pairs && length >= 0);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(2 * pairs));
  std::vector<double> a(pairs), b(pairs);
  for (size_t f = 0; f < pairs; ++f) {
    const double q0 = query[2 * f], q1 = query[2 * f + 1], k0 = key[2 * f], k1 = key[2 * f + 1];
    a[f] = (q0 * k0 + q1 * k1) * inv_sqrt_d;
    b[f] = (q0 * k1 - q1 * k0) * inv_sqrt_d;
  }
  // m = (high * kScoreBlock + low) * kScoreBlock + j: cos/sin(m theta_f) by two rotations from three
  // tables of directly computed cos/sin (of j theta, low kScoreBlock theta, high kScoreBlock^2 theta),
  // a few ulp per term, with no recurrence error growing with m.
  const int64_t block = kScoreBlock;
  const int64_t blocks = (length + block - 1) / block;
  const int64_t highs = (blocks + block - 1) / block;
  struct Table {
    int64_t count;
    std::vector<double> cos, sin;  // [f * count + i]: of i * step * theta_f
  };
  auto table = [&](int64_t count, double step) {
    Table result{count, std::vector<double>(static_cast<size_t>(count) * pairs), {}};
    result.sin.resize(result.cos.size());
    for (size_t f = 0; f < pairs; ++f) {
      for (int64_t i = 0; i < count; ++i) {
        const double angle = static_cast<double>(i) * step * theta[f];
        result.cos[f * count + i] = std::cos(angle);
        result.sin[f * count + i] = std::sin(angle);
      }
    }
    return result;
  };
  const Table offset = table(std::min(block, length), 1.0);
  const Table low = table(std::min(block, blocks), static_cast<double>(block));
  const Table high = table(highs, static_cast<double>(block * block));
  // a cos((s + j) t) + b sin((s + j) t) = A cos(j t) + B sin(j t),
  // A = a cos(s t) + b sin(s t), B = b cos(s t) - a sin(s t). Summed over f in order for each m.
  std::vector<double> scores(static_cast<size_t>(length), 0.0);
  for (int64_t index = 0; index < blocks; ++index) {
    const int64_t start = index * block;
    const int64_t count = std::min(block, length - start);
    const int64_t h = index / block, l = index % block;
    double* out = &scores[start];
    for (size_t f = 0; f < pairs; ++f) {
      const double hc = high.cos[f * high.count + h], hs = high.sin[f * high.count + h];
      const double lc = low.cos[f * low.count + l], ls = low.sin[f * low.count + l];
      const double c = hc * lc - hs * ls, s = hs * lc + hc * ls;  // cos/sin(start theta_f)
      const double anchor_a = a[f] * c + b[f] * s, anchor_b = b[f] * c - a[f] * s;
      const double* wc = &offset.cos[f * offset.count];
      const double* ws = &offset.sin[f * offset.count];
      for (int64_t j = 0; j < count; ++j) out[j] += anchor_a * wc[j] + anchor_b * ws[j];
    }
  }
  return scores;
}

double PositionInversion(const std::vector<double>& scores) {
  assert(scores.size() >= 2);
  const auto split = static_cast<std::ptrdiff_t>((scores.size() + 1) / 2);  // m < M/2 <=> m < ceil(M/2)
  std::vector<double> near(scores.begin(), scores.begin() + split), far(scores.begin() + split, scores.end());
  std::sort(near.begin(), near.end());
  std::sort(far.begin(), far.end());
  // For the near values in ascending order, the far values not above each only grow: one merge.
  int64_t inverted = 0;
  size_t not_above = 0;
  for (double value : near) {
    while (not_above < far.size() && far[not_above] <= value) ++not_above;
    inverted += static_cast<int64_t>(far.size() - not_above);
  }
  return static_cast<double>(inverted) / (static_cast<double>(near.size()) * static_cast<double>(far.size()));
}

PositionAliasing MeasurePositionAliasing(const std::vector<double>& scores, Precision precision) {
  assert(!scores.empty());
  std::vector<double> rounded = RoundScores(scores, precision);
  std::sort(rounded.begin(), rounded.end());
  PositionAliasing result;
  int64_t with_partner = 0;
  ForEachEqualRun(rounded, [&](size_t begin, size_t end) {
    const int64_t size = static_cast<int64_t>(end - begin);
    with_partner += size;
    result.pairs += size * (size - 1) / 2;
  });
  result.fraction = static_cast<double>(with_partner) / static_cast<double>(scores.size());
  return result;
}

AliasingHeatMap PositionAliasingHeatMap(const std::vector<double>& scores, Precision precision, int64_t bins) {
  assert(!scores.empty() && bins >= 1);
  const int64_t length = static_cast<int64_t>(scores.size());
  AliasingHeatMap map;
  map.length = length;
  map.bins = std::min(bins, length);
  map.counts.assign(static_cast<size_t>(map.bins * map.bins), 0);
  const std::vector<double> rounded = RoundScores(scores, precision);
  std::vector<int64_t> order(static_cast<size_t>(length));
  for (int64_t m = 0; m < length; ++m) order[m] = m;
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return rounded[x] < rounded[y]; });
  std::vector<double> sorted(order.size());
  for (size_t i = 0; i < order.size(); ++i) sorted[i] = rounded[order[i]];
  std::vector<int64_t> group_bins;
  std::vector<std::pair<int64_t, int64_t>> histogram;  // (bin, members in it)
  ForEachEqualRun(sorted, [&](size_t begin, size_t end) {
    group_bins.clear();
    for (size_t i = begin; i < end; ++i) group_bins.push_back(order[i] * map.bins / length);
    std::sort(group_bins.begin(), group_bins.end());
    histogram.clear();
    for (int64_t bin : group_bins) {
      if (!histogram.empty() && histogram.back().first == bin) {
        ++histogram.back().second;
      } else {
        histogram.emplace_back(bin, 1);
      }
    }
    for (const auto& [row, row_count] : histogram) {
      for (const auto& [column, column_count] : histogram) {
        map.counts[row * map.bins + column] += row == column ? row_count * (row_count - 1) : row_count * column_count;
      }
    }
  });
  return map;
}

double TokenInversion(const std::vector<double>& scores1, const std::vector<double>& scores2) {
  assert(!scores1.empty() && scores1.size() == scores2.size());
  if (scores1[0] == scores2[0]) return kNaN;
  const std::vector<double>& higher = scores1[0] > scores2[0] ? scores1 : scores2;
  const std::vector<double>& lower = scores1[0] > scores2[0] ? scores2 : scores1;
  int64_t flipped = 0;
  for (size_t m = 0; m < higher.size(); ++m) flipped += higher[m] < lower[m] ? 1 : 0;
  return static_cast<double>(flipped) / static_cast<double>(higher.size());
}

int64_t TokenAliasing(const std::vector<double>& scores1, const std::vector<double>& scores2, Precision precision) {
  assert(scores1.size() == scores2.size());
  int64_t equal = 0;
  for (size_t m = 0; m < scores1.size(); ++m) {
    equal += RoundToPrecision(scores1[m], precision) == RoundToPrecision(scores2[m], precision) ? 1 : 0;
  }
  return equal;
}

StatusOr<FailureModeStats> MeasureFailureModes(const RopeHeadVectors& head, int64_t length, Precision precision) {
  RUNG_RETURN_IF_ERROR(CheckHead(head));
  if (length < 2) return Status::InvalidArgument("failure modes: length " + std::to_string(length) + " is below 2");
  const std::vector<double> scores = RopeScores(head.query, head.key, head.theta, length);
  const std::vector<double> scores1 = RopeScores(head.query, head.key1, head.theta, length);
  const std::vector<double> scores2 = RopeScores(head.query, head.key2, head.theta, length);
  FailureModeStats stats;
  stats.position_inversion = PositionInversion(scores);
  const PositionAliasing aliasing = MeasurePositionAliasing(scores, precision);
  stats.position_aliasing_fraction = aliasing.fraction;
  stats.position_aliasing_pairs = aliasing.pairs;
  stats.token_inversion = TokenInversion(scores1, scores2);
  stats.token_aliasing = TokenAliasing(scores1, scores2, precision);
  return stats;
}

StatusOr<std::vector<FailureModeRow>> MeasureGaussianFailureModes(const FailureModeGrid& grid) {
  RUNG_RETURN_IF_ERROR(CheckGrid(grid));
  const size_t dim = static_cast<size_t>(grid.head_dim);
  const int64_t longest = *std::max_element(grid.lengths.begin(), grid.lengths.end());
  // Every draw's q, k, k1, k2, in that order, shared by all bases and lengths.
  std::mt19937_64 random(grid.seed);
  std::normal_distribution<double> normal;
  std::vector<RopeHeadVectors> draws(static_cast<size_t>(grid.draws));
  for (RopeHeadVectors& draw : draws) {
    for (std::vector<double>* vector : {&draw.query, &draw.key, &draw.key1, &draw.key2}) {
      vector->resize(dim);
      for (double& value : *vector) value = normal(random);
    }
  }

  const size_t bases = grid.bases.size(), precisions = grid.precisions.size();
  std::vector<FailureModeRow> rows(grid.lengths.size() * bases * precisions);
  std::vector<int> token_draws(rows.size(), 0);
  auto row_at = [&](size_t length_index, size_t base_index, size_t precision_index) -> size_t {
    return (length_index * bases + base_index) * precisions + precision_index;
  };
  for (size_t li = 0; li < grid.lengths.size(); ++li) {
    for (size_t bi = 0; bi < bases; ++bi) {
      for (size_t pi = 0; pi < precisions; ++pi) {
        FailureModeRow& row = rows[row_at(li, bi, pi)];
        row.length = grid.lengths[li];
        row.base = grid.bases[bi];
        row.precision = grid.precisions[pi];
        row.head_dim = grid.head_dim;
        row.draws = grid.draws;
        if (grid.heat_map_bins > 0) {
          row.heat_map.length = row.length;
          row.heat_map.bins = std::min(grid.heat_map_bins, row.length);
          row.heat_map.counts.assign(static_cast<size_t>(row.heat_map.bins * row.heat_map.bins), 0);
        }
      }
    }
  }

  for (size_t bi = 0; bi < bases; ++bi) {
    const std::vector<double> theta = RopeFrequencySchedule(grid.bases[bi], grid.head_dim);
    for (const RopeHeadVectors& draw : draws) {
      std::vector<double> scores = RopeScores(draw.query, draw.key, theta, longest);
      if (scores[0] < 0.0) {  // k -> -k: the key the query prefers at distance 0
        for (double& score : scores) score = -score;
      }
      std::vector<double> scores1 = RopeScores(draw.query, draw.key1, theta, longest);
      std::vector<double> scores2 = RopeScores(draw.query, draw.key2, theta, longest);
      if (scores1[0] < scores2[0]) std::swap(scores1, scores2);
      for (size_t li = 0; li < grid.lengths.size(); ++li) {
        const auto end = static_cast<std::ptrdiff_t>(grid.lengths[li]);
        const std::vector<double> prefix(scores.begin(), scores.begin() + end);
        const std::vector<double> prefix1(scores1.begin(), scores1.begin() + end);
        const std::vector<double> prefix2(scores2.begin(), scores2.begin() + end);
        const double position_inversion = PositionInversion(prefix);
        const double token_inversion = TokenInversion(prefix1, prefix2);
        for (size_t pi = 0; pi < precisions; ++pi) {
          const size_t index = row_at(li, bi, pi);
          FailureModeRow& row = rows[index];
          const PositionAliasing aliasing = MeasurePositionAliasing(prefix, row.precision);
          row.position_inversion += position_inversion;
          row.position_inversion_deviation += std::fabs(position_inversion - 0.5);
          row.position_aliasing_fraction += aliasing.fraction;
          row.position_aliasing_pairs += static_cast<double>(aliasing.pairs);
          if (!std::isnan(token_inversion)) {
            row.token_inversion += token_inversion;
            ++token_draws[index];
          }
          row.token_aliasing += static_cast<double>(TokenAliasing(prefix1, prefix2, row.precision));
          if (grid.heat_map_bins > 0) {
            const AliasingHeatMap map = PositionAliasingHeatMap(prefix, row.precision, grid.heat_map_bins);
            for (size_t cell = 0; cell < map.counts.size(); ++cell) row.heat_map.counts[cell] += map.counts[cell];
          }
        }
      }
    }
  }

  const double count = static_cast<double>(grid.draws);
  for (size_t index = 0; index < rows.size(); ++index) {
    FailureModeRow& row = rows[index];
    row.position_inversion /= count;
    row.position_inversion_deviation /= count;
    row.position_aliasing_fraction /= count;
    row.position_aliasing_pairs /= count;
    row.token_aliasing /= count;
    row.token_inversion = token_draws[index] > 0 ? row.token_inversion / token_draws[index] : kNaN;
  }
  return rows;
}

nlohmann::json FailureModeRowsToJson(const std::vector<FailureModeRow>& rows) {
  nlohmann::json records = nlohmann::json::array();
  for (const FailureModeRow& row : rows) {
    nlohmann::json record;
    record["length"] = row.length;
    record["base"] = row.base;
    record["precision"] = PrecisionName(row.precision);
    record["head_dim"] = row.head_dim;
    record["draws"] = row.draws;
    record["position_inversion"] = row.position_inversion;
    record["position_inversion_deviation"] = row.position_inversion_deviation;
    record["position_aliasing_fraction"] = row.position_aliasing_fraction;
    record["position_aliasing_pairs"] = row.position_aliasing_pairs;
    record["token_inversion"] = std::isnan(row.token_inversion) ? nlohmann::json(nullptr)
                                                                : nlohmann::json(row.token_inversion);
    record["token_aliasing"] = row.token_aliasing;
    if (row.heat_map.bins > 0) {
      nlohmann::json counts = nlohmann::json::array();
      for (int64_t i = 0; i < row.heat_map.bins; ++i) {
        counts.push_back(std::vector<int64_t>(row.heat_map.counts.begin() + i * row.heat_map.bins,
                                              row.heat_map.counts.begin() + (i + 1) * row.heat_map.bins));
      }
      record["heat_map"] = {{"bins", row.heat_map.bins}, {"counts", std::move(counts)}};
    }
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace rung

#include "core/diagnostics/failure_modes.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace rung {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// RopeScores splits distances into blocks of this many (and blocks into groups of this many blocks).
constexpr int64_t kScoreBlock = 64;

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

double TokenInversion(const std::vector<double>& scores1, const std::vector<double>& scores2) {
  assert(!scores1.empty() && scores1.size() == scores2.size());
  if (scores1[0] == scores2[0]) return kNaN;
  const std::vector<double>& higher = scores1[0] > scores2[0] ? scores1 : scores2;
  const std::vector<double>& lower = scores1[0] > scores2[0] ? scores2 : scores1;
  int64_t flipped = 0;
  for (size_t m = 0; m < higher.size(); ++m) flipped += higher[m] < lower[m] ? 1 : 0;
  return static_cast<double>(flipped) / static_cast<double>(higher.size());
}

}  // namespace rung

#include "core/diagnostics/head_failure_modes.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/model/tensor_values.h"

namespace rung {
namespace {

// The vector `rotated` = R_position v back at position 0: each pair rotated by -position * theta_f.
std::vector<double> AtPositionZero(const torch::Tensor& rotated, const std::vector<double>& theta, int64_t position) {
  std::vector<double> v = TensorValues(rotated);
  for (size_t f = 0; f < theta.size(); ++f) {
    const double angle = static_cast<double>(position) * theta[f];
    const double c = std::cos(angle), s = std::sin(angle);
    const double x = v[2 * f], y = v[2 * f + 1];
    v[2 * f] = c * x + s * y;
    v[2 * f + 1] = -s * x + c * y;
  }
  return v;
}

}  // namespace

RopeHeadVectors HeadSample(const AttentionProbe& probe, const std::vector<double>& theta_row, int64_t b, int64_t h) {
  const int64_t time = probe.q.size(2);
  const int64_t kv = h / (probe.q.size(1) / probe.k.size(1));
  const int64_t query_at = time - 1, key_at = time / 2, first_at = time / 4, second_at = (3 * time) / 4;
  RopeHeadVectors sample;
  sample.query = AtPositionZero(probe.q[b][h][query_at], theta_row, query_at);
  sample.key = AtPositionZero(probe.k[b][kv][key_at], theta_row, key_at);
  sample.key1 = AtPositionZero(probe.k[b][kv][first_at], theta_row, first_at);
  sample.key2 = AtPositionZero(probe.k[b][kv][second_at], theta_row, second_at);
  sample.theta = theta_row;
  return sample;
}

std::vector<std::vector<records::HeadFailureModes>> MeasureHeadFailureModes(const AttentionProbe& probe,
                                                                            const torch::Tensor& theta,
                                                                            const std::vector<double>& multiples) {
  std::vector<std::vector<records::HeadFailureModes>> per_head;
  if (multiples.empty() || !theta.defined()) return per_head;
  const int64_t batch = probe.q.size(0), heads = probe.q.size(1), time = probe.q.size(2);
  const int64_t groups = heads / probe.k.size(1);
  const Precision precisions[] = {Precision::kBf16, Precision::kFp16, Precision::kFp32};
  for (int64_t h = 0; h < heads; ++h) {
    const std::vector<double> row = TensorValues(theta[theta.size(0) == 1 ? 0 : h / groups]);
    std::vector<RopeHeadVectors> samples;
    for (int64_t b = 0; b < batch; ++b) samples.push_back(HeadSample(probe, row, b, h));
    std::vector<records::HeadFailureModes> entries;
    for (double multiple : multiples) {
      const int64_t length = std::max<int64_t>(2, std::llround(multiple * static_cast<double>(time)));
      for (Precision precision : precisions) {
        double inversion = 0, deviation = 0, aliasing_fraction = 0, aliasing_pairs = 0, token_aliasing = 0;
        double token_inversion = 0;
        int64_t counted = 0, token_counted = 0;
        for (const RopeHeadVectors& sample : samples) {
          StatusOr<FailureModeStats> stats = MeasureFailureModes(sample, length, precision);
          if (!stats.ok()) continue;  // a non-finite vector (a diverged model): that sample says nothing
          ++counted;
          inversion += stats->position_inversion;
          deviation += std::fabs(stats->position_inversion - 0.5);
          aliasing_fraction += stats->position_aliasing_fraction;
          aliasing_pairs += static_cast<double>(stats->position_aliasing_pairs);
          token_aliasing += static_cast<double>(stats->token_aliasing);
          if (std::isfinite(stats->token_inversion)) {
            token_inversion += stats->token_inversion;
            ++token_counted;
          }
        }
        auto mean = [](double sum, int64_t count) {
          return count > 0 ? sum / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN();
        };
        records::HeadFailureModes entry;
        entry.length = length;
        entry.precision = PrecisionName(precision);
        entry.samples = counted;
        entry.position_inversion = mean(inversion, counted);
        entry.position_inversion_deviation = mean(deviation, counted);
        entry.position_aliasing_fraction = mean(aliasing_fraction, counted);
        entry.position_aliasing_pairs = mean(aliasing_pairs, counted);
        entry.token_inversion = mean(token_inversion, token_counted);
        entry.token_aliasing = mean(token_aliasing, counted);
        entries.push_back(std::move(entry));
      }
    }
    per_head.push_back(std::move(entries));
  }
  return per_head;
}

}  // namespace rung

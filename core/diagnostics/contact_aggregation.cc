#include "core/diagnostics/contact_aggregation.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>
#include <tuple>

namespace rung {
namespace {

constexpr int kLambda = 0, kAlpha = 1, kDelta = 2;

// Per unit and bucket: the sums of log X over its non-tied rows and their number.
struct UnitBucket {
  std::array<double, 3> log_sums = {0.0, 0.0, 0.0};
  int64_t rows = 0;
};

// The three slopes of bucket means weighted by `multiplicity` per unit; false with under two buckets.
bool SlopesOf(const std::vector<std::vector<UnitBucket>>& by_unit, const std::vector<double>& log_log_n,
              const std::vector<int>& multiplicity, std::array<std::pair<double, double>, 3>* lines) {
  std::vector<double> x;
  std::array<std::vector<double>, 3> y;
  for (size_t bucket = 0; bucket < log_log_n.size(); ++bucket) {
    std::array<double, 3> sums = {0.0, 0.0, 0.0};
    double rows = 0.0;
    for (size_t unit = 0; unit < by_unit.size(); ++unit) {
      if (multiplicity[unit] == 0 || by_unit[unit][bucket].rows == 0) continue;
      for (int v = 0; v < 3; ++v) sums[v] += multiplicity[unit] * by_unit[unit][bucket].log_sums[v];
      rows += multiplicity[unit] * static_cast<double>(by_unit[unit][bucket].rows);
    }
    if (rows == 0.0) continue;
    x.push_back(log_log_n[bucket]);
    for (int v = 0; v < 3; ++v) y[v].push_back(sums[v] / rows);
  }
  if (x.size() < 2) return false;
  for (int v = 0; v < 3; ++v) (*lines)[v] = LeastSquaresLine(x, y[v]);
  return true;
}

}  // namespace

bool IsAggregationTie(const GapCount& count) {
  return count.tie || !(count.lambda > 0.0) || !(std::log10(count.lambda) <= kTieLog10Lambda);
}

ContactFit FitContactExponents(const std::vector<ContactRow>& rows, int bootstrap, uint64_t seed) {
  ContactFit fit;
  std::map<int64_t, size_t> unit_index, bucket_index;
  for (const ContactRow& row : rows) {
    unit_index.emplace(row.unit, 0);
    bucket_index.emplace(row.count.n, 0);
  }
  size_t next = 0;
  for (auto& [unit, index] : unit_index) index = next++;
  next = 0;
  for (auto& [n, index] : bucket_index) index = next++;
  fit.units = static_cast<int64_t>(unit_index.size());

  std::vector<std::vector<UnitBucket>> by_unit(unit_index.size(), std::vector<UnitBucket>(bucket_index.size()));
  for (const auto& [n, index] : bucket_index) {
    ContactBucket bucket;
    bucket.n = n;
    fit.buckets.push_back(bucket);
  }
  for (const ContactRow& row : rows) {
    const size_t bucket = bucket_index[row.count.n];
    if (IsAggregationTie(row.count)) {
      ++fit.buckets[bucket].ties;
      ++fit.ties;
      continue;
    }
    UnitBucket& cell = by_unit[unit_index[row.unit]][bucket];
    cell.log_sums[kLambda] += std::log(row.count.lambda);
    cell.log_sums[kAlpha] += std::log(row.count.alpha);
    cell.log_sums[kDelta] += std::log(row.count.delta);
    ++cell.rows;
    ++fit.buckets[bucket].rows;
    ++fit.rows;
  }
  std::vector<double> log_log_n;
  for (ContactBucket& bucket : fit.buckets) {
    log_log_n.push_back(std::log(std::log(static_cast<double>(bucket.n))));
    const size_t index = bucket_index[bucket.n];
    std::array<double, 3> sums = {0.0, 0.0, 0.0};
    for (const std::vector<UnitBucket>& unit : by_unit) {
      for (int v = 0; v < 3; ++v) sums[v] += unit[index].log_sums[v];
    }
    const double count = bucket.rows > 0 ? static_cast<double>(bucket.rows) : std::nan("");
    bucket.mean_log_lambda = sums[kLambda] / count;
    bucket.mean_log_alpha = sums[kAlpha] / count;
    bucket.mean_log_delta = sums[kDelta] / count;
  }

  std::array<std::pair<double, double>, 3> lines;
  fit.fitted = SlopesOf(by_unit, log_log_n, std::vector<int>(by_unit.size(), 1), &lines);
  if (!fit.fitted) return fit;
  ContactSlope* slopes[3] = {&fit.lambda, &fit.alpha, &fit.delta};
  for (int v = 0; v < 3; ++v) std::tie(slopes[v]->xi, slopes[v]->intercept) = lines[v];

  std::mt19937_64 random(seed);
  std::uniform_int_distribution<size_t> pick(0, by_unit.size() - 1);
  std::array<std::vector<double>, 3> replicates;
  for (int replicate = 0; replicate < bootstrap; ++replicate) {
    std::vector<int> multiplicity(by_unit.size(), 0);
    for (size_t draw = 0; draw < by_unit.size(); ++draw) ++multiplicity[pick(random)];
    if (!SlopesOf(by_unit, log_log_n, multiplicity, &lines)) continue;
    for (int v = 0; v < 3; ++v) replicates[v].push_back(lines[v].first);
  }
  for (int v = 0; v < 3; ++v) {
    if (replicates[v].empty()) continue;
    slopes[v]->half_iqr = 0.5 * (Quantile(replicates[v], 0.75) - Quantile(replicates[v], 0.25));
  }
  return fit;
}

DiagnosticGrid ChooseDiagnosticGrid(const std::vector<int64_t>& requested, int64_t evaluated_length) {
  DiagnosticGrid grid;
  for (int64_t n : requested) {
    if (n >= 2 && n <= evaluated_length) grid.lengths.push_back(n);
  }
  std::sort(grid.lengths.begin(), grid.lengths.end());
  grid.lengths.erase(std::unique(grid.lengths.begin(), grid.lengths.end()), grid.lengths.end());
  if (grid.lengths.size() >= 4) return grid;
  const size_t kept = grid.lengths.size();
  grid.lengths.clear();
  grid.fallback = true;
  for (int point = 0; point < 4; ++point) {
    // evaluated_length / 8 * 2^point: 4 points in geometric progression ending at the length.
    const double n = static_cast<double>(evaluated_length) * std::pow(2.0, point - 3);
    const int64_t rounded = std::max<int64_t>(2, std::llround(n));
    if (rounded <= evaluated_length && (grid.lengths.empty() || grid.lengths.back() != rounded)) {
      grid.lengths.push_back(rounded);
    }
  }
  grid.warning = std::to_string(kept) + " of the requested lengths lie in [2, " + std::to_string(evaluated_length) +
                 "]; the fit uses the geometric points from " + std::to_string(evaluated_length) + "/8 to " +
                 std::to_string(evaluated_length) + " instead (not the paper's grid)";
  return grid;
}

}  // namespace rung

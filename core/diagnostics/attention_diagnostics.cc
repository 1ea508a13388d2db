#include "core/diagnostics/attention_diagnostics.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "core/config/positional_variant.h"
#include "core/diagnostics/beta_exponent.h"
#include "core/diagnostics/distance_bins.h"
#include "core/diagnostics/appendix_d1.h"
#include "core/diagnostics/query_sample.h"
#include "core/diagnostics/score_statistics.h"
#include "core/model/tensor_values.h"

namespace rung {
namespace {

// Runs `model` on `tokens` in evaluation mode without gradients, calling `visit` with each layer's
// attention probe, and leaves the model's mode and probe as they were before.
void ProbeAttention(Transformer& model, const torch::Tensor& tokens, const torch::Tensor& doc_start,
                    const std::function<void(const AttentionProbe&)>& visit) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  model->set_attention_probe(visit);
  model->Hidden(tokens, doc_start);  // the probes are all it needs: no output head, no [B, T, vocab] logits
  model->set_attention_probe({});
  if (was_training) model->train();
}

// Score blocks of at most this many entries (B x H x rows x keys, in double: 32 MiB), so that no
// diagnostic holds a T x T matrix per head.
constexpr int64_t kScoreBlockEntries = int64_t{1} << 22;

// Rows per block for scores [batch, heads, rows, keys]: at least 1.
int64_t RowsPerBlock(int64_t batch, int64_t heads, int64_t keys) {
  return std::max<int64_t>(1, kScoreBlockEntries / std::max<int64_t>(1, batch * heads * keys));
}

// Keys j the queries at `rows` ([R] int64) may see, over keys 0..keys-1: j <= i, and j >= doc_start[b, i]
// under cross-document masking. Bool [B or 1, 1, R, keys].
torch::Tensor VisibleKeys(const torch::Tensor& rows, int64_t keys, const torch::Tensor& doc_start) {
  auto key_positions = torch::arange(keys, rows.options()).view({1, 1, 1, keys});
  auto visible = key_positions <= rows.view({1, 1, -1, 1});
  if (doc_start.defined()) {
    visible = visible & (key_positions >= doc_start.index_select(1, rows.to(doc_start.device())).unsqueeze(1).unsqueeze(3));
  }
  return visible;
}

// Per head and pair: usage u_f (the mean |pair-f term| of z over visible query/key pairs), band
// strength (the standard deviation over relative distances of the pair's mean contribution), and that
// mean contribution pooled into distance bins (the pair-by-distance profile; NaN where no visible pair
// falls in a bin), read from the query rows DiagnosticQueryPositions gives (every row up to its bound,
// a spread sample beyond).
struct PairStatistics {
  torch::Tensor usage;          // [H, pairs]
  torch::Tensor band_strength;  // [H, pairs]
  torch::Tensor profile;        // [H, pairs, bins]; undefined without profile edges
};

// q: [B, H, T, d] and k: [B, H, T, d] in double (k repeated per query head); doc_start [B, T] or undefined;
// profile_edges: DistanceBinEdges(T, bins), or empty for no profile.
// Reads the rows block by block: at most kScoreBlockEntries score entries at a time.
PairStatistics MeasurePairs(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& doc_start,
                            const std::vector<int64_t>& profile_edges) {
  const int64_t batch = q.size(0), heads = q.size(1), time = q.size(2), dim = q.size(3);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(dim));
  const int64_t pairs = dim / 2;
  const std::vector<int64_t> sampled = DiagnosticQueryPositions(time);
  const torch::Tensor all_rows = torch::tensor(sampled, torch::TensorOptions().dtype(torch::kLong)).to(q.device());
  const int64_t row_count = all_rows.size(0);
  // Per pair: sum |c_f| over visible pairs, and the sum of c_f by relative distance delta = i - j.
  torch::Tensor absolute_sum = torch::zeros({heads, pairs}, q.options());
  torch::Tensor by_distance = torch::zeros({pairs, heads, time}, q.options());
  torch::Tensor counts = torch::zeros({time}, q.options());
  // k's pairs as [B*H, pairs, 2, T]: one batched product per pair gives its terms for a block of rows.
  const torch::Tensor k_pairs = k.reshape({batch * heads, time, pairs, 2}).permute({0, 2, 3, 1}).contiguous();
  const int64_t block = RowsPerBlock(batch, heads, time);
  for (int64_t r0 = 0; r0 < row_count; r0 += block) {
    const int64_t rows = std::min(block, row_count - r0);
    const torch::Tensor positions = all_rows.narrow(0, r0, rows);
    const torch::Tensor visible = VisibleKeys(positions, time, doc_start).to(q.scalar_type());  // [B|1, 1, R, T]
    const torch::Tensor visible_full = visible.expand({batch, 1, rows, time});
    // delta = i - j per (row, key), clamped at 0 (masked entries add nothing).
    const torch::Tensor delta_index =
        (positions.view({rows, 1}) - torch::arange(time, positions.options()).view({1, time})).clamp_min(0).view({-1});
    counts.index_add_(0, delta_index, visible_full.sum(0).reshape({-1}));
    const torch::Tensor q_rows = q.index_select(2, positions).reshape({batch * heads, rows, pairs, 2});
    for (int64_t f = 0; f < pairs; ++f) {
      // c_f(i, j) = (q_2f k_2f + q_2f+1 k_2f+1) / sqrt(d): [B*H, R, 2] x [B*H, 2, T].
      torch::Tensor term = torch::bmm(q_rows.select(2, f), k_pairs.select(1, f)).view({batch, heads, rows, time});
      term.mul_(visible).mul_(inv_sqrt_d);
      absolute_sum.select(1, f).add_(term.abs().sum({0, 2, 3}));
      by_distance[f].index_add_(1, delta_index, term.sum(0).view({heads, rows * time}));
    }
  }
  const double visible_count = counts.sum().item<double>();
  PairStatistics statistics{(absolute_sum / std::max(visible_count, 1.0)).cpu(),
                            torch::zeros({heads, pairs}, torch::kDouble)};
  // Only distances some visible pair reaches (under cross-document masking, long ones may be reached by none).
  const torch::Tensor reached = (counts > 0).nonzero().squeeze(1);
  const int64_t bins = profile_edges.empty() ? 0 : static_cast<int64_t>(profile_edges.size()) - 1;
  torch::Tensor bin_index, bin_counts;
  if (bins > 0) {
    std::vector<int64_t> bin_of = DistanceBinOf(profile_edges);
    bin_index = torch::tensor(bin_of, torch::TensorOptions().dtype(torch::kLong)).to(q.device());
    bin_counts = torch::zeros({bins}, q.options()).index_add_(0, bin_index, counts);
    statistics.profile = torch::empty({heads, pairs, bins}, torch::kDouble);
  }
  for (int64_t f = 0; f < pairs; ++f) {
    const torch::Tensor profile = by_distance[f] / counts.clamp_min(1.0);  // [H, T]
    statistics.band_strength.select(1, f).copy_(profile.index_select(1, reached).std(1).cpu());
    if (bins > 0) {
      torch::Tensor by_bin = torch::zeros({heads, bins}, q.options()).index_add_(1, bin_index, by_distance[f]);
      torch::Tensor binned = torch::where(bin_counts > 0, by_bin / bin_counts.clamp_min(1.0),
                                          torch::full_like(by_bin, std::numeric_limits<double>::quiet_NaN()));
      statistics.profile.select(1, f).copy_(binned.cpu());
    }
  }
  return statistics;
}

// The pair-by-distance profile of one (query, key) pair per sequence: the last query (T - 1) and
// keys[b] (-1, or a key the query does not see: none), each pair's term binned by the distance
// T - 1 - keys[b] and averaged over the sequences in the bin; NaN where none falls. [H, pairs, bins].
torch::Tensor QueryKeyProfile(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& doc_start,
                              const std::vector<int64_t>& keys, const std::vector<int64_t>& profile_edges) {
  const int64_t batch = q.size(0), heads = q.size(1), time = q.size(2), dim = q.size(3);
  const int64_t pairs = dim / 2, bins = static_cast<int64_t>(profile_edges.size()) - 1;
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(dim));
  const std::vector<int64_t> bin_of = DistanceBinOf(profile_edges);
  const torch::Tensor starts = doc_start.defined() ? doc_start.cpu() : torch::Tensor();
  torch::Tensor sums = torch::zeros({heads, pairs, bins}, torch::kDouble);
  std::vector<double> counts(static_cast<size_t>(bins), 0.0);
  const torch::Tensor query = q.select(2, time - 1).cpu().reshape({batch, heads, pairs, 2});
  for (int64_t b = 0; b < batch && b < static_cast<int64_t>(keys.size()); ++b) {
    const int64_t key = keys[static_cast<size_t>(b)];
    const int64_t first = starts.defined() ? starts[b][time - 1].item<int64_t>() : 0;
    if (key < first || key > time - 1) continue;  // no key, or one the query does not see
    const int64_t bin = bin_of[static_cast<size_t>(time - 1 - key)];
    const torch::Tensor key_pairs = k[b].select(1, key).cpu().reshape({heads, pairs, 2});
    sums.select(2, bin).add_((query[b] * key_pairs).sum(-1) * inv_sqrt_d);  // [H, pairs]
    counts[static_cast<size_t>(bin)] += 1.0;
  }
  for (int64_t bin = 0; bin < bins; ++bin) {
    const double count = counts[static_cast<size_t>(bin)];
    sums.select(2, bin).div_(count > 0 ? count : std::numeric_limits<double>::quiet_NaN());
  }
  return sums;
}

// E_r per head and query position, averaged over the batch ([H, T]), from the weights attention uses:
// softmax over the visible keys of multiplier * z - ALiBi bias, computed block by block of query rows.
torch::Tensor EffectiveLengths(const torch::Tensor& q, const torch::Tensor& k, const AttentionProbe& probe,
                               double renyi_order) {
  const int64_t batch = q.size(0), heads = q.size(1), time = q.size(2), dim = q.size(3);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(dim));
  torch::Tensor multiplier;  // [B or 1, H, T, 1]
  if (probe.query_multiplier.defined()) {
    const torch::Tensor m = probe.query_multiplier.to(q.options());  // [T, H] or [B, T, H]
    multiplier = m.dim() == 2 ? m.t().view({1, heads, time, 1}) : m.permute({0, 2, 1}).unsqueeze(-1);
  }
  torch::Tensor effective = torch::empty({heads, time}, q.options());
  const int64_t block = RowsPerBlock(batch, heads, time);
  for (int64_t r0 = 0; r0 < time; r0 += block) {
    const int64_t r1 = std::min(time, r0 + block), rows = r1 - r0;
    // Queries [r0, r1) see at most keys [0, r1).
    torch::Tensor logits = torch::matmul(q.narrow(2, r0, rows), k.narrow(2, 0, r1).transpose(-1, -2)) * inv_sqrt_d;
    if (multiplier.defined()) logits.mul_(multiplier.narrow(2, r0, rows));
    const torch::Tensor positions = torch::arange(r0, r1, q.options().dtype(torch::kLong));
    if (probe.alibi_slopes.defined()) {
      const torch::Tensor distance =
          (positions.view({rows, 1}) - torch::arange(r1, positions.options()).view({1, r1})).to(q.scalar_type());
      logits.sub_(probe.alibi_slopes.to(q.options()).view({1, heads, 1, 1}) * distance.view({1, 1, rows, r1}));
    }
    logits.masked_fill_(VisibleKeys(positions, r1, probe.doc_start).logical_not(), -INFINITY);
    const torch::Tensor weights = torch::softmax(logits, -1);
    const torch::Tensor lengths = renyi_order == 2.0 ? weights.pow(2).sum(-1).reciprocal()
                                                     : weights.pow(renyi_order).sum(-1).pow(1.0 / (1.0 - renyi_order));
    effective.narrow(1, r0, rows).copy_(lengths.mean(0));
  }
  return effective;
}

struct LayerResult {
  records::AttentionLayer record;
  std::vector<ContactRow> rows;  // gap counting over the grid, units (batch or sequence, layer, head)
};

records::GapCounting GapCountingRecord(const ContactFit& fit) {
  records::GapCounting record;
  for (const ContactBucket& bucket : fit.buckets) {
    record.buckets.push_back(
        {bucket.n, bucket.rows, bucket.ties, bucket.mean_log_lambda, bucket.mean_log_alpha, bucket.mean_log_delta});
  }
  record.units = fit.units;
  record.rows = fit.rows;
  record.ties = fit.ties;
  record.tie_share = fit.TieShare();
  if (fit.fitted) {
    record.xi_lambda = fit.lambda.xi;
    record.xi_lambda_half_iqr = fit.lambda.half_iqr;
    record.xi_alpha = fit.alpha.xi;
    record.xi_alpha_half_iqr = fit.alpha.half_iqr;
    record.xi_delta = fit.delta.xi;
    record.xi_delta_half_iqr = fit.delta.half_iqr;
  }
  return record;
}

LayerResult LayerDiagnostics(const AttentionProbe& probe, const ModelConfig& config, PositionalEncoding& positional,
                             const DiagnosticGrid& grid, const DiagnosticsOptions& options) {
  const int64_t layers = config.layers;
  const int64_t batch = probe.q.size(0), heads = probe.q.size(1), time = probe.q.size(2), dim = probe.q.size(3);
  const int64_t groups = heads / probe.k.size(1);
  const torch::Tensor q = probe.q.to(torch::kDouble);
  const torch::Tensor k = probe.k.to(torch::kDouble).repeat_interleave(groups, 1);  // [B, H, T, d]
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(dim));
  // E_r per head and query position, averaged over the batch.
  const torch::Tensor effective = EffectiveLengths(q, k, probe, options.renyi_order);  // [H, T]

  const int64_t pairs = dim / 2;
  torch::Tensor theta = config.position.rotary() ? positional->Frequencies(probe.layer).detach().to(torch::kDouble)
                                                 : torch::Tensor();  // [G, pairs]
  const std::vector<int64_t> profile_edges =
      options.pair_profile_bins > 0 ? DistanceBinEdges(time, options.pair_profile_bins) : std::vector<int64_t>();
  // The profile is the all-pairs one, or with profile keys (NRW) the query -> key one alone.
  const bool query_key_profile = !profile_edges.empty() && !options.profile_keys.empty();
  PairStatistics pair_statistics =
      MeasurePairs(q, k, probe.doc_start, query_key_profile ? std::vector<int64_t>() : profile_edges);
  if (query_key_profile) {
    pair_statistics.profile = QueryKeyProfile(q, k, probe.doc_start, options.profile_keys, profile_edges);
  }
  const torch::Tensor& usage = pair_statistics.usage;
  const torch::Tensor& band_strength = pair_statistics.band_strength;

  std::vector<records::AttentionHead> head_records;
  for (int64_t h = 0; h < heads; ++h) {
    records::AttentionHead record;
    record.head = h;
    record.effective_length_by_position = TensorValues(effective[h]);
    record.pair_usage = TensorValues(usage[h]);
    double mean = 0, square = 0;
    for (double value : record.pair_usage) mean += value / static_cast<double>(pairs);
    for (double value : record.pair_usage) square += (value - mean) * (value - mean) / static_cast<double>(pairs);
    record.pair_usage_cv = mean > 0 ? std::sqrt(square) / mean : 0.0;
    if (pair_statistics.profile.defined()) {
      // [pair][bin]: mean pair term of the visible pairs there; NaN where none
      for (int64_t f = 0; f < pairs; ++f) record.pair_profile.push_back(TensorValues(pair_statistics.profile[h][f]));
    }
    if (theta.defined()) {
      torch::Tensor head_theta = theta[theta.size(0) == 1 ? 0 : h / groups];
      const int64_t dominant = band_strength[h].argmax().item<int64_t>();
      const double frequency = head_theta[dominant].item<double>();
      record.dominant_pair = dominant;
      record.dominant_wavelength = frequency > 0 ? 2 * M_PI / frequency : std::numeric_limits<double>::infinity();
      record.dominant_wavelength_over_training_length =
          frequency > 0 ? 2 * M_PI / frequency / static_cast<double>(config.seq_len) : std::numeric_limits<double>::infinity();
      if ((head_theta > 0).all().item<bool>() && dim > 2) {
        record.effective_base = std::exp(-(4.0 / static_cast<double>(dim - 2)) * head_theta.log().sum().item<double>());
      }
    }
    head_records.push_back(std::move(record));
  }

  // Gap counting on z rows: the query at position n - 1 sees n keys; a row of a sequence whose document
  // there is shorter than n (cross-document masking) is not a row of n keys and is left out.
  // Only the rows z[n - 1, 0..n) for n on the grid and at T are read: those rows alone are computed.
  std::vector<int64_t> gap_positions;
  for (int64_t n : grid.lengths) gap_positions.push_back(n - 1);
  gap_positions.push_back(time - 1);
  std::sort(gap_positions.begin(), gap_positions.end());
  gap_positions.erase(std::unique(gap_positions.begin(), gap_positions.end()), gap_positions.end());
  const torch::Tensor gap_rows = torch::tensor(gap_positions, torch::TensorOptions().dtype(torch::kLong));
  const torch::Tensor z_cpu =
      (torch::matmul(q.index_select(2, gap_rows.to(q.device())), k.transpose(-1, -2)) * inv_sqrt_d).cpu().contiguous();
  auto row_index = [&](int64_t i) {
    return std::lower_bound(gap_positions.begin(), gap_positions.end(), i) - gap_positions.begin();
  };
  torch::Tensor starts = probe.doc_start.defined() ? probe.doc_start.cpu() : torch::Tensor();
  // Sequence b's unit: its evaluation batch's, or its own.
  const int64_t per_unit = options.bootstrap_unit == kBootstrapUnitSequence ? 1
                           : options.batch_sequences > 0                   ? options.batch_sequences
                                                                           : batch;
  auto for_rows_at = [&](int64_t n, const std::function<void(int64_t unit, const std::vector<double>&)>& visit) {
    const int64_t i = n - 1;
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t first = starts.defined() ? starts[b][i].item<int64_t>() : 0;
      if (i - first + 1 < n) continue;
      for (int64_t h = 0; h < heads; ++h) {
        const double* scores = z_cpu[b][h][row_index(i)].data_ptr<double>();
        std::copy(scores, scores + n, row.begin());
        // A row with a non-finite score (a diverged model) has no contact triple.
        if (!std::all_of(row.begin(), row.end(), [](double value) { return std::isfinite(value); })) continue;
        visit((b / per_unit * layers + probe.layer) * heads + h, row);
      }
    }
  };
  LayerResult result;
  for (int64_t n : grid.lengths) {
    for_rows_at(n, [&](int64_t unit, const std::vector<double>& row) { result.rows.push_back({unit, CountGaps(row)}); });
  }
  records::GapCounting gap = GapCountingRecord(FitContactExponents(result.rows, options.bootstrap, options.seed));
  // At the full length: Lambda, alpha, Delta and the softmax regime at multiples of Lambda.
  std::vector<double> lambdas, alphas, deltas;
  std::vector<std::vector<double>> regimes(options.regime_multiples.size(), std::vector<double>(3, 0.0));
  int64_t counted = 0, ties = 0;
  for_rows_at(time, [&](int64_t, const std::vector<double>& row) {
    GapCount count = CountGaps(row);
    if (IsAggregationTie(count)) {
      ++ties;
      return;
    }
    ++counted;
    lambdas.push_back(count.lambda);
    alphas.push_back(count.alpha);
    deltas.push_back(count.delta);
    for (size_t c = 0; c < options.regime_multiples.size(); ++c) {
      SoftmaxRegime regime = SoftmaxRegimeAt(row, options.regime_multiples[c] * count.lambda);
      regimes[c][0] += regime.normalised_entropy;
      regimes[c][1] += regime.max_weight;
      regimes[c][2] += regime.top_two_gap;
    }
  });
  auto mean_of = [](const std::vector<double>& values) {
    double sum = 0;
    for (double value : values) sum += value;
    return values.empty() ? std::nan("") : sum / static_cast<double>(values.size());
  };
  gap.at_training_length =
      records::GapCountingAtLength{time, counted, ties, mean_of(lambdas), mean_of(alphas), mean_of(deltas)};
  for (size_t c = 0; c < options.regime_multiples.size(); ++c) {
    const double rows = static_cast<double>(std::max<int64_t>(counted, 1));
    gap.softmax_regime.push_back(
        {options.regime_multiples[c], regimes[c][0] / rows, regimes[c][1] / rows, regimes[c][2] / rows});
  }
  result.record.layer = probe.layer;
  result.record.heads = std::move(head_records);
  result.record.gap_counting = std::move(gap);
  result.record.pair_profile_edges = profile_edges;
  return result;
}

// xi_beta of the learned inverse-temperature table, read both ways (grid and trim).
std::optional<records::InverseTemperatureRecord> TemperatureExponents(Transformer& model, const DiagnosticGrid& grid,
                                                                      int64_t trim) {
  torch::Tensor table = model->inverse_temperature()->beta_table();
  if (!table.defined()) return std::nullopt;
  const std::vector<double> beta = TensorValues(table);
  auto fit_record = [](const BetaExponentFit& fit) {
    constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
    records::BetaExponentFitRecord record;
    record.fitted = fit.fitted;
    record.xi = fit.fitted ? fit.xi : kNone;
    record.standard_error = fit.lengths.size() >= 3 ? fit.standard_error : kNone;  // two points determine the line
    record.log_a1 = fit.log_a1;
    if (fit.lengths.size() <= 16) record.lengths = fit.lengths;
    record.points = static_cast<int64_t>(fit.lengths.size());
    record.skipped = fit.skipped;
    return record;
  };
  records::InverseTemperatureRecord record;
  record.xi_beta_grid = fit_record(FitBetaExponentOnGrid(beta, grid.lengths));
  record.xi_beta_trim = fit_record(FitBetaExponentFromTrim(beta, trim));
  record.xi_beta_trim.trim = trim;
  record.table_length = static_cast<int64_t>(beta.size());
  return record;
}

}  // namespace

std::vector<std::vector<int64_t>> MeasureDominantPairs(Transformer& model, const torch::Tensor& tokens,
                                                       const torch::Tensor& doc_start) {
  const ModelConfig& config = model->config();
  if (!config.position.rotary()) return {};
  std::vector<torch::Tensor> strengths;  // per layer [H, pairs]
  ProbeAttention(model, tokens, doc_start, [&](const AttentionProbe& probe) {
    const int64_t groups = probe.q.size(1) / probe.k.size(1);
    strengths.push_back(MeasurePairs(probe.q.to(torch::kDouble),
                                     probe.k.to(torch::kDouble).repeat_interleave(groups, 1), probe.doc_start, {})
                            .band_strength);
  });
  std::vector<std::vector<int64_t>> dominant;
  const int64_t heads = config.heads;
  // One schedule for the whole model (RoPE, p-RoPE, LeRoPE, AdaRoPE shared globally): its pair over every
  // layer and head; else per layer, per frequency row (the heads of its KV group, or all the layer's).
  const PositionConfig& position = config.position;
  const PositionalVariant* variant = FindPositionalVariant(position.variant);
  const bool shared = variant == nullptr || variant->OneFrequencySchedule(position);
  if (shared) {
    torch::Tensor total = torch::zeros_like(strengths.front()[0]);
    for (const torch::Tensor& layer : strengths) total += layer.mean(0);
    return {{total.argmax().item<int64_t>()}};
  }
  const int64_t rows = model->positional()->Frequencies(0).size(0);
  for (const torch::Tensor& layer : strengths) {
    std::vector<int64_t> per_row;
    const int64_t heads_per_row = heads / rows;
    for (int64_t row = 0; row < rows; ++row) {
      per_row.push_back(layer.narrow(0, row * heads_per_row, heads_per_row).mean(0).argmax().item<int64_t>());
    }
    dominant.push_back(std::move(per_row));
  }
  return dominant;
}

namespace {

// Paper 003's appendix D.1 measurement of every head (core/diagnostics/appendix_d1.h) at each context M
// = round(multiple T), into the heads' failure_modes. The tokens: the query the batch's most frequent
// token, the keys its next three, each head giving them their roles by its own scores at m = 1
// (KeyOrder::kByNearestScore: a byte's tokens have no "cat" and "number"). Nothing where the model does
// not rotate, its tables depend on the length, or the batch has a single token.
void MeasureFailureModes(Transformer& model, const torch::Tensor& tokens, const std::vector<double>& multiples,
                         records::AttentionDiagnostics& record) {
  if (multiples.empty() || !model->config().position.rotary() || !model->positional()->TablesIndependentOfLength()) return;
  // Tokens by count, the smaller id first among equal counts.
  const std::vector<double> counts = TensorValues(torch::bincount(tokens.flatten().cpu()).to(torch::kDouble));
  std::vector<int64_t> order;
  for (size_t id = 0; id < counts.size(); ++id) {
    if (counts[id] > 0) order.push_back(static_cast<int64_t>(id));
  }
  if (order.size() < 2) return;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return counts[a] > counts[b]; });
  AppendixD1Options options;
  options.query_token = order[0];
  for (size_t i = 1; i < std::min<size_t>(order.size(), 4); ++i) options.key_tokens.push_back(order[i]);
  const std::vector<Precision> precisions = {Precision::kBf16, Precision::kFp16, Precision::kFp32};
  for (double multiple : multiples) {
    options.length = std::max<int64_t>(2, std::llround(multiple * static_cast<double>(tokens.size(1))));
    StatusOr<std::vector<std::vector<AppendixD1Scores>>> scores = MeasureAppendixD1ScoresEveryHead(model, options);
    if (!scores.ok()) {  // e.g. a forward pass of M tokens that does not fit: the shorter contexts stand
      record.warning = record.warning.value_or("") + (record.warning ? "; " : "") + "failure modes at M = " +
                       std::to_string(options.length) + " not measured: " + scores.status().message();
      return;
    }
    for (size_t layer = 0; layer < record.layers.size() && layer < scores->size(); ++layer) {
      for (size_t head = 0; head < record.layers[layer].heads.size() && head < (*scores)[layer].size(); ++head) {
        if (!AllFinite((*scores)[layer][head])) continue;  // a diverged head says nothing
        const AppendixD1FailureModes modes = MeasureAppendixD1FailureModes((*scores)[layer][head], precisions,
                                                                           KeyOrder::kByNearestScore, 0, 0);
        for (const AppendixD1Precision& row : modes.precisions) {
          records::HeadFailureModes entry;
          entry.length = modes.length;
          entry.precision = PrecisionName(row.precision);
          entry.procedure = "appendix_d1";
          entry.samples = 1;
          entry.position_inversion = modes.position_inversion;
          entry.position_inversion_deviation = std::fabs(modes.position_inversion - 0.5);
          entry.position_aliasing_fraction = row.position_aliasing.fraction;
          entry.position_aliasing_pairs = static_cast<double>(row.aliasing_pairs.front());
          entry.token_inversion = modes.token_inversion;
          entry.token_aliasing = static_cast<double>(row.token_aliasing);
          entry.attention_invariance = static_cast<double>(row.attention_invariance.pairs);
          record.layers[layer].heads[head].failure_modes.push_back(std::move(entry));
        }
      }
    }
  }
}

}  // namespace

std::vector<int64_t> RequestedDiagnosticLengths(const DiagnosticsOptions& options, int64_t length) {
  if (options.grid_ratios.empty()) return options.lengths;
  std::vector<int64_t> lengths;
  for (double ratio : options.grid_ratios) {
    lengths.push_back(std::max<int64_t>(2, std::llround(ratio * static_cast<double>(length))));
  }
  return lengths;
}

records::AttentionDiagnostics MeasureAttentionDiagnostics(Transformer& model, const torch::Tensor& tokens,
                                                          const torch::Tensor& doc_start,
                                                          const DiagnosticsOptions& options) {
  const DiagnosticGrid grid = ChooseDiagnosticGrid(RequestedDiagnosticLengths(options, tokens.size(1)), tokens.size(1));
  records::AttentionDiagnostics record;
  std::vector<ContactRow> pooled_rows;
  ProbeAttention(model, tokens, doc_start, [&](const AttentionProbe& probe) {
    LayerResult layer = LayerDiagnostics(probe, model->config(), model->positional(), grid, options);
    record.layers.push_back(std::move(layer.record));
    pooled_rows.insert(pooled_rows.end(), layer.rows.begin(), layer.rows.end());
  });
  record.pooled = GapCountingRecord(FitContactExponents(pooled_rows, options.bootstrap, options.seed));
  record.grid = grid.lengths;
  record.grid_fallback = grid.fallback;
  record.sequences = tokens.size(0);
  record.length = tokens.size(1);
  record.renyi_order = options.renyi_order;
  record.bootstrap = options.bootstrap;
  record.bootstrap_unit = options.bootstrap_unit;
  if (options.pair_profile_bins > 0) {
    record.pair_profile_reading = options.profile_keys.empty() ? "all_pairs" : "query_key";
  }
  const int64_t per_batch = options.batch_sequences > 0 ? options.batch_sequences : tokens.size(0);
  record.batches = per_batch > 0 ? (tokens.size(0) + per_batch - 1) / per_batch : 0;
  if (!grid.warning.empty()) record.warning = grid.warning;
  record.inverse_temperature = TemperatureExponents(model, grid, options.beta_trim);
  MeasureFailureModes(model, tokens, options.failure_lengths, record);
  return record;
}

}  // namespace rung

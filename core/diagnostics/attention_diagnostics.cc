#include "core/diagnostics/attention_diagnostics.h"

#include <cmath>
#include <limits>

#include "core/diagnostics/score_statistics.h"

namespace rung {
namespace {

using nlohmann::json;

std::vector<double> ToVector(const torch::Tensor& tensor) {
  torch::Tensor flat = tensor.detach().to(torch::kCPU, torch::kDouble).contiguous().view({-1});
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

// Keys j a query i may see: j <= i, and j >= doc_start[b, i] under cross-document masking. [B or 1, 1, T, T]
torch::Tensor VisibleKeys(int64_t time, const torch::Tensor& doc_start, const torch::Device& device) {
  auto positions = torch::arange(time, torch::TensorOptions().dtype(torch::kLong).device(device));
  auto visible = (positions.view({1, time}) <= positions.view({time, 1})).view({1, 1, time, time});
  if (doc_start.defined()) visible = visible & (positions.view({1, 1, 1, time}) >= doc_start.view({-1, 1, time, 1}));
  return visible;
}

json LayerDiagnostics(const AttentionProbe& probe, const ModelConfig& config, PositionalEncoding& positional,
                      const DiagnosticsOptions& options) {
  const int64_t batch = probe.q.size(0), heads = probe.q.size(1), time = probe.q.size(2), dim = probe.q.size(3);
  const int64_t groups = heads / probe.k.size(1);
  const torch::Tensor q = probe.q.to(torch::kDouble);
  const torch::Tensor k = probe.k.to(torch::kDouble).repeat_interleave(groups, 1);  // [B, H, T, d]
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(dim));
  const torch::Tensor visible = VisibleKeys(time, probe.doc_start, q.device());

  // Unscaled logits z and the weights attention really uses.
  torch::Tensor z = torch::matmul(q, k.transpose(-1, -2)) * inv_sqrt_d;  // [B, H, T, T]
  torch::Tensor logits = z;
  if (probe.query_multiplier.defined()) {
    logits = logits * probe.query_multiplier.to(torch::kDouble).t().view({1, heads, time, 1});
  }
  auto positions = torch::arange(time, q.options());
  auto distance = positions.view({time, 1}) - positions.view({1, time});  // i - j
  if (probe.alibi_slopes.defined()) {
    logits = logits - probe.alibi_slopes.to(q.options()).view({1, heads, 1, 1}) * distance.view({1, 1, time, time});
  }
  torch::Tensor weights = torch::softmax(logits.masked_fill(visible.logical_not(), -INFINITY), -1);
  // E_r per head and query position, averaged over the batch.
  torch::Tensor effective =
      (options.renyi_order == 2.0 ? weights.pow(2).sum(-1).reciprocal()
                                  : weights.pow(options.renyi_order).sum(-1).pow(1.0 / (1.0 - options.renyi_order)))
          .mean(0);  // [H, T]

  // Pair terms of z: c_f(i, j) = (q_2f k_2f + q_2f+1 k_2f+1) / sqrt(d), one pair at a time.
  const int64_t pairs = dim / 2;
  torch::Tensor theta = config.position.rotary() ? positional->Frequencies(probe.layer).detach().to(torch::kDouble)
                                                 : torch::Tensor();  // [G, pairs]
  torch::Tensor visible_f = visible.to(torch::kDouble).expand({batch, heads, time, time});
  const double visible_count = visible_f.sum().item<double>() / static_cast<double>(heads);
  torch::Tensor usage = torch::zeros({heads, pairs}, torch::kDouble);
  torch::Tensor band_strength = torch::zeros({heads, pairs}, torch::kDouble);
  // Mean contribution by relative distance delta = i - j (0..T-1), per head and pair.
  torch::Tensor delta_index = distance.clamp_min(0).to(torch::kLong).view({-1});
  for (int64_t f = 0; f < pairs; ++f) {
    torch::Tensor term = (q.narrow(-1, 2 * f, 2).unsqueeze(3) * k.narrow(-1, 2 * f, 2).unsqueeze(2)).sum(-1) * inv_sqrt_d;
    term = term * visible_f;  // [B, H, T, T]
    usage.select(1, f).copy_(term.abs().sum({0, 2, 3}).cpu() / visible_count);
    torch::Tensor by_distance = torch::zeros({heads, time}, q.options());
    torch::Tensor counts = torch::zeros({time}, q.options());
    by_distance.index_add_(1, delta_index, term.sum(0).view({heads, time * time}));
    counts.index_add_(0, delta_index, visible_f.select(1, 0).sum(0).reshape({-1}));
    torch::Tensor profile = by_distance / counts.clamp_min(1.0);  // [H, T]
    band_strength.select(1, f).copy_(profile.std(1).cpu());
  }

  json head_records = json::array();
  for (int64_t h = 0; h < heads; ++h) {
    json record;
    record["head"] = h;
    record["effective_length_by_position"] = ToVector(effective[h]);
    std::vector<double> pair_usage = ToVector(usage[h]);
    record["pair_usage"] = pair_usage;
    double mean = 0, square = 0;
    for (double value : pair_usage) mean += value / static_cast<double>(pairs);
    for (double value : pair_usage) square += (value - mean) * (value - mean) / static_cast<double>(pairs);
    record["pair_usage_cv"] = mean > 0 ? std::sqrt(square) / mean : 0.0;
    if (theta.defined()) {
      torch::Tensor head_theta = theta[theta.size(0) == 1 ? 0 : h / groups];
      const int64_t dominant = band_strength[h].argmax().item<int64_t>();
      const double frequency = head_theta[dominant].item<double>();
      record["dominant_pair"] = dominant;
      record["dominant_wavelength"] = frequency > 0 ? 2 * M_PI / frequency : std::numeric_limits<double>::infinity();
      record["dominant_wavelength_over_training_length"] =
          frequency > 0 ? 2 * M_PI / frequency / static_cast<double>(config.seq_len) : std::numeric_limits<double>::infinity();
      if ((head_theta > 0).all().item<bool>() && dim > 2) {
        record["effective_base"] = std::exp(-(4.0 / static_cast<double>(dim - 2)) * head_theta.log().sum().item<double>());
      }
    }
    head_records.push_back(record);
  }

  // Gap counting on z rows (query i sees n = i + 1 keys), per layer.
  torch::Tensor z_cpu = z.cpu().contiguous();
  torch::Tensor starts = probe.doc_start.defined() ? probe.doc_start.cpu() : torch::Tensor();
  auto rows_at = [&](int64_t n) {
    std::vector<std::vector<double>> rows;
    const int64_t i = n - 1;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t first = starts.defined() ? starts[b][i].item<int64_t>() : 0;
      if (i - first + 1 < n) continue;  // a shorter document: not a row of n keys
      for (int64_t h = 0; h < heads; ++h) {
        const double* row = z_cpu[b][h][i].data_ptr<double>();
        rows.emplace_back(row, row + n);
      }
    }
    return rows;
  };
  std::vector<int64_t> grid;
  for (int64_t n = 8; n <= time; n *= 2) grid.push_back(n);
  if (grid.empty() || grid.back() != time) grid.push_back(time);
  ExponentFit fit = FitLambdaExponent(grid, rows_at, options.bootstrap, options.seed);
  json gap = {{"xi_lambda", fit.xi},       {"xi_lambda_ci", {fit.ci_low, fit.ci_high}},
              {"lengths", fit.lengths},     {"mean_log_lambda", fit.mean_log_lambda}};
  // At the full length: Lambda, alpha, Delta and the softmax regime at multiples of Lambda.
  std::vector<double> lambdas, alphas, deltas;
  std::vector<std::vector<double>> regimes(options.regime_multiples.size(), std::vector<double>(3, 0.0));
  int64_t counted = 0, ties = 0;
  for (const std::vector<double>& row : rows_at(time)) {
    GapCount count = CountGaps(row);
    if (count.tie) {
      ++ties;
      continue;
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
  }
  auto mean_of = [](const std::vector<double>& values) {
    double sum = 0;
    for (double value : values) sum += value;
    return values.empty() ? std::nan("") : sum / static_cast<double>(values.size());
  };
  gap["at_training_length"] = {{"n", time},       {"rows", counted},           {"ties", ties},
                               {"lambda_mean", mean_of(lambdas)}, {"alpha_mean", mean_of(alphas)},
                               {"delta_mean", mean_of(deltas)}};
  json regime_records = json::array();
  for (size_t c = 0; c < options.regime_multiples.size(); ++c) {
    const double rows = static_cast<double>(std::max<int64_t>(counted, 1));
    regime_records.push_back({{"beta_over_lambda", options.regime_multiples[c]},
                              {"normalised_entropy", regimes[c][0] / rows},
                              {"max_weight", regimes[c][1] / rows},
                              {"top_two_gap", regimes[c][2] / rows}});
  }
  gap["softmax_regime"] = regime_records;
  return {{"layer", probe.layer}, {"heads", head_records}, {"gap_counting", gap}};
}

}  // namespace

json MeasureAttentionDiagnostics(Transformer& model, const torch::Tensor& tokens, const torch::Tensor& doc_start,
                                 const DiagnosticsOptions& options) {
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  json layers = json::array();
  model->set_attention_probe([&](const AttentionProbe& probe) {
    layers.push_back(LayerDiagnostics(probe, model->config(), model->positional(), options));
  });
  model->forward(tokens, doc_start);
  model->set_attention_probe({});
  if (was_training) model->train();
  // Pooled exponent: the layers' mean ln Lambda curves averaged (each layer weighs the same).
  json pooled;
  if (!layers.empty()) {
    std::vector<double> x, y;
    const json& first = layers[0]["gap_counting"];
    for (size_t index = 0; index < first["lengths"].size(); ++index) {
      double sum = 0;
      bool complete = true;
      for (const json& layer : layers) {
        const json& curve = layer["gap_counting"]["mean_log_lambda"];
        if (index >= curve.size()) complete = false;
        else sum += curve[index].get<double>();
      }
      if (!complete) continue;
      x.push_back(std::log(std::log(first["lengths"][index].get<double>())));
      y.push_back(sum / static_cast<double>(layers.size()));
    }
    if (x.size() >= 2) pooled["xi_lambda"] = LeastSquaresLine(x, y).first;
  }
  return {{"layers", layers},
          {"pooled", pooled},
          {"sequences", tokens.size(0)},
          {"length", tokens.size(1)},
          {"renyi_order", options.renyi_order}};
}

}  // namespace rung

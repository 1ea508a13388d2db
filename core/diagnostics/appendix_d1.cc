#include "core/diagnostics/appendix_d1.h"

#include "core/model/length_extension.h"
#include "core/model/tensor_values.h"

namespace rung {

namespace {

// The checks both measurements share (the header's errors), less the layer and head.
Status CheckMeasurable(Transformer& model, const AppendixD1Options& options) {
  const ModelConfig& config = model->config();
  auto refuse = [](const std::string& message) { return Status::InvalidArgument(message); };
  if (options.key_tokens.empty() || options.key_tokens.size() > 3) return refuse("give 1 to 3 key tokens");
  if (options.length < 2) return refuse("the context M must be at least 2");
  std::vector<int64_t> tokens = options.key_tokens;
  tokens.push_back(options.query_token);
  if (options.bos_token >= 0) tokens.push_back(options.bos_token);
  for (int64_t token : tokens) {
    if (token < 0 || token >= config.vocab_size) {
      return refuse("token id " + std::to_string(token) + " is outside the vocabulary of " + std::to_string(config.vocab_size));
    }
  }
  if (!config.position.rotary()) return refuse("position.variant " + config.position.variant + " does not rotate queries and keys");
  if (!model->positional()->TablesIndependentOfLength()) {
    return Status::FailedPrecondition("position.variant " + config.position.variant +
                                      " as configured makes its tables depend on the window's length");
  }
  return Status::Ok();
}

// The scores of every head, or of `only_layer`/`only_head` alone (>= 0), into `result` [layer][head]
// (the others left without keys). The probe is cleared whatever happens.
Status MeasureScores(Transformer& model, const AppendixD1Options& options, int64_t only_layer, int64_t only_head,
                     std::vector<std::vector<AppendixD1Scores>>& result) {
  const ModelConfig& config = model->config();
  const int64_t bos = options.bos_token >= 0 ? 1 : 0;
  const int64_t time = bos + options.length + 1, query_at = time - 1;
  const int64_t group = config.heads / config.kv_heads;
  result.assign(static_cast<size_t>(config.layers), std::vector<AppendixD1Scores>(static_cast<size_t>(config.heads)));
  for (auto& layer : result) {
    for (AppendixD1Scores& head : layer) head.head_dim = config.head_dim;
  }
  torch::NoGradGuard no_grad;
  const bool training = model->is_training();
  model->eval();
  struct Restore {
    Transformer& model;
    bool training;
    ~Restore() {
      model->set_attention_probe({});
      if (training) model->train();
    }
  } restore{model, training};
  // A length extension's logit factor is part of the score (transformers folds YaRN's attention scaling
  // into its cos and sin); 1 without one.
  const double factor = ExtensionLogitFactor(model->positional()->length_extension());
  for (int64_t key_token : options.key_tokens) {
    torch::Tensor ids = torch::full({1, time}, key_token, torch::kLong);
    if (bos) ids[0][0] = options.bos_token;
    ids[0][query_at] = options.query_token;
    model->set_attention_probe([&](const AttentionProbe& probe) {
      if (only_layer >= 0 && probe.layer != only_layer) return;
      for (int64_t h = 0; h < config.heads; ++h) {
        if (only_head >= 0 && h != only_head) continue;
        // The row in the compute dtype, then one query and the keys' row to double.
        const torch::Tensor query = probe.q[0][h][query_at];
        const torch::Tensor head_keys = probe.k[0][h / group];  // [time, d]
        const std::vector<double> row = TensorValues(torch::mv(head_keys.to(torch::kDouble), query.to(torch::kDouble)).cpu());
        AppendixD1Key key;
        key.token = key_token;
        for (int64_t m = 1; m <= options.length; ++m) key.scores.push_back(factor * row[static_cast<size_t>(query_at - m)]);
        key.amplitude_sum = factor * PairAmplitudeSum(TensorValues(query.to(torch::kDouble).cpu()),
                                                      TensorValues(head_keys[query_at - 1].to(torch::kDouble).cpu()));
        result[static_cast<size_t>(probe.layer)][static_cast<size_t>(h)].keys.push_back(std::move(key));
      }
    }, only_layer);  // one layer: the pass stops after it
    try {
      model->Hidden(ids.to(model->parameters().front().device()));
    } catch (const std::exception& error) {
      return Status::ResourceExhausted("the forward pass over " + std::to_string(time) + " tokens failed: " + error.what());
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<std::vector<AppendixD1Scores>>> MeasureAppendixD1ScoresEveryHead(Transformer& model,
                                                                                     const AppendixD1Options& options) {
  RUNG_RETURN_IF_ERROR(CheckMeasurable(model, options));
  std::vector<std::vector<AppendixD1Scores>> result;
  RUNG_RETURN_IF_ERROR(MeasureScores(model, options, -1, -1, result));
  return result;
}

StatusOr<AppendixD1Scores> MeasureAppendixD1Scores(Transformer& model, const AppendixD1Options& options) {
  const ModelConfig& config = model->config();
  if (options.layer < 0 || options.layer >= config.layers) {
    return Status::InvalidArgument("layer " + std::to_string(options.layer) + " is not one of the model's " +
                                   std::to_string(config.layers));
  }
  if (options.head < 0 || options.head >= config.heads) {
    return Status::InvalidArgument("head " + std::to_string(options.head) + " is not one of the model's " +
                                   std::to_string(config.heads));
  }
  RUNG_RETURN_IF_ERROR(CheckMeasurable(model, options));
  std::vector<std::vector<AppendixD1Scores>> every;
  RUNG_RETURN_IF_ERROR(MeasureScores(model, options, options.layer, options.head, every));
  AppendixD1Scores scores = std::move(every[static_cast<size_t>(options.layer)][static_cast<size_t>(options.head)]);
  if (!AllFinite(scores)) return Status::FailedPrecondition("the head's scores are not finite (a diverged model?)");
  return scores;
}

}  // namespace rung

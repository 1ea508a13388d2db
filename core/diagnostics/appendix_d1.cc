#include "core/diagnostics/appendix_d1.h"

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

}  // namespace

StatusOr<std::vector<std::vector<AppendixD1Scores>>> MeasureAppendixD1ScoresEveryHead(Transformer& model,
                                                                                     const AppendixD1Options& options) {
  RUNG_RETURN_IF_ERROR(CheckMeasurable(model, options));
  const ModelConfig& config = model->config();
  const int64_t bos = options.bos_token >= 0 ? 1 : 0;
  const int64_t time = bos + options.length + 1, query_at = time - 1;
  const int64_t group = config.heads / config.kv_heads;
  std::vector<std::vector<AppendixD1Scores>> result(static_cast<size_t>(config.layers),
                                                    std::vector<AppendixD1Scores>(static_cast<size_t>(config.heads)));
  for (auto& layer : result) {
    for (AppendixD1Scores& head : layer) head.head_dim = config.head_dim;
  }
  torch::NoGradGuard no_grad;
  const bool training = model->is_training();
  model->eval();
  for (int64_t key_token : options.key_tokens) {
    torch::Tensor ids = torch::full({1, time}, key_token, torch::kLong);
    if (bos) ids[0][0] = options.bos_token;
    ids[0][query_at] = options.query_token;
    model->set_attention_probe([&](const AttentionProbe& probe) {
      const torch::Tensor queries = probe.q[0].select(1, query_at).to(torch::kDouble).cpu();  // [heads, d]
      const torch::Tensor keys = probe.k[0].to(torch::kDouble).cpu();                          // [kv, time, d]
      for (int64_t h = 0; h < config.heads; ++h) {
        const torch::Tensor head_keys = keys[h / group];
        const std::vector<double> row = TensorValues(torch::mv(head_keys, queries[h]));  // o_j
        AppendixD1Key key;
        key.token = key_token;
        for (int64_t m = 1; m <= options.length; ++m) key.scores.push_back(row[static_cast<size_t>(query_at - m)]);
        key.amplitude_sum = PairAmplitudeSum(TensorValues(queries[h]), TensorValues(head_keys[query_at - 1]));
        result[static_cast<size_t>(probe.layer)][static_cast<size_t>(h)].keys.push_back(std::move(key));
      }
    });
    model->Hidden(ids.to(model->parameters().front().device()));
    model->set_attention_probe({});
  }
  if (training) model->train();
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
  RUNG_ASSIGN_OR_RETURN(std::vector<std::vector<AppendixD1Scores>> every, MeasureAppendixD1ScoresEveryHead(model, options));
  return std::move(every[static_cast<size_t>(options.layer)][static_cast<size_t>(options.head)]);
}

}  // namespace rung

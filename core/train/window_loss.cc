#include "core/train/window_loss.h"

#include <algorithm>

#include "core/model/attention.h"
#include "core/train/token_cross_entropy.h"

namespace rung {
namespace {

// Positions of the output head evaluated at once.
constexpr int64_t kHeadSlice = 512;

}  // namespace

int64_t CountWindows(int64_t stream_tokens, const WindowLossOptions& options) {
  const int64_t span = options.bos ? options.seq_len : options.seq_len + 1;  // stream tokens a window reads
  const int64_t stride = options.stride > 0 ? options.stride : options.seq_len;
  if (stream_tokens < span) return 0;
  return (stream_tokens - span) / stride + 1;
}

WindowLoss EvaluateWindows(Transformer& model, int64_t stream_tokens, const std::function<int64_t(int64_t)>& token,
                           const std::vector<int32_t>* byte_lengths, const WindowLossOptions& options) {
  torch::NoGradGuard no_grad;
  const int64_t time = options.seq_len;
  const int64_t stride = options.stride > 0 ? options.stride : time;
  int64_t windows = CountWindows(stream_tokens, options);
  if (options.max_windows > 0) windows = std::min(windows, options.max_windows);
  WindowLoss result;
  result.position_loss_sum.assign(time, 0.0);
  result.position_count.assign(time, 0);
  const bool bos = options.bos.has_value();
  torch::Tensor inputs = torch::empty({1, time}, torch::kLong);
  const torch::Tensor window_starts = options.sliding_window > 0 && options.sliding_window < time
                                          ? SlidingWindowStarts(1, time, options.sliding_window, options.device)
                                          : torch::Tensor();
  torch::Tensor targets = torch::empty({time}, torch::kLong);
  for (int64_t w = 0; w < windows; ++w) {
    const int64_t start = w * stride;
    auto in = inputs.accessor<int64_t, 2>();
    auto out = targets.accessor<int64_t, 1>();
    for (int64_t t = 0; t < time; ++t) {
      if (bos) {
        in[0][t] = t == 0 ? *options.bos : token(start + t - 1);
        out[t] = token(start + t);
      } else {
        in[0][t] = token(start + t);
        out[t] = token(start + t + 1);
      }
    }
    // The first window scores every prediction, later ones the last `stride` (the rest were scored).
    const int64_t first_scored = w == 0 ? 0 : time - stride;
    const torch::Tensor hidden = model->Hidden(inputs.to(options.device), window_starts).squeeze(0);  // [T, d]
    const torch::Tensor window_targets = targets.to(options.device);
    for (int64_t begin = first_scored; begin < time; begin += kHeadSlice) {
      const int64_t count = std::min(kHeadSlice, time - begin);
      const torch::Tensor logits = model->Logits(hidden.narrow(0, begin, count)).to(torch::kFloat);
      const torch::Tensor losses =
          TokenCrossEntropy(logits, window_targets.narrow(0, begin, count).contiguous()).to(torch::kCPU, torch::kDouble);
      auto loss = losses.accessor<double, 1>();
      for (int64_t i = 0; i < count; ++i) {
        const int64_t position = begin + i;
        result.position_loss_sum[position] += loss[i];
        result.position_count[position] += 1;
        result.loss_sum += loss[i];
        if (byte_lengths != nullptr) {
          const int64_t id = out[position];
          if (id >= 0 && id < static_cast<int64_t>(byte_lengths->size())) result.bytes_scored += (*byte_lengths)[id];
        }
      }
      result.tokens_scored += count;
    }
    result.windows = w + 1;
    if (options.progress) options.progress(w + 1, windows);
  }
  return result;
}

}  // namespace rung

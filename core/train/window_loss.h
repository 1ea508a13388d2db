// core/train/window_loss.h
//
// The next-token loss of a model over a token stream cut into windows of T tokens (`rung eval`): the
// perplexity evaluation of YaRN's and LongRoPE's papers.
//   - consecutive windows (stride 0): window w reads tokens [wT, (w+1)T] and scores its T predictions;
//   - sliding windows (stride S < T): windows start every S tokens, the first scores all its
//     predictions and each later one only the S tokens no earlier window scored (each token once, with
//     up to T - S tokens of context before it);
//   - with a BOS token, each window is BOS followed by T - 1 tokens of the stream, and its T
//     predictions score the stream's T tokens from the first (a window covers T stream tokens, not T + 1).
// With a sliding window W < T each query sees its W latest keys (SlidingWindowStarts, attention.h).
// Only whole windows are evaluated. Losses are in nats, accumulated in double; by position: the mean
// loss of the predictions made at each position of the window (0..T-1) over the windows that scored
// there. The output head is applied a slice of positions at a time, so memory beyond the model is the
// activations of one window plus [slice, vocab].
//
// Thread safety: one evaluation at a time per model.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/model/transformer.h"

namespace rung {

struct WindowLossOptions {
  int64_t seq_len = 0;                // T
  int64_t stride = 0;                 // S; 0 = T (consecutive windows)
  int64_t max_windows = 0;            // 0 = every whole window
  std::optional<int64_t> bos;         // prepended to each window
  torch::Device device = torch::kCPU; // where the model is
  int64_t sliding_window = 0;         // keys a query sees (Mistral's sliding_window); 0 = all before it
  // Called after each window with (windows done, windows in all).
  std::function<void(int64_t, int64_t)> progress;
};

struct WindowLoss {
  int64_t windows = 0;
  int64_t tokens_scored = 0;
  double loss_sum = 0.0;               // nats
  double bytes_scored = 0.0;           // the scored tokens' bytes where their lengths are known, else 0
  std::vector<double> position_loss_sum;   // [T]
  std::vector<int64_t> position_count;     // [T]
  double mean_loss() const { return tokens_scored > 0 ? loss_sum / static_cast<double>(tokens_scored) : 0.0; }
};

// The number of whole windows `options` cut from `stream_tokens` tokens (before max_windows).
int64_t CountWindows(int64_t stream_tokens, const WindowLossOptions& options);

// token(i): the stream's token i (0 <= i < stream_tokens); byte_lengths: each id's length in bytes, or
// null. REQUIRES: seq_len >= 1, 0 <= stride <= seq_len, CountWindows(...) >= 1.
WindowLoss EvaluateWindows(Transformer& model, int64_t stream_tokens, const std::function<int64_t(int64_t)>& token,
                           const std::vector<int32_t>* byte_lengths, const WindowLossOptions& options);

}  // namespace rung

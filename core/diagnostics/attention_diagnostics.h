// core/diagnostics/attention_diagnostics.h
//
// The diagnostics of docs/science.md section 7 measured on a trained model, from a few validation
// sequences, per layer and head:
//   - effective attention length E_2 (and E_beta for beta = diagnostic order) against query position
//   - frequency-pair usage u_f = mean over query/key pairs (j <= i) of |pair-f term of the unscaled
//     logit|, its coefficient of variation across pairs, the effective base
//     Theta = exp(-(4/(d-2)) sum_f log theta_f) (b for RoPE; AdaRoPE per KV group)
//   - dominant band: the pair whose mean contribution varies most with the relative distance, its
//     wavelength 2 pi / theta and that over the training length
//   - gap counting on the unscaled rows z[i, 0..i] (Lambda, alpha, Delta; ties excluded) with
//     xi_Lambda fitted over a grid of n (per layer and pooled) with a bootstrap interval
//   - the softmax regime (normalised entropy, max weight, top-two gap) at beta = c Lambda
// Output is JSON (the trainer writes it as its `diagnostics` record).
#pragma once

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "core/model/transformer.h"

namespace rung {

struct DiagnosticsOptions {
  double renyi_order = 2.0;
  std::vector<double> regime_multiples = {0.5, 1.0, 2.0};  // c in beta = c * Lambda
  int bootstrap = 200;
  uint64_t seed = 0;
};

// tokens: [B, T] validation inputs (T the training length); doc_start as for forward (or undefined).
nlohmann::json MeasureAttentionDiagnostics(Transformer& model, const torch::Tensor& tokens,
                                           const torch::Tensor& doc_start, const DiagnosticsOptions& options = {});

}  // namespace rung

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
//   - the pair-by-distance profile: each pair's mean contribution in bins of relative distance
//     (AdaRoPE figures 1 and 5; DiagnosticsOptions::pair_profile_bins): over every sampled query row and
//     its visible keys, or, given DiagnosticsOptions::profile_keys, over one (query, key) pair per
//     sequence, the last position's query and that key (NRW's QUERY and NEEDLE, as the figures read it)
//   - gap counting on the unscaled rows z[n - 1, 0..n) over the n-grid (contact_aggregation.h: the
//     options' lengths clipped to T, or its geometric fallback), aggregated as paper 004 does: xi_Lambda,
//     xi_alpha, xi_Delta with half-IQR intervals over (evaluation batch, layer, head) units (or, as the
//     option `sequence`, (sequence, layer, head)) and the tie share,
//     per layer and pooled over every layer (rows pooled per n, not the layers' curves averaged)
//   - the softmax regime (normalised entropy, max weight, top-two gap) at beta = c Lambda, at n = T
//   - for the `learned` inverse temperature, xi_beta of its table (beta_exponent.h) on the grid and
//     from `beta_trim`
//   - for rotary variants, RoPE's failure modes per head as paper 003's appendix D.1 measures them
//     (appendix_d1.h: the batch's most frequent token as the query, its next three as the keys), as
//     each head's "failure_modes"
// Output is typed (core/records/diagnostics_payloads.h): the trainer sends it as its `diagnostics` record.
#pragma once

#include <torch/torch.h>

#include "core/diagnostics/beta_exponent.h"
#include "core/diagnostics/contact_aggregation.h"
#include "core/model/transformer.h"
#include "core/records/diagnostics_payloads.h"

namespace rung {

struct DiagnosticsOptions {
  double renyi_order = 2.0;
  std::vector<double> regime_multiples = {0.5, 1.0, 2.0};  // c in beta = c * Lambda
  std::vector<int64_t> lengths = PaperDiagnosticLengths();  // the n-grid before clipping to T
  // The n-grid as fractions r in (0, 1] of the evaluated length instead: round(r T) each (paper 004's
  // Qwen cells: 1/4, 1/2, 3/4, 1 of n_eval); empty: `lengths`.
  std::vector<double> grid_ratios;
  int64_t beta_trim = kBetaExponentMinLength;               // xi_beta from every n >= this
  // RoPE's failure modes per head over contexts M = each multiple of T (appendix_d1.h); none if empty.
  std::vector<double> failure_lengths;
  // The pair-by-distance profile (AdaRoPE figures 1 and 5): each head's mean pair term in this many
  // distance bins (distance_bins.h) as "pair_profile" [pair][bin], the layer's "pair_profile_edges"; 0: none.
  int64_t pair_profile_bins = 32;
  // Per sequence of `tokens`, the key position whose pair with the last query (position T - 1) alone
  // makes the pair-by-distance profile, binned by its distance T - 1 - key (-1: the sequence adds
  // none); empty: the profile of every sampled query row and its visible keys.
  std::vector<int64_t> profile_keys;
  int bootstrap = 200;
  uint64_t seed = 0;
  // The bootstrap's unit (contact_aggregation.h): kBootstrapUnitBatch, paper 004's (evaluation batch,
  // layer, head), or kBootstrapUnitSequence, (sequence, layer, head).
  std::string bootstrap_unit = kBootstrapUnitBatch;
  // The evaluation batches: consecutive rows of `tokens`, this many each; 0: all of them are one batch.
  int64_t batch_sequences = 0;
};

// The n-grid requested at evaluated length `length`: round(r length) for each of options.grid_ratios
// (at least 2), else options.lengths. ChooseDiagnosticGrid then clips it.
std::vector<int64_t> RequestedDiagnosticLengths(const DiagnosticsOptions& options, int64_t length);

// tokens: [B, T] validation inputs (T the evaluated length: the training length, or a multiple of it
// under the model's length extension), the evaluation batches one after the other; doc_start as for
// forward (or undefined).
records::AttentionDiagnostics MeasureAttentionDiagnostics(Transformer& model, const torch::Tensor& tokens,
                                                          const torch::Tensor& doc_start,
                                                          const DiagnosticsOptions& options = {});

// The dominant pair (the largest band strength: the pair whose mean contribution varies most with the
// relative distance) of each frequency unit, measured on `tokens` ([B, T] at the training length): one
// pair for a schedule shared by the whole model (RoPE, p-RoPE, LeRoPE, AdaRoPE with share_freq global),
// band strength averaged over every layer and head; else per layer, one per frequency row (each KV group,
// or the layer's one row), averaged over the row's heads. The [layer][row] table of
// LengthExtension::dominant_pairs; empty for a model without rotation.
std::vector<std::vector<int64_t>> MeasureDominantPairs(Transformer& model, const torch::Tensor& tokens,
                                                       const torch::Tensor& doc_start);

}  // namespace rung

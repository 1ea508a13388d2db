// core/diagnostics/head_failure_modes.h
//
// RoPE's failure modes (docs/science.md section 12, core/diagnostics/failure_modes.h) measured on one
// layer of a trained model: per head, on real queries and keys with the layer's own (possibly learned)
// frequencies. For each validation sequence b of the probe, the head's query at the last position and its
// keys at positions T/2 (the position modes) and T/4, 3T/4 (the token modes), taken back to position 0
// (un-rotated by their own positions, so that S(m) is the score the pair would have m positions apart),
// give one sample; every statistic is averaged over the samples (token inversion over those without a
// tie at 0), at every context M = round(multiple * T) (at least 2) and every precision (bf16, fp16, fp32).
#pragma once

#include <vector>

#include <torch/torch.h>

#include "core/diagnostics/failure_modes.h"
#include "core/records/diagnostics_payloads.h"
#include "core/model/transformer.h"

namespace rung {

// The sample of sequence b and head h described above: the query at T - 1, the key at T/2, the keys at
// T/4 and 3T/4, each at position 0, with the head's frequencies `theta_row` (d/2). So that
// RopeScores(query, key, theta, M)[m] is the head's unscaled score for a key m positions before its query.
RopeHeadVectors HeadSample(const AttentionProbe& probe, const std::vector<double>& theta_row, int64_t b, int64_t h);

// theta: the layer's frequencies [G, d/2] (G = 1 when shared, else per KV group). Returns per head one
// entry per (length, precision); empty without multiples or a rotation.
std::vector<std::vector<records::HeadFailureModes>> MeasureHeadFailureModes(const AttentionProbe& probe,
                                                                            const torch::Tensor& theta,
                                                                            const std::vector<double>& multiples);

}  // namespace rung

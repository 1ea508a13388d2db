// tests/core/model/induction_model.h
//
// A rung Transformer whose weights are set by hand, not trained, so that it copies by induction on
// bytes (vocab 256): layer 0 has a previous-token head, layer 1 an induction head (Olsson et al.,
// "In-context learning and induction heads", 2022). Position variant "absolute" (the table rows are
// set by hand), 2 layers, 1 head, the MLPs zero, an untied head.
//
// What it computes. At position i, let c = t_i. If c occurs exactly once among t_0..t_{i-1}, at k,
// the argmax of the logits at i is t_{k+1} (the byte that followed c there; k + 1 = i when k = i - 1).
// So after "... M X ... M" with M once before the end, the argmax next token is X; and greedy decoding
// after "... M X1 X2 ... Xn ... M" gives X1, X2, ..., Xn whenever M, X1, ..., X(n-1) are distinct and
// each occurs exactly once before the final M (Xn may occur anywhere). The bytes may be any of 0..255.
//
// How. A byte is coded by its 8 bits as +-1 (two codes agree in 8 - 2 x Hamming distance places);
// position j by the pairs (cos, sin)(pi j / 2^f), f = 0..F-1 with 2^F >= max_length, plus a flag
// "j == 0". Residual stream: [token code 8 | position code 2F | first, later | previous code 8 |
// output code 8], d_model = 26 + 2F. Layer 0's query is the position code turned back by one step,
// so it scores key j with S0 x sum_f cos(pi (i - 1 - j) / 2^f): j = i - 1 wins by at least 2 S0 over
// every other j <= i; its value writes t_{i-1}'s code into "previous" (position 0, which has no
// predecessor, attends to itself). Layer 1 scores key j >= 1 with S1 x (agreement of t_i's code with
// t_{j-1}'s), and key 0 (flagged) 16 S1 lower, so at most -8 S1: a key whose previous byte is c wins
// by at least 2 S1; its value writes t_j's code into "output". The head reads only "output":
// logit(v) = 4 x (agreement of v's code with it), so the copied byte X gets 32 and every other byte
// at most 24. S0 = S1 = 16: attention logits stay within 16 x max(F, 24) in magnitude (finite in
// fp32), and the weight off the chosen key is below T e^-32, whichever attention kernel computes it.
//
// Limits: T <= max_length (the absolute table refuses longer sequences). Where c occurs several
// times before i the head averages their successors' codes, and where it never occurs the head
// attends to the nearest codes: the argmax there is no copy, and no logit anywhere models the text
// (no unigram or bigram statistics; every prediction is a copy).
#pragma once

#include <cstdint>
#include <string>

#include "core/common/status.h"
#include "core/config/model_config.h"
#include "core/config/trial_config.h"
#include "core/model/transformer.h"

namespace rung::testing_models {

// The shape MakeInductionModel fills (vocab 256, seq_len max_length): a randomly initialised
// Transformer(InductionModelConfig(n)) is the untrained model of the same shape.
// REQUIRES: max_length >= 2.
ModelConfig InductionModelConfig(int64_t max_length);

// The model above, for sequences of up to max_length tokens; in eval mode.
Transformer MakeInductionModel(int64_t max_length);

// A trial of that model: the builtin corpus as bytes, data.seq_len max_length, train.steps 1, the
// rest defaults.
TrialConfig InductionTrialConfig(int64_t max_length);

// The model as a rung-train checkpoint of InductionTrialConfig(max_length) in the folder `dir` (step
// 0, zero optimizer moments): LoadCheckpointModel (`rung eval`) reads it, and a trial of the same
// model shape starts from it with train.init.checkpoint. Returns the file's path (WriteCheckpoint's
// errors).
StatusOr<std::string> WriteInductionCheckpoint(const std::string& dir, int64_t max_length);

}  // namespace rung::testing_models

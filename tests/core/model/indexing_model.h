// tests/core/model/indexing_model.h
//
// A rung Transformer whose weights are set by hand, not trained, so that it answers paper 003's
// indexing prompt (core/probes/indexing_prompts.h) on bytes (vocab 256) by position: it reads the last
// digit of the index and copies the list element at that place. Position variant "absolute" (the
// table rows are set by hand), 2 layers, 1 head, the MLPs zero, an untied head.
//
// What it computes. A prompt "arr = [v0, v1, ...]\n...: arr[k] =" followed by " " (the answer's
// shared first byte, which the probe's next_token and choice scoring feed): the prompt starts at
// position 0 (bytes have no BOS), so element e sits at position 7 + 3e, and the last digit b of k at
// i - 4 for the last position i. The argmax of the logits at i is the byte at 7 + 3 (b XOR flip), so
// with flip 0 it answers arr[k] wherever k < 10 and arr[k mod 10] otherwise: right on every list of
// up to 10 elements, and on longer lists only where the two agree. With flip 1 it answers the
// neighbour arr[b XOR 1], wrong wherever that differs from arr[k] (about 3 in 4): a model confused
// about position, as the paper's models are at length.
//
// How (tests/core/model/hand_set_weights.h's codes). Residual stream: [token code 8 | constant 1 |
// position code 2F | slot code 8, slot flag, non-slot 3 | index code 8 | output code 8]. The table
// gives position j = 7 + 3e (e < 256) the code of e and the flag, every other position the value 3 in
// "non-slot" (so every row has the same norm). Layer 0 looks back 4 positions (LookBackHead) and
// writes that token's code into "index". Layer 1's query is the index code with bits 4 and 5 negated
// (a digit's byte is 0x30 + b: its low four bits are b, bits 4 and 5 set, 6 and 7 clear, so this is
// the code of b as a number; bit 0 negated too with flip) and 8 on the constant; its key the slot
// code and flag: it scores slot e by 16 x (agreement + 8) and every other position 0, so the slot of
// b leads by at least 2 x 16. Its value writes the token's code into "output", which the head reads:
// logit(v) = 4 x agreement, so the copied byte gets 32 and every other at most 24.
//
// Limits: T <= max_length; the answer is a copy of whatever byte the slot holds (a digit where the
// slot is within the list).
#pragma once

#include <cstdint>

#include "core/config/trial_config.h"
#include "core/model/transformer.h"

namespace rung::testing_models {

// The shape MakeIndexingModel fills (vocab 256, seq_len max_length). REQUIRES: 16 <= max_length <= 775.
ModelConfig IndexingModelConfig(int64_t max_length);

// The model above, for sequences of up to max_length tokens; in eval mode. flip: 0 or 1.
Transformer MakeIndexingModel(int64_t max_length, int flip);

// A trial of that model that asks the indexing probe: the builtin corpus as bytes (the probe's
// tokenizer), data.seq_len max_length, train.steps 0, the probe of kind indexing with `elements`,
// 10 lists of 10 queries.
TrialConfig IndexingTrialConfig(int64_t max_length, const std::vector<int64_t>& elements);

}  // namespace rung::testing_models

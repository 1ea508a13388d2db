// core/train/probe_evaluation.h
//
// train.probe on a trial's model (core/config/probe_config.h, core/probes/): the probe's texts are
// encoded when the trial is set up (PrepareProbe: a bad tokenizer, filler file or length fails the
// trial before it trains), and its cells are scored at the end (Evaluator::Probe).
//
// The tokenizer: train.probe.tokenizer; else train.init.checkpoint where it is a Hugging Face model
// folder; else data.path where the data is a prepared folder holding tokenizer.json or tokenizer.model;
// else bytes (each UTF-8 byte its id) for the byte-level sources (builtin, text). Texts go through
// `rung-data encode` (core/common/rung_data_encode.h), the encoder rung-data prepare uses.
//
// Scoring (records::ProbeResult): `next_token`: the argmax after the query is the answer's first
// token; `decode`: greedy decoding of as many tokens as the answer has, with a KV cache
// (core/model/greedy_decode.h), equals the answer; `choice` (indexing): of the four answers' tokens,
// the one with the largest logit is the answer's. Prompts of a cell are scored in batches of at most a
// training batch's tokens (indexing: prompts of equal length together). An indexing probe is asked
// within data.seq_len, with no length extension.
#pragma once

#include <memory>

#include "core/common/status.h"
#include "core/config/trial_config.h"
#include "core/data/batch_source.h"
#include "core/probes/indexing_prompts.h"
#include "core/probes/probe_prompts.h"

namespace rung {

struct PreparedProbe {
  ProbeConfig config;
  std::string tokenizer;  // what encoded it: a path, or "bytes"
  ProbeTokens tokens;        // passkey, niah, template
  IndexingTokens indexing;   // indexing
};

// Null where the trial has no probe. Errors: INVALID_ARGUMENT (no tokenizer to be found, a length
// too short for the texts, ids outside model.vocab_size), and those of the encoder and the filler file.
StatusOr<std::unique_ptr<PreparedProbe>> PrepareProbe(const TrialConfig& trial);

}  // namespace rung

// core/common/rung_data_encode.h
//
// Text to ids with a model's own tokenizer, by running `rung-data encode` (tools/rung-data/encode.h),
// which must sit beside the calling program (ExecutableFolder()). rung's one tokenizer loader lives
// there (SentencePiece models, Hugging Face tokenizer.json, model folders with their special tokens);
// LibTorch programs (rung-model eval --text, the trainer's probes) reach it this way instead of
// linking it.
//
// Errors carry rung-data's own message lines (its progress lines left out): INVALID_ARGUMENT where
// rung-data exits 2 (a tokenizer or option it refuses), DATA_LOSS where it exits 4 (an unusable file),
// INTERNAL otherwise; `what` starts each message ("train.probe.tokenizer", "--text FILE").
//
// Thread safety: reentrant (each call its own temporary folder).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung {

// Runs rung-data encode with `arguments` after "encode".
Status RunRungDataEncode(const std::vector<std::string>& arguments, const std::string& what);

// Each text's ids under `tokenizer` (a file or model folder), with the tokenizer's template tokens
// (its BOS) where `special_tokens`, else the text's ids alone. An empty text has no ids.
StatusOr<std::vector<std::vector<int32_t>>> EncodeTextsWithRungData(const std::string& tokenizer,
                                                                    const std::vector<std::string>& texts,
                                                                    bool special_tokens, const std::string& what);

}  // namespace rung

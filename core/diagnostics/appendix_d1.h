// core/diagnostics/appendix_d1.h
//
// Paper 003's measurement of one head (appendix D.1, the case study of sections 3 and 4), on any rotary
// model rung runs (a rung checkpoint or an imported Hugging Face folder): for a query token and each key
// token,
//   - the input "<bos> [key] x M [query]" (no <bos> where bos_token is -1), one forward pass through the
//     embedding and every layer up to the head's (the model's own computation: earlier layers make each
//     key's hidden state depend on its position and neighbours, so beyond layer 0 S(m) is not one frozen
//     pair rotated);
//   - the head's unnormalized score row of the final (query) position: o_j = q_{M+1} . k_j after rotation,
//     with neither the 1/sqrt(d) nor a query multiplier (AdaScale, inverse temperature) nor the softmax,
//     but with a length extension's logit factor (YaRN's attention scaling, which transformers folds
//     into its cos and sin, so into the product the paper reads);
//   - S(m) = o_{M+1-m} for 0 < m <= M (positions counted with the <bos> at 0).
// The statistics then follow appendix C on these S (AppendixD1FailureModes): position inversion and
// aliasing of the first key, attention invariance of the first two, token inversion of the first against
// the last (the paper's "cat" against "number") and token aliasing of the first two ("cat", "dog"),
// aliasing at each precision's resolution (core/diagnostics/resolved_aliasing.h).
// The paper's choice of vectors is its choice of tokens: a query and a key it is related to ("pet",
// "cat"), a second related key ("dog") and an unrelated one ("number"); so the first key is the one the
// query should prefer where it stands, as the Gaussian reference orients its k (S(0) >= 0).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/diagnostics/appendix_d1_statistics.h"
#include "core/model/transformer.h"

namespace rung {

struct AppendixD1Options {
  int64_t layer = 0;
  int64_t head = 0;
  int64_t query_token = 0;
  std::vector<int64_t> key_tokens;  // 1 to 3
  int64_t length = 0;               // M
  int64_t bos_token = -1;           // -1: no <bos>
};

// INVALID_ARGUMENT for a layer, head or token outside the model, no keys or more than 3, M < 2, or a
// model that does not rotate; FAILED_PRECONDITION where the model's tables depend on the window's
// length (its scores at M would not be its scores at another M).
StatusOr<AppendixD1Scores> MeasureAppendixD1Scores(Transformer& model, const AppendixD1Options& options);

// The same for every head of every layer at once (one forward pass per key): [layer][head].
// options.layer and options.head are not read. Errors as above.
StatusOr<std::vector<std::vector<AppendixD1Scores>>> MeasureAppendixD1ScoresEveryHead(Transformer& model,
                                                                                     const AppendixD1Options& options);

}  // namespace rung

#include "core/train/batch_tensors.h"

#include "core/model/attention.h"
#include "core/train/token_cross_entropy.h"

namespace rung {

int64_t CrossDocumentMaskToken(const DataConfig& data) { return data.cross_doc_mask ? DocumentStartToken(data) : -1; }

TensorBatch ToTensors(const TokenBatch& batch, const torch::Device& device, int64_t document_start_token) {
  auto to_long = [&](const std::vector<int32_t>& values) {
    return torch::from_blob(const_cast<int32_t*>(values.data()), {batch.batch_size, batch.seq_len}, torch::kInt)
        .to(device, torch::kLong);
  };
  TensorBatch out{to_long(batch.inputs), to_long(batch.targets), {}, {}};
  if (document_start_token >= 0) out.doc_start = DocumentStarts(out.inputs, document_start_token);
  if (!batch.loss_mask.empty()) {
    out.mask = torch::from_blob(const_cast<float*>(batch.loss_mask.data()), {batch.batch_size, batch.seq_len},
                                torch::kFloat)
                   .to(device, /*non_blocking=*/false, /*copy=*/true);
  }
  return out;
}

torch::Tensor TokenLosses(const torch::Tensor& logits, const torch::Tensor& targets) {
  const int64_t vocab = logits.size(-1);
  return TokenCrossEntropy(logits.reshape({-1, vocab}).to(torch::kFloat), targets.reshape({-1})).view(targets.sizes());
}

torch::Tensor MeanLoss(const torch::Tensor& logits, const TensorBatch& batch) {
  if (!batch.mask.defined()) {
    const int64_t vocab = logits.size(-1);
    return TokenCrossEntropy(logits.reshape({-1, vocab}), batch.targets.reshape({-1})).mean();
  }
  return (TokenLosses(logits, batch.targets) * batch.mask).sum() / batch.mask.sum().clamp_min(1.0);
}

}  // namespace rung

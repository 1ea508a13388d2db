// core/train/batch_tensors.h
//
// A batch of a BatchSource (core/data/batch_source.h) as tensors on the trainer's device, and the
// cross-entropy losses over it: per token, and the batch's mean over the counted targets (every
// target, or those of the loss mask).
#pragma once

#include <cstdint>

#include <torch/torch.h>

#include "core/config/data_config.h"
#include "core/data/batch_source.h"

namespace rung {

struct TensorBatch {
  torch::Tensor inputs, targets;  // [B, T] long
  torch::Tensor mask;             // [B, T] float; undefined when every position counts
  torch::Tensor doc_start;        // DocumentStarts of inputs; undefined without data.cross_doc_mask
};

// The input token at which attention starts a new document (data.cross_doc_mask), or -1 for plain
// causal attention.
int64_t CrossDocumentMaskToken(const DataConfig& data);

// `batch` on `device`; doc_start computed when document_start_token >= 0 (CrossDocumentMaskToken).
TensorBatch ToTensors(const TokenBatch& batch, const torch::Device& device, int64_t document_start_token);

// Per-token cross-entropy [B, T] in fp32.
torch::Tensor TokenLosses(const torch::Tensor& logits, const torch::Tensor& targets);

// The batch's mean cross-entropy over its counted targets (the loss a step back-propagates).
torch::Tensor MeanLoss(const torch::Tensor& logits, const TensorBatch& batch);

}  // namespace rung

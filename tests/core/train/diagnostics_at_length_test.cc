// The attention diagnostics beyond the training length (Evaluator::DiagnosticsBeyondTrainingLength,
// train.diagnostics_multiples): measured on windows of the evaluated length with the extension on the
// model, as paper 004 reads xi_Lambda at n_eval under dynamic NTK. Checked against a hand computation:
// dynamic NTK at factor s is RoPE with the base b s^(d / (d - 2)), so the extended model's diagnostics
// are those of a RoPE model of that base with the same weights, measured with no extension at all.
#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/data/batch_source.h"
#include "core/diagnostics/attention_diagnostics.h"
#include "core/train/batch_tensors.h"
#include "core/train/evaluation.h"

namespace rung {
namespace {

constexpr int64_t kTrained = 32;
constexpr int64_t kMultiple = 4;

TrialConfig RopeTrial() {
  TrialConfig trial;
  trial.data.seq_len = kTrained;
  trial.model.layers = 2;
  trial.model.d_model = 32;
  trial.model.heads = 4;  // head dimension 8: 4 pairs
  trial.model.position.variant = "rope";
  trial.train.steps = 1;
  trial.train.diagnostics_sequences = 2;
  trial.train.diagnostics_batches = 2;
  trial.train.diagnostics_failure_lengths = {1.0};
  trial.train.diagnostics_grid_ratios = {0.25, 0.5, 0.75, 1.0};
  trial.train.diagnostics_multiples = {1, kMultiple};
  trial.train.extrapolation_methods = {"none", "dynamic_ntk"};
  ResolveTrialConfig(&trial);
  return trial;
}

// The diagnostics' windows at `length`: validation batches 0 and 1 of 2 windows each, one after the
// other, with their document starts where the data masks across documents.
TensorBatch DiagnosticsWindows(const BatchSource& source, const DataConfig& data, int64_t length) {
  std::vector<torch::Tensor> inputs, starts;
  for (int64_t b = 0; b < 2; ++b) {
    TensorBatch batch = ToTensors(source.Batch(Split::kValidation, b, 2, length), torch::kCPU, CrossDocumentMaskToken(data));
    inputs.push_back(batch.inputs);
    if (batch.doc_start.defined()) starts.push_back(batch.doc_start);
  }
  TensorBatch windows;
  windows.inputs = torch::cat(inputs, 0);
  if (!starts.empty()) windows.doc_start = torch::cat(starts, 0);
  return windows;
}

void ExpectSameExponents(const records::GapCounting& measured, const records::GapCounting& expected, double tolerance) {
  ASSERT_TRUE(measured.xi_lambda && expected.xi_lambda);
  EXPECT_NEAR(*measured.xi_lambda, *expected.xi_lambda, tolerance);
  ASSERT_EQ(measured.buckets.size(), expected.buckets.size());
  for (size_t i = 0; i < measured.buckets.size(); ++i) {
    EXPECT_EQ(measured.buckets[i].n, expected.buckets[i].n);
    EXPECT_EQ(measured.buckets[i].rows, expected.buckets[i].rows);
    EXPECT_NEAR(measured.buckets[i].mean_log_lambda, expected.buckets[i].mean_log_lambda, tolerance);
  }
}

TEST(DiagnosticsAtLength, DynamicNtkAtTheEvaluatedLengthReadsAsRopeWithTheRescaledBase) {
  const TrialConfig trial = RopeTrial();
  torch::manual_seed(5);
  Transformer model(trial.model);
  model->eval();
  StatusOr<std::unique_ptr<BatchSource>> source = MakeBatchSource(trial.data, trial.seed);
  ASSERT_TRUE(source.ok()) << source.status().message();
  Evaluator evaluator(trial, torch::kCPU, **source, model);
  const records::DiagnosticsRecord at_t = evaluator.Diagnostics({9, "end"});

  const std::vector<records::DiagnosticsRecord> beyond = evaluator.DiagnosticsBeyondTrainingLength(9);
  ASSERT_EQ(beyond.size(), 2u) << "4x with none and dynamic_ntk; 1x adds nothing";
  for (size_t i = 0; i < beyond.size(); ++i) {
    EXPECT_EQ(beyond[i].kind, "attention_beyond");
    EXPECT_FALSE(beyond[i].attention.has_value()) << "a member of its own";
    EXPECT_EQ(beyond[i].step, 9);
    EXPECT_EQ(beyond[i].milestone, "end");
    ASSERT_TRUE(beyond[i].attention_beyond.has_value());
    const records::AttentionDiagnostics& attention = *beyond[i].attention_beyond;
    EXPECT_EQ(attention.multiple, kMultiple);
    EXPECT_EQ(attention.method, i == 0 ? "none" : "dynamic_ntk");
    EXPECT_EQ(attention.length, kMultiple * kTrained);
    EXPECT_EQ(attention.grid, (std::vector<int64_t>{32, 64, 96, 128})) << "the ratios of the evaluated length";
    EXPECT_FALSE(attention.grid_fallback);
    EXPECT_EQ(attention.sequences, 4);
    for (const records::AttentionLayer& layer : attention.layers) {
      for (const records::AttentionHead& head : layer.heads) {
        EXPECT_TRUE(head.failure_modes.empty()) << "measured at the training length's own contexts only";
        // The dominant band's wavelength stays over the training length.
        ASSERT_TRUE(head.dominant_wavelength && head.dominant_wavelength_over_training_length);
        EXPECT_NEAR(*head.dominant_wavelength_over_training_length, *head.dominant_wavelength / kTrained, 1e-9);
      }
    }
  }
  ASSERT_TRUE(at_t.attention.has_value());
  EXPECT_FALSE(at_t.attention->multiple.has_value());
  EXPECT_EQ(at_t.attention->grid, (std::vector<int64_t>{8, 16, 24, 32}));
  EXPECT_FALSE(at_t.attention->layers[0].heads[0].failure_modes.empty());

  const TensorBatch windows = DiagnosticsWindows(**source, trial.data, kMultiple * kTrained);
  DiagnosticsOptions options = DiagnosticsOptionsOf(trial.train, trial.seed);
  options.failure_lengths.clear();
  // `none`: the model as trained on the longer windows.
  const records::AttentionDiagnostics plain = MeasureAttentionDiagnostics(model, windows.inputs, windows.doc_start, options);
  ExpectSameExponents(beyond[0].attention_beyond->pooled, plain.pooled, 0.0);

  // dynamic_ntk at s = 4: a RoPE model of base b 4^(8/6), the same weights, no extension.
  ModelConfig rescaled_config = trial.model;
  rescaled_config.position.base = trial.model.position.base * std::pow(4.0, 8.0 / 6.0);
  Transformer rescaled(rescaled_config);
  rescaled->eval();
  {
    torch::NoGradGuard no_grad;
    auto from = model->named_parameters();
    for (auto& parameter : rescaled->named_parameters()) parameter.value().copy_(from[parameter.key()]);
  }
  const records::AttentionDiagnostics by_hand = MeasureAttentionDiagnostics(rescaled, windows.inputs, windows.doc_start, options);
  ExpectSameExponents(beyond[1].attention_beyond->pooled, by_hand.pooled, 1e-3);
  EXPECT_GT(std::fabs(*beyond[1].attention_beyond->pooled.xi_lambda - *plain.pooled.xi_lambda), 1e-3)
      << "the extension changed the rows";
  const auto& head = beyond[1].attention_beyond->layers[1].heads[2];
  const auto& hand_head = by_hand.layers[1].heads[2];
  ASSERT_EQ(head.effective_length_by_position.size(), hand_head.effective_length_by_position.size());
  for (size_t p = 0; p < head.effective_length_by_position.size(); ++p) {
    EXPECT_NEAR(head.effective_length_by_position[p], hand_head.effective_length_by_position[p], 1e-3);
  }

  // The model is left without an extension: the training length reads as before.
  const records::DiagnosticsRecord again = evaluator.Diagnostics({9, "end"});
  ExpectSameExponents(again.attention->pooled, at_t.attention->pooled, 0.0);
}

TEST(DiagnosticsAtLength, NoneWithoutMultiplesOrSequences) {
  TrialConfig trial = RopeTrial();
  trial.train.diagnostics_multiples.clear();
  torch::manual_seed(5);
  Transformer model(trial.model);
  StatusOr<std::unique_ptr<BatchSource>> source = MakeBatchSource(trial.data, trial.seed);
  ASSERT_TRUE(source.ok());
  EXPECT_TRUE(Evaluator(trial, torch::kCPU, **source, model).DiagnosticsBeyondTrainingLength(1).empty());
  trial.train.diagnostics_multiples = {2};
  trial.train.diagnostics_sequences = 0;
  EXPECT_TRUE(Evaluator(trial, torch::kCPU, **source, model).DiagnosticsBeyondTrainingLength(1).empty());
}

}  // namespace
}  // namespace rung

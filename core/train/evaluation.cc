#include "core/train/evaluation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "core/config/length_extension_method.h"
#include "core/config/positional_variant.h"
#include "core/data/synthetic_tasks.h"
#include "core/diagnostics/attention_diagnostics.h"
#include "core/model/greedy_decode.h"
#include "core/model/length_extension.h"
#include "core/train/autocast_scope.h"
#include "core/train/batch_tensors.h"
#include "core/train/positional_records.h"

namespace rung {

void AddHeldOut(const Evaluation& evaluation, records::StepRecord& record) {
  record.val_loss = evaluation.loss;
  if (evaluation.accuracy >= 0) record.val_accuracy = evaluation.accuracy;
  if (std::isfinite(evaluation.bits_per_byte)) record.val_bpb = evaluation.bits_per_byte;
}

Evaluator::Evaluator(const TrialConfig& trial, const torch::Device& device, const BatchSource& source,
                     Transformer& model)
    : trial_(trial), device_(device), source_(source), model_(model) {}

Evaluation Evaluator::HeldOut() const { return Evaluate(trial_.data.seq_len, trial_.train.batch_size); }

Evaluation Evaluator::Evaluate(int64_t time, int64_t batch_size) const {
  torch::NoGradGuard no_grad;
  model_->eval();
  torch::Tensor loss_sum = torch::zeros({time}, torch::kDouble);
  torch::Tensor count = torch::zeros({time}, torch::kDouble);
  double correct = 0.0, answers = 0.0;
  bool masked = false;
  const int64_t document_start_token = CrossDocumentMaskToken(trial_.data);
  // Bits per byte: each target's byte length, weighted as its loss.
  const std::vector<int32_t>* byte_lengths = source_.TokenByteLengths();
  torch::Tensor token_bytes;
  if (byte_lengths != nullptr) {
    token_bytes = torch::tensor(*byte_lengths, torch::kInt).to(torch::kDouble);
  }
  double bytes = 0.0;
  for (int64_t index = 0; index < trial_.train.eval_batches; ++index) {
    TensorBatch batch = ToTensors(source_.Batch(Split::kValidation, index, batch_size, time), device_,
                                  document_start_token);
    torch::Tensor logits;
    {
      AutocastScope autocast(UsesAutocast(trial_));
      logits = model_->forward(batch.inputs, batch.doc_start).to(torch::kFloat);
    }
    torch::Tensor losses = TokenLosses(logits, batch.targets);
    torch::Tensor weight = batch.mask.defined() ? batch.mask : torch::ones_like(losses);
    loss_sum += (losses * weight).sum(0).to(torch::kCPU, torch::kDouble);
    count += weight.sum(0).to(torch::kCPU, torch::kDouble);
    if (token_bytes.defined()) {
      const torch::Tensor target_bytes = token_bytes.index({batch.targets.to(torch::kCPU, torch::kLong)});
      bytes += (target_bytes * weight.to(torch::kCPU, torch::kDouble)).sum().item<double>();
    }
    if (batch.mask.defined()) {
      masked = true;
      torch::Tensor hits = (logits.argmax(-1) == batch.targets).to(torch::kFloat) * batch.mask;
      correct += hits.sum().item<double>();
      answers += batch.mask.sum().item<double>();
    }
  }
  model_->train();
  Evaluation evaluation;
  evaluation.loss = (loss_sum.sum() / count.sum().clamp_min(1.0)).item<double>();
  torch::Tensor per_position = loss_sum / count.clamp_min(1.0);
  evaluation.loss_per_position.resize(time);
  for (int64_t position = 0; position < time; ++position) {
    evaluation.loss_per_position[position] = count[position].item<double>() > 0 ? per_position[position].item<double>()
                                                                                : std::nan("");
  }
  if (masked) evaluation.accuracy = answers > 0 ? correct / answers : 0.0;
  const int64_t trained = std::min(time, trial_.data.seq_len);
  auto mean_over = [&](int64_t first, int64_t end) {
    if (end <= first) return std::nan("");
    const double counted = count.narrow(0, first, end - first).sum().item<double>();
    return counted > 0 ? loss_sum.narrow(0, first, end - first).sum().item<double>() / counted : std::nan("");
  };
  evaluation.bits_per_byte =
      bytes > 0 ? loss_sum.sum().item<double>() / (std::log(2.0) * bytes) : std::nan("");
  evaluation.loss_in_dist = mean_over(0, trained);
  evaluation.loss_extrap = mean_over(trained, time);
  evaluation.loss_back_half = mean_over(time / 2, time);
  return evaluation;
}

DiagnosticsOptions DiagnosticsOptionsOf(const TrainConfig& train, uint64_t seed) {
  DiagnosticsOptions options;
  options.bootstrap_unit = train.diagnostics_bootstrap_unit;
  options.batch_sequences = train.diagnostics_sequences;
  options.seed = seed;
  options.renyi_order = train.diagnostics_renyi_order;
  options.lengths = train.diagnostics_lengths;
  options.grid_ratios = train.diagnostics_grid_ratios;
  options.regime_multiples = train.diagnostics_regime_multiples;
  options.beta_trim = train.diagnostics_beta_trim;
  options.failure_lengths = train.diagnostics_failure_lengths;
  options.pair_profile_bins = train.diagnostics_pair_profile_bins;
  return options;
}

void Evaluator::ForEachEvaluatedLength(
    bool with_training_length, const std::vector<int64_t>& multiples,
    const std::function<void(int64_t multiple, const std::string& method)>& visit) const {
  std::vector<std::pair<int64_t, std::string>> points;
  if (with_training_length) points.emplace_back(1, "none");
  for (int64_t multiple : multiples) {
    for (const std::string& method : trial_.train.extrapolation_methods) {
      const LengthExtensionMethod* described = FindLengthExtensionMethod(method);
      const bool keeps = described != nullptr && described->keeps_frequencies();
      // Nothing changes at 1x, unless the factor is set apart from the multiple.
      if (multiple == 1 && trial_.train.extrapolation_scale == 0 && (!keeps || with_training_length)) continue;
      points.emplace_back(multiple, method);
    }
  }
  if (points.empty()) return;
  const std::vector<std::vector<int64_t>> dominant_pairs = DominantPairsFor(trial_.train.extrapolation_methods);
  for (const auto& [multiple, method] : points) {
    SetExtension(static_cast<double>(multiple), method, dominant_pairs);
    visit(multiple, method);
  }
  model_->positional()->set_length_extension(LengthExtension{});
}

std::vector<std::vector<int64_t>> Evaluator::DominantPairsFor(const std::vector<std::string>& methods) const {
  // Dominant-band interpolation needs each frequency unit's dominant pair, measured at the training length
  // on validation data (the diagnostics' sequences, at least one batch of 4).
  if (std::none_of(methods.begin(), methods.end(), [](const std::string& name) {
        const LengthExtensionMethod* method = FindLengthExtensionMethod(name);
        return method != nullptr && method->needs_dominant_pairs();
      })) {
    return {};
  }
  const int64_t sequences = std::max<int64_t>(4, trial_.train.diagnostics_sequences);
  TensorBatch sample = ToTensors(source_.Batch(Split::kValidation, 0, sequences, trial_.data.seq_len), device_,
                                 CrossDocumentMaskToken(trial_.data));
  return MeasureDominantPairs(model_, sample.inputs, sample.doc_start);
}

void Evaluator::SetExtension(double multiple, const std::string& method,
                             const std::vector<std::vector<int64_t>>& dominant_pairs) const {
  const double scale = trial_.train.extrapolation_scale > 0 ? trial_.train.extrapolation_scale : multiple;
  LengthExtension extension{method, scale, static_cast<double>(trial_.data.seq_len)};
  extension.yarn_c = trial_.train.extrapolation_yarn_c;
  extension.rope_base = trial_.model.position.base;
  extension.dominant_pairs = dominant_pairs;
  extension.per_document = trial_.train.extrapolation_factor == "document";
  model_->positional()->set_length_extension(extension);
}

namespace {

// Whether the `count` tokens decoded in `predicted` ([steps], on the CPU) are the answer's from `from` on.
bool DecodedAnswer(const torch::Tensor& predicted, const std::vector<int32_t>& answer, int64_t from, int64_t count) {
  for (int64_t t = 0; t < count; ++t) {
    if (predicted[t].item<int64_t>() != answer[static_cast<size_t>(from + t)]) return false;
  }
  return true;
}

}  // namespace

std::vector<records::ProbeResult> Evaluator::ProbeIndexing(const PreparedProbe& probe) const {
  torch::NoGradGuard no_grad;
  const ProbeConfig& config = probe.config;
  const IndexingTokens& indexing = probe.indexing;
  const int64_t shared = indexing.answer_shared;
  const torch::Tensor candidates =
      torch::tensor(std::vector<int64_t>(indexing.candidates.begin(), indexing.candidates.end()), torch::kLong).to(device_);
  model_->eval();
  std::vector<records::ProbeResult> cells;
  for (const IndexingLength& length : indexing.lengths) {
    // Whether each prompt's answer was right; prompts of one length in a batch of at most a training
    // batch's tokens.
    std::vector<char> right(length.prompts.size(), 0);
    std::vector<size_t> order(length.prompts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return length.prompts[a].tokens.size() < length.prompts[b].tokens.size();
    });
    for (size_t first = 0; first < order.size();) {
      const size_t width = length.prompts[order[first]].tokens.size();
      const size_t per_pass = static_cast<size_t>(
          std::max<int64_t>(1, trial_.train.batch_size * trial_.data.seq_len / static_cast<int64_t>(width)));
      size_t end = first;
      while (end < order.size() && end - first < per_pass && length.prompts[order[end]].tokens.size() == width) ++end;
      std::vector<int64_t> flat;
      int64_t steps = 1;
      for (size_t k = first; k < end; ++k) {
        const IndexingPrompt& prompt = length.prompts[order[k]];
        flat.insert(flat.end(), prompt.tokens.begin(), prompt.tokens.end());
        // next_token and choice: the answer tokens every prompt shares are fed, the one after scored.
        if (config.score != "decode") flat.insert(flat.end(), prompt.answer.begin(), prompt.answer.begin() + shared);
        steps = std::max<int64_t>(steps, static_cast<int64_t>(prompt.answer.size()));
      }
      const int64_t rows = static_cast<int64_t>(end - first);
      const torch::Tensor prompts = torch::tensor(flat, torch::kLong).view({rows, -1}).to(device_);
      torch::Tensor predicted;
      {
        AutocastScope autocast(UsesAutocast(trial_));
        if (config.score == "choice") {
          const torch::Tensor hidden = model_->Hidden(prompts);
          const torch::Tensor logits = model_->Logits(hidden.select(1, hidden.size(1) - 1)).to(torch::kFloat);
          predicted = logits.index_select(1, candidates).argmax(1).unsqueeze(1);  // the value chosen
        } else {
          predicted = GreedyDecode(model_, prompts, config.score == "decode" ? steps : 1, DecodeMode::kCached);
        }
      }
      predicted = predicted.cpu();
      for (int64_t row = 0; row < rows; ++row) {
        const IndexingPrompt& prompt = length.prompts[order[first + static_cast<size_t>(row)]];
        bool correct = true;
        if (config.score == "choice") {
          correct = predicted[row][0].item<int64_t>() == prompt.value;
        } else {
          const bool decode = config.score == "decode";
          correct = DecodedAnswer(predicted[row], prompt.answer, decode ? 0 : shared,
                                  decode ? static_cast<int64_t>(prompt.answer.size()) : 1);
        }
        right[order[first + static_cast<size_t>(row)]] = correct ? 1 : 0;
      }
      first = end;
    }
    records::ProbeResult cell;
    cell.probe = config.kind;
    cell.length = length.longest;
    cell.depth = -1;
    cell.method = "none";
    cell.score = config.score;
    cell.tokenizer = probe.tokenizer;
    cell.instances = static_cast<int64_t>(right.size());
    // Per list: the share of its queries answered right; their mean is the accuracy, their spread D.2's.
    std::vector<double> per_list;
    for (int64_t list = 0; list < config.instances; ++list) {
      int64_t correct = 0;
      for (int64_t q = 0; q < config.queries; ++q) correct += right[static_cast<size_t>(list * config.queries + q)];
      cell.correct += correct;
      per_list.push_back(static_cast<double>(correct) / static_cast<double>(config.queries));
    }
    cell.accuracy = static_cast<double>(cell.correct) / static_cast<double>(cell.instances);
    double spread = 0;
    for (double accuracy : per_list) spread += (accuracy - cell.accuracy) * (accuracy - cell.accuracy);
    cell.elements = length.elements;
    cell.lists = config.instances;
    cell.accuracy_sd = std::sqrt(spread / static_cast<double>(per_list.size()));
    cell.mean_tokens = length.mean_tokens;
    cell.chance = 1.0 / kIndexingValues;
    double blind = 0;
    for (const IndexingPrompt& prompt : length.prompts) blind += prompt.position_blind;
    cell.position_blind = blind / static_cast<double>(length.prompts.size());
    cells.push_back(std::move(cell));
  }
  model_->train();
  return cells;
}

std::vector<records::ProbeResult> Evaluator::Probe(const PreparedProbe& probe) const {
  if (probe.config.kind == "indexing") return ProbeIndexing(probe);
  torch::NoGradGuard no_grad;
  const ProbeConfig& config = probe.config;
  const int64_t trained = trial_.data.seq_len;
  const std::vector<ProbeSetting> settings = ProbeSettings(config, trained, trial_.train.extrapolation_methods);
  std::vector<std::string> methods;
  for (const ProbeSetting& setting : settings) methods.push_back(setting.method);
  const std::vector<std::vector<int64_t>> dominant_pairs = DominantPairsFor(methods);
  const ProbeFillerSource filler = [&](int64_t instance, int64_t count) {
    if (count <= 0) return std::vector<int32_t>();
    return source_.Batch(Split::kValidation, instance, 1, count).inputs;
  };
  const bool decode = config.score == "decode";
  const int64_t shared = probe.tokens.answer_shared;
  std::vector<records::ProbeResult> cells;
  for (const ProbeSetting& setting : settings) {
    SetExtension(static_cast<double>(setting.length) / static_cast<double>(trained), setting.method, dominant_pairs);
    // At most a training batch's tokens per forward pass.
    const int64_t per_pass = std::max<int64_t>(1, trial_.train.batch_size * trained / setting.length);
    for (double depth : config.depths) {
      records::ProbeResult cell;
      cell.probe = config.kind;
      cell.length = setting.length;
      cell.depth = depth;
      cell.method = setting.method;
      cell.score = config.score;
      cell.tokenizer = probe.tokenizer;
      for (int64_t first = 0; first < config.instances; first += per_pass) {
        const int64_t count = std::min(per_pass, config.instances - first);
        std::vector<int64_t> flat;
        std::vector<std::vector<int32_t>> answers;
        int64_t steps = 1;
        for (int64_t i = first; i < first + count; ++i) {
          // Lengths are checked when the probe is prepared.
          ProbePrompt prompt = BuildProbePrompt(probe.tokens, setting.length, depth, i, filler).value();
          if (!decode) {
            // Next token: the answer tokens every instance shares (" " before a number) are fed, and the
            // first that tells keys apart is scored.
            prompt.tokens.insert(prompt.tokens.end(), prompt.answer.begin(), prompt.answer.begin() + shared);
            prompt.answer.erase(prompt.answer.begin(), prompt.answer.begin() + shared);
          }
          flat.insert(flat.end(), prompt.tokens.begin(), prompt.tokens.end());
          answers.push_back(prompt.answer);
          steps = std::max<int64_t>(steps, static_cast<int64_t>(prompt.answer.size()));
        }
        const int64_t width = setting.length + (decode ? 0 : shared);
        const torch::Tensor prompts = torch::tensor(flat, torch::kLong).view({count, width}).to(device_);
        torch::Tensor predicted;
        {
          AutocastScope autocast(UsesAutocast(trial_));
          predicted = GreedyDecode(model_, prompts, decode ? steps : 1, DecodeMode::kCached);
        }
        predicted = predicted.cpu();
        for (int64_t row = 0; row < count; ++row) {
          const std::vector<int32_t>& answer = answers[static_cast<size_t>(row)];
          cell.correct += DecodedAnswer(predicted[row], answer, 0, decode ? static_cast<int64_t>(answer.size()) : 1) ? 1 : 0;
        }
        cell.instances += count;
      }
      cell.accuracy = cell.instances > 0 ? static_cast<double>(cell.correct) / static_cast<double>(cell.instances) : 0.0;
      cells.push_back(std::move(cell));
    }
  }
  model_->positional()->set_length_extension(LengthExtension{});
  model_->train();
  return cells;
}

std::vector<records::ExtrapolationResult> Evaluator::EvaluateBeyondTrainingLength() const {
  std::vector<records::ExtrapolationResult> results;
  const int64_t trained = trial_.data.seq_len;
  ForEachEvaluatedLength(false, trial_.train.extrapolation_multiples, [&](int64_t multiple, const std::string& method) {
    // Same tokens per batch as training: attention memory grows with the square of the length.
    const int64_t batch_size = std::max<int64_t>(1, trial_.train.batch_size / multiple);
    Evaluation evaluation = Evaluate(trained * multiple, batch_size);
    records::ExtrapolationResult result;
    result.multiple = multiple;
    result.length = trained * multiple;
    result.method = method;
    result.val_loss = evaluation.loss;
    result.val_loss_per_position = std::move(evaluation.loss_per_position);
    if (std::isfinite(evaluation.loss_in_dist)) result.val_loss_in_dist = evaluation.loss_in_dist;
    if (std::isfinite(evaluation.loss_extrap)) result.val_loss_extrap = evaluation.loss_extrap;
    if (std::isfinite(evaluation.loss_back_half)) result.val_loss_back_half = evaluation.loss_back_half;
    if (std::isfinite(evaluation.bits_per_byte)) result.val_bpb = evaluation.bits_per_byte;
    if (evaluation.accuracy >= 0) result.val_accuracy = evaluation.accuracy;
    results.push_back(std::move(result));
  });
  return results;
}

std::optional<records::DiagnosticsRecord> Evaluator::NiahGrid(int64_t step) const {
  const auto* niah = dynamic_cast<const NiahTask*>(&source_);
  const int64_t instances = trial_.train.niah_grid_instances;
  if (niah == nullptr || instances <= 0) return std::nullopt;
  torch::NoGradGuard no_grad;
  model_->eval();
  const int64_t trained = trial_.data.seq_len;
  const int64_t most = trial_.data.niah.max_distractors;
  records::NiahGridDiagnostics payload;
  payload.instances = instances;
  ForEachEvaluatedLength(true, trial_.train.extrapolation_multiples, [&](int64_t multiple, const std::string& method) {
    const int64_t length = trained * multiple;
    // At most a training batch's tokens per forward pass, as the held-out evaluation.
    const int64_t per_pass = std::max<int64_t>(1, trial_.train.batch_size / multiple);
    records::NiahGridAtLength grid;
    grid.multiple = multiple;
    grid.length = length;
    grid.method = method;
    for (int64_t depth = 0; depth <= 10; ++depth) {
      std::vector<double> accuracy_row, placed_row;
      for (int64_t distractors = 0; distractors <= most; ++distractors) {
        double correct = 0.0, answers = 0.0, placed_sum = 0.0;
        std::vector<SyntheticInstance> cell;
        const TokenBatch batch = niah->GridBatch(depth, distractors, instances, length, &cell);
        const TensorBatch cell_tensors = ToTensors(batch, device_, CrossDocumentMaskToken(trial_.data));
        for (int64_t first = 0; first < instances; first += per_pass) {
          const int64_t count = std::min(per_pass, instances - first);
          // The rows [first, first + count) of the cell.
          TensorBatch tensors;
          tensors.inputs = cell_tensors.inputs.narrow(0, first, count);
          tensors.targets = cell_tensors.targets.narrow(0, first, count);
          tensors.mask = cell_tensors.mask.narrow(0, first, count);
          if (cell_tensors.doc_start.defined()) tensors.doc_start = cell_tensors.doc_start.narrow(0, first, count);
          torch::Tensor logits;
          {
            AutocastScope autocast(UsesAutocast(trial_));
            logits = model_->forward(tensors.inputs, tensors.doc_start).to(torch::kFloat);
          }
          torch::Tensor hits = (logits.argmax(-1) == tensors.targets).to(torch::kFloat) * tensors.mask;
          correct += hits.sum().item<double>();
          answers += tensors.mask.sum().item<double>();
        }
        for (const SyntheticInstance& instance : cell) placed_sum += static_cast<double>(std::max<int64_t>(0, instance.niah_distractors));
        accuracy_row.push_back(answers > 0 ? correct / answers : std::numeric_limits<double>::quiet_NaN());
        placed_row.push_back(placed_sum / static_cast<double>(instances));
      }
      grid.accuracy.push_back(std::move(accuracy_row));
      grid.placed.push_back(std::move(placed_row));
    }
    payload.grids.push_back(std::move(grid));
  });
  model_->train();
  for (int64_t depth = 0; depth <= 10; ++depth) payload.depths.push_back(static_cast<double>(depth) / 10.0);
  for (int64_t distractors = 0; distractors <= most; ++distractors) payload.distractors.push_back(distractors);
  records::DiagnosticsRecord record;
  record.kind = "niah_grid";
  record.step = step;
  record.milestone = "end";
  record.niah_grid = std::move(payload);
  return record;
}

records::AttentionDiagnostics Evaluator::MeasureDiagnostics(int64_t length, bool beyond) const {
  const TrainConfig& train = trial_.train;
  // The evaluation batches (paper 004's evaluation seeds): validation batches 0, 1, ... of
  // diagnostics_sequences each, distinct windows, measured together, one after the other.
  std::vector<torch::Tensor> inputs, doc_starts;
  for (int64_t b = 0; b < train.diagnostics_batches; ++b) {
    TensorBatch batch = ToTensors(source_.Batch(Split::kValidation, b, train.diagnostics_sequences, length),
                                  device_, CrossDocumentMaskToken(trial_.data));
    inputs.push_back(batch.inputs);
    if (batch.doc_start.defined()) doc_starts.push_back(batch.doc_start);
  }
  const torch::Tensor tokens = inputs.size() == 1 ? inputs.front() : torch::cat(inputs, 0);
  const torch::Tensor doc_start = doc_starts.empty()          ? torch::Tensor()
                                  : doc_starts.size() == 1 ? doc_starts.front()
                                                           : torch::cat(doc_starts, 0);
  DiagnosticsOptions options = DiagnosticsOptionsOf(train, trial_.seed);
  // On NRW the pair-by-distance profile is AdaRoPE's (figures 1 and 5): the QUERY (the last position)
  // against the NEEDLE's key, the only NEEDLE of each sequence.
  if (trial_.data.source == "nrw") {
    const torch::Tensor needles = (tokens == NrwTokens::kNeedle).to(torch::kLong).cpu();
    for (int64_t b = 0; b < needles.size(0); ++b) {
      const bool found = needles[b].sum().item<int64_t>() == 1;
      options.profile_keys.push_back(found ? needles[b].argmax().item<int64_t>() : -1);
    }
  }
  // The failure modes are measured at multiples of the training length (their own contexts), once.
  if (beyond) options.failure_lengths.clear();
  return MeasureAttentionDiagnostics(model_, tokens, doc_start, options);
}

records::DiagnosticsRecord Evaluator::Diagnostics(const DiagnosticsMilestone& milestone) const {
  records::DiagnosticsRecord diagnostics;
  diagnostics.kind = "attention";
  diagnostics.step = milestone.step;
  diagnostics.milestone = milestone.name;
  records::AttentionDiagnostics payload = MeasureDiagnostics(trial_.data.seq_len, false);
  payload.milestone = milestone.name;
  diagnostics.attention = std::move(payload);
  return diagnostics;
}

std::vector<records::DiagnosticsRecord> Evaluator::DiagnosticsBeyondTrainingLength(int64_t step) const {
  std::vector<records::DiagnosticsRecord> records;
  if (trial_.train.diagnostics_sequences <= 0) return records;
  ForEachEvaluatedLength(false, trial_.train.diagnostics_multiples, [&](int64_t multiple, const std::string& method) {
    if (!DiagnosesBeyond(trial_.train, multiple, method)) return;  // at 1x, nothing the end's record lacks
    records::DiagnosticsRecord diagnostics;
    diagnostics.kind = "attention_beyond";
    diagnostics.step = step;
    diagnostics.milestone = "end";
    records::AttentionDiagnostics payload = MeasureDiagnostics(trial_.data.seq_len * multiple, true);
    payload.milestone = "end";
    payload.multiple = multiple;
    payload.method = method;
    diagnostics.attention_beyond = std::move(payload);
    records.push_back(std::move(diagnostics));
  });
  return records;
}

namespace {

// Runs `undo` when it goes out of scope, however the scope is left.
class ScopeExit {
 public:
  explicit ScopeExit(std::function<void()> undo) : undo_(std::move(undo)) {}
  ScopeExit(const ScopeExit&) = delete;
  ScopeExit& operator=(const ScopeExit&) = delete;
  ~ScopeExit() { undo_(); }

 private:
  std::function<void()> undo_;
};

// A diagnostics record of `kind` measured at the end of training, at `step`, its payload to be set.
records::DiagnosticsRecord EndRecord(const std::string& kind, int64_t step) {
  records::DiagnosticsRecord record;
  record.kind = kind;
  record.step = step;
  record.milestone = "end";
  return record;
}

}  // namespace

TensorBatch Evaluator::DiagnosticsSample() const {
  return ToTensors(source_.Batch(Split::kValidation, 0, trial_.train.diagnostics_sequences, trial_.data.seq_len), device_,
                   CrossDocumentMaskToken(trial_.data));
}

double Evaluator::SampleLoss(const TensorBatch& sample) const {
  torch::Tensor logits;
  {
    AutocastScope autocast(UsesAutocast(trial_));
    logits = model_->forward(sample.inputs, sample.doc_start).to(torch::kFloat);
  }
  torch::Tensor losses = TokenLosses(logits, sample.targets);
  torch::Tensor weight = sample.mask.defined() ? sample.mask : torch::ones_like(losses);
  return ((losses * weight).sum() / weight.sum().clamp_min(1.0)).item<double>();
}

std::optional<records::DiagnosticsRecord> Evaluator::BandAblation(int64_t step) const {
  const PositionConfig& position = trial_.model.position;
  if (!position.rotary() || trial_.train.diagnostics_sequences <= 0) return std::nullopt;
  torch::NoGradGuard no_grad;
  model_->eval();
  // The ablation off and the model back in training mode however this ends.
  const ScopeExit restore([&] {
    model_->positional()->set_band_ablation(-1, PositionalEncodingImpl::BandAblation::kRevertToRope);
    model_->train();
  });
  // The mean token loss on the sample, every sequence and position alike (the same tokens each time).
  const TensorBatch sample = DiagnosticsSample();
  const double trained = SampleLoss(sample);
  const std::vector<double> rope = RopeFrequencies(position.base, trial_.model.head_dim);
  records::BandAblationDiagnostics payload;
  payload.sequences = trial_.train.diagnostics_sequences;
  payload.loss = trained;
  using Ablation = PositionalEncodingImpl::BandAblation;
  for (int64_t pair = 0; pair < trial_.model.rotary_pairs(); ++pair) {
    records::BandAblationPair entry;
    entry.pair = pair;
    entry.rope_theta = rope[static_cast<size_t>(pair)];
    model_->positional()->set_band_ablation(pair, Ablation::kRevertToRope);
    entry.loss = SampleLoss(sample);
    entry.delta = entry.loss - trained;
    model_->positional()->set_band_ablation(pair, Ablation::kZero);
    entry.zeroed_loss = SampleLoss(sample);
    entry.zeroed_delta = *entry.zeroed_loss - trained;
    payload.pairs.push_back(entry);
  }
  records::DiagnosticsRecord record = EndRecord("band_ablation", step);
  record.band_ablation = std::move(payload);
  return record;
}

bool HasHeadInfluence(const TrialConfig& trial) {
  const PositionConfig& position = trial.model.position;
  return position.variant == "adarope" && trial.train.diagnostics_sequences > 0;
}

std::optional<records::DiagnosticsRecord> Evaluator::HeadInfluence(
    int64_t step, const std::map<std::string, torch::Tensor>& start) const {
  if (!HasHeadInfluence(trial_)) return std::nullopt;
  const AdaRopeConfig& ada = trial_.model.position.adarope;
  torch::NoGradGuard no_grad;
  model_->eval();
  const ScopeExit to_training([&] { model_->train(); });
  auto parameters = model_->positional()->named_parameters();
  // Each group of AdaRoPE's parameters with how a query head (layer, head) indexes its unit in them:
  // AdaFreq [S, G, ...] by (schedule, KV group), AdaScale [rows, heads'] by (row, head).
  const int64_t heads = trial_.model.heads, per_group = heads / trial_.model.kv_heads;
  struct Group {
    std::vector<std::string> names;
    std::function<std::pair<int64_t, int64_t>(int64_t layer, int64_t head)> unit;
  };
  Group frequency{{ada.learned_base ? "adarope_log_base" : "adarope_log_freq"}, [&](int64_t layer, int64_t head) {
                    return std::make_pair(ada.share_freq == "global" ? int64_t{0} : layer,
                                          ada.share_freq == "none" ? head / per_group : int64_t{0});
                  }};
  Group scale{{"adascale_tau", "adascale_gamma"}, [&](int64_t layer, int64_t head) {
                return std::make_pair(ada.share_scale == "global" ? int64_t{0} : layer,
                                      ada.share_scale == "none" ? head : int64_t{0});
              }};
  auto present = [&](const Group& group) {
    for (const std::string& name : group.names) {
      if (!parameters.contains(name) || start.count(name) == 0 || !start.at(name).sizes().equals(parameters[name].sizes())) {
        return false;
      }
    }
    return true;
  };
  const bool has_frequency = present(frequency), has_scale = present(scale);
  // The loss with the units of `groups` that (layer, head) reads reset to their start, the rest as
  // trained; each unit measured once (heads sharing it report the same).
  const TensorBatch sample = DiagnosticsSample();
  const double trained = SampleLoss(sample);
  std::map<std::vector<int64_t>, double> measured;
  auto reset_loss = [&](int64_t layer, int64_t head, bool reset_frequency, bool reset_scale) {
    std::vector<int64_t> key = {reset_frequency, reset_scale};
    if (reset_frequency) key.push_back(frequency.unit(layer, head).first), key.push_back(frequency.unit(layer, head).second);
    if (reset_scale) key.push_back(scale.unit(layer, head).first), key.push_back(scale.unit(layer, head).second);
    if (auto found = measured.find(key); found != measured.end()) return found->second;
    std::vector<std::pair<torch::Tensor, torch::Tensor>> saved;  // (the unit's view, its trained values)
    for (const auto& [group, reset] : {std::make_pair(&frequency, reset_frequency), std::make_pair(&scale, reset_scale)}) {
      if (!reset) continue;
      const auto [row, column] = group->unit(layer, head);
      for (const std::string& name : group->names) {
        torch::Tensor view = parameters[name].select(0, row).select(0, column);
        saved.emplace_back(view, view.clone());
        view.copy_(start.at(name).to(view.device()).select(0, row).select(0, column));
      }
    }
    {
      // The trained values back however the pass ends.
      const ScopeExit put_back([&] {
        for (auto& [view, values] : saved) view.copy_(values);
      });
      measured[key] = SampleLoss(sample);
    }
    return measured.at(key);
  };
  records::HeadInfluenceDiagnostics payload;
  payload.sequences = trial_.train.diagnostics_sequences;
  payload.length = trial_.data.seq_len;
  payload.loss = trained;
  payload.frequency_unit = ada.share_freq == "none" ? (per_group == 1 ? "head" : "kv_group") : ada.share_freq == "layer" ? "layer" : "model";
  payload.scale_unit = !has_scale                   ? "none"
                       : ada.share_scale == "none"  ? "head"
                       : ada.share_scale == "layer" ? "layer"
                                                    : "model";
  if (!has_frequency) payload.frequency_unit = "none";
  for (int64_t layer = 0; layer < trial_.model.layers; ++layer) {
    for (int64_t head = 0; head < heads; ++head) {
      records::HeadInfluence entry;
      entry.layer = layer;
      entry.head = head;
      if (has_frequency || has_scale) entry.all = reset_loss(layer, head, has_frequency, has_scale) - trained;
      if (has_frequency) entry.frequency = reset_loss(layer, head, true, false) - trained;
      if (has_scale) entry.scale = reset_loss(layer, head, false, true) - trained;
      payload.heads.push_back(entry);
    }
  }
  records::DiagnosticsRecord record = EndRecord("head_influence", step);
  record.head_influence = std::move(payload);
  return record;
}

records::FinalRecord Evaluator::FinalEvaluation(const Evaluation& held_out) const {
  records::FinalRecord final_record;
  final_record.val_loss = held_out.loss;
  final_record.val_loss_per_position = held_out.loss_per_position;
  if (held_out.accuracy >= 0) final_record.val_accuracy = held_out.accuracy;
  if (std::isfinite(held_out.bits_per_byte)) final_record.val_bpb = held_out.bits_per_byte;
  final_record.positional_parameters = PositionalParameters(model_);
  final_record.frequencies = Frequencies(model_);
  final_record.extrapolation = EvaluateBeyondTrainingLength();
  return final_record;
}

}  // namespace rung

// coordinator/cli/trial_diagnostics.h
//
// A trial's diagnostics as `rung diag` and `rung sweep figures` read them: GetDiagnostics' typed
// documents (proto/rung.proto, TrialDiagnostic) as the records' structs (core/records/
// diagnostics_payloads.h), by kind. A document the coordinator could not read (its `error`) is listed
// in `unreadable`, the others still read.
//
// Example:
//   StatusOr<TrialDiagnostics> diagnostics = ReadTrialDiagnostics(response);
//   for (const auto& [step, attention] : diagnostics->attention) ...
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/records/trainer_records.h"
#include "proto/rung.pb.h"

namespace rung::cli {

// A tensor of the final record (a layer's rotary frequencies, the loss per position) and its step.
struct TrialTensor {
  int64_t step = 0;
  records::Tensor tensor;
};

struct TrialDiagnostics {
  std::vector<std::pair<int64_t, records::AttentionDiagnostics>> attention;  // by step, ascending
  // Beyond the training length (train.diagnostics_multiples), by multiple, then method as stored.
  std::vector<records::AttentionDiagnostics> attention_beyond;
  std::vector<records::ExtrapolationResult> extrapolation;
  std::vector<records::ProbeResult> probe;
  std::optional<records::NiahGridDiagnostics> niah_grid;
  std::optional<records::BandAblationDiagnostics> band_ablation;
  std::optional<records::HeadInfluenceDiagnostics> head_influence;
  std::map<std::string, TrialTensor> tensors;  // "frequencies.layer_<i>", "val_loss_per_position"
  std::vector<std::string> unreadable;             // "<name> at step <s>: <why>"
};

// INVALID_ARGUMENT (naming the document and field) for a document that does not convert.
StatusOr<TrialDiagnostics> ReadTrialDiagnostics(const v1::GetDiagnosticsResponse& response);

// The documents as JSON objects by name, in their stored form (what `rung diag --format json` prints):
// "attention" (`attention`, one of diagnostics.attention), "extrapolation", "probe", "niah_grid", "band_ablation",
// "head_influence",
// each tensor as {step, shape, values}, "milestones" [{step, attention}] when there are several, and
// "attention_beyond" [attention] where the diagnostics were measured beyond the training length.
nlohmann::json DiagnosticsJson(const TrialDiagnostics& diagnostics, const records::AttentionDiagnostics* attention);

}  // namespace rung::cli

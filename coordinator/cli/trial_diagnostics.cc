// coordinator/cli/trial_diagnostics.cc
#include "coordinator/cli/trial_diagnostics.h"

#include <algorithm>

#include "core/records/record_json.h"
#include "proto/trainer_record_proto.h"

namespace rung::cli {
namespace {

template <class Struct>
Status Read(const google::protobuf::Message& message, const v1::TrialDiagnostic& diagnostic, Struct* value) {
  Status status = wire::StructFromMessage(message, value);
  if (status.ok()) return status;
  return Status::InvalidArgument("the diagnostic '" + diagnostic.name() + "' at step " +
                                 std::to_string(diagnostic.step()) + ": " + status.message());
}

}  // namespace

StatusOr<TrialDiagnostics> ReadTrialDiagnostics(const v1::GetDiagnosticsResponse& response) {
  TrialDiagnostics diagnostics;
  for (const v1::TrialDiagnostic& diagnostic : response.diagnostics()) {
    switch (diagnostic.document_case()) {
      case v1::TrialDiagnostic::kAttention: {
        records::AttentionDiagnostics attention;
        RUNG_RETURN_IF_ERROR(Read(diagnostic.attention(), diagnostic, &attention));
        if (attention.multiple) {  // beyond the training length, as a coordinator before attention_beyond sent it
          diagnostics.attention_beyond.push_back(std::move(attention));
        } else {
          diagnostics.attention.emplace_back(diagnostic.step(), std::move(attention));
        }
        break;
      }
      case v1::TrialDiagnostic::kAttentionBeyond:
        RUNG_RETURN_IF_ERROR(Read(diagnostic.attention_beyond(), diagnostic, &diagnostics.attention_beyond.emplace_back()));
        break;
      case v1::TrialDiagnostic::kNiahGrid:
        RUNG_RETURN_IF_ERROR(Read(diagnostic.niah_grid(), diagnostic, &diagnostics.niah_grid.emplace()));
        break;
      case v1::TrialDiagnostic::kBandAblation:
        RUNG_RETURN_IF_ERROR(Read(diagnostic.band_ablation(), diagnostic, &diagnostics.band_ablation.emplace()));
        break;
      case v1::TrialDiagnostic::kHeadInfluence:
        RUNG_RETURN_IF_ERROR(Read(diagnostic.head_influence(), diagnostic, &diagnostics.head_influence.emplace()));
        break;
      case v1::TrialDiagnostic::kExtrapolation:
        diagnostics.extrapolation.clear();
        for (const v1::ExtrapolationResult& result : diagnostic.extrapolation().results()) {
          RUNG_RETURN_IF_ERROR(Read(result, diagnostic, &diagnostics.extrapolation.emplace_back()));
        }
        break;
      case v1::TrialDiagnostic::kProbe:
        diagnostics.probe.clear();
        for (const v1::ProbeResult& cell : diagnostic.probe().results()) {
          RUNG_RETURN_IF_ERROR(Read(cell, diagnostic, &diagnostics.probe.emplace_back()));
        }
        break;
      case v1::TrialDiagnostic::kTensor: {
        TrialTensor& tensor = diagnostics.tensors[diagnostic.name()];
        tensor.step = diagnostic.step();
        RUNG_RETURN_IF_ERROR(Read(diagnostic.tensor(), diagnostic, &tensor.tensor));
        break;
      }
      case v1::TrialDiagnostic::DOCUMENT_NOT_SET:
        diagnostics.unreadable.push_back(diagnostic.name() + " at step " + std::to_string(diagnostic.step()) + ": " +
                                         (diagnostic.error().empty() ? "no document" : diagnostic.error()));
        break;
    }
  }
  std::stable_sort(diagnostics.attention.begin(), diagnostics.attention.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::stable_sort(diagnostics.attention_beyond.begin(), diagnostics.attention_beyond.end(),
                   [](const records::AttentionDiagnostics& a, const records::AttentionDiagnostics& b) {
                     return a.multiple.value_or(1) < b.multiple.value_or(1);
                   });
  return diagnostics;
}

nlohmann::json DiagnosticsJson(const TrialDiagnostics& diagnostics, const records::AttentionDiagnostics* attention) {
  nlohmann::json documents = nlohmann::json::object();
  if (attention != nullptr) documents["attention"] = records::DocumentJson(*attention);
  if (!diagnostics.extrapolation.empty()) documents["extrapolation"] = records::DocumentJson(diagnostics.extrapolation);
  if (!diagnostics.probe.empty()) documents["probe"] = records::DocumentJson(diagnostics.probe);
  if (diagnostics.niah_grid) documents["niah_grid"] = records::DocumentJson(*diagnostics.niah_grid);
  if (diagnostics.band_ablation) documents["band_ablation"] = records::DocumentJson(*diagnostics.band_ablation);
  if (diagnostics.head_influence) documents["head_influence"] = records::DocumentJson(*diagnostics.head_influence);
  for (const auto& [name, tensor] : diagnostics.tensors) {
    documents[name] = records::StepTensorJson(tensor.step, tensor.tensor);
  }
  if (diagnostics.attention.size() > 1) {
    nlohmann::json all = nlohmann::json::array();
    for (const auto& [step, value] : diagnostics.attention) {
      all.push_back({{"step", step}, {"attention", records::DocumentJson(value)}});
    }
    documents["milestones"] = std::move(all);
  }
  if (!diagnostics.attention_beyond.empty()) documents["attention_beyond"] = records::DocumentJson(diagnostics.attention_beyond);
  return documents;
}

}  // namespace rung::cli

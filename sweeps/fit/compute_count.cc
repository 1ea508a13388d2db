#include "sweeps/fit/compute_count.h"

#include "core/config/model_arithmetic.h"
#include "core/config/trial_config.h"

namespace rung::fit {

StatusOr<ComputeCount> ParseComputeCount(const std::string& name) {
  if (name.empty() || name == "nonembedding") return ComputeCount::kNonembedding;
  if (name == "matrix") return ComputeCount::kMatrix;
  if (name == "total") return ComputeCount::kTotal;
  return Status::InvalidArgument("compute count '" + name +
                                 "' is not one of nonembedding (6 N_nonembedding D), matrix (6 N_matrix D), "
                                 "total (matrix plus the causal attention term)");
}

std::string ComputeCountName(ComputeCount count) {
  switch (count) {
    case ComputeCount::kMatrix: return "matrix";
    case ComputeCount::kTotal: return "total";
    case ComputeCount::kNonembedding: break;
  }
  return "nonembedding";
}

std::string ComputeCountFormula(ComputeCount count) {
  switch (count) {
    case ComputeCount::kMatrix: return "6 N_matrix D";
    case ComputeCount::kTotal: return "(6 N_matrix + 6 layers T heads head_dim) D";
    case ComputeCount::kNonembedding: break;
  }
  return "6 N_nonembedding D";
}

StatusOr<double> TrainingCompute(ComputeCount count, const nlohmann::json& trial_config, int64_t tokens) {
  RUNG_ASSIGN_OR_RETURN(TrialConfig trial, TrialConfigFromJson(trial_config));
  const FlopsPerToken per_token = CountFlopsPerToken(trial.model);
  double per = per_token.nonembedding;
  if (count == ComputeCount::kMatrix) per = per_token.matrix;
  if (count == ComputeCount::kTotal) per = per_token.total();
  return per * static_cast<double>(tokens);
}

}  // namespace rung::fit

#include "coordinator/store/trial_cells.h"

#include <algorithm>

#include "core/common/sha256.h"
#include "core/config/inverse_temperature_form.h"

namespace rung {
namespace {

// A trial's cell but its config and assignments.
TrialCell CellWithoutJson(const ExpandedTrial& trial) {
  const TrialConfig& config = trial.config;
  const InverseTemperatureConfig& temperature = config.model.inverse_temperature;
  TrialCell cell;
  cell.identity = trial.identity;
  cell.rung = trial.rung;
  cell.rung_label = trial.rung_label;
  cell.variant = config.model.position.variant;
  // The exponent xi, for the forms that read it (inverse_temperature_form.h).
  const InverseTemperatureForm* form = FindInverseTemperatureForm(temperature.form);
  if (form != nullptr) {
    const std::vector<std::string> keys = form->keys();
    if (std::find(keys.begin(), keys.end(), "xi") != keys.end()) cell.xi = temperature.xi;
  }
  cell.seed = static_cast<int64_t>(config.seed);
  cell.n_nonembedding = trial.parameters.nonembedding();
  cell.n_total = trial.parameters.total();
  cell.tokens = trial.tokens;
  cell.flops = trial.flops;
  cell.cpus = config.resources.cpus * config.resources.world_size;
  cell.gpus = config.resources.gpus * config.resources.world_size;
  cell.steps = config.train.steps;
  cell.world_size = config.resources.world_size;
  return cell;
}

// Everything of a submission but its cells.
SweepSubmission SubmissionHeader(const ExpandedSweep& expanded, const std::string& spec_text,
                                 const std::string& spec_file_name) {
  SweepSubmission submission;
  submission.name = expanded.spec.name;
  submission.spec_text = spec_text;
  submission.spec_hash = Sha256Hex(spec_text);
  submission.spec_file_name = spec_file_name;
  submission.description = expanded.spec.description;
  submission.metric = expanded.spec.metric;
  submission.policy = expanded.spec.policy;
  submission.baseline = expanded.spec.baseline;
  if (expanded.spec.tune.set) {
    submission.tuning = "searching";
    submission.tuned_key = expanded.spec.tune.key;
  }
  if (expanded.spec.precision.set) submission.precision = "aiming";
  submission.trials.reserve(expanded.trials.size());
  return submission;
}

}  // namespace

TrialCell MakeTrialCell(const ExpandedTrial& trial) {
  TrialCell cell = CellWithoutJson(trial);
  cell.config = trial.config_json;
  cell.assignments = trial.assignments;
  return cell;
}

SweepSubmission MakeSubmission(const ExpandedSweep& expanded, const std::string& spec_text,
                               const std::string& spec_file_name) {
  SweepSubmission submission = SubmissionHeader(expanded, spec_text, spec_file_name);
  for (const ExpandedTrial& trial : expanded.trials) submission.trials.push_back(MakeTrialCell(trial));
  return submission;
}

SweepSubmission MakeSubmission(ExpandedSweep&& expanded, const std::string& spec_text,
                               const std::string& spec_file_name) {
  SweepSubmission submission = SubmissionHeader(expanded, spec_text, spec_file_name);
  for (ExpandedTrial& trial : expanded.trials) {
    TrialCell cell = CellWithoutJson(trial);
    cell.config = std::move(trial.config_json);
    cell.assignments = std::move(trial.assignments);
    submission.trials.push_back(std::move(cell));
  }
  return submission;
}

}  // namespace rung

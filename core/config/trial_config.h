// core/config/trial_config.h
//
// One resolved trial: everything rung-train needs to train one cell of a sweep, and its JSON form
// (the wire and file format). Parsing is strict: unknown keys are errors (with the nearest valid key
// suggested), wrong types are errors, and every error names its key path; all are reported at once.
//
// Example:
//   StatusOr<TrialConfig> trial = TrialConfigFromJson(json);
//   if (!trial.ok()) { print(trial.status().message()); exit(2); }
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/common/status.h"
#include "core/config/data_config.h"
#include "core/config/model_config.h"
#include "core/config/train_config.h"

namespace rung {

struct TrialConfig {
  uint64_t seed = 0;
  DataConfig data;
  ModelConfig model;  // holds the `position` and `inverse_temperature` blocks
  TrainConfig train;
  ResourcesConfig resources;
};

// Fills every derived default: model.vocab_size from the data source (bytes: 256; synthetic tasks:
// their vocabulary), model.seq_len, head_dim, kv_heads, mlp_hidden, n_ref, steps from tokens.
void ResolveTrialConfig(TrialConfig* trial);

// Validates a resolved trial; every error with its path.
Status ValidateTrialConfig(const TrialConfig& trial);

// Parses (strict), resolves and validates. `locate` maps a key path to "file:line:col" when the
// caller knows where it came from (YAML); errors are then prefixed with it.
StatusOr<TrialConfig> TrialConfigFromJson(
    const nlohmann::json& json, const std::function<std::string(const std::string&)>& locate = {});

// The same, returning the errors as data (path and message each) for callers that map paths to
// their own locations (sweep specs). Returns nullopt when `errors` gained any.
std::optional<TrialConfig> ParseTrialConfig(const nlohmann::json& json, std::vector<ConfigError>* errors);

// Every field, explicitly (the resolved form).
nlohmann::json TrialConfigToJson(const TrialConfig& trial);

// Brings `config` (TrialConfigToJson of `trial`) to the form identities had before later releases:
// removes the keys added to the trial config since trial identities and checkpoints were first written
// where they hold their default, or the value that does what earlier releases did (whose default is
// another: train.diagnostics_batches 1 and diagnostics_bootstrap_unit sequence), or are not read, so that an earlier release's identities still match and
// its checkpoints still resume (a key counts only once it can change what a trial does or reports); and
// marks a key whose meaning changed where the change applies (data.nrw.buffer > 0 gets
// data.nrw.buffer_rule), so that a trial of the old meaning is never taken for one of the new. Trial
// identities (sweeps/spec/trial_identity.h) and checkpoints' resume identities
// (core/train/checkpoint_io.h) both apply it.
void ReconcileWithEarlierReleases(const TrialConfig& trial, nlohmann::json* config);

// The trial config of an identity ReconcileWithEarlierReleases shaped (a checkpoint's resume identity):
// its markers taken out again, the keys it left out at their defaults. Errors as TrialConfigFromJson.
StatusOr<TrialConfig> TrialConfigFromIdentity(nlohmann::json identity);

// Vocabulary of a data source, or 0 if it must be given (shards).
int64_t DataVocabSize(const DataConfig& data);

}  // namespace rung

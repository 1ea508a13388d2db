#include "sweeps/spec/trial_identity.h"

#include <algorithm>

#include "core/common/sha256.h"
#include "core/config/inverse_temperature_form.h"
#include "core/config/model_arithmetic.h"
#include "core/config/positional_variant.h"
#include "sweeps/spec/json_path.h"

namespace rung {

nlohmann::json TrialIdentityJson(const TrialConfig& trial) { return TrialIdentityJson(trial, TrialConfigToJson(trial)); }

nlohmann::json TrialIdentityJson(const TrialConfig& trial, nlohmann::json identity) {
  identity.erase("resources");
  for (const char* key : {"eval_every", "log_every", "checkpoint_every", "keep_checkpoints", "device"}) {
    identity["train"].erase(key);
  }
  identity["train"].erase("tokens");  // steps (derived from tokens when given) is what runs
  // Keys added after identities were first stored count only when set, so that a spec resubmitted
  // to an older database still finds its SUCCEEDED cells.
  if (trial.train.init.from_trial.empty()) identity["train"]["init"].erase("from_trial");
  if (trial.train.diagnostics_renyi_order == 2.0) identity["train"].erase("diagnostics_renyi_order");
  ReconcileWithEarlierReleases(trial, &identity);

  const PositionConfig& position = trial.model.position;
  nlohmann::json& pos = identity["position"];
  // Other variants' own keys (positional_variant.h); the reconciling above removed those it owns.
  for (const PositionalVariant* other : PositionalVariants()) {
    if (other->name() == position.variant) continue;
    for (const std::string& key : other->own_keys()) pos.erase(key);
  }
  if (!position.rotary()) pos.erase("base");
  if (CountPositionalParameters(trial.model) == 0) {
    for (const char* key : {"lr_mult", "clip", "freeze"}) pos.erase(key);
  }

  // A schedule that is 1 everywhere is form none's; otherwise the keys only other forms read go
  // (inverse_temperature_form.h).
  const InverseTemperatureConfig& temperature = trial.model.inverse_temperature;
  const InverseTemperatureForm* form = FindInverseTemperatureForm(temperature.form);
  nlohmann::json& inv = identity["inverse_temperature"];
  if (form == nullptr || form->IsOne(temperature)) {
    inv = {{"form", "none"}};
  } else {
    const std::vector<std::string> own = form->keys();
    for (const InverseTemperatureForm* other : InverseTemperatureForms()) {
      for (const std::string& key : other->keys()) {
        if (std::find(own.begin(), own.end(), key) == own.end()) inv.erase(key);
      }
    }
  }

  const DataConfig& data = trial.data;
  nlohmann::json& d = identity["data"];
  if (data.source != "nrw") d.erase("nrw");
  if (data.source != "niah") d.erase("niah");
  if (data.source != "position_index") d.erase("position_index");
  if (data.source != "shards") {
    for (const char* key : {"token_bytes", "vocab_size", "val_path"}) d.erase(key);
  }
  if (data.synthetic()) {
    for (const char* key : {"path", "val_fraction", "split_seed", "doc_separator"}) d.erase(key);
  }
  return identity;
}

std::string TrialIdentityHash(const TrialConfig& trial) { return Sha256Hex(TrialIdentityJson(trial).dump()); }

std::string TrialIdentityHash(const TrialConfig& trial, const nlohmann::json& config_json) {
  return Sha256Hex(TrialIdentityJson(trial, config_json).dump());
}

}  // namespace rung

// sweeps/spec/trial_identity.h
//
// A trial's identity: the SHA-256 of the canonical JSON of everything that changes its result.
// Left out: resources (threads, GPUs), logging, evaluation and checkpoint cadence, the device.
// Canonicalised so that two spellings of the same model hash alike: settings a variant or an
// inverse-temperature form does not read are dropped (RoPE's base under NoPE, p under RoPE,
// AdaRoPE's block under LeRoPE, the absolute block under any other variant, xi under `none`), and `log_power` with xi = 0 and s = 1 fixed is
// `none`. Resubmitting a spec skips cells whose identity already succeeded.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/config/trial_config.h"

namespace rung {

// The canonical identity document of a resolved trial.
nlohmann::json TrialIdentityJson(const TrialConfig& trial);
// The same from `config_json`, which must be TrialConfigToJson(trial) (the expansion has it already).
nlohmann::json TrialIdentityJson(const TrialConfig& trial, nlohmann::json config_json);

// Lower-case hex SHA-256 of TrialIdentityJson(trial).dump().
std::string TrialIdentityHash(const TrialConfig& trial);
// The same from `config_json` == TrialConfigToJson(trial).
std::string TrialIdentityHash(const TrialConfig& trial, const nlohmann::json& config_json);

}  // namespace rung

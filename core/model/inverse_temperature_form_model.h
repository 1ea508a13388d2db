// core/model/inverse_temperature_form_model.h
//
// The model part of an inverse-temperature form (its descriptor: core/config/inverse_temperature_form.h):
// its learned parameters, registered on the InverseTemperature module under the names checkpoints
// hold, and the multipliers beta of each layer. One subclass per file core/model/temperature/<name>.cc,
// the same <name> as its descriptor, ending with RUNG_INVERSE_TEMPERATURE_MODEL(<name>, <Class>); the
// build lists them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/config/model_config.h"

namespace rung {

class InverseTemperatureFormModel {
 public:
  virtual ~InverseTemperatureFormModel() = default;
  // Per layer, the multipliers [..., heads] for queries that see `keys` keys ([T] or [B, T], float,
  // each >= 1); an empty vector or undefined entries: 1.
  virtual std::vector<torch::Tensor> Multipliers(const torch::Tensor& keys) = 0;
  virtual std::vector<torch::Tensor> learned_parameters() const { return {}; }
  // The learned form's free table beta[n - 1] for n = 1..n_train; undefined for the others.
  virtual torch::Tensor beta_table() const { return {}; }
};

class InverseTemperatureFormModelFactory {
 public:
  virtual ~InverseTemperatureFormModelFactory() = default;
  virtual const char* name() const = 0;
  virtual std::unique_ptr<InverseTemperatureFormModel> Make(const ModelConfig& config, torch::nn::Module& owner) const = 0;
};

// The model part of config.inverse_temperature.form. Throws (c10::Error) for a form without one.
std::unique_ptr<InverseTemperatureFormModel> MakeInverseTemperatureFormModel(const ModelConfig& config,
                                                                             torch::nn::Module& owner);
std::vector<std::string> InverseTemperatureFormModelNames();

}  // namespace rung

#define RUNG_INVERSE_TEMPERATURE_MODEL(NAME, CLASS)                                                              \
  const ::rung::InverseTemperatureFormModelFactory& rung_inverse_temperature_model_##NAME() {                 \
    static const struct Factory final : ::rung::InverseTemperatureFormModelFactory {                          \
      const char* name() const override { return #NAME; }                                                     \
      std::unique_ptr<::rung::InverseTemperatureFormModel> Make(const ::rung::ModelConfig& config,             \
                                                                torch::nn::Module& owner) const override {     \
        return std::make_unique<CLASS>(config, owner);                                                         \
      }                                                                                                         \
    } factory;                                                                                                  \
    return factory;                                                                                             \
  }

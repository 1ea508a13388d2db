// core/config/inverse_temperature_form.h
//
// An inverse-temperature form (docs/science.md section 3: the multiplier beta(n) of a query's logits
// by the number of keys n it sees) as one descriptor: what rung knows of it without LibTorch. Each
// form is a subclass in its own file, core/config/temperature/<name>.cc, ending with
// RUNG_INVERSE_TEMPERATURE_FORM(<name>, <Class>); its model part (its learned parameters and
// multipliers) is core/model/temperature/<name>.cc (core/model/inverse_temperature.h). The build
// lists both (cmake/registry_list.cmake).
//
// The config, the arithmetic, identities, the store's cells and --help ask the registry.
//
// Contract: descriptors are immutable singletons. Thread safety: the registry is built once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/checked_arithmetic.h"
#include "core/config/model_config.h"

namespace rung {

class InverseTemperatureForm {
 public:
  virtual ~InverseTemperatureForm() = default;
  virtual const char* name() const = 0;     // inverse_temperature.form's value, e.g. "qwen"
  virtual const char* label() const = 0;    // as papers write it
  virtual const char* summary() const = 0;  // one line: beta(n), and its source
  virtual int listing_order() const = 0;    // ascending: where errors and --help list it
  // The keys of `inverse_temperature` it reads among those only some forms read (xi, s, learn_s,
  // extend): a trial of another form leaves them out of its identity. n_ref is every form's.
  virtual std::vector<std::string> keys() const { return {}; }
  // beta(n) = 1 everywhere with these settings: the trial's identity is that of form none.
  virtual bool IsOne(const InverseTemperatureConfig&) const { return false; }
  // Reads the count of keys a query sees (every form but none).
  virtual bool ReadsKeyCount() const { return true; }
  // Its learned parameters (in the positional optimizer group).
  virtual CheckedInt64 Parameters(const ModelConfig&) const { return CheckedInt64(0); }
  // Its parameters train while the backbone is frozen (train.freeze_backbone leaves them something).
  virtual bool TrainsWithFrozenBackbone() const { return false; }
};

const InverseTemperatureForm* FindInverseTemperatureForm(std::string_view name);
const std::vector<const InverseTemperatureForm*>& InverseTemperatureForms();
const std::vector<std::string>& InverseTemperatureFormNames();
// A heading line, then one line each, "  NAME  LABEL: SUMMARY".
std::string InverseTemperatureFormsHelp();

}  // namespace rung

#define RUNG_INVERSE_TEMPERATURE_FORM(NAME, CLASS)                          \
  const ::rung::InverseTemperatureForm& rung_inverse_temperature_##NAME() { \
    static const CLASS form;                                                \
    return form;                                                            \
  }

// core/config/length_extension_method.h
//
// A length-extension method (docs/science.md section 9: how a model's rotary frequencies are changed to
// evaluate it beyond its training length) as one descriptor: what rung knows of it without LibTorch.
// Each method is a subclass in its own file, core/config/extension/<name>.cc, ending with
// RUNG_LENGTH_EXTENSION_METHOD(<name>, <Class>); its model part (the frequencies it makes, its logit
// factor) is core/model/extension/<name>.cc (core/model/frequency_extension.h). The build lists both
// (cmake/registry_list.cmake).
//
// train.extrapolation_methods, the evaluation and --help ask the registry:
//   FindLengthExtensionMethod("yarn"), LengthExtensionMethods(), LengthExtensionMethodNames(),
//   LengthExtensionMethodsHelp().
//
// Contract: descriptors are immutable singletons. Thread safety: the registry is built once.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rung {

class LengthExtensionMethod {
 public:
  virtual ~LengthExtensionMethod() = default;
  virtual const char* name() const = 0;     // train.extrapolation_methods' value, e.g. "yarn"
  virtual const char* label() const = 0;    // as papers write it, e.g. "YaRN"
  virtual const char* summary() const = 0;  // one line: what it does to the frequencies, and its source
  virtual int listing_order() const = 0;    // ascending: where errors and --help list it
  // Leaves the frequencies as trained (the plain evaluation beyond the training length).
  virtual bool keeps_frequencies() const { return false; }
  // Needs each frequency row's dominant pair, measured at the training length, before it evaluates.
  virtual bool needs_dominant_pairs() const { return false; }
};

const LengthExtensionMethod* FindLengthExtensionMethod(std::string_view name);
const std::vector<const LengthExtensionMethod*>& LengthExtensionMethods();
const std::vector<std::string>& LengthExtensionMethodNames();
// A heading line, then one line each, "  NAME  LABEL: SUMMARY".
std::string LengthExtensionMethodsHelp();

}  // namespace rung

#define RUNG_LENGTH_EXTENSION_METHOD(NAME, CLASS)                   \
  const ::rung::LengthExtensionMethod& rung_length_extension_##NAME() { \
    static const CLASS method;                                       \
    return method;                                                   \
  }

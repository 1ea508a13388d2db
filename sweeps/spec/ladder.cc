#include "sweeps/spec/ladder.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/common/checked_arithmetic.h"
#include "core/config/config_error.h"
#include "core/config/config_limits.h"

namespace rung {

double RungScaledValue::At(size_t rung, double parameters) const {
  // A list of the wrong length was reported by ParseLadder; the expansion goes on to report the
  // cells' own errors, with the list's last value standing in.
  if (!per_rung.empty()) return per_rung[std::min(rung, per_rung.size() - 1)];
  return coefficient * std::pow(parameters, exponent);
}

namespace {

std::string LadderLabel(const nlohmann::json& model) {
  auto get = [&](const char* key) { return model.contains(key) ? model[key].dump() : std::string("?"); };
  return "L" + get("layers") + "-d" + get("d_model");
}

RungScaledValue ParseScaled(const nlohmann::json& value, const std::string& path, const ConfigDocument& document,
                            SpecDiagnostics* diagnostics) {
  RungScaledValue scaled;
  scaled.set = true;
  scaled.location = document.Locate(path);
  if (value.is_array()) {
    for (size_t index = 0; index < value.size(); ++index) {
      if (!value[index].is_number() || value[index].get<double>() <= 0) {
        diagnostics->Error(document.Locate(path + "[" + std::to_string(index) + "]"), path,
                           "expected a positive number per rung");
        continue;
      }
      scaled.per_rung.push_back(value[index].get<double>());
    }
  } else if (value.is_object() && value.contains("coefficient") && value.contains("exponent") && value.size() == 2 &&
             value["coefficient"].is_number() && value["exponent"].is_number()) {
    scaled.coefficient = value["coefficient"].get<double>();
    scaled.exponent = value["exponent"].get<double>();
    if (!(scaled.coefficient > 0)) diagnostics->Error(document.Locate(path + ".coefficient"), path, "must be positive");
  } else {
    diagnostics->Error(scaled.location, path,
                       "expected a list with one value per rung or {coefficient: c, exponent: e} (c * N^e)");
  }
  return scaled;
}

}  // namespace

Ladder ParseLadder(const nlohmann::json* block, const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  Ladder ladder;
  if (block == nullptr) {
    ladder.rungs.push_back({"default", nlohmann::json::object(), nlohmann::json::object(), document.Locate(""), ""});
    return ladder;
  }
  const std::string where = document.Locate("ladder");
  if (!block->is_object()) {
    diagnostics->Error(where, "ladder", "expected a mapping (rungs: [...] or depths: [...])");
    ladder.rungs.push_back({"default", nlohmann::json::object(), nlohmann::json::object(), where, ""});
    return ladder;
  }
  static const std::vector<std::string> kKeys = {"rungs", "depths", "head_dim", "heads_per_layer", "tokens_per_param",
                                                 "param_count", "lr", "batch_size"};
  for (auto it = block->begin(); it != block->end(); ++it) {
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) != kKeys.end()) continue;
    std::string nearest = NearestKey(it.key(), kKeys);
    diagnostics->Error(document.Locate("ladder." + it.key()), "ladder." + it.key(),
                       "unknown key" + (nearest.empty() ? "" : " (did you mean '" + nearest + "'?)"));
  }

  const bool explicit_rungs = block->contains("rungs");
  const bool rules = block->contains("depths");
  if (explicit_rungs == rules) {
    diagnostics->Error(where, "ladder", "give either `rungs` (explicit) or `depths` (rules), exactly one");
  }
  if (explicit_rungs) {
    const nlohmann::json& rungs = (*block)["rungs"];
    if (!rungs.is_array() || rungs.empty()) {
      diagnostics->Error(document.Locate("ladder.rungs"), "ladder.rungs", "expected a non-empty list of rungs");
    } else {
      for (size_t index = 0; index < rungs.size(); ++index) {
        const std::string path = "ladder.rungs[" + std::to_string(index) + "]";
        const nlohmann::json& rung = rungs[index];
        if (!rung.is_object()) {
          diagnostics->Error(document.Locate(path), path, "expected a mapping of model keys");
          continue;
        }
        LadderRung out;
        out.location = document.Locate(path);
        out.path = path;
        for (auto it = rung.begin(); it != rung.end(); ++it) {
          if (it.key() == "label") {
            out.label = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
          } else if (it.key() == "train") {
            out.train = it.value();
          } else {
            out.model[it.key()] = it.value();
          }
        }
        if (out.label.empty()) out.label = LadderLabel(out.model);
        ladder.rungs.push_back(out);
      }
    }
  }
  if (rules) {
    const nlohmann::json& depths = (*block)["depths"];
    const nlohmann::json head_dim = block->value("head_dim", nlohmann::json());
    // Any JSON type may stand here: a non-number is refused below, never converted (which throws).
    const nlohmann::json ratio_value = block->value("heads_per_layer", nlohmann::json(1.0));
    const double ratio = ratio_value.is_number() ? ratio_value.get<double>() : std::nan("");
    if (!head_dim.is_number_integer() || head_dim.get<int64_t>() <= 0) {
      diagnostics->Error(document.Locate("ladder.head_dim"), "ladder.head_dim", "rules need a positive integer head_dim");
    } else if (!depths.is_array() || depths.empty()) {
      diagnostics->Error(document.Locate("ladder.depths"), "ladder.depths", "expected a non-empty list of depths");
    } else if (!(ratio > 0)) {
      diagnostics->Error(document.Locate("ladder.heads_per_layer"), "ladder.heads_per_layer",
                         "must be a positive number");
    } else {
      for (size_t index = 0; index < depths.size(); ++index) {
        const std::string path = "ladder.depths[" + std::to_string(index) + "]";
        if (!depths[index].is_number_integer() || depths[index].get<int64_t>() <= 0) {
          diagnostics->Error(document.Locate(path), path, "expected a positive integer depth");
          continue;
        }
        const int64_t layers = depths[index].get<int64_t>();
        // Bounded before the arithmetic (the trial config checks the shape itself once built).
        const double heads_wanted = ratio * static_cast<double>(layers);
        const std::optional<int64_t> width =
            layers <= kMaxLayers && heads_wanted <= static_cast<double>(kMaxModelWidth)
                ? CheckedMul(std::max<int64_t>(1, std::llround(heads_wanted)), head_dim.get<int64_t>())
                : std::nullopt;
        if (!width || *width > kMaxModelWidth) {
          diagnostics->Error(document.Locate(path), path,
                             "depth " + depths[index].dump() + " gives a model past the fixed limits (layers <= " +
                                 std::to_string(kMaxLayers) + ", d_model = heads x head_dim <= " +
                                 std::to_string(kMaxModelWidth) + ": core/config/config_limits.h)");
          continue;
        }
        const int64_t heads = std::max<int64_t>(1, std::llround(heads_wanted));
        LadderRung rung;
        rung.model = {{"layers", layers}, {"heads", heads}, {"head_dim", head_dim}, {"d_model", *width}};
        rung.label = LadderLabel(rung.model);
        rung.location = document.Locate(path);
        ladder.rungs.push_back(rung);
      }
    }
  }
  if (block->contains("tokens_per_param")) {
    const nlohmann::json& value = (*block)["tokens_per_param"];
    if (!value.is_number() || value.get<double>() <= 0) {
      diagnostics->Error(document.Locate("ladder.tokens_per_param"), "ladder.tokens_per_param", "must be a positive number");
    } else {
      ladder.tokens_per_param = value.get<double>();
    }
  }
  if (block->contains("param_count")) {
    const nlohmann::json& value = (*block)["param_count"];
    if (value != "total" && value != "nonembedding") {
      diagnostics->Error(document.Locate("ladder.param_count"), "ladder.param_count", "must be total or nonembedding");
    } else {
      ladder.param_count = value.get<std::string>();
    }
  }
  if (block->contains("lr")) ladder.lr = ParseScaled((*block)["lr"], "ladder.lr", document, diagnostics);
  if (block->contains("batch_size")) {
    ladder.batch_size = ParseScaled((*block)["batch_size"], "ladder.batch_size", document, diagnostics);
  }
  for (const RungScaledValue* value : {&ladder.lr, &ladder.batch_size}) {
    if (!value->per_rung.empty() && value->per_rung.size() != ladder.rungs.size()) {
      diagnostics->Error(value->location, value == &ladder.lr ? "ladder.lr" : "ladder.batch_size",
                         "has " + std::to_string(value->per_rung.size()) + " values for " +
                             std::to_string(ladder.rungs.size()) + " rungs");
    }
  }
  return ladder;
}

}  // namespace rung

#include "sweeps/spec/ladder.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/common/checked_arithmetic.h"
#include "core/config/config_error.h"
#include "core/config/config_limits.h"
#include "sweeps/spec/isoflop.h"

namespace rung {

double RungScaledValue::At(size_t size, double parameters) const {
  // A list of the wrong length was reported by ParseLadder; the expansion goes on to report the
  // cells' own errors, with the list's last value standing in.
  if (!per_rung.empty()) return per_rung[std::min(size, per_rung.size() - 1)];
  return coefficient * std::pow(parameters, exponent);
}

namespace {

// The single rung of a spec without a usable ladder: its defaults.
LadderRung DefaultRung(const std::string& location) {
  LadderRung rung;
  rung.label = "default";
  rung.location = location;
  return rung;
}

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

// The valid budgets of `ladder.isoflop_budgets`, in the order written, with their spec paths; each
// invalid one reported at its value.
std::vector<std::pair<double, std::string>> ParseIsoflopBudgets(const nlohmann::json& value,
                                                                 const ConfigDocument& document,
                                                                 SpecDiagnostics* diagnostics) {
  const std::string path = "ladder.isoflop_budgets";
  std::vector<std::pair<double, std::string>> budgets;
  if (!value.is_array() || value.empty()) {
    diagnostics->Error(document.Locate(path), path,
                       "expected a non-empty list of training FLOPs (6 N_nonembedding D), e.g. [1.0e11, 3.0e11, 1.0e12]");
    return budgets;
  }
  for (size_t index = 0; index < value.size(); ++index) {
    const std::string at = path + "[" + std::to_string(index) + "]";
    if (index == kMaxIsoflopBudgets) {
      diagnostics->Error(document.Locate(at), at,
                         "at most " + std::to_string(kMaxIsoflopBudgets) + " budgets (" +
                             std::to_string(value.size()) + " are listed; each multiplies the model sizes into rungs)");
      break;
    }
    const nlohmann::json& budget = value[index];
    if (!budget.is_number() || !std::isfinite(budget.get<double>()) || !(budget.get<double>() > 0)) {
      diagnostics->Error(document.Locate(at), at, "expected a finite number of training FLOPs > 0, e.g. 3.0e11");
      continue;
    }
    const double flops = budget.get<double>();
    auto same = std::find_if(budgets.begin(), budgets.end(), [&](const auto& earlier) { return earlier.first == flops; });
    if (same != budgets.end()) {
      diagnostics->Error(document.Locate(at), at,
                         "repeats the budget " + CompactBudgetText(flops) + " of " + same->second + " (" +
                             document.Locate(same->second) + "): each budget makes its own rungs, list it once");
      continue;
    }
    budgets.emplace_back(flops, at);
  }
  return budgets;
}

// An IsoFLOP grid sets train.steps and train.tokens of every trial: tokens_per_param, or a rung's own
// `train:` steps or tokens, would be overridden in every cell. One error per clash, naming both places.
void CheckIsoflopClashes(const nlohmann::json& block, const std::vector<LadderRung>& sizes,
                         const ConfigDocument& document, SpecDiagnostics* diagnostics) {
  const std::string budgets = document.Locate("ladder.isoflop_budgets");
  if (block.contains("tokens_per_param")) {
    diagnostics->Error(budgets, "ladder.isoflop_budgets",
                       "ladder.isoflop_budgets and ladder.tokens_per_param (" + document.Locate("ladder.tokens_per_param") +
                           ") both set train.tokens: an IsoFLOP grid derives each trial's steps from its budget; "
                           "remove one of them");
  }
  for (const LadderRung& rung : sizes) {
    if (rung.path.empty() || !rung.train.is_object()) continue;
    for (const char* key : {"steps", "tokens"}) {
      if (!rung.train.contains(key)) continue;
      const std::string at = rung.path + ".train." + key;
      diagnostics->Error(document.Locate(at), at,
                         "rung " + rung.label + " sets train." + key + ", which ladder.isoflop_budgets (" + budgets +
                             ") sets for every rung from its budget: remove one of them");
    }
  }
}

}  // namespace

Ladder ParseLadder(const nlohmann::json* block, const ConfigDocument& document, const ExpansionLimits& limits,
                   SpecDiagnostics* diagnostics) {
  Ladder ladder;
  if (block == nullptr) {
    ladder.rungs.push_back(DefaultRung(document.Locate("")));
    return ladder;
  }
  const std::string where = document.Locate("ladder");
  if (!block->is_object()) {
    diagnostics->Error(where, "ladder", "expected a mapping (rungs: [...] or depths: [...])");
    ladder.rungs.push_back(DefaultRung(where));
    return ladder;
  }
  static const std::vector<std::string> kKeys = {"rungs", "depths", "head_dim", "heads_per_layer", "tokens_per_param",
                                                 "param_count", "lr", "batch_size", "isoflop_budgets"};
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
  for (size_t index = 0; index < ladder.rungs.size(); ++index) ladder.rungs[index].size = index;
  const size_t sizes = ladder.rungs.size();
  for (const RungScaledValue* value : {&ladder.lr, &ladder.batch_size}) {
    if (!value->per_rung.empty() && value->per_rung.size() != sizes) {
      diagnostics->Error(value->location, value == &ladder.lr ? "ladder.lr" : "ladder.batch_size",
                         "has " + std::to_string(value->per_rung.size()) + " values for " + std::to_string(sizes) +
                             (block->contains("isoflop_budgets") ? " model sizes (one per size: every budget of a "
                                                                   "size takes its value)"
                                                                 : " rungs"));
    }
  }
  if (block->contains("isoflop_budgets")) {
    const std::vector<std::pair<double, std::string>> budgets =
        ParseIsoflopBudgets((*block)["isoflop_budgets"], document, diagnostics);
    CheckIsoflopClashes(*block, ladder.rungs, document, diagnostics);
    const std::optional<int64_t> grid =
        CheckedMul(static_cast<int64_t>(sizes), static_cast<int64_t>(budgets.size()));
    if (!grid || *grid > limits.max_trials) {
      // Refused before the rungs are built: the grid alone is over the trial limit.
      diagnostics->Error(document.Locate("ladder.isoflop_budgets"), "ladder.isoflop_budgets",
                         "the grid has " + (grid ? std::to_string(*grid) : std::string("more")) + " rungs (" +
                             std::to_string(sizes) + " model sizes x " + std::to_string(budgets.size()) +
                             " budgets), " + TrialLimitText(limits));
      ladder.rungs.clear();
    } else {
      // Sizes without a budget would train on the defaults' tokens: with no valid budget, no rungs
      // (the budgets' errors say why).
      std::vector<LadderRung> grid_rungs;
      grid_rungs.reserve(static_cast<size_t>(*grid));
      for (const LadderRung& size : ladder.rungs) {
        for (const auto& [budget, path] : budgets) {
          LadderRung rung = size;
          rung.label = size.label + "-C" + CompactBudgetText(budget);
          rung.isoflop_budget = budget;
          rung.budget_path = path;
          grid_rungs.push_back(std::move(rung));
        }
      }
      ladder.rungs = std::move(grid_rungs);
    }
    for (const auto& budget : budgets) ladder.isoflop_budgets.push_back(budget.first);
  }
  return ladder;
}

}  // namespace rung

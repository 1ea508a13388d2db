#include "sweeps/spec/early_stop_spec.h"

#include "sweeps/spec/spec_blocks.h"

namespace rung {

EarlyStopSpec ParseEarlyStopSpec(const nlohmann::json* block, const ConfigDocument& document,
                                 SpecDiagnostics* diagnostics) {
  EarlyStopSpec spec;
  if (block == nullptr) return spec;
  if (!block->is_object()) {
    diagnostics->Error(document.Locate("early_stop"), "early_stop",
                       "expected {divergence: {factor: 1.5}, asha: {metric: val_loss, reduction: 3, at: [0.25, 0.5]}}");
    return spec;
  }
  RejectUnknownKeys(*block, "early_stop", {"divergence", "asha"}, document, diagnostics);
  if (block->contains("divergence")) {
    const nlohmann::json& divergence = (*block)["divergence"];
    if (!divergence.is_object()) {
      diagnostics->Error(document.Locate("early_stop.divergence"), "early_stop.divergence", "expected {factor: 1.5}");
    } else {
      RejectUnknownKeys(divergence, "early_stop.divergence", {"factor"}, document, diagnostics);
      DivergenceStop stop;
      ReadSpecNumberAbove(divergence, "factor", "early_stop.divergence.factor", 1.0, &stop.factor, document,
                          diagnostics);
      spec.divergence = stop;
    }
  }
  if (block->contains("asha")) {
    const nlohmann::json& asha = (*block)["asha"];
    if (!asha.is_object()) {
      diagnostics->Error(document.Locate("early_stop.asha"), "early_stop.asha",
                         "expected {metric: val_loss, reduction: 3, at: [0.25, 0.5]}");
    } else {
      RejectUnknownKeys(asha, "early_stop.asha", {"metric", "reduction", "at"}, document, diagnostics);
      AshaStop stop;
      ReadSpecString(asha, "metric", "early_stop.asha.metric", &stop.metric, document, diagnostics);
      ReadSpecInteger(asha, "reduction", "early_stop.asha.reduction", 2, &stop.reduction, document, diagnostics);
      if (asha.contains("at")) {
        const nlohmann::json& at = asha["at"];
        stop.at.clear();
        bool ok = at.is_array() && !at.empty();
        for (size_t i = 0; ok && i < at.size(); ++i) {
          ok = at[i].is_number() && at[i].get<double>() > 0 && at[i].get<double>() < 1 &&
               (i == 0 || at[i].get<double>() > at[i - 1].get<double>());
          if (ok) stop.at.push_back(at[i].get<double>());
        }
        if (!ok) {
          diagnostics->Error(document.Locate("early_stop.asha.at"), "early_stop.asha.at",
                             "expected increasing fractions of training in (0, 1), e.g. [0.25, 0.5]");
        }
      }
      spec.asha = stop;
    }
  }
  return spec;
}

}  // namespace rung

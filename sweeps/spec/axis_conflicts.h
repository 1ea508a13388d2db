// sweeps/spec/axis_conflicts.h
//
// Two parts of a spec that would set the same trial-config key in every cell: two sweep axes (a
// list axis, a zip group's key, a random axis's key), or an axis and a ladder rule (tokens_per_param
// and isoflop_budgets set train.tokens and train.steps, lr train.lr, batch_size train.batch_size, the
// depth rules model.layers, heads, head_dim and d_model). Whichever comes later would silently win over the
// other, so the other's values would never run: an error naming both, at the later one's location.
// Keys conflict when equal or when one lies inside the other ("train" and "train.lr"); an axis whose
// values are mappings sets each of their leaves ("inverse_temperature: [{form: none}]" sets
// inverse_temperature.form). Explicit ladder rungs are not rules: an axis may set one of their keys.
//
// Thread safety: a pure function.
#pragma once

#include "core/config/yaml_document.h"
#include "sweeps/spec/ladder.h"
#include "sweeps/spec/spec_diagnostics.h"
#include "sweeps/spec/sweep_axes.h"

namespace rung {

// Adds one error per conflicting pair to `diagnostics`.
void CheckAxisConflicts(const SweepAxes& axes, const Ladder& ladder, const ConfigDocument& document,
                        SpecDiagnostics* diagnostics);

}  // namespace rung

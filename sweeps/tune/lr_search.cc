#include "sweeps/tune/lr_search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace rung {

const char* CellStatusName(CellStatus status) {
  switch (status) {
    case CellStatus::kWaiting: return "waiting";
    case CellStatus::kSearching: return "searching";
    case CellStatus::kBracketed: return "bracketed";
    case CellStatus::kExhausted: return "exhausted";
    case CellStatus::kExtrapolated: return "extrapolated";
    case CellStatus::kFromSweep: return "from_sweep";
  }
  return "?";
}

bool TuningPlan::complete() const {
  return std::all_of(cells.begin(), cells.end(), [](const TuningCellReport& cell) { return cell.closed(); });
}

double LineThrough(const std::vector<double>& x, const std::vector<double>& y, double at) {
  const double n = static_cast<double>(x.size());
  double mean_x = 0, mean_y = 0;
  for (size_t i = 0; i < x.size(); ++i) mean_x += x[i] / n, mean_y += y[i] / n;
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) sxx += (x[i] - mean_x) * (x[i] - mean_x), sxy += (x[i] - mean_x) * (y[i] - mean_y);
  if (sxx <= 0) return mean_y;
  return mean_y + sxy / sxx * (at - mean_x);
}

std::optional<ValueLaw> FitValueLaw(const std::vector<std::pair<double, double>>& n_and_value) {
  std::set<double> distinct;
  std::vector<double> x, y;
  for (const auto& [n, value] : n_and_value) {
    if (!(n > 0) || !(value > 0)) continue;
    distinct.insert(n);
    x.push_back(std::log(n));
    y.push_back(std::log(value));
  }
  if (distinct.size() < 2) return std::nullopt;
  const double at0 = LineThrough(x, y, 0.0);
  return ValueLaw{std::exp(at0), LineThrough(x, y, 1.0) - at0};
}

namespace {

std::vector<std::string> PerKeys(const TuneSpec& tune, const std::vector<std::string>& axis_keys) {
  if (tune.per_given) return tune.per;
  std::vector<std::string> keys = {"rung"};
  for (const std::string& key : axis_keys) {
    if (key != "seed") keys.push_back(key);
  }
  return keys;
}

// The lookup key of an expanded cell: its rung and its assignments without the tuned key.
std::string BaseKey(const std::string& rung_label, nlohmann::json assignments, const std::string& tuned_key) {
  assignments.erase(tuned_key);
  return rung_label + "\n" + assignments.dump();
}

struct CellWork {
  TuningCellReport report;
  std::vector<size_t> members;    // expanded trial positions
  std::vector<size_t> followers;
  std::set<int64_t> tried;        // indices with a member trial
  std::optional<int64_t> started_at;  // the centre it started at: the middle of its earliest trials' values
  std::vector<std::pair<int64_t, int64_t>> first_seen;  // (trial order, index) of member trials
  std::set<int64_t> wanted;       // indices every member runs at
  std::optional<int64_t> followers_at;
};

}  // namespace

nlohmann::json TuningCellOf(const TuneSpec& tune, const std::vector<std::string>& axis_keys,
                            const std::string& rung_label, const nlohmann::json& assignments) {
  nlohmann::json cell = nlohmann::json::object();
  for (const std::string& key : PerKeys(tune, axis_keys)) {
    if (key == "rung") {
      cell["rung"] = rung_label;
    } else if (assignments.contains(key)) {
      cell[key] = assignments[key];
    }
  }
  return cell;
}

StatusOr<TuningPlan> PlanTuning(const ExpandedSweep& expanded, const std::vector<ObservedTrial>& observed,
                                const std::vector<std::pair<nlohmann::json, int64_t>>* best_from) {
  const TuneSpec& tune = expanded.spec.tune;
  if (!tune.set) return Status::InvalidArgument("the spec has no tune block");
  const std::vector<std::string> axis_keys = expanded.spec.axes.Keys();
  const bool by_rung = tune.PerRung();
  const double sign = expanded.spec.metric.goal == "maximize" ? -1.0 : 1.0;

  // The rung after which cells are extrapolated.
  int64_t last_swept_rung = static_cast<int64_t>(expanded.spec.ladder.rungs.size()) - 1;
  for (size_t rung = 0; rung < expanded.spec.ladder.rungs.size() && !tune.extrapolate_above.empty(); ++rung) {
    if (expanded.spec.ladder.rungs[rung].label == tune.extrapolate_above) last_swept_rung = static_cast<int64_t>(rung);
  }

  // Cells, in order of first appearance; members and followers.
  std::vector<CellWork> cells;
  std::map<std::string, size_t> cell_of_key;
  std::map<std::string, size_t> base_of_key;
  std::vector<size_t> cell_of_base(expanded.trials.size());
  std::vector<nlohmann::json> first_seed;
  for (size_t position = 0; position < expanded.trials.size(); ++position) {
    const ExpandedTrial& base = expanded.trials[position];
    base_of_key[BaseKey(base.rung_label, base.assignments, tune.key)] = position;
    nlohmann::json cell = TuningCellOf(tune, axis_keys, base.rung_label, base.assignments);
    auto [it, inserted] = cell_of_key.emplace(cell.dump(), cells.size());
    if (inserted) {
      CellWork work;
      work.report.id = static_cast<int64_t>(cells.size());
      work.report.cell = cell;
      nlohmann::json method = cell;
      method.erase("rung");
      work.report.method = method.dump();
      if (by_rung) {
        work.report.rung_label = base.rung_label;
        work.report.rung = base.rung;
      }
      cells.push_back(std::move(work));
      first_seed.push_back(base.assignments.value("seed", nlohmann::json()));
    }
    CellWork& work = cells[it->second];
    cell_of_base[position] = it->second;
    const bool member = tune.tune_every_seed || base.assignments.value("seed", nlohmann::json()) == first_seed[it->second];
    (member ? work.members : work.followers).push_back(position);
  }
  for (CellWork& work : cells) {
    double sum = 0;
    for (size_t position : work.members) {
      const ParameterCounts& counts = expanded.trials[position].parameters;
      sum += static_cast<double>(counts.total() - counts.positional);
    }
    work.report.n_total = sum / static_cast<double>(std::max<size_t>(1, work.members.size()));
    work.report.members = static_cast<int64_t>(work.members.size());
    work.report.followers = static_cast<int64_t>(work.followers.size());
  }

  // Candidates: an expanded cell at a grid index, built (or refused) once.
  std::map<std::pair<size_t, int64_t>, StatusOr<ExpandedTrial>> candidates;
  const auto candidate = [&](size_t position, int64_t index) -> const StatusOr<ExpandedTrial>& {
    auto it = candidates.find({position, index});
    if (it == candidates.end()) {
      it = candidates
               .emplace(std::make_pair(position, index),
                        ExpandTrialWithValue(expanded.trials[position], tune.key, tune.ValueAt(index)))
               .first;
    }
    return it->second;
  };
  // A refused candidate as the spec's error, at the tune block.
  const auto refused = [&](const Status& status) {
    return Status::InvalidArgument(tune.location + ": error: tune." + tune.key + ": " + status.message());
  };

  // What the store has, by (expanded cell, index); a trial of another identity is not this plan's.
  // Assignments are flat: the tuned key is one of them ("train.lr"), not a path.
  std::map<std::pair<size_t, int64_t>, const ObservedTrial*> seen;
  for (const ObservedTrial& trial : observed) {
    auto value = trial.assignments.find(tune.key);
    if (value == trial.assignments.end() || !value->is_number() || !(value->get<double>() > 0)) continue;
    auto base = base_of_key.find(BaseKey(trial.rung_label, trial.assignments, tune.key));
    if (base == base_of_key.end()) continue;
    const int64_t index = tune.NearestIndex(value->get<double>());
    const StatusOr<ExpandedTrial>& planned = candidate(base->second, index);
    if (!planned.ok()) return refused(planned.status());
    if (planned->identity != trial.identity) continue;
    seen[{base->second, index}] = &trial;
    CellWork& work = cells[cell_of_base[base->second]];
    if (std::find(work.members.begin(), work.members.end(), base->second) != work.members.end()) {
      work.tried.insert(index);
      work.first_seen.emplace_back(trial.order, index);
    }
  }
  for (CellWork& work : cells) {
    if (work.first_seen.empty()) continue;
    std::sort(work.first_seen.begin(), work.first_seen.end());
    std::set<int64_t> start;
    for (const auto& [order, index] : work.first_seen) {
      if (static_cast<int64_t>(start.size()) == tune.start) break;
      start.insert(index);
    }
    work.started_at = (*start.begin() + *start.rbegin()) / 2;
  }

  // Methods: cells sharing every key but the rung, smallest rung first.
  std::map<std::string, std::vector<size_t>> methods;
  for (size_t id = 0; id < cells.size(); ++id) methods[by_rung ? cells[id].report.method : std::to_string(id)].push_back(id);
  for (auto& [method, ids] : methods) {
    std::stable_sort(ids.begin(), ids.end(),
                     [&](size_t a, size_t b) { return cells[a].report.rung < cells[b].report.rung; });
  }

  const auto score_of = [&](CellWork& work) {
    work.report.tried.clear();
    for (int64_t index : work.tried) {
      TriedValue tried;
      tried.index = index;
      tried.value = tune.ValueAt(index);
      bool running = false, asha = false, diverged = false;
      double sum = 0;
      for (size_t position : work.members) {
        auto it = seen.find({position, index});
        const ObservedTrial* trial = it == seen.end() ? nullptr : it->second;
        if (trial == nullptr || trial->outcome == TunedOutcome::kRunning) {
          running = true;
        } else if (trial->outcome == TunedOutcome::kStoppedByAsha) {
          asha = true;
        } else if (trial->outcome == TunedOutcome::kDiverged || !trial->metric || !std::isfinite(*trial->metric)) {
          diverged = true;
        } else {
          sum += *trial->metric;
        }
      }
      tried.state = running ? "unfinished" : diverged ? "diverged" : asha ? "stopped_by_asha" : "finished";
      if (tried.state == "finished") tried.metric = sum / static_cast<double>(work.members.size());
      work.report.tried.push_back(tried);
    }
  };

  // "" when every member of the cell can run at `index`; else why not.
  const auto NeighbourRefused = [&](const CellWork& work, int64_t index) -> std::string {
    for (size_t position : work.members) {
      const StatusOr<ExpandedTrial>& trial = candidate(position, index);
      if (!trial.ok()) return std::string(trial.status().message());
    }
    return "";
  };

  // A predicted centre moved to the nearest index (within kMaxTunePoints steps) whose first values,
  // `half` on each side, every one of `positions` can run at: the fit may point at or past the edge
  // where the smaller rungs closed (the largest value the trial config takes). Unmoved if none is.
  const auto accepted_center = [&](const std::vector<size_t>& positions, int64_t predicted, int64_t half) {
    const auto accepted = [&](int64_t center) {
      if (center - half < tune.MinIndex() || center + half > tune.MaxIndex()) return false;
      for (int64_t index = center - half; index <= center + half; ++index) {
        for (size_t position : positions) {
          if (!candidate(position, index).ok()) return false;
        }
      }
      return true;
    };
    for (int64_t distance = 0; distance <= kMaxTunePoints; ++distance) {
      if (accepted(predicted - distance)) return predicted - distance;
      if (distance > 0 && accepted(predicted + distance)) return predicted + distance;
    }
    return predicted;
  };

  const auto center_from = [&](const std::vector<std::pair<double, double>>& closed, double ln_n) {
    std::vector<double> x, y;
    for (const auto& [a, b] : closed) x.push_back(a), y.push_back(b);
    const double line = LineThrough(x, y, ln_n);
    // Within the grid indices float32 holds, with room for the first values on each side.
    const int64_t half = (tune.start - 1) / 2;
    const double lowest = static_cast<double>(tune.MinIndex() + half);
    const double highest = std::max(lowest, static_cast<double>(tune.MaxIndex() - half));
    return static_cast<int64_t>(std::llround(std::clamp(std::isfinite(line) ? line : 0.0, lowest, highest)));
  };

  for (auto& [method, ids] : methods) {
    std::vector<std::pair<double, double>> closed;  // (ln N_total, best index) of closed swept rungs
    int64_t swept_before = 0;
    for (size_t id : ids) {
      CellWork& work = cells[id];
      TuningCellReport& report = work.report;
      const double ln_n = std::log(std::max(1.0, report.n_total));
      const int64_t half = (tune.start - 1) / 2;
      const bool extrapolated = by_rung && report.rung > last_swept_rung;
      const int64_t required = std::min<int64_t>(2, swept_before);
      const bool predicted_ready = by_rung && tune.predict && static_cast<int64_t>(closed.size()) >= required;
      std::optional<int64_t> prediction;
      if (by_rung && tune.predict && predicted_ready && required > 0) {
        std::vector<size_t> runs_there = work.members;
        if (extrapolated) runs_there.insert(runs_there.end(), work.followers.begin(), work.followers.end());
        prediction = accepted_center(runs_there, center_from(closed, ln_n), extrapolated ? 0 : half);
      }

      if (best_from != nullptr) {
        auto it = std::find_if(best_from->begin(), best_from->end(),
                               [&](const auto& entry) { return entry.first == report.cell; });
        if (it == best_from->end()) {
          return Status::InvalidArgument(tune.location + ": error: tune." + tune.key + ".from_sweep: sweep '" +
                                         tune.from_sweep + "' has no closed cell " + report.cell.dump());
        }
        report.status = CellStatus::kFromSweep;
        report.best_index = report.center_index = it->second;
        report.best_value = tune.ValueAt(it->second);
        work.wanted.insert(it->second);
        work.followers_at = it->second;
        report.reason = "the best value of sweep '" + tune.from_sweep + "'";
      } else if (extrapolated) {
        std::optional<int64_t> at = prediction;
        if (!work.tried.empty()) at = *work.tried.begin();  // what it runs at, once it runs
        if (!at) {
          report.status = CellStatus::kWaiting;
          report.reason = "extrapolated: waits for " + std::to_string(required) + " smaller rung(s) to close (" +
                          std::to_string(closed.size()) + " closed)";
        } else {
          report.status = CellStatus::kExtrapolated;
          report.best_index = report.center_index = *at;
          report.best_value = tune.ValueAt(*at);
          work.wanted.insert(*at);
          work.followers_at = *at;
          report.reason = "not searched: the index the fit over " + std::to_string(closed.size()) +
                          " smaller rung(s) predicts";
        }
      } else {
        ++swept_before;
        std::optional<int64_t> center;
        // A rung with a centre of its own starts on it at once; the others where the fit points.
        if (!by_rung || !tune.predict || required == 0 || tune.center_per_rung.count(report.rung_label) > 0) {
          center = tune.NearestIndex(tune.CenterOf(report.rung_label));
        } else if (prediction) {
          center = prediction;
        }
        report.center_index = center;
        if (!work.tried.empty()) report.center_index = work.started_at;
        if (work.tried.empty()) {
          if (!center) {
            report.status = CellStatus::kWaiting;
            report.reason = "waits for " + std::to_string(required) + " smaller rung(s) of its method to close (" +
                            std::to_string(closed.size()) + " closed)";
          } else {
            report.status = CellStatus::kSearching;
            for (int64_t index = *center - half; index <= *center + half; ++index) work.wanted.insert(index);
            report.reason = "started at its centre";
          }
        } else {
          work.wanted = work.tried;
          score_of(work);
          int64_t running = 0;
          for (const TriedValue& tried : report.tried) running += tried.state == "unfinished" ? 1 : 0;
          // best: the lowest score; unscored values after every scored one; ties to the smaller index
          const TriedValue* best = nullptr;
          for (const TriedValue& tried : report.tried) {
            if (best == nullptr) {
              best = &tried;
            } else if (tried.metric && (!best->metric || sign * *tried.metric < sign * *best->metric)) {
              best = &tried;
            }
          }
          if (running > 0) {
            report.status = CellStatus::kSearching;
            report.reason = "waits for " + std::to_string(running) + " value(s) to finish";
          } else {
            report.best_index = best->index;
            report.best_value = best->value;
            const bool below = work.tried.count(best->index - 1) > 0;
            const bool above = work.tried.count(best->index + 1) > 0;
            if (below && above && best->metric) {
              report.status = CellStatus::kBracketed;
              report.reason = "the best has a tried value on each side";
            } else if (static_cast<int64_t>(work.tried.size()) >= tune.max_points) {
              report.status = CellStatus::kExhausted;
              report.reason = std::string("max_points (") + std::to_string(tune.max_points) + ") reached with the best " +
                              (!best->metric ? "unscored (every value diverged or was stopped)"
                                             : below ? "at the high edge" : "at the low edge");
            } else if (std::string why = NeighbourRefused(work, !below ? best->index - 1 : best->index + 1);
                       !why.empty()) {
              // The grid's value beyond the best is not a valid config: the search ends at this edge.
              report.status = CellStatus::kExhausted;
              report.reason = std::string("the best is at the ") + (!below ? "low" : "high") + " edge, and " + why;
            } else {
              report.status = CellStatus::kSearching;
              const int64_t next = !below ? best->index - 1 : best->index + 1;
              work.wanted.insert(next);
              work.tried.insert(next);
              report.reason = std::string("the best is at the ") + (!below ? "low" : "high") + " edge: adding " +
                              nlohmann::json(tune.ValueAt(next)).dump();
              score_of(work);
            }
          }
          if (report.bracketed() || report.status == CellStatus::kExhausted) {
            work.followers_at = report.best_index;
            closed.emplace_back(ln_n, static_cast<double>(*report.best_index));
          }
        }
      }
      if (by_rung && tune.predict && !closed.empty()) {
        // The next rung's centre: from this rung's and the smaller rungs' bests, at the next size.
        const TuningCellReport* next = nullptr;
        for (size_t other : ids) {
          if (cells[other].report.rung > report.rung) {
            next = &cells[other].report;
            break;
          }
        }
        if (next != nullptr) report.next_center = center_from(closed, std::log(std::max(1.0, next->n_total)));
      }
    }
  }

  // The trials: members at every wanted index, followers at the best, and whatever the store has.
  TuningPlan plan;
  std::set<std::pair<size_t, int64_t>> planned;
  for (CellWork& work : cells) {
    std::vector<std::pair<size_t, int64_t>> wanted;
    for (int64_t index : work.wanted) {
      for (size_t position : work.members) wanted.emplace_back(position, index);
    }
    if (work.followers_at) {
      for (size_t position : work.followers) wanted.emplace_back(position, *work.followers_at);
    }
    for (const auto& [key, trial] : seen) {
      if (cell_of_base[key.first] == static_cast<size_t>(work.report.id)) wanted.push_back(key);
    }
    std::sort(wanted.begin(), wanted.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second < b.second : a.first < b.first;
    });
    for (const auto& key : wanted) {
      if (!planned.insert(key).second) continue;
      const StatusOr<ExpandedTrial>& trial = candidate(key.first, key.second);
      if (!trial.ok()) return refused(trial.status());
      PlannedTrial out;
      out.trial = *trial;
      out.cell = work.report.id;
      out.grid_index = key.second;
      out.extrapolated = work.report.status == CellStatus::kExtrapolated;
      plan.trials.push_back(std::move(out));
    }
    const bool searched = work.report.status != CellStatus::kExtrapolated && work.report.status != CellStatus::kFromSweep &&
                          !(by_rung && work.report.rung > last_swept_rung);
    const int64_t per_value = static_cast<int64_t>(work.members.size());
    double flops_per_value = 0, flops_followers = 0;
    for (size_t position : work.members) flops_per_value += expanded.trials[position].flops;
    for (size_t position : work.followers) flops_followers += expanded.trials[position].flops;
    const int64_t values = searched ? tune.max_points : 1;
    plan.worst_case_trials += values * per_value + static_cast<int64_t>(work.followers.size());
    plan.worst_case_flops += static_cast<double>(values) * flops_per_value + flops_followers;
    plan.cells.push_back(work.report);
  }
  for (size_t position = 0; position < plan.trials.size(); ++position) {
    plan.trials[position].trial.index = static_cast<int64_t>(position);
  }
  return plan;
}

}  // namespace rung

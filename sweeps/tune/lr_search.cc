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

using GridKey = std::pair<size_t, int64_t>;                  // (expanded trial position, grid index)
using SeenTrials = std::map<GridKey, const ObservedTrial*>;  // the store's trials this plan makes
using BestFrom = std::vector<std::pair<nlohmann::json, int64_t>>;  // from_sweep: per cell, the index to run at
using ClosedRungs = std::vector<std::pair<double, double>>;  // (ln N_total, best index) of closed swept rungs

// The tuning cells of an expanded sweep, and how to find the cell of an expanded trial.
struct TuningCells {
  std::vector<CellWork> cells;                // in order of first appearance
  std::map<std::string, size_t> base_of_key;  // BaseKey -> expanded trial position
  std::vector<size_t> cell_of_base;           // expanded trial position -> its cell
};

// Expanded trials at grid indices, each built (or refused) once.
class CandidateTrials {
 public:
  CandidateTrials(const ExpandedSweep& expanded, const TuneSpec& tune) : expanded_(expanded), tune_(tune) {}

  // The expanded trial at `position` with the tuned key at the value of grid index `index`.
  const StatusOr<ExpandedTrial>& At(size_t position, int64_t index) {
    auto it = built_.find({position, index});
    if (it == built_.end()) {
      it = built_
               .emplace(std::make_pair(position, index),
                        ExpandTrialWithValue(expanded_.trials[position], tune_.key, tune_.ValueAt(index)))
               .first;
    }
    return it->second;
  }

 private:
  const ExpandedSweep& expanded_;
  const TuneSpec& tune_;
  std::map<GridKey, StatusOr<ExpandedTrial>> built_;
};

// What deciding a cell reads: the tune block, how the sweep ranks, the trials observed and built.
struct SearchContext {
  const TuneSpec& tune;
  bool by_rung = true;          // cells are per rung: the rungs of a method are decided in order
  double sign = 1.0;            // -1 when the goal is maximize: the best has the lowest sign * metric
  int64_t last_swept_rung = 0;  // larger rungs are extrapolated
  const SeenTrials& seen;
  CandidateTrials* candidates;
};

// A refused candidate as the spec's error, at the tune block.
Status RefusedValue(const TuneSpec& tune, const Status& status) {
  return Status::InvalidArgument(tune.location + ": error: tune." + tune.key + ": " + status.message());
}

// The rung after which cells are extrapolated: extrapolate_above's, else the largest.
int64_t LastSweptRung(const SweepSpec& spec) {
  const TuneSpec& tune = spec.tune;
  int64_t last_swept_rung = static_cast<int64_t>(spec.ladder.rungs.size()) - 1;
  for (size_t rung = 0; rung < spec.ladder.rungs.size() && !tune.extrapolate_above.empty(); ++rung) {
    if (spec.ladder.rungs[rung].label == tune.extrapolate_above) last_swept_rung = static_cast<int64_t>(rung);
  }
  return last_swept_rung;
}

// A new tuning cell `id` of the per keys' values `cell`, first seen at the expanded trial `base`.
CellWork NewCell(int64_t id, const nlohmann::json& cell, const ExpandedTrial& base, bool by_rung) {
  CellWork work;
  work.report.id = id;
  work.report.cell = cell;
  nlohmann::json method = cell;
  method.erase("rung");
  work.report.method = method.dump();
  if (by_rung) {
    work.report.rung_label = base.rung_label;
    work.report.rung = base.rung;
  }
  return work;
}

// Sets each cell's mean parameter count over its members, and how many members and followers it has.
void CountMembers(const ExpandedSweep& expanded, std::vector<CellWork>* cells) {
  for (CellWork& work : *cells) {
    double sum = 0;
    for (size_t position : work.members) {
      const ParameterCounts& counts = expanded.trials[position].parameters;
      sum += static_cast<double>(counts.total() - counts.positional);
    }
    work.report.n_total = sum / static_cast<double>(std::max<size_t>(1, work.members.size()));
    work.report.members = static_cast<int64_t>(work.members.size());
    work.report.followers = static_cast<int64_t>(work.followers.size());
  }
}

// The expanded trials grouped into tuning cells, in order of first appearance: the first seed's (or,
// with seeds: all, every seed's) trials are a cell's members, the others its followers.
TuningCells GroupTuningCells(const ExpandedSweep& expanded, bool by_rung) {
  const TuneSpec& tune = expanded.spec.tune;
  const std::vector<std::string> axis_keys = expanded.spec.axes.Keys();
  TuningCells grouped;
  grouped.cell_of_base.resize(expanded.trials.size());
  std::map<std::string, size_t> cell_of_key;
  std::vector<nlohmann::json> first_seed;
  for (size_t position = 0; position < expanded.trials.size(); ++position) {
    const ExpandedTrial& base = expanded.trials[position];
    grouped.base_of_key[BaseKey(base.rung_label, base.assignments, tune.key)] = position;
    nlohmann::json cell = TuningCellOf(tune, axis_keys, base.rung_label, base.assignments);
    auto [it, inserted] = cell_of_key.emplace(cell.dump(), grouped.cells.size());
    if (inserted) {
      grouped.cells.push_back(NewCell(static_cast<int64_t>(grouped.cells.size()), cell, base, by_rung));
      first_seed.push_back(base.assignments.value("seed", nlohmann::json()));
    }
    CellWork& work = grouped.cells[it->second];
    grouped.cell_of_base[position] = it->second;
    const bool member =
        tune.tune_every_seed || base.assignments.value("seed", nlohmann::json()) == first_seed[it->second];
    (member ? work.members : work.followers).push_back(position);
  }
  CountMembers(expanded, &grouped.cells);
  return grouped;
}

// The store's trials this plan makes, by (expanded trial, grid index); a trial of another identity is
// not this plan's. Records the indices each cell's members were tried at. INVALID_ARGUMENT when the
// trial config refuses a stored trial's value. Assignments are flat: the tuned key is one of them
// ("train.lr"), not a path.
StatusOr<SeenTrials> MatchObserved(const std::vector<ObservedTrial>& observed, const TuneSpec& tune,
                                   CandidateTrials* candidates, TuningCells* grouped) {
  SeenTrials seen;
  for (const ObservedTrial& trial : observed) {
    auto value = trial.assignments.find(tune.key);
    if (value == trial.assignments.end() || !value->is_number() || !(value->get<double>() > 0)) continue;
    auto base = grouped->base_of_key.find(BaseKey(trial.rung_label, trial.assignments, tune.key));
    if (base == grouped->base_of_key.end()) continue;
    const int64_t index = tune.NearestIndex(value->get<double>());
    const StatusOr<ExpandedTrial>& planned = candidates->At(base->second, index);
    if (!planned.ok()) return RefusedValue(tune, planned.status());
    if (planned->identity != trial.identity) continue;
    seen[{base->second, index}] = &trial;
    CellWork& work = grouped->cells[grouped->cell_of_base[base->second]];
    if (std::find(work.members.begin(), work.members.end(), base->second) != work.members.end()) {
      work.tried.insert(index);
      work.first_seen.emplace_back(trial.order, index);
    }
  }
  return seen;
}

// Sets the centre each started cell started at: the middle of the first `start` distinct indices its
// members were tried at, in trial order.
void SetStartedAt(int64_t start, std::vector<CellWork>* cells) {
  for (CellWork& work : *cells) {
    if (work.first_seen.empty()) continue;
    std::sort(work.first_seen.begin(), work.first_seen.end());
    std::set<int64_t> first;
    for (const auto& [order, index] : work.first_seen) {
      if (static_cast<int64_t>(first.size()) == start) break;
      first.insert(index);
    }
    work.started_at = (*first.begin() + *first.rbegin()) / 2;
  }
}

// Methods: cells sharing every key but the rung (each cell its own when cells span rungs), smallest
// rung first.
std::map<std::string, std::vector<size_t>> MethodsOf(const std::vector<CellWork>& cells, bool by_rung) {
  std::map<std::string, std::vector<size_t>> methods;
  for (size_t id = 0; id < cells.size(); ++id) {
    methods[by_rung ? cells[id].report.method : std::to_string(id)].push_back(id);
  }
  for (auto& [method, ids] : methods) {
    std::stable_sort(ids.begin(), ids.end(),
                     [&](size_t a, size_t b) { return cells[a].report.rung < cells[b].report.rung; });
  }
  return methods;
}

// Sets the cell's tried values (from its tried indices) and how each stands: scored by the members'
// mean metric when every member finished.
void ScoreTried(const TuneSpec& tune, const SeenTrials& seen, CellWork* work) {
  work->report.tried.clear();
  for (int64_t index : work->tried) {
    TriedValue tried;
    tried.index = index;
    tried.value = tune.ValueAt(index);
    bool running = false, asha = false, diverged = false;
    double sum = 0;
    for (size_t position : work->members) {
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
    if (tried.state == "finished") tried.metric = sum / static_cast<double>(work->members.size());
    work->report.tried.push_back(tried);
  }
}

// "" when every member of the cell can run at `index`; else why not.
std::string NeighbourRefused(const CellWork& work, int64_t index, CandidateTrials* candidates) {
  for (size_t position : work.members) {
    const StatusOr<ExpandedTrial>& trial = candidates->At(position, index);
    if (!trial.ok()) return std::string(trial.status().message());
  }
  return "";
}

// A predicted centre moved to the nearest index (within kMaxTunePoints steps) whose first values,
// `half` on each side, every one of `positions` can run at: the fit may point at or past the edge
// where the smaller rungs closed (the largest value the trial config takes). Unmoved if none is.
int64_t AcceptedCenter(const std::vector<size_t>& positions, int64_t predicted, int64_t half, const TuneSpec& tune,
                       CandidateTrials* candidates) {
  const auto accepted = [&](int64_t center) {
    if (center - half < tune.MinIndex() || center + half > tune.MaxIndex()) return false;
    for (int64_t index = center - half; index <= center + half; ++index) {
      for (size_t position : positions) {
        if (!candidates->At(position, index).ok()) return false;
      }
    }
    return true;
  };
  for (int64_t distance = 0; distance <= kMaxTunePoints; ++distance) {
    if (accepted(predicted - distance)) return predicted - distance;
    if (distance > 0 && accepted(predicted + distance)) return predicted + distance;
  }
  return predicted;
}

// The grid index the least-squares line through `closed` gives at `ln_n`, rounded and kept within the
// indices float32 holds, with room for the first values on each side.
int64_t CenterFrom(const ClosedRungs& closed, double ln_n, const TuneSpec& tune) {
  std::vector<double> x, y;
  for (const auto& [a, b] : closed) x.push_back(a), y.push_back(b);
  const double line = LineThrough(x, y, ln_n);
  const int64_t half = (tune.start - 1) / 2;
  const double lowest = static_cast<double>(tune.MinIndex() + half);
  const double highest = std::max(lowest, static_cast<double>(tune.MaxIndex() - half));
  return static_cast<int64_t>(std::llround(std::clamp(std::isfinite(line) ? line : 0.0, lowest, highest)));
}

// The centre the method's closed smaller rungs predict for the cell (of ln N_total `ln_n`), where all its
// runs can start; nullopt without prediction, for the smallest swept rung, or before `required` closed.
std::optional<int64_t> PredictedCenter(const CellWork& work, double ln_n, bool extrapolated, int64_t required,
                                       const ClosedRungs& closed, const SearchContext& context) {
  const TuneSpec& tune = context.tune;
  if (!(context.by_rung && tune.predict && static_cast<int64_t>(closed.size()) >= required && required > 0)) {
    return std::nullopt;
  }
  std::vector<size_t> runs_there = work.members;
  if (extrapolated) runs_there.insert(runs_there.end(), work.followers.begin(), work.followers.end());
  const int64_t half = (tune.start - 1) / 2;
  return AcceptedCenter(runs_there, CenterFrom(closed, ln_n, tune), extrapolated ? 0 : half, tune,
                        context.candidates);
}

// A from_sweep cell: closed at the best index `best_from` has for it; INVALID_ARGUMENT when it has none.
Status TakeBestFromSweep(const TuneSpec& tune, const BestFrom& best_from, CellWork* work) {
  TuningCellReport& report = work->report;
  auto it = std::find_if(best_from.begin(), best_from.end(),
                         [&](const auto& entry) { return entry.first == report.cell; });
  if (it == best_from.end()) {
    return Status::InvalidArgument(tune.location + ": error: tune." + tune.key + ".from_sweep: sweep '" +
                                   tune.from_sweep + "' has no closed cell " + report.cell.dump());
  }
  report.status = CellStatus::kFromSweep;
  report.best_index = report.center_index = it->second;
  report.best_value = tune.ValueAt(it->second);
  work->wanted.insert(it->second);
  work->followers_at = it->second;
  report.reason = "the best value of sweep '" + tune.from_sweep + "'";
  return Status::Ok();
}

// A cell of a rung above extrapolate_above: every seed runs at the predicted index (or the one it
// runs at already), unsearched; it waits while there is none.
void PlaceExtrapolated(const TuneSpec& tune, std::optional<int64_t> prediction, int64_t required,
                       size_t closed_count, CellWork* work) {
  TuningCellReport& report = work->report;
  std::optional<int64_t> at = prediction;
  if (!work->tried.empty()) at = *work->tried.begin();  // what it runs at, once it runs
  if (!at) {
    report.status = CellStatus::kWaiting;
    report.reason = "extrapolated: waits for " + std::to_string(required) + " smaller rung(s) to close (" +
                    std::to_string(closed_count) + " closed)";
    return;
  }
  report.status = CellStatus::kExtrapolated;
  report.best_index = report.center_index = *at;
  report.best_value = tune.ValueAt(*at);
  work->wanted.insert(*at);
  work->followers_at = *at;
  report.reason =
      "not searched: the index the fit over " + std::to_string(closed_count) + " smaller rung(s) predicts";
}

// A swept cell with no value tried: starts its first values on its own centre (or, with prediction,
// where the fit points); waits while there is neither.
void StartCell(const SearchContext& context, std::optional<int64_t> prediction, int64_t required,
               size_t closed_count, CellWork* work) {
  const TuneSpec& tune = context.tune;
  TuningCellReport& report = work->report;
  std::optional<int64_t> center;
  // A rung with a centre of its own starts on it at once; the others where the fit points.
  if (!context.by_rung || !tune.predict || required == 0 || tune.center_per_rung.count(report.rung_label) > 0) {
    center = tune.NearestIndex(tune.CenterOf(report.rung_label));
  } else if (prediction) {
    center = prediction;
  }
  report.center_index = center;
  if (!center) {
    report.status = CellStatus::kWaiting;
    report.reason = "waits for " + std::to_string(required) + " smaller rung(s) of its method to close (" +
                    std::to_string(closed_count) + " closed)";
    return;
  }
  report.status = CellStatus::kSearching;
  const int64_t half = (tune.start - 1) / 2;
  for (int64_t index = *center - half; index <= *center + half; ++index) work->wanted.insert(index);
  report.reason = "started at its centre";
}

// The best of scored values: the lowest sign * metric; unscored values after every scored one; ties
// to the smaller index. REQUIRES: `tried` not empty, by index.
const TriedValue& BestTried(const std::vector<TriedValue>& tried, double sign) {
  const TriedValue* best = nullptr;
  for (const TriedValue& value : tried) {
    if (best == nullptr) {
      best = &value;
    } else if (value.metric && (!best->metric || sign * *value.metric < sign * *best->metric)) {
      best = &value;
    }
  }
  return *best;
}

// With every tried value ended and the best at `best_index`: bracketed when both neighbours were
// tried; else exhausted at max_points or when the trial config refuses the neighbour beyond the best;
// else that neighbour is added.
void StepFromBest(const SearchContext& context, int64_t best_index, bool best_scored, CellWork* work) {
  const TuneSpec& tune = context.tune;
  TuningCellReport& report = work->report;
  const bool below = work->tried.count(best_index - 1) > 0;
  const bool above = work->tried.count(best_index + 1) > 0;
  if (below && above && best_scored) {
    report.status = CellStatus::kBracketed;
    report.reason = "the best has a tried value on each side";
  } else if (static_cast<int64_t>(work->tried.size()) >= tune.max_points) {
    report.status = CellStatus::kExhausted;
    report.reason = std::string("max_points (") + std::to_string(tune.max_points) + ") reached with the best " +
                    (!best_scored ? "unscored (every value diverged or was stopped)"
                                  : below ? "at the high edge" : "at the low edge");
  } else if (std::string why = NeighbourRefused(*work, !below ? best_index - 1 : best_index + 1, context.candidates);
             !why.empty()) {
    // The grid's value beyond the best is not a valid config: the search ends at this edge.
    report.status = CellStatus::kExhausted;
    report.reason = std::string("the best is at the ") + (!below ? "low" : "high") + " edge, and " + why;
  } else {
    report.status = CellStatus::kSearching;
    const int64_t next = !below ? best_index - 1 : best_index + 1;
    work->wanted.insert(next);
    work->tried.insert(next);
    report.reason = std::string("the best is at the ") + (!below ? "low" : "high") + " edge: adding " +
                    nlohmann::json(tune.ValueAt(next)).dump();
    ScoreTried(tune, context.seen, work);
  }
}

// A swept cell with values tried: waits while one runs; else takes its best and closes on it or adds
// the value beyond it. True when the cell closed (its followers then run at the best).
bool ContinueSearch(const SearchContext& context, CellWork* work) {
  TuningCellReport& report = work->report;
  report.center_index = work->started_at;
  work->wanted = work->tried;
  ScoreTried(context.tune, context.seen, work);
  int64_t running = 0;
  for (const TriedValue& tried : report.tried) running += tried.state == "unfinished" ? 1 : 0;
  if (running > 0) {
    report.status = CellStatus::kSearching;
    report.reason = "waits for " + std::to_string(running) + " value(s) to finish";
    return false;
  }
  const TriedValue& best = BestTried(report.tried, context.sign);
  report.best_index = best.index;
  report.best_value = best.value;
  StepFromBest(context, best.index, best.metric.has_value(), work);
  if (!report.bracketed() && report.status != CellStatus::kExhausted) return false;
  work->followers_at = report.best_index;
  return true;
}

// Sets the next larger rung's predicted centre of the method `ids`, from its closed rungs up to this
// one; none when this is its largest rung.
void SetNextCenter(const std::vector<size_t>& ids, const std::vector<CellWork>& cells, const ClosedRungs& closed,
                   const TuneSpec& tune, TuningCellReport* report) {
  const TuningCellReport* next = nullptr;
  for (size_t other : ids) {
    if (cells[other].report.rung > report->rung) {
      next = &cells[other].report;
      break;
    }
  }
  if (next != nullptr) report->next_center = CenterFrom(closed, std::log(std::max(1.0, next->n_total)), tune);
}

// Decides the cells `ids` of one method, smallest rung first, each from the rungs closed before it:
// from another sweep, extrapolated, or searched. INVALID_ARGUMENT for a from_sweep cell it lacks.
Status DecideMethod(const std::vector<size_t>& ids, const BestFrom* best_from, const SearchContext& context,
                    std::vector<CellWork>* cells) {
  ClosedRungs closed;
  int64_t swept_before = 0;
  for (size_t id : ids) {
    CellWork& work = (*cells)[id];
    const double ln_n = std::log(std::max(1.0, work.report.n_total));
    const bool extrapolated = context.by_rung && work.report.rung > context.last_swept_rung;
    const int64_t required = std::min<int64_t>(2, swept_before);
    const std::optional<int64_t> prediction = PredictedCenter(work, ln_n, extrapolated, required, closed, context);
    if (best_from != nullptr) {
      RUNG_RETURN_IF_ERROR(TakeBestFromSweep(context.tune, *best_from, &work));
    } else if (extrapolated) {
      PlaceExtrapolated(context.tune, prediction, required, closed.size(), &work);
    } else {
      ++swept_before;
      if (work.tried.empty()) {
        StartCell(context, prediction, required, closed.size(), &work);
      } else if (ContinueSearch(context, &work)) {
        closed.emplace_back(ln_n, static_cast<double>(*work.report.best_index));
      }
    }
    if (context.by_rung && context.tune.predict && !closed.empty()) {
      SetNextCenter(ids, *cells, closed, context.tune, &work.report);
    }
  }
  return Status::Ok();
}

// The trials a cell wants: its members at every wanted index, its followers at the best, and whatever
// the store has of it; by index, then expanded trial.
std::vector<GridKey> TrialsOfCell(const CellWork& work, const SeenTrials& seen,
                                  const std::vector<size_t>& cell_of_base) {
  std::vector<GridKey> wanted;
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
  return wanted;
}

// Adds the cell's worst case to the plan's: max_points values of its members when it is searched,
// else one, plus its followers once.
void AddWorstCase(const ExpandedSweep& expanded, const CellWork& work, const SearchContext& context,
                  TuningPlan* plan) {
  const TuningCellReport& report = work.report;
  const bool searched = report.status != CellStatus::kExtrapolated && report.status != CellStatus::kFromSweep &&
                        !(context.by_rung && report.rung > context.last_swept_rung);
  const int64_t per_value = static_cast<int64_t>(work.members.size());
  double flops_per_value = 0, flops_followers = 0;
  for (size_t position : work.members) flops_per_value += expanded.trials[position].flops;
  for (size_t position : work.followers) flops_followers += expanded.trials[position].flops;
  const int64_t values = searched ? context.tune.max_points : 1;
  plan->worst_case_trials += values * per_value + static_cast<int64_t>(work.followers.size());
  plan->worst_case_flops += static_cast<double>(values) * flops_per_value + flops_followers;
}

// The plan of the decided cells: their reports, the trials they want (each once, numbered in order)
// and the worst case. INVALID_ARGUMENT for a trial the trial config refuses.
StatusOr<TuningPlan> CollectPlan(const ExpandedSweep& expanded, const TuningCells& grouped,
                                 const SearchContext& context) {
  TuningPlan plan;
  std::set<GridKey> planned;
  for (const CellWork& work : grouped.cells) {
    for (const GridKey& key : TrialsOfCell(work, context.seen, grouped.cell_of_base)) {
      if (!planned.insert(key).second) continue;
      const StatusOr<ExpandedTrial>& trial = context.candidates->At(key.first, key.second);
      if (!trial.ok()) return RefusedValue(context.tune, trial.status());
      PlannedTrial out;
      out.trial = *trial;
      out.cell = work.report.id;
      out.grid_index = key.second;
      out.extrapolated = work.report.status == CellStatus::kExtrapolated;
      plan.trials.push_back(std::move(out));
    }
    AddWorstCase(expanded, work, context, &plan);
    plan.cells.push_back(work.report);
  }
  for (size_t position = 0; position < plan.trials.size(); ++position) {
    plan.trials[position].trial.index = static_cast<int64_t>(position);
  }
  return plan;
}

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
  const bool by_rung = tune.PerRung();
  TuningCells grouped = GroupTuningCells(expanded, by_rung);
  CandidateTrials candidates(expanded, tune);
  RUNG_ASSIGN_OR_RETURN(const SeenTrials seen, MatchObserved(observed, tune, &candidates, &grouped));
  SetStartedAt(tune.start, &grouped.cells);

  const double sign = expanded.spec.metric.goal == "maximize" ? -1.0 : 1.0;
  const SearchContext context{tune, by_rung, sign, LastSweptRung(expanded.spec), seen, &candidates};
  for (const auto& [method, ids] : MethodsOf(grouped.cells, by_rung)) {
    RUNG_RETURN_IF_ERROR(DecideMethod(ids, best_from, context, &grouped.cells));
  }
  return CollectPlan(expanded, grouped, context);
}

}  // namespace rung

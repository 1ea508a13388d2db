#include "sweeps/fit/law_runs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "sweeps/fit/csv_records.h"

namespace rung::fit {
namespace {

std::string Num(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

std::string Where(const LawRun& run) {
  if (!run.origin.empty()) return run.origin;
  return "variant '" + run.variant + "' n " + Num(run.n) + " d " + Num(run.d);
}

}  // namespace

std::vector<std::string> LawRuns::Variants() const {
  std::vector<std::string> variants;
  for (const LawRun& run : runs) {
    if (std::find(variants.begin(), variants.end(), run.variant) == variants.end()) variants.push_back(run.variant);
  }
  return variants;
}

std::vector<LawRun> LawRuns::Of(const std::string& variant) const {
  std::vector<LawRun> out;
  for (const LawRun& run : runs) {
    if (run.variant == variant) out.push_back(run);
  }
  return out;
}

std::string LossUnit(const std::string& metric) { return metric == "val_bpb" ? "bits per byte" : "nats"; }

Status ValidateLawRuns(const LawRuns& runs) {
  if (runs.runs.empty()) return Status::InvalidArgument(runs.source + ": no runs");
  std::vector<std::string> errors;
  auto error = [&](const LawRun& run, const std::string& message) {
    if (errors.size() < 20) errors.push_back(Where(run) + ": " + message);
  };
  const bool seeds = runs.has_seeds();
  std::map<std::tuple<std::string, double, double, int64_t>, const LawRun*> seen;
  for (const LawRun& run : runs.runs) {
    if (run.variant.empty()) error(run, "empty variant");
    if (!std::isfinite(run.n) || run.n <= 0) error(run, "n must be a positive number of parameters, got " + Num(run.n));
    if (!std::isfinite(run.d) || run.d <= 0) error(run, "d must be a positive number of tokens, got " + Num(run.d));
    if (!std::isfinite(run.loss) || run.loss <= 0) {
      error(run, "loss must be a positive number, got " + Num(run.loss));
    }
    if (run.seed.has_value() != seeds) error(run, seeds ? "no seed (other runs have one)" : "a seed (other runs have none)");
    auto [it, fresh] = seen.emplace(std::make_tuple(run.variant, run.n, run.d, run.seed.value_or(0)), &run);
    if (!fresh) {
      error(run, "a second run of variant '" + run.variant + "' at n " + Num(run.n) + ", d " + Num(run.d) +
                     (run.seed ? ", seed " + std::to_string(*run.seed) : std::string()) + " (first at " +
                     Where(*it->second) + ")");
    }
  }
  if (errors.empty()) return Status::Ok();
  std::string message = errors.front();
  for (size_t index = 1; index < errors.size(); ++index) message += "\n" + errors[index];
  return Status::InvalidArgument(message);
}

StatusOr<LawRuns> ParseLawRunsCsv(std::string_view text, const std::string& source) {
  static const CsvSchema kSchema = {{"n", "d", "loss", "variant", "seed"},
                                    {"n", "d", "loss"},
                                    "n, d, loss and optionally variant, seed",
                                    "n,d,loss (variant and seed are optional)"};
  CsvErrors errors(source);
  RUNG_ASSIGN_OR_RETURN(CsvRecords records, ParseCsvRecords(text, kSchema, &errors));
  LawRuns runs;
  runs.source = source;
  runs.metric = "val_loss";
  for (const CsvRecord& record : records.records) {
    LawRun run;
    run.origin = source + ":" + std::to_string(record.line);
    run.variant = records.Has("variant") ? *record.Field("variant") : "all";
    if (run.variant.empty()) errors.Add(record.line, "column 'variant' is empty");
    errors.Number(record, "n", &run.n);
    errors.Number(record, "d", &run.d);
    errors.Number(record, "loss", &run.loss);
    if (records.Has("seed")) {
      int64_t seed = 0;
      errors.Integer(record, "seed", &seed);
      run.seed = seed;
    }
    runs.runs.push_back(std::move(run));
  }
  if (!errors.empty()) return errors.ToStatus();
  RUNG_RETURN_IF_ERROR(ValidateLawRuns(runs));
  return runs;
}

LawUnits LawUnitsOf(const std::vector<LawRun>& runs, const std::vector<std::string>& variants) {
  LawUnits units;
  std::set<int64_t> seeds;
  for (const LawRun& run : runs) {
    if (run.seed) seeds.insert(*run.seed);
  }
  units.by_seed = seeds.size() >= 2;
  units.seeds.assign(seeds.begin(), seeds.end());
  if (units.by_seed) {
    units.fewest = static_cast<int>(seeds.size());
    return units;
  }
  units.fewest = std::numeric_limits<int>::max();
  for (const std::string& variant : variants) {
    int count = 0;
    for (const LawRun& run : runs) count += run.variant == variant ? 1 : 0;
    units.fewest = std::min(units.fewest, count);
  }
  return units;
}

std::map<int64_t, double> DrawSeeds(const std::vector<int64_t>& seeds, std::mt19937_64& generator) {
  std::map<int64_t, double> drawn;
  std::uniform_int_distribution<size_t> pick(0, seeds.size() - 1);
  for (size_t draw = 0; draw < seeds.size(); ++draw) drawn[seeds[pick(generator)]] += 1;
  return drawn;
}

StatusOr<LawRuns> LawRunsOfLadder(const LadderResults& ladder, const std::string& metric) {
  LawRuns runs;
  runs.source = ladder.source;
  runs.metric = metric.empty() ? "val_loss" : metric;
  for (const LadderRun& run : ladder.runs) {
    if (!run.parameters || !run.tokens) {
      return Status::FailedPrecondition(
          (run.origin.empty() ? "a run" : run.origin) +
          " has no model size N and token count D (a ladder CSV needs n and d columns for scaling laws)");
    }
    runs.runs.push_back({run.variant, *run.parameters, *run.tokens, run.loss, run.seed, run.origin});
  }
  return runs;
}

StatusOr<LawRuns> ReadLawRunsCsv(const std::string& path) {
  RUNG_ASSIGN_OR_RETURN(std::string text, ReadCsvText(path));
  return ParseLawRunsCsv(text, path);
}

}  // namespace rung::fit

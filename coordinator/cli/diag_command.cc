#include "coordinator/cli/diag_command.h"

#include <cmath>
#include <iostream>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/cli/command_support.h"
#include "coordinator/cli/exit_codes.h"
#include "coordinator/cli/text_table.h"
#include "sweeps/plot/diagnostics_plot.h"

namespace rung::cli {
namespace {

using nlohmann::json;

struct DiagOptions {
  ConnectionOptions connection;
  int64_t trial_id = 0;
  std::string format = "table";
  std::string table;  // heads | gaps | regime | extrapolation | all
  std::string plot_dir;
  std::string gnuplot = "gnuplot";
};

// A number of a diagnostics document for people; "-" where it has none.
std::string Number(const json& value, int digits = 4) {
  if (!value.is_number()) return value.is_null() ? "-" : value.dump();
  return cli::Number(value.get<double>(), digits);
}

// The element of `values` at query position p (1-based), or null.
json AtPosition(const json& values, int64_t position) {
  if (!values.is_array() || position < 1 || position > static_cast<int64_t>(values.size())) return nullptr;
  return values[position - 1];
}

TextTable HeadsTable(const json& attention) {
  const int64_t length = attention.value("length", 0);
  const int64_t eighth = std::max<int64_t>(1, length / 8), half = std::max<int64_t>(1, length / 2);
  // E_r of the record's Renyi order (2 unless train.diagnostics_renyi_order says otherwise).
  const std::string e = "E" + Number(attention.value("renyi_order", json(2.0)), 3) + "@";
  TextTable table({"layer", "head", e + std::to_string(eighth), e + std::to_string(half), e + std::to_string(length),
                   "pair_usage_cv", "effective_base", "dominant_pair", "dominant_wavelength/T"});
  for (const json& layer : attention.value("layers", json::array())) {
    for (const json& head : layer.value("heads", json::array())) {
      const json& e2 = head.value("effective_length_by_position", json::array());
      json row = {{"layer", layer.value("layer", 0)},
                  {"head", head.value("head", 0)},
                  {"effective_length_at", {{std::to_string(eighth), AtPosition(e2, eighth)},
                                           {std::to_string(half), AtPosition(e2, half)},
                                           {std::to_string(length), AtPosition(e2, length)}}},
                  {"pair_usage_cv", head.value("pair_usage_cv", json())},
                  {"pair_usage", head.value("pair_usage", json::array())},
                  {"effective_base", head.value("effective_base", json())},
                  {"dominant_pair", head.value("dominant_pair", json())},
                  {"dominant_wavelength", head.value("dominant_wavelength", json())},
                  {"dominant_wavelength_over_training_length",
                   head.value("dominant_wavelength_over_training_length", json())}};
      table.AddRow({std::to_string(layer.value("layer", 0)), std::to_string(head.value("head", 0)),
                    Number(AtPosition(e2, eighth)), Number(AtPosition(e2, half)), Number(AtPosition(e2, length)),
                    Number(row["pair_usage_cv"], 3), Number(row["effective_base"], 5), Number(row["dominant_pair"]),
                    Number(row["dominant_wavelength_over_training_length"], 3)},
                   row);
    }
  }
  return table;
}

TextTable GapsTable(const json& attention) {
  TextTable table({"layer", "n", "rows", "ties", "lambda", "alpha", "delta", "xi_lambda", "xi_lambda_ci"});
  for (const json& layer : attention.value("layers", json::array())) {
    const json& gap = layer.value("gap_counting", json::object());
    const json& at = gap.value("at_training_length", json::object());
    const json& ci = gap.value("xi_lambda_ci", json::array());
    const std::string interval = ci.size() == 2 ? "[" + Number(ci[0], 3) + ", " + Number(ci[1], 3) + "]" : "-";
    json row = {{"layer", layer.value("layer", 0)}, {"n", at.value("n", json())}, {"rows", at.value("rows", json())},
                {"ties", at.value("ties", json())}, {"lambda", at.value("lambda_mean", json())},
                {"alpha", at.value("alpha_mean", json())}, {"delta", at.value("delta_mean", json())},
                {"xi_lambda", gap.value("xi_lambda", json())}, {"xi_lambda_ci", ci},
                {"lengths", gap.value("lengths", json::array())},
                {"mean_log_lambda", gap.value("mean_log_lambda", json::array())}};
    table.AddRow({std::to_string(layer.value("layer", 0)), Number(row["n"]), Number(row["rows"]), Number(row["ties"]),
                  Number(row["lambda"]), Number(row["alpha"]), Number(row["delta"]), Number(row["xi_lambda"], 3),
                  interval},
                 row);
  }
  if (attention.contains("pooled")) {
    const json& pooled = attention["pooled"];
    table.AddRow({"pooled", "", "", "", "", "", "", Number(pooled.value("xi_lambda", json()), 3), "-"},
                 {{"layer", "pooled"}, {"xi_lambda", pooled.value("xi_lambda", json())}});
  }
  return table;
}

TextTable RegimeTable(const json& attention) {
  TextTable table({"layer", "beta/lambda", "entropy/ln_n", "max_weight", "top_two_gap"});
  for (const json& layer : attention.value("layers", json::array())) {
    for (const json& regime : layer.value("gap_counting", json::object()).value("softmax_regime", json::array())) {
      json row = regime;
      row["layer"] = layer.value("layer", 0);
      table.AddRow({std::to_string(layer.value("layer", 0)), Number(regime.value("beta_over_lambda", json()), 3),
                    Number(regime.value("normalised_entropy", json())), Number(regime.value("max_weight", json())),
                    Number(regime.value("top_two_gap", json()))},
                   row);
    }
  }
  return table;
}

TextTable ExtrapolationTable(const json& extrapolation) {
  TextTable table({"multiple", "length", "method", "val_loss", "val_accuracy"});
  if (!extrapolation.is_array()) return table;
  for (const json& entry : extrapolation) {
    json row = entry;
    row.erase("val_loss_per_position");
    table.AddRow({Number(entry.value("multiple", json())), Number(entry.value("length", json())),
                  entry.value("method", std::string()), Number(entry.value("val_loss", json())),
                  Number(entry.value("val_accuracy", json()))},
                 row);
  }
  return table;
}

// Learned (or fixed) rotary frequencies per layer and row (head or head group) against RoPE's
// theta_f = b^(-f/pairs) for the trial's base b.
struct FrequencyRows {
  std::vector<plot::FrequencyProfile> profiles;
  TextTable table{{"layer", "row", "pair", "theta", "rope_theta", "theta/rope", "wavelength/T"}};
};

FrequencyRows FrequencyTable(const json& documents, double base, double train_length) {
  FrequencyRows rows;
  for (auto item = documents.begin(); item != documents.end(); ++item) {
    const std::string prefix = "frequencies.layer_";
    if (item.key().rfind(prefix, 0) != 0) continue;
    const json& shape = item.value().value("shape", json::array());
    const json& values = item.value().value("values", json::array());
    if (shape.size() != 2 || !shape[1].is_number_integer()) continue;
    const int64_t groups = shape[0].get<int64_t>(), pairs = shape[1].get<int64_t>();
    const std::string layer = item.key().substr(prefix.size());
    for (int64_t g = 0; g < groups; ++g) {
      plot::FrequencyProfile profile;
      profile.label = "layer " + layer + (groups > 1 ? " row " + std::to_string(g) : "");
      for (int64_t f = 0; f < pairs && g * pairs + f < static_cast<int64_t>(values.size()); ++f) {
        const json& value = values[g * pairs + f];
        const double theta = value.is_number() ? value.get<double>() : std::nan("");
        const double rope = std::pow(base, -static_cast<double>(f) / static_cast<double>(pairs));
        profile.theta.push_back(theta);
        const double wavelength = theta > 0 ? 2 * M_PI / theta / train_length : std::nan("");
        rows.table.AddRow({layer, std::to_string(g), std::to_string(f), Number(theta), Number(rope), Number(theta / rope),
                           Number(wavelength)},
                          {{"layer", std::stoll(layer)}, {"row", g}, {"pair", f}, {"theta", theta}, {"rope_theta", rope},
                           {"ratio", theta / rope}, {"wavelength_over_training_length", wavelength}});
      }
      rows.profiles.push_back(std::move(profile));
    }
  }
  return rows;
}

int RunDiag(CoordinatorConnection& connection, const DiagOptions& options) {
  rung::v1::GetDiagnosticsRequest request;
  request.set_trial_id(options.trial_id);
  rung::v1::GetDiagnosticsResponse response;
  grpc::Status status = connection.user().GetDiagnostics(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("diag", status);
  json attention, extrapolation;
  json documents = json::object();
  for (const rung::v1::TrialDiagnostic& diagnostic : response.diagnostics()) {
    json value = json::parse(diagnostic.json(), nullptr, false);
    if (diagnostic.name() == "attention") attention = value;
    if (diagnostic.name() == "extrapolation") extrapolation = value;
    documents[diagnostic.name()] = std::move(value);
  }
  rung::v1::GetTrialRequest trial_request;
  trial_request.set_trial_id(options.trial_id);
  rung::v1::Trial trial;
  status = connection.user().GetTrial(connection.Context().get(), trial_request, &trial);
  if (!status.ok()) return ReportRpcError("diag", status);
  const json config = json::parse(trial.config_json().empty() ? "{}" : trial.config_json(), nullptr, false);
  const double base = config.is_object() ? config.value("/position/base"_json_pointer, 10000.0) : 10000.0;
  const double train_length = config.is_object() ? config.value("/data/seq_len"_json_pointer, 0.0) : 0.0;
  // The documents are what a trainer sent, shown as they are: a field of an unexpected type (a worker
  // that is not rung-train, or a hostile one) is reported, never a crash.
  try {
    FrequencyRows frequencies = FrequencyTable(documents, base, train_length > 0 ? train_length : 1.0);
    if (!attention.is_object()) {
      std::cerr << "rung diag: trial " << options.trial_id
                << " has no attention diagnostics yet (they are written when a trial succeeds; see `rung show "
                << options.trial_id << "`)\n";
      return kUsage;
    }
    std::string table = options.table;
    if (table.empty()) table = options.format == "table" ? "all" : "heads";
    if (table == "all" && options.format == "csv") {
      std::cerr << "rung diag: --format csv needs one --table (heads, gaps, regime, extrapolation or frequencies)\n";
      return kUsage;
    }
    if (table == "all" && options.format == "json") {
      std::cout << json{{"trial_id", options.trial_id}, {"diagnostics", documents}}.dump(2) << "\n";
    } else {
      const bool all = table == "all";
      auto section = [&](const std::string& name, const std::string& heading, const TextTable& rows) {
        if (!all && table != name) return;
        if (all) std::cout << heading << "\n";
        rows.Print(std::cout, options.format);
        if (all) std::cout << "\n";
      };
      section("heads",
              "Heads (E2 = effective attention length at a query position; T = " +
                  std::to_string(attention.value("length", 0)) + ")",
              HeadsTable(attention));
      section("gaps", "Gap counting on unscaled score rows at the training length; xi_lambda over n",
              GapsTable(attention));
      section("regime", "Softmax regime at beta = c * lambda", RegimeTable(attention));
      section("extrapolation", "Validation beyond the training length", ExtrapolationTable(extrapolation));
      section("frequencies",
              "Rotary frequencies against RoPE's (b = " + Number(json(base), 6) +
                  ", T = " + Number(json(train_length)) + ")",
              frequencies.table);
    }
    if (!options.plot_dir.empty()) {
      plot::DiagnosticsPlotOptions plot_options;
      plot_options.out_dir = options.plot_dir;
      plot_options.gnuplot = options.gnuplot;
      plot_options.title = "trial " + std::to_string(options.trial_id);
      StatusOr<std::vector<std::string>> files = plot::WriteDiagnosticsPlots(attention, extrapolation, plot_options);
      if (!files.ok()) {
        std::cerr << "rung diag: " << files.status().message() << "\n";
        return files.status().code() == StatusCode::kInvalidArgument ? kUsage : kFailure;
      }
      for (const std::string& file : *files) std::cerr << "wrote " << file << "\n";
      if (!frequencies.profiles.empty() && train_length > 0 && base > 1) {
        plot_options.title = "trial " + std::to_string(options.trial_id) + " (" + trial.assignments_json() + ")";
        StatusOr<std::vector<std::string>> profile =
            plot::WriteFrequencyProfilePlot(frequencies.profiles, base, train_length, plot_options);
        if (!profile.ok()) {
          std::cerr << "rung diag: " << profile.status().message() << "\n";
          return kFailure;
        }
        for (const std::string& file : *profile) std::cerr << "wrote " << file << "\n";
      }
    }
    return kOk;
  } catch (const json::exception& error) {
    std::cerr << "rung diag: trial " << options.trial_id
              << "'s diagnostics are not in the form rung-train writes them: " << error.what() << "\n";
    return kFailure;
  }
}

}  // namespace

void AddDiagCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<DiagOptions>();
  CLI::App* command = AddCommand<DiagOptions>(
      app, exit_code, "diag",
      "A trained model's attention diagnostics: effective attention length E_2, frequency-pair usage and its CV,\n"
      "effective base, dominant band, gap counting (Lambda, alpha, Delta, xi_Lambda with interval), the softmax\n"
      "regime, and validation beyond the training length. --plot DIR draws E_2 by position, pair-usage heatmaps,\n"
      "the gap-counting fit and per-position loss.",
      options, RunDiag);
  command->add_option("trial", options->trial_id, "Trial id")->required();
  command->add_option("--table", options->table, "heads, gaps, regime, extrapolation, frequencies or all")
      ->check(CLI::IsMember({"heads", "gaps", "regime", "extrapolation", "frequencies", "all"}));
  command->add_option("--plot", options->plot_dir, "Also draw the figures (SVG, PNG) into this folder")->type_name("DIR");
  command->add_option("--gnuplot", options->gnuplot, "gnuplot executable (default: gnuplot on PATH)")->type_name("PATH");
}

}  // namespace rung::cli

// coordinator/cli/commands/params_command.cc
//
// `rung params TRIAL [--name PREFIX]`: a trial's learned positional parameters
// (UserService.GetLearnedParameters): LeRoPE scales, AdaRoPE frequencies, tau, gamma, a learned
// beta; per tensor its name, kind, shape and first 8 values, and for a frequency table [rows, d/2]
// the effective base of each row, exp(-(4/(d-2)) sum_f ln theta_f) ("-" where a frequency is not
// positive).
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coordinator/client/command_registry.h"
#include "coordinator/cli/command_support.h"
#include "coordinator/cli/sweep_tables.h"
#include "coordinator/cli/text_table.h"

namespace rung::cli {
namespace {

namespace pb = rung::v1;

struct ParamsOptions {
  ConnectionOptions connection;
  std::string format = "table";
  int64_t trial_id = 0;
  std::string name_prefix;
};

// The effective base of each row of a frequency table, space-separated; "" for other tensors.
std::string EffectiveBases(const pb::Tensor& tensor) {
  const bool frequencies = (tensor.name().rfind("frequencies.", 0) == 0 || tensor.name().rfind("layer_", 0) == 0) &&
                           tensor.shape_size() == 2;
  if (!frequencies || tensor.shape(1) <= 1) return "";
  const int64_t pairs = tensor.shape(1);
  std::string bases;
  for (int64_t row = 0; row < tensor.shape(0); ++row) {
    double sum = 0;
    bool positive = true;
    for (int64_t f = 0; f < pairs; ++f) {
      const double theta = tensor.values(static_cast<int>(row * pairs + f));
      positive = positive && theta > 0;
      sum += positive ? std::log(theta) : 0.0;
    }
    bases += (bases.empty() ? "" : " ") + (positive ? Number(std::exp(-(4.0 / (2.0 * pairs - 2.0)) * sum), 5) : "-");
  }
  return bases;
}

int RunParams(CoordinatorConnection& connection, const ParamsOptions& options) {
  pb::GetLearnedParametersRequest request;
  request.add_trial_ids(options.trial_id);
  request.set_name_prefix(options.name_prefix);
  pb::GetLearnedParametersResponse response;
  grpc::Status status = connection.user().GetLearnedParameters(connection.Context().get(), request, &response);
  if (!status.ok()) return ReportRpcError("params", status);
  TextTable table({"name", "kind", "shape", "values", "effective_base"});
  for (const pb::LearnedParameter& parameter : response.parameters()) {
    const pb::Tensor& tensor = parameter.tensor();
    std::string shape, values;
    for (int64_t size : tensor.shape()) shape += (shape.empty() ? "" : "x") + std::to_string(size);
    for (int index = 0; index < tensor.values_size() && index < 8; ++index) {
      values += (index ? " " : "") + Number(tensor.values(index));
    }
    if (tensor.values_size() > 8) values += " ...";
    const std::string bases = EffectiveBases(tensor);
    nlohmann::json row = ToJson(parameter);
    if (!bases.empty()) row["effective_base"] = bases;
    table.AddRow(
        {tensor.name(), EnumText(pb::ParameterKind_Name(parameter.kind()), "PARAMETER_KIND_"), shape, values, bases},
        row);
  }
  table.Print(std::cout, options.format);
  return kOk;
}

void AddParamsCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<ParamsOptions>();
  CLI::App* command = AddCommand<ParamsOptions>(
      app, exit_code, "params",
      "A trial's learned positional parameters: LeRoPE scales, AdaRoPE frequencies, tau, gamma, learned beta, "
      "and its frequencies per layer with the effective base per head",
      options, RunParams);
  command->add_option("trial", options->trial_id, "Trial id")->required();
  command->add_option("--name", options->name_prefix, "Only names starting with this prefix");
}

}  // namespace

RUNG_CLI_COMMAND("params", kSweeps, AddParamsCommand);

}  // namespace rung::cli

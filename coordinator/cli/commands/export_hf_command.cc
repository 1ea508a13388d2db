// coordinator/cli/commands/export_hf_command.cc
//
// `rung export-hf --model CHECKPOINT --out DIR`: a rung checkpoint as a Hugging Face model folder
// (rung-model export-hf: coordinator/cli/model_tool.h).
#include "coordinator/cli/model_tool.h"
#include "coordinator/client/command_registry.h"

namespace rung::cli {
namespace {

void AddExportHfCommand(CLI::App& app, int* exit_code) {
  AddModelToolCommand(app, exit_code, "export-hf",
                      "Write a rung checkpoint as a Hugging Face model folder (rung export-hf --help)");
}

}  // namespace

RUNG_CLI_COMMAND("export-hf", kHere, AddExportHfCommand);

}  // namespace rung::cli

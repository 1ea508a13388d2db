// coordinator/cli/commands/failure_modes_command.cc
//
// `rung failure-modes --model DIR|CHECKPOINT [--layer L --head H --length M --query T --keys A,B,C]`:
// paper 003's appendix D.1 measurement of one head (rung-model failure-modes: coordinator/cli/model_tool.h).
#include "coordinator/cli/model_tool.h"
#include "coordinator/client/command_registry.h"

namespace rung::cli {
namespace {

void AddFailureModesCommand(CLI::App& app, int* exit_code) {
  AddModelToolCommand(app, exit_code, "failure-modes",
                      "Paper 003's measurement of one head of a Hugging Face folder or a rung checkpoint: RoPE's "
                      "failure modes on its own scores (rung failure-modes --help)");
}

}  // namespace

RUNG_CLI_COMMAND("failure-modes", kHere, AddFailureModesCommand);

}  // namespace rung::cli

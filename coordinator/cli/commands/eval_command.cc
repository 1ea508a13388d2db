// coordinator/cli/commands/eval_command.cc
//
// `rung eval --model DIR|CHECKPOINT --tokens SHARD|PREPARED --seq-len T ...`: the loss of a Hugging Face
// model folder or a rung checkpoint over windows of tokens (rung-model eval: coordinator/cli/model_tool.h).
#include "coordinator/cli/model_tool.h"
#include "coordinator/client/command_registry.h"

namespace rung::cli {
namespace {

void AddEvalCommand(CLI::App& app, int* exit_code) {
  AddModelToolCommand(app, exit_code, "eval",
                      "Loss of a Hugging Face model folder or a rung checkpoint over windows of tokens, and by position "
                      "(rung eval --help)");
}

}  // namespace

RUNG_CLI_COMMAND("eval", kHere, AddEvalCommand);

}  // namespace rung::cli

// tests/deploy/readme_blocks.h
//
// The code blocks of deploy/README.md that a test runs as written: each ```sh block that follows a
// marker `<!-- KIND: NAME -->` (e.g. `<!-- slurm-cluster-test: start -->`), by NAME, its text exactly
// (a line per line, each ending in '\n'). A block without a marker is left out; a missing file gives
// no blocks, which the caller reports when it asks for a name.
//
// Example:
//   std::map<std::string, std::string> blocks = ReadmeBlocks(source / "deploy" / "README.md", "slurm-cluster-test");
//   RunInShell(blocks.at("start"));
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace rung::deploy_test {

std::map<std::string, std::string> ReadmeBlocks(const std::filesystem::path& readme, const std::string& kind);

// Calls `condition` every `every` until it holds (true) or `timeout` has passed (false).
bool PollUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds every = std::chrono::milliseconds(200));

}  // namespace rung::deploy_test

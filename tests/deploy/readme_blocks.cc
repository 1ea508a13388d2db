// tests/deploy/readme_blocks.cc
#include "tests/deploy/readme_blocks.h"

#include <fstream>
#include <regex>
#include <thread>

namespace rung::deploy_test {

std::map<std::string, std::string> ReadmeBlocks(const std::filesystem::path& readme, const std::string& kind) {
  std::ifstream in(readme);
  std::map<std::string, std::string> blocks;
  const std::regex marker("<!-- " + kind + ": ([a-z-]+) -->");
  std::string line, name;
  bool inside = false;
  while (std::getline(in, line)) {
    std::smatch match;
    if (!inside && std::regex_search(line, match, marker)) {
      name = match[1];
    } else if (!inside && !name.empty() && line.rfind("```sh", 0) == 0) {
      inside = true;
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
      name.clear();
    } else if (inside) {
      blocks[name] += line + "\n";
    }
  }
  return blocks;
}

bool PollUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
               std::chrono::milliseconds every) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

}  // namespace rung::deploy_test

// tests/sweeps/plot_test_files.h: temporary folders and file contents for the tests of rung's figures
// (fit/gnuplot_plot_test.cc, plot/diagnostics_plot_test.cc).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rung::plot_testing {

// PREFIX<pid>_NAME below the temporary directory, removed with everything in it (not created again:
// the plotters create their output folder).
inline std::filesystem::path FreshDir(const std::string& prefix, const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / (prefix + std::to_string(getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  return dir;
}

// The whole file, byte for byte ("" where it cannot be read).
inline std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The names (without their folder) of the files a plotter wrote, in its order.
inline std::vector<std::string> FileNames(const std::vector<std::string>& paths) {
  std::vector<std::string> names;
  for (const std::string& path : paths) names.push_back(std::filesystem::path(path).filename().string());
  return names;
}

}  // namespace rung::plot_testing

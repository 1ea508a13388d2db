// tests/sweeps/plot_test_files.h: temporary folders and file contents for the tests of rung's figures
// (fit/gnuplot_plot_test.cc, plot/diagnostics_plot_test.cc).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace rung::plot_testing

#include "sweeps/plot/gnuplot_script.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/common/subprocess.h"

namespace rung::plot {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `gnuplot script` with stderr into `log`; its exit status, or a Status when it cannot start.
StatusOr<int> RunGnuplot(const std::string& gnuplot, const fs::path& script, const fs::path& log) {
  SubprocessOptions options;
  options.argv = {gnuplot, script.string()};
  options.stdin_from = Redirect::Null();
  options.stdout_to = Redirect::Null();
  options.stderr_to = Redirect::TruncateTo(log.string());
  StatusOr<SubprocessResult> result = Subprocess::Run(options);
  if (result.status().code() == StatusCode::kFailedPrecondition) {
    return Status::FailedPrecondition(result.status().message() + " (install gnuplot-nox: deploy/install-deps.sh)");
  }
  if (!result.ok()) return result.status();
  return result->exit.ShellCode();
}

}  // namespace

std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

std::string DoubleQuote(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') quoted += '\\';
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    quoted += c;
  }
  return quoted + "\"";
}

std::string EnhancedLiteral(const std::string& text) {
  std::string escaped;
  for (char c : text) {
    if (c != 0 && std::strchr("_^{}@&~\\", c)) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string SvgAndPngOutputs(const std::string& stem, int width, int height) {
  return SvgTerminal(width, height) + "\nset output " + Quote(stem + ".svg") + "\nreplot\nunset output\n" +
         PngTerminal(width, height) + "\nset output " + Quote(stem + ".png") + "\nreplot\nunset output\n";
}

std::string FileNamePart(const std::string& text) {
  std::string safe;
  for (char c : text) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return safe.empty() ? "default" : safe;
}

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

std::string SvgTerminal(int width, int height) {
  return "set terminal svg size " + std::to_string(width) + "," + std::to_string(height) +
         " dynamic enhanced font 'DejaVu Sans,16' background '#ffffff'";
}

std::string PngTerminal(int width, int height) {
  return "set terminal pngcairo size " + std::to_string(width) + "," + std::to_string(height) +
         " enhanced font 'DejaVu Sans,13' background '#ffffff'";
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return Status::InvalidArgument("cannot write " + path + ": " + std::strerror(errno));
  return Status::Ok();
}

Status MakeOutputFolder(const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("no output folder given");
  std::error_code error;
  fs::create_directories(dir, error);
  if (error || !fs::is_directory(dir)) {
    return Status::InvalidArgument("cannot create output folder " + dir + ": " + error.message());
  }
  return Status::Ok();
}

StatusOr<std::vector<std::string>> RenderGnuplot(const std::string& gnuplot, const std::string& dir,
                                                 const std::string& script_name, const std::string& script,
                                                 const std::vector<std::string>& outputs) {
  const fs::path folder(dir);
  const fs::path script_path = folder / script_name;
  RUNG_RETURN_IF_ERROR(WriteTextFile(script_path.string(), script));
  RUNG_ASSIGN_OR_RETURN(const int exit_code, RunGnuplot(gnuplot, script_path, folder / "gnuplot.log"));
  if (exit_code != 0) {
    return Status::Internal("gnuplot failed (exit " + std::to_string(exit_code) + ") on " +
                            script_path.string() + ":\n" + ReadFile(folder / "gnuplot.log"));
  }
  std::vector<std::string> files;
  for (const std::string& name : outputs) {
    fs::path file = folder / name;
    std::error_code error;
    if (!fs::exists(file, error) || fs::file_size(file, error) == 0) {
      return Status::Internal("gnuplot did not write " + file.string() + ":\n" + ReadFile(folder / "gnuplot.log"));
    }
    files.push_back(file.string());
  }
  return files;
}

}  // namespace rung::plot

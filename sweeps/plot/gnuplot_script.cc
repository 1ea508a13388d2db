#include "sweeps/plot/gnuplot_script.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/common/atomic_file.h"
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

std::string ReadableVariant(const std::string& variant) {
  std::vector<std::pair<std::string, std::string>> entries;  // (key, value) in the name's order
  if (!variant.empty() && variant.front() == '{') {
    const nlohmann::json object = nlohmann::json::parse(variant, nullptr, false);
    if (!object.is_object()) return variant;
    const nlohmann::json flat = object.flatten();  // {"/adarope/fixed_log": true, "/variant": "adarope"}
    for (auto entry = flat.begin(); entry != flat.end(); ++entry) {
      entries.emplace_back(entry.key(), entry->is_string() ? entry->get<std::string>() : entry->dump());
    }
  } else if (variant.find('=') != std::string::npos) {
    std::stringstream parts(variant);
    for (std::string part; std::getline(parts, part, ',');) {
      const size_t equals = part.find('=');
      entries.emplace_back(part.substr(0, equals), equals == std::string::npos ? "" : part.substr(equals + 1));
    }
  } else {
    return variant;
  }
  std::string position, others;
  for (auto& [key, value] : entries) {
    const size_t last = key.find_last_of("./");
    const std::string name = last == std::string::npos ? key : key.substr(last + 1);
    if (name == "variant") position = value;
    else if (!value.empty()) others += (others.empty() ? "" : " ") + name + "=" + value;  // "": unset
  }
  return position.empty() ? others : others.empty() ? position : position + " " + others;
}

std::string AxesLabel(const std::vector<std::pair<std::string, std::string>>& axes) {
  const bool labelled = std::any_of(axes.begin(), axes.end(), [](const auto& axis) {
    return axis.first == "label" && !axis.second.empty();
  });
  std::string label;
  for (const auto& [key, value] : axes) {
    if (value.empty()) continue;
    if (labelled && key != "label" && key != "seed") continue;
    if (key == "label") {
      label += (label.empty() ? "" : " ") + value;
      continue;
    }
    const std::string name = key.substr(key.rfind('.') == std::string::npos ? 0 : key.rfind('.') + 1);
    const std::string text = value.front() == '{' ? ReadableVariant(value) : name == "variant" ? value : name + " " + value;
    label += (label.empty() ? "" : " ") + text;
  }
  return label;
}

std::string FileNamePart(const std::string& text) {
  std::string safe;
  for (char c : text) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
  return safe.empty() ? "default" : safe;
}

int DecimalsToDistinguish(const std::vector<double>& values, int min_decimals, int max_decimals) {
  std::vector<double> finite;
  for (double value : values) {
    if (std::isfinite(value)) finite.push_back(value);
  }
  std::sort(finite.begin(), finite.end());
  int decimals = min_decimals;
  for (; decimals < max_decimals; ++decimals) {
    bool distinct = true;
    for (size_t i = 1; i < finite.size() && distinct; ++i) {
      if (finite[i] - finite[i - 1] <= 1e-9) continue;
      char a[64], b[64];
      std::snprintf(a, sizeof(a), "%.*f", decimals, finite[i - 1]);
      std::snprintf(b, sizeof(b), "%.*f", decimals, finite[i]);
      distinct = std::strcmp(a, b) != 0;
    }
    if (distinct) break;
  }
  return decimals;
}

namespace {

// "2×10^{12}" (enhanced text) for 2e12; "10^{12}" for 1e12; plain below 10^3 and above 10^-2.
std::string PowerLabel(double mantissa, int exponent) {
  if (exponent >= -2 && exponent <= 3) return Format("%g", mantissa * std::pow(10.0, exponent));
  const std::string power = "10^{" + std::to_string(exponent) + "}";
  return mantissa == 1 ? power : Format("%g", mantissa) + "×" + power;
}

}  // namespace

std::string LogAxis(const std::string& axis, double lo, double hi) {
  std::string lines = "set logscale " + axis + "\n";
  if (!(lo > 0) || !(hi > lo) || !std::isfinite(hi)) return lines;
  lines += "set " + axis + "range [" + Format("%.6e", lo) + ":" + Format("%.6e", hi) + "]\n";
  if (hi / lo >= 1000) return lines + "set format " + axis + " '10^{%L}'\nset m" + axis + "tics 10\n";
  // Candidates m x 10^k inside [lo, hi] for each set of mantissas, the coarsest with three or more.
  const int first = static_cast<int>(std::floor(std::log10(lo))), last = static_cast<int>(std::ceil(std::log10(hi)));
  std::vector<std::pair<double, std::string>> tics;
  for (const std::vector<double>& mantissas :
       {std::vector<double>{1, 2, 5}, std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
    tics.clear();
    for (int exponent = first; exponent <= last; ++exponent) {
      for (double mantissa : mantissas) {
        const double value = mantissa * std::pow(10.0, exponent);
        // Among every 1..9 x 10^k only 1, 2, 3 and 5 are labelled (the others are tics without a label).
        const bool labelled = mantissas.size() == 3 || mantissa == 1 || mantissa == 2 || mantissa == 3 || mantissa == 5;
        if (value >= lo * (1 - 1e-9) && value <= hi * (1 + 1e-9)) {
          tics.emplace_back(value, labelled ? PowerLabel(mantissa, exponent) : std::string());
        }
      }
    }
    if (tics.size() >= 3) break;
  }
  if (tics.size() < 3) {
    // Narrower than 1..9 x 10^k: evenly spaced round values (a step of 1, 2 or 5 x 10^j, three to
    // seven tics), each labelled m×10^k.
    tics.clear();
    const double span = hi - lo;
    double step = std::pow(10.0, std::floor(std::log10(span)));
    for (double factor : {0.1, 0.2, 0.5, 1.0}) {
      if (span / (step * factor) <= 7) {
        step *= factor;
        break;
      }
    }
    for (double value = std::ceil(lo / step) * step; value <= hi * (1 + 1e-12); value += step) {
      const int exponent = static_cast<int>(std::floor(std::log10(value) + 1e-12));
      const double mantissa = std::round(value / std::pow(10.0, exponent) * 1000) / 1000;
      tics.emplace_back(value, PowerLabel(mantissa, exponent));
    }
  }
  lines += "set " + axis + "tics (";
  for (size_t i = 0; i < tics.size(); ++i) {
    lines += (i ? ", " : "") + DoubleQuote(tics[i].second) + " " + Format("%.6e", tics[i].first);
  }
  return lines + ")\n";
}

std::string MessageFigure(const std::string& title, const std::string& message) {
  // Wrapped at spaces to lines of at most 70 characters (bytes), so a long reason stays on the canvas.
  std::string wrapped, line;
  std::istringstream paragraphs(message);
  for (std::string paragraph; std::getline(paragraphs, paragraph);) {
    std::istringstream words(paragraph);
    line.clear();
    for (std::string word; words >> word;) {
      if (!line.empty() && line.size() + 1 + word.size() > 70) {
        wrapped += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    wrapped += line + "\n";
  }
  if (!wrapped.empty()) wrapped.pop_back();
  return "reset\nset encoding utf8\nunset border\nunset tics\nunset key\nset xrange [0:1]\nset yrange [0:1]\n"
         "set title " + Quote(title) + " noenhanced\nset label 1 " + DoubleQuote(wrapped) +
         " at graph 0.5, graph 0.5 center noenhanced\nplot NaN notitle\n";
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
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(script_path.string(), {script}));
  // The staged copy: each output's quoted path in dir replaced by its path in the staging folder.
  static std::atomic<int> counter{0};
  const fs::path staging = folder / (".staging-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
  std::error_code error;
  fs::create_directories(staging, error);
  if (error) return Status::InvalidArgument("cannot create " + staging.string() + ": " + error.message());
  struct RemoveStaging {
    fs::path path;
    ~RemoveStaging() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } remove_staging{staging};
  std::string staged = script;
  for (const std::string& name : outputs) {
    const std::string from = Quote((folder / name).string()), to = Quote((staging / name).string());
    for (size_t at = staged.find(from); at != std::string::npos; at = staged.find(from, at + to.size())) {
      staged.replace(at, from.size(), to);
    }
  }
  const fs::path staged_script = staging / script_name;
  RUNG_RETURN_IF_ERROR(WriteFileAtomically(staged_script.string(), {staged}));
  // gnuplot's log is written in the staging folder too, then published like the figures: a link
  // named gnuplot.log in dir is written through, never truncated in place by the redirection.
  RUNG_ASSIGN_OR_RETURN(const int exit_code, RunGnuplot(gnuplot, staged_script, staging / "gnuplot.log"));
  const std::string log = ReadFile(staging / "gnuplot.log");
  RUNG_RETURN_IF_ERROR(WriteFileAtomically((folder / "gnuplot.log").string(), {log}));
  if (exit_code != 0) {
    return Status::Internal("gnuplot failed (exit " + std::to_string(exit_code) + ") on " + script_path.string() +
                            ":\n" + log);
  }
  for (const std::string& name : outputs) {
    const fs::path file = staging / name;
    if (!fs::exists(file, error) || fs::file_size(file, error) == 0) {
      return Status::Internal("gnuplot did not write " + (folder / name).string() + ":\n" + log);
    }
  }
  // Each figure written over its name in dir by the one output helper, as the script and data were:
  // a link there written through, a device in place, a read-only file refused.
  std::vector<std::string> files;
  for (const std::string& name : outputs) {
    const std::string bytes = ReadFile(staging / name);
    RUNG_RETURN_IF_ERROR(WriteFileAtomically((folder / name).string(), {bytes}));
    files.push_back((folder / name).string());
  }
  return files;
}

}  // namespace rung::plot

// sweeps/plot/gnuplot_script.h
//
// What every rung figure needs from gnuplot: quoting of strings in a script, the terminals, and
// running a script that was written beside its data files, checking that it produced the figures.
// A figure's script and data stay in the output folder so it can be redrawn by hand
// (`gnuplot <name>.gp`). Needs gnuplot with the pngcairo and svg terminals (Debian: gnuplot-nox).
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung::plot {

// A gnuplot single-quoted string ('' is a quote).
std::string Quote(const std::string& text);
// A gnuplot double-quoted string: backslash escapes, so "\n" in the value becomes a line break.
std::string DoubleQuote(const std::string& text);
// Literal text inside an enhanced-text string: _ ^ { } @ & ~ escaped.
std::string EnhancedLiteral(const std::string& text);
// A label (a rung's) as a file-name part: letters, digits, '-', '_', '.'; others become '_'.
std::string FileNamePart(const std::string& text);
// printf-style formatting of one number.
std::string Format(const char* format, double value);

// `set terminal svg|pngcairo ...` lines of the given size.
std::string SvgTerminal(int width, int height);
std::string PngTerminal(int width, int height);

// The lines that write the current plot to `stem`.svg and `stem`.png (`stem`: a path without its
// extension) at that size: each terminal, its output, replot.
std::string SvgAndPngOutputs(const std::string& stem, int width, int height);
// Writes `text` to `path`. INVALID_ARGUMENT when it cannot.
Status WriteTextFile(const std::string& path, const std::string& text);

// Creates `dir` if missing. INVALID_ARGUMENT when it cannot.
Status MakeOutputFolder(const std::string& dir);

// Writes `script` to dir/script_name, runs `gnuplot dir/script_name` (stderr into dir/gnuplot.log)
// and checks that each of `outputs` (names in dir) exists and is not empty. Returns their paths.
// FAILED_PRECONDITION: gnuplot not found; INTERNAL: gnuplot failed or wrote nothing (its stderr in
// the message).
StatusOr<std::vector<std::string>> RenderGnuplot(const std::string& gnuplot, const std::string& dir,
                                                 const std::string& script_name, const std::string& script,
                                                 const std::vector<std::string>& outputs);

}  // namespace rung::plot

// sweeps/plot/gnuplot_script.h
//
// What every rung figure needs from gnuplot: quoting of strings in a script, the terminals, and
// running a script that was written beside its data files, checking that it produced the figures.
// A figure's script and data stay in the output folder so it can be redrawn by hand
// (`gnuplot <name>.gp`). Needs gnuplot with the pngcairo and svg terminals (Debian: gnuplot-nox).
#pragma once

#include <string>
#include <utility>
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
// A variant's name as a figure shows it: the position variant first, then the other entries as
// key=value with the last part of each key. Takes the ladder's "position.variant=rope,data.x=2"
// names and the JSON of an object axis' value, {"adarope":{"fixed_log":true},"variant":"adarope"} ->
// "adarope fixed_log=true"; any other name as it is.
std::string ReadableVariant(const std::string& variant);
// A cell's axis values (dotted key, value as text; an object axis' value as its JSON) as a figure's
// key shows them: "variant" values alone, an object value as ReadableVariant reads it, any other as
// "<last part of the key> <value>", joined by spaces; values that are "" (an axis left unset) left out.
// {position.variant: lerope, train.extrapolation_yarn_c: 0.07} -> "lerope extrapolation_yarn_c 0.07".
// A `label` axis names its cell (sweeps/spec/sweep_axes.h): its value stands for every other axis
// but the seed, {label: "YaRN s=3", train.init.adarope_scale: 3, seed: 0} -> "YaRN s=3 seed 0".
std::string AxesLabel(const std::vector<std::pair<std::string, std::string>>& axes);
// printf-style formatting of one number.
std::string Format(const char* format, double value);

// The fewest decimals in [min_decimals, max_decimals] at which every two of `values` that differ by
// more than 1e-9 print differently with "%.*f": label precision chosen from the spread of the values
// (CM 1.003 beside 1.000 prints "1.003", not "1.00"). Non-finite values are ignored.
int DecimalsToDistinguish(const std::vector<double>& values, int min_decimals, int max_decimals);

// The lines that make `axis` ("x", "y") logarithmic over [lo, hi] (0 < lo < hi) with tics a reader
// can use: over three decades or more, the decades 10^k with minor tics; over a narrower range,
// explicit tics at 1, 2, 5 x 10^k (every 1..9 x 10^k, or evenly spaced round values, where those give
// fewer than three) labelled "2×10^{12}", so that no log axis shows a single tic.
std::string LogAxis(const std::string& axis, double lo, double hi);

// A figure with nothing to show: `title` at the top and `message` (literal text; its line breaks kept,
// its lines wrapped at 70 characters) centred on an empty canvas, no axes. Followed by SvgAndPngOutputs like any other plot.
std::string MessageFigure(const std::string& title, const std::string& message);

// `set terminal svg|pngcairo ...` lines of the given size.
std::string SvgTerminal(int width, int height);
std::string PngTerminal(int width, int height);

// The lines that write the current plot to `stem`.svg and `stem`.png (`stem`: a path without its
// extension) at that size: each terminal, its output, replot.
std::string SvgAndPngOutputs(const std::string& stem, int width, int height);
// Creates `dir` if missing. INVALID_ARGUMENT when it cannot.
Status MakeOutputFolder(const std::string& dir);

// Writes `script` to dir/script_name (the script as it is redrawn by hand) and runs a copy of it whose
// outputs (`outputs`: names in dir, written in the script as Quote(dir/name)) go to a staging folder
// inside dir (its stderr too, published as dir/gnuplot.log the same way as the figures); only when gnuplot succeeded and every output exists and is
// not empty are they written into dir, each by WriteFileAtomically (core/common/atomic_file.h: a link
// written through, a device in place, a read-only file or a folder refused). So a figure in dir is
// whole or absent (or its previous version): never empty, never half written. Returns their paths.
// The script and every data file of a figure are written the same way.
// INVALID_ARGUMENT: a path in dir it may not write; RESOURCE_EXHAUSTED: a full disk;
// FAILED_PRECONDITION: gnuplot not found; INTERNAL: gnuplot failed or wrote nothing (its stderr in
// the message).
StatusOr<std::vector<std::string>> RenderGnuplot(const std::string& gnuplot, const std::string& dir,
                                                 const std::string& script_name, const std::string& script,
                                                 const std::vector<std::string>& outputs);

}  // namespace rung::plot

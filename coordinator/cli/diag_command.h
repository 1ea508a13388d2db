// coordinator/cli/diag_command.h
//
// `rung diag TRIAL`: what rung-train measured on a trained model (docs/science.md sections 7 and 9), read
// from the coordinator (GetDiagnostics):
//   heads          per layer and head: effective attention length E_2 at positions T/8, T/2 and T,
//                  pair-usage coefficient of variation, effective base, dominant pair and its
//                  wavelength against the training length T
//   gaps           gap counting per layer on the unscaled score rows at the training length (rows,
//                  ties, mean Lambda, alpha, Delta) and xi_Lambda with its bootstrap interval
//   regime         the softmax regime at beta = c * Lambda: normalised entropy, max weight, top-two gap
//   extrapolation  validation loss at each evaluated multiple of T and extension method
//   frequencies    the rotary frequencies per layer and row against RoPE's b^(-f/pairs), and their
//                  wavelengths over T (a LeRoPE or AdaRoPE profile against RoPE's)
// --table picks one (table format prints all five; csv and json need one, default heads);
// --format json --table all prints the stored documents. --plot DIR also draws the figures of
// sweeps/plot/diagnostics_plot.h,
// and the frequency profile (wavelength against RoPE's).
#pragma once

#include <CLI/CLI.hpp>

namespace rung::cli {

void AddDiagCommand(CLI::App& app, int* exit_code);

}  // namespace rung::cli

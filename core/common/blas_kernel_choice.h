// core/common/blas_kernel_choice.h
//
// Which OpenBLAS kernel (its "core": Prescott, Haswell, SkylakeX, Cooperlake, ...) suits a
// processor, and whether the one OpenBLAS chose by itself should be replaced. OpenBLAS built with
// DYNAMIC_ARCH picks its core from the cpuid model number; a build older than the processor does not
// know the model and falls back to an older core (Debian 12's 0.3.21 runs Prescott, SSE3 kernels
// 3-5x slower, on some current Xeons). The choice here goes by the instruction sets the processor
// has instead of its model number. Pure functions: blas_kernel_startup.h acts on them, after checking
// each kernel's numerics in a child process.
//
// Kernels are ranked by the instruction-set generation of their single-precision kernels, which is
// what rung's CPU training runs (sgemm):
//   1 SSE-era (Prescott, Core2, Nehalem, Barcelona, ...)   2 AVX (Sandybridge, Bulldozer, ...)
//   3 AVX2 + FMA (Haswell, Zen)
//   4 AVX-512 (SkylakeX; and Cooperlake and SapphireRapids, whose sgemm is SkylakeX's: they add
//     bfloat16 kernels only, so OpenBLAS's SkylakeX is not replaced by them)
//
// Thread safety: reentrant.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/common/cpu_features.h"

namespace rung {

// Whether two OpenBLAS core names are the same (OpenBLAS compares them without case).
bool SameKernelName(std::string_view a, std::string_view b);

// The generation above of an OpenBLAS core name (as openblas_get_corename() spells it; case is
// ignored); 0 for a name not in the table (a core of another architecture, or of a newer OpenBLAS).
int KernelGeneration(std::string_view core);

// The kernels worth trying on `cpu`, best first: by the instruction sets it can use (Cooperlake
// before SkylakeX where the processor has AVX512_BF16), with the AVX2 fallbacks after the AVX-512
// ones (Zen before Haswell on AMD), then Sandybridge. Empty off x86-64 or without AVX.
std::vector<std::string> KernelCandidates(const CpuFeatures& cpu);

// What to do about the core OpenBLAS chose by itself.
struct KernelPlan {
  bool keep = true;                  // OpenBLAS's choice stands: nothing to try
  std::vector<std::string> to_try;   // otherwise the candidates of a later generation, best first
  std::string reason;                // why, in words ("OpenBLAS chose Prescott (SSE) on a processor with AVX-512")
};

// Keep OpenBLAS's `current` core when no candidate for `cpu` is of a later generation, or when
// `current` is a name not in the table (rung does not second-guess what it cannot rank); otherwise
// try the candidates of a later generation than `current`, best first.
KernelPlan PlanKernelChoice(const CpuFeatures& cpu, std::string_view current);

}  // namespace rung

// core/common/blas_kernel_startup.h
//
// rung chooses the OpenBLAS kernel of every program that links LibTorch (rung-train, the benches,
// the test executables that train or run the model). OpenBLAS reads OPENBLAS_CORETYPE once, when the
// library loads, before main; so the choice runs from a constructor (blas_kernel_at_start.cc) and,
// when it replaces OpenBLAS's own choice, executes the program again with OPENBLAS_CORETYPE set.
//
// What happens at start, in order:
//   1. Not OpenBLAS (reference BLAS, MKL, none): nothing; the report says which BLAS it is.
//   2. OPENBLAS_CORETYPE set by the user (not by rung): it wins, whatever it names; the report says
//      "set by the environment" and, when OpenBLAS does not know the name, what it runs instead.
//   3. RUNG_BLAS_KERNEL=keep: OpenBLAS's own choice, unchecked.
//   4. Otherwise PlanKernelChoice (blas_kernel_choice.h): OpenBLAS's core is kept unless the
//      processor has a later generation of kernel. The candidates are checked best first, each in
//      a child process (this same program, run with RUNG_BLAS_KERNEL_PROBE=KERNEL and
//      OPENBLAS_CORETYPE=KERNEL): the child reports the core OpenBLAS really ran and checks sgemm
//      against a plain loop (blas_sgemm_check.h). The first candidate that ran as asked and passed is
//      chosen; a crash or wrong numbers are said on stderr and the next one is tried. The verdicts
//      are cached per processor and OpenBLAS build (blas_kernel_cache.h), so later starts read a file
//      and spawn nothing. The program is then executed again (execv of /proc/self/exe, same argv,
//      before main and before any thread of ours) with OPENBLAS_CORETYPE=KERNEL and
//      RUNG_BLAS_KERNEL_CHOSEN=KERNEL, which tells the new image that rung, not the user, set it.
// Children inherit the chosen kernel through the environment and do not choose again.
//
// Environment: RUNG_BLAS_KERNEL = auto (the default) | keep. The tests' seams, which exercise the
// machinery on a processor OpenBLAS knows: RUNG_BLAS_KERNEL_TEST_START=KERNEL starts the program on
// KERNEL as if OpenBLAS had chosen it by itself (one execv more: OPENBLAS_CORETYPE=KERNEL, which is
// then not taken as the user's); RUNG_BLAS_KERNEL_TEST_FAULT=KERNEL:crash or KERNEL:wrong makes the
// check of KERNEL die of SIGSEGV or find a wrong value.
//
// Thread safety: ChooseBlasKernelAtStart runs once, before main; StartupBlasKernel() is read-only
// after that.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rung {

enum class BlasKernelSource {
  kNotChosen,    // this program does not choose (it does not link LibTorch)
  kNotOpenBlas,  // the BLAS is not OpenBLAS: rung did not choose its kernel
  kOpenBlas,     // OpenBLAS's own choice, the best generation for this processor (or none better passed)
  kRung,         // rung replaced OpenBLAS's choice
  kEnvironment,  // OPENBLAS_CORETYPE set by the user
  kKept,         // RUNG_BLAS_KERNEL=keep
};

// "not-chosen", "not-openblas", "openblas", "rung", "environment", "kept".
const char* BlasKernelSourceName(BlasKernelSource source);

// What this process runs on and why.
struct BlasKernelReport {
  BlasKernelSource source = BlasKernelSource::kNotChosen;
  std::string library;          // the shared object providing sgemm_ ("" when none)
  std::string kernel;           // openblas_get_corename() ("" when not OpenBLAS)
  std::string openblas_choice;  // the core OpenBLAS chose by itself, when rung replaced it
  std::string environment;      // OPENBLAS_CORETYPE as the user set it (kEnvironment)
  std::string reason;           // the plan's reason, or why nothing was chosen
  std::vector<std::string> notes;  // kernels that failed their check, a cache that could not be written, ...

  // One line for the first stderr line of a program: "kernel Cooperlake (chosen by rung: ...)".
  std::string Describe() const;
  // {"name", "source", "openblas_choice", "environment", "reason", "notes"} for the provenance.
  nlohmann::json ToJson() const;
};

// The choice described above; called once by the constructor of blas_kernel_at_start.cc with the
// program's argv. Returns, or executes the program again; in probe mode (RUNG_BLAS_KERNEL_PROBE) it
// runs the check and exits.
void ChooseBlasKernelAtStart(char** argv);

// This process's report: what ChooseBlasKernelAtStart found, or in a program that does not choose,
// kNotChosen with the kernel OpenBLAS runs.
const BlasKernelReport& StartupBlasKernel();

}  // namespace rung

// core/common/blas_kernel_at_start.cc
//
// The constructor that runs rung's BLAS kernel choice (blas_kernel_startup.h) in a program before
// main. Linked, as an object, into every program that links LibTorch (CMake: rung_choose_blas_kernel);
// glibc passes constructors the program's argc, argv and environment.
#include "core/common/blas_kernel_startup.h"

namespace {

__attribute__((constructor)) void ChooseBlasKernelBeforeMain(int /*argc*/, char** argv, char** /*envp*/) {
  rung::ChooseBlasKernelAtStart(argv);
}

}  // namespace

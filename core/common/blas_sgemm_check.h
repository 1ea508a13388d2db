// core/common/blas_sgemm_check.h
//
// The numerics check a BLAS kernel passes before rung keeps it (blas_kernel_startup.h): sgemm_ of
// the BLAS this process loaded (the libblas.so.3 LibTorch calls) against a plain double-precision
// loop, on shapes that reach the kernel's edge cases: a 1x1 product, sizes that are no multiple of
// any vector width, every combination of transposes LibTorch uses (NN, NT, TN, TT), beta = 0 and a
// beta that accumulates into C, and one product large enough to run on several threads.
//
// Run it in a child process: a kernel that crashes on this processor takes only the child with it.
//
// Thread safety: reentrant.
#pragma once

#include <string>

namespace rung {

struct SgemmCheckResult {
  bool found = false;             // the process has an sgemm_ to check
  bool passed = false;            // every product within tolerance
  double worst_error = 0;         // largest |C - reference| / (|alpha| sum |a||b| + |beta||C0| + 1e-30)
  std::string worst_case;         // the product with that error, e.g. "TN m=33 n=130 k=71 beta=0.5"
  std::string Describe() const;   // "sgemm matches a plain loop (worst relative error 1.2e-07)", ...
};

// Checks sgemm_; a relative error above 1e-4 (float accumulation gives about 1e-6) fails.
// `corrupt` perturbs one computed value before the comparison: the test seam for a wrong kernel.
SgemmCheckResult CheckSgemm(bool corrupt = false);

}  // namespace rung

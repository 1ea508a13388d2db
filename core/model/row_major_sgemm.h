// core/model/row_major_sgemm.h
//
// Single-precision matrix products on row-major blocks through the sgemm_ of the libblas.so.3 that
// LibTorch itself calls, for the CPU attention kernels (cpu_attention.h, tiled_attention.h): one BLAS
// call per block, without ATen's per-call dispatch. Exists only where the build found sgemm_
// (RUNG_HAVE_SGEMM on the kernels' source files, core/CMakeLists.txt); RowMajorSgemmAvailable() says so.
#pragma once

#include <cstdint>

namespace rung {

bool RowMajorSgemmAvailable();

// Row-major C[m, n] = op(A) op(B) + beta * C, op(X) = X or X^T; lda, ldb, ldc are the row strides of the
// stored matrices. Single-threaded when called from inside a parallel region (OpenMP BLAS).
// REQUIRES: RowMajorSgemmAvailable(); every size fits int.
void RowMajorSgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace rung

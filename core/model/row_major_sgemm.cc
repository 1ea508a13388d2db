#include "core/model/row_major_sgemm.h"

#include <cstdlib>

#ifdef RUNG_HAVE_SGEMM
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                       const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                       const float* beta, float* c, const int* ldc);
#endif

namespace rung {

bool RowMajorSgemmAvailable() {
#ifdef RUNG_HAVE_SGEMM
  return true;
#else
  return false;
#endif
}

// Column-major BLAS computes the row-major product as C^T = op(B)^T op(A)^T.
void RowMajorSgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
#ifdef RUNG_HAVE_SGEMM
  const char ta = transpose_a ? 'T' : 'N', tb = transpose_b ? 'T' : 'N';
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const int ldai = static_cast<int>(lda), ldbi = static_cast<int>(ldb), ldci = static_cast<int>(ldc);
  const float one = 1.0f;
  sgemm_(&tb, &ta, &ni, &mi, &ki, &one, b, &ldbi, a, &ldai, &beta, c, &ldci);
#else
  (void)transpose_a, (void)transpose_b, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)b, (void)ldb;
  (void)beta, (void)c, (void)ldc;
  std::abort();  // unreachable: callers check RowMajorSgemmAvailable()
#endif
}

}  // namespace rung

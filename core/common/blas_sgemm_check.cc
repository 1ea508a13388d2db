#include "core/common/blas_sgemm_check.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace rung {
namespace {

using SgemmFn = void (*)(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                         const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                         const float* beta, float* c, const int* ldc);

struct Shape {
  char transa, transb;
  int m, n, k;
  float beta;
};

// Column-major, as Fortran BLAS: op(A) is m x k, op(B) is k x n, C is m x n.
double CheckOne(SgemmFn sgemm, const Shape& s, std::mt19937& random, bool corrupt) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  const int a_rows = s.transa == 'N' ? s.m : s.k, a_cols = s.transa == 'N' ? s.k : s.m;
  const int b_rows = s.transb == 'N' ? s.k : s.n, b_cols = s.transb == 'N' ? s.n : s.k;
  // Leading dimensions larger than the rows, as sub-matrices of LibTorch's strided tensors have.
  const int lda = a_rows + 3, ldb = b_rows + 1, ldc = s.m + 2;
  std::vector<float> a(static_cast<size_t>(lda) * a_cols), b(static_cast<size_t>(ldb) * b_cols),
      c(static_cast<size_t>(ldc) * s.n);
  for (float& x : a) x = value(random);
  for (float& x : b) x = value(random);
  for (float& x : c) x = value(random);
  const std::vector<float> c0 = c;
  const float alpha = 1.25f;
  sgemm(&s.transa, &s.transb, &s.m, &s.n, &s.k, &alpha, a.data(), &lda, b.data(), &ldb, &s.beta, c.data(), &ldc);
  if (corrupt) c[0] += 1.0f;
  auto at_a = [&](int i, int l) { return s.transa == 'N' ? a[i + static_cast<size_t>(l) * lda] : a[l + static_cast<size_t>(i) * lda]; };
  auto at_b = [&](int l, int j) { return s.transb == 'N' ? b[l + static_cast<size_t>(j) * ldb] : b[j + static_cast<size_t>(l) * ldb]; };
  double worst = 0;
  for (int j = 0; j < s.n; ++j) {
    for (int i = 0; i < s.m; ++i) {
      double sum = 0, magnitude = 0;
      for (int l = 0; l < s.k; ++l) {
        sum += static_cast<double>(at_a(i, l)) * at_b(l, j);
        magnitude += std::fabs(static_cast<double>(at_a(i, l)) * at_b(l, j));
      }
      const size_t index = i + static_cast<size_t>(j) * ldc;
      const double expected = alpha * sum + static_cast<double>(s.beta) * c0[index];
      const double scale = std::fabs(alpha) * magnitude + std::fabs(s.beta * c0[index]) + 1e-30;
      const double error = std::isfinite(c[index]) ? std::fabs(c[index] - expected) / scale : INFINITY;
      if (!(error <= worst)) worst = error;
    }
  }
  // Columns past m in each of C's columns (the ldc padding) must be untouched.
  for (int j = 0; j < s.n; ++j) {
    for (int i = s.m; i < ldc; ++i) {
      const size_t index = i + static_cast<size_t>(j) * ldc;
      if (c[index] != c0[index]) worst = INFINITY;
    }
  }
  return worst;
}

}  // namespace

std::string SgemmCheckResult::Describe() const {
  char error[32];
  std::snprintf(error, sizeof(error), "%.2g", worst_error);
  if (!found) return "no sgemm_ in this process";
  if (passed) return std::string("sgemm matches a plain loop (worst relative error ") + error + ")";
  return std::string("sgemm differs from a plain loop: relative error ") + error + " in " + worst_case;
}

SgemmCheckResult CheckSgemm(bool corrupt) {
  SgemmCheckResult result;
  auto sgemm = reinterpret_cast<SgemmFn>(dlsym(RTLD_DEFAULT, "sgemm_"));
  if (sgemm == nullptr) return result;
  result.found = true;
  std::vector<Shape> shapes;
  for (char transa : {'N', 'T'}) {
    for (char transb : {'N', 'T'}) {
      shapes.push_back({transa, transb, 1, 1, 1, 0.0f});
      shapes.push_back({transa, transb, 7, 5, 3, 0.5f});
      shapes.push_back({transa, transb, 33, 130, 71, 0.0f});
      shapes.push_back({transa, transb, 64, 64, 64, 0.5f});
      shapes.push_back({transa, transb, 100, 17, 257, 0.0f});
    }
  }
  shapes.push_back({'N', 'N', 384, 320, 288, 0.0f});  // large enough for OpenBLAS to use its threads
  shapes.push_back({'T', 'N', 320, 384, 288, 0.5f});
  std::mt19937 random(20240520);
  bool first = true;
  for (const Shape& shape : shapes) {
    const double error = CheckOne(sgemm, shape, random, corrupt && first);
    first = false;
    if (!(error <= result.worst_error)) {
      result.worst_error = error;
      char where[96];
      std::snprintf(where, sizeof(where), "%c%c m=%d n=%d k=%d beta=%g", shape.transa, shape.transb, shape.m, shape.n,
                    shape.k, shape.beta);
      result.worst_case = where;
    }
  }
  result.passed = result.worst_error <= 1e-4;
  return result;
}

}  // namespace rung

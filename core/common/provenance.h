// core/common/provenance.h
//
// Facts about the process that a trial records so that its numbers can be traced: rung's git
// commit, the host, the BLAS library LibTorch is really calling (found at run time, not assumed)
// and its threading. Torch-free; the LibTorch version is added by core/train/runtime.h.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rung {

// The git commit rung was built from ("<sha>" or "<sha>-dirty" or "unknown").
const char* BuildCommit();

struct BlasInfo {
  std::string library_path;  // resolved path of the shared object providing sgemm_
  std::string config;        // openblas_get_config() when OpenBLAS, else ""
  std::string threading;     // "openmp", "pthreads", "sequential" or "unknown"
  bool optimized = false;    // false for the reference BLAS (about 15x slower)
};

BlasInfo DetectBlas();

// The resolved path of the shared object that defines `symbol` ("" for nullptr or none).
std::string SharedObjectPath(void* symbol);

// `name` as the BLAS that provides sgemm_ (the library LibTorch calls) or the libraries it depends on
// define it; nullptr when there is no sgemm_ or that BLAS has no such symbol. (A process can hold
// OpenBLAS and still call another BLAS: Debian's reference libblas.so.3 beside OpenBLAS's LAPACK.)
void* BlasSymbol(const char* name);

std::string HostName();

// Peak resident set size of this process so far, in bytes.
long PeakRssBytes();

// {"commit", "host", "blas": {...}} (callers add library versions and threads).
nlohmann::json BasicProvenance();

}  // namespace rung

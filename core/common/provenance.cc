#include "core/common/provenance.h"

#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace rung {

void* BlasSymbol(const char* name) {
  void* sgemm = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (sgemm == nullptr || dladdr(sgemm, &info) == 0 || info.dli_fname == nullptr) return nullptr;
  void* handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* symbol = dlsym(handle, name);
  dlclose(handle);  // a RTLD_NOLOAD handle: the library stays loaded
  return symbol;
}

std::string SharedObjectPath(void* symbol) {
  Dl_info dl{};
  if (symbol == nullptr || dladdr(symbol, &dl) == 0 || dl.dli_fname == nullptr) return "";
  char resolved[PATH_MAX];
  return realpath(dl.dli_fname, resolved) != nullptr ? resolved : dl.dli_fname;
}

BlasInfo DetectBlas() {
  BlasInfo info;
  info.library_path = SharedObjectPath(dlsym(RTLD_DEFAULT, "sgemm_"));
  using ConfigFn = char* (*)();
  using ParallelFn = int (*)();
  auto get_config = reinterpret_cast<ConfigFn>(BlasSymbol("openblas_get_config"));
  auto get_parallel = reinterpret_cast<ParallelFn>(BlasSymbol("openblas_get_parallel"));
  if (get_config != nullptr) {
    info.config = get_config();
    info.optimized = true;
  } else if (info.library_path.find("mkl") != std::string::npos ||
             info.library_path.find("blis") != std::string::npos) {
    info.optimized = true;
  }
  info.threading = "unknown";
  if (get_parallel != nullptr) {
    int mode = get_parallel();
    info.threading = mode == 0 ? "sequential" : mode == 1 ? "pthreads" : mode == 2 ? "openmp" : "unknown";
  }
  return info;
}

std::string HostName() {
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

long PeakRssBytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;
}

nlohmann::json BasicProvenance() {
  BlasInfo blas = DetectBlas();
  return {{"commit", BuildCommit()},
          {"host", HostName()},
          {"blas", {{"library", blas.library_path}, {"config", blas.config}, {"threading", blas.threading},
                    {"optimized", blas.optimized}}}};
}

}  // namespace rung

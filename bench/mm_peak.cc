// bench/mm_peak.cc
//
// rung-bench-mm: the practical fp32 matmul peak of this machine, through the same LibTorch and BLAS
// that rung-train uses. The throughput benchmark (bench/train_throughput.py) reports achieved
// training FLOP/s as a fraction of this figure, measured in the same run.
//
// Usage: rung-bench-mm [--threads N] [--size S] [--repeats R]
//   Sets N intra-op threads (default 1) and one inter-op thread, runs torch::mm on two S x S fp32
//   matrices (default 2048) twice untimed, then R times timed (default 7, at least 5), and prints one
//   JSON line: {"mm_gflops": median, "mm_gflops_max": best, "size": S, "threads": N,
//   "seconds": [...], "blas": [shared objects with "blas" in their path mapped into the process],
//   "kernel": the BLAS kernel and who chose it (core/common/blas_kernel_startup.h)}. Its first stderr line
//   names the kernel too. rung chooses the kernel here as in rung-train; OPENBLAS_CORETYPE forces one.
//   FLOPs of one product: 2 * S^3.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/common/blas_kernel_startup.h"

namespace {

// Paths of the mapped shared objects whose name mentions BLAS: which libblas.so.3 really loaded.
std::vector<std::string> LoadedBlas() {
  std::set<std::string> libs;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    std::string lower = path;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower.find("blas") != std::string::npos) libs.insert(path);
  }
  return {libs.begin(), libs.end()};
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

int Usage(const char* argv0) {
  std::cerr << "usage: " << argv0 << " [--threads N] [--size S] [--repeats R]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t threads = 1;
  int64_t size = 2048;
  int64_t repeats = 7;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      Usage(argv[0]);
      return 0;
    }
    if (i + 1 >= argc) return Usage(argv[0]);
    char* end = nullptr;
    long long value = std::strtoll(argv[++i], &end, 10);
    if (*end != '\0' || value <= 0) return Usage(argv[0]);
    if (arg == "--threads") {
      threads = value;
    } else if (arg == "--size") {
      size = value;
    } else if (arg == "--repeats") {
      repeats = std::max<long long>(value, 5);
    } else {
      return Usage(argv[0]);
    }
  }

  const rung::BlasKernelReport& kernel = rung::StartupBlasKernel();
  std::cerr << "rung-bench-mm: BLAS " << kernel.library << ", " << kernel.Describe() << "\n";
  torch::set_num_interop_threads(1);
  torch::set_num_threads(static_cast<int>(threads));
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  torch::Tensor a = torch::randn({size, size});
  torch::Tensor b = torch::randn({size, size});
  torch::Tensor c = torch::empty({size, size});

  for (int i = 0; i < 2; ++i) torch::mm_out(c, a, b);
  std::vector<double> seconds;
  for (int64_t i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    torch::mm_out(c, a, b);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted.size() % 2 ? sorted[sorted.size() / 2]
                                    : 0.5 * (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]);
  double flops = 2.0 * static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size);

  std::ostringstream out;
  out.precision(6);
  out << "{\"mm_gflops\": " << flops / median / 1e9 << ", \"mm_gflops_max\": " << flops / sorted.front() / 1e9
      << ", \"size\": " << size << ", \"threads\": " << torch::get_num_threads() << ", \"seconds\": [";
  for (std::size_t i = 0; i < seconds.size(); ++i) out << (i ? ", " : "") << seconds[i];
  out << "], \"blas\": [";
  std::vector<std::string> blas = LoadedBlas();
  for (std::size_t i = 0; i < blas.size(); ++i) out << (i ? ", " : "") << JsonString(blas[i]);
  out << "], \"kernel\": " << kernel.ToJson().dump() << "}";
  std::cout << out.str() << std::endl;
  return 0;
}

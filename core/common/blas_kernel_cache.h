// core/common/blas_kernel_cache.h
//
// The verdicts of rung's BLAS kernel checks (blas_kernel_startup.h), kept per processor and OpenBLAS
// build so that a program start after the first costs a file read, not a child process per kernel.
// One JSON file, UserCacheFolder()/blas-kernel.json:
//
//   {"version": 1, "entries": [{"key": "cpu=GenuineIntel family 6 model 207 ...;openblas=/usr/lib/...so;size=...;mtime=...",
//                               "checked_at": "2026-12-03 14:00:00Z",
//                               "verdicts": [{"kernel": "Cooperlake", "outcome": "passed", "ran": "Cooperlake",
//                                             "detail": "sgemm matches a plain loop (worst relative error 1.1e-07)"}]}]}
//
// Contract: the cache is a convenience, never trusted beyond its key. A file that is missing, over
// 1 MiB, not JSON or of the wrong shape, and any verdict with fields of the wrong type, count as not
// there (the kernels are checked again); reading never fails. Writing replaces this key's entry in
// what is readable and publishes the file atomically; concurrent writers lose nothing but each
// other's identical verdicts.
//
// Thread safety: reentrant (files are replaced whole).
#pragma once

#include <string>
#include <vector>

#include "core/common/status.h"

namespace rung {

// What the check in a child process found for one kernel.
struct KernelVerdict {
  enum class Outcome {
    kPassed,       // OpenBLAS ran this kernel and sgemm matched the plain loop
    kUnavailable,  // this OpenBLAS has no such kernel: asked for it, it ran another (`ran`)
    kWrong,        // sgemm gave wrong results
    kCrashed,      // the child died (a signal) or did not finish in time
  };
  std::string kernel;  // the kernel asked for
  Outcome outcome = Outcome::kUnavailable;
  std::string ran;     // the core OpenBLAS ran in the child ("" when it died before saying)
  std::string detail;  // the check's words, or how the child ended
};

const char* OutcomeName(KernelVerdict::Outcome outcome);

// UserCacheFolder()/blas-kernel.json, or "" without a cache folder.
std::string BlasKernelCachePath();

// The verdicts cached under `key` (empty when none or unreadable).
std::vector<KernelVerdict> ReadKernelVerdicts(const std::string& path, const std::string& key);

// Stores `verdicts` as the entry of `key`, dated `checked_at`. INTERNAL with the path and reason when
// the folder or file cannot be written.
Status WriteKernelVerdicts(const std::string& path, const std::string& key, const std::string& checked_at,
                           const std::vector<KernelVerdict>& verdicts);

}  // namespace rung

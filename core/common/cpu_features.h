// core/common/cpu_features.h
//
// What the processor can run, read from cpuid (and xgetbv: whether the operating system saves the
// AVX and AVX-512 registers, without which the instructions cannot be used). The BLAS kernel choice
// (blas_kernel_choice.h) decides from these features; a key made of them names the processor in
// the kernel cache. x86-64 only: elsewhere DetectCpuFeatures() returns an empty vendor and no feature.
//
// The decoding is a pure function of the raw registers (CpuidRegisters), so tests can feed it the
// registers recorded on other machines.
//
// Thread safety: reentrant.
#pragma once

#include <cstdint>
#include <string>

namespace rung {

// The cpuid leaves the decoding reads, as the instructions return them.
struct CpuidRegisters {
  uint32_t leaf0[4] = {0, 0, 0, 0};   // eax ebx ecx edx of leaf 0 (highest leaf, vendor string)
  uint32_t leaf1[4] = {0, 0, 0, 0};   // leaf 1 (family, model, stepping; SSE3, FMA, AVX, OSXSAVE)
  uint32_t leaf7[4] = {0, 0, 0, 0};   // leaf 7 subleaf 0 (AVX2, AVX-512 F/DQ/BW/VL, AMX)
  uint32_t leaf7_1[4] = {0, 0, 0, 0};  // leaf 7 subleaf 1 (AVX512_BF16)
  uint64_t xcr0 = 0;                   // xgetbv(0) when OSXSAVE, else 0
};

struct CpuFeatures {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", "HygonGenuine", ...; "" when not x86-64
  int family = 0;      // display family (base + extended)
  int model = 0;       // display model (extended model folded in, as Intel and AMD document)
  int stepping = 0;
  // Usable: the instruction set is present and the operating system saves its registers.
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512dq = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512_bf16 = false;
  bool amx = false;  // AMX tiles with BF16 (the processor's; no BLAS kernel here uses them yet)

  bool IsAmd() const { return vendor == "AuthenticAMD" || vendor == "HygonGenuine"; }
  // F, DQ, BW and VL together: what the SkylakeX kernels of OpenBLAS need.
  bool HasAvx512Kernels() const { return avx512f && avx512dq && avx512bw && avx512vl; }
  // "GenuineIntel family 6 model 207 stepping 2, avx2 fma avx512f ... " : the processor and its
  // features, one line; also the processor's part of the kernel cache key.
  std::string Describe() const;
};

CpuFeatures CpuFeaturesFromRegisters(const CpuidRegisters& registers);

// The registers of the processor this runs on (all zero where not x86-64).
CpuidRegisters ReadCpuidRegisters();

// CpuFeaturesFromRegisters(ReadCpuidRegisters()).
CpuFeatures DetectCpuFeatures();

}  // namespace rung

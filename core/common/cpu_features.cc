#include "core/common/cpu_features.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace rung {
namespace {

bool Bit(uint32_t value, int bit) { return ((value >> bit) & 1u) != 0; }

}  // namespace

std::string CpuFeatures::Describe() const {
  if (vendor.empty()) return "not x86-64";
  std::string text = vendor + " family " + std::to_string(family) + " model " + std::to_string(model) +
                     " stepping " + std::to_string(stepping) + ",";
  auto add = [&](bool present, const char* name) {
    if (present) text += std::string(" ") + name;
  };
  add(avx, "avx");
  add(avx2, "avx2");
  add(fma, "fma");
  add(avx512f, "avx512f");
  add(avx512dq, "avx512dq");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512_bf16, "avx512_bf16");
  add(amx, "amx_bf16");
  if (text.back() == ',') text += " no vector extensions rung looks for";
  return text;
}

CpuFeatures CpuFeaturesFromRegisters(const CpuidRegisters& registers) {
  CpuFeatures features;
  const uint32_t max_leaf = registers.leaf0[0];
  char vendor[13] = {0};
  std::memcpy(vendor, &registers.leaf0[1], 4);      // ebx
  std::memcpy(vendor + 4, &registers.leaf0[3], 4);  // edx
  std::memcpy(vendor + 8, &registers.leaf0[2], 4);  // ecx
  features.vendor = vendor;
  if (features.vendor.empty() || max_leaf < 1) return features;

  const uint32_t signature = registers.leaf1[0];
  const int base_family = static_cast<int>((signature >> 8) & 0xf);
  const int base_model = static_cast<int>((signature >> 4) & 0xf);
  const int extended_family = static_cast<int>((signature >> 20) & 0xff);
  const int extended_model = static_cast<int>((signature >> 16) & 0xf);
  features.stepping = static_cast<int>(signature & 0xf);
  features.family = base_family == 0xf ? base_family + extended_family : base_family;
  features.model = (base_family == 0x6 || base_family == 0xf) ? (extended_model << 4) + base_model : base_model;

  // The operating system must save the registers: XMM|YMM (bits 1, 2) for AVX, and opmask, ZMM_Hi256
  // and Hi16_ZMM (bits 5-7) for AVX-512; AMX tile state is bits 17-18.
  const uint32_t ecx1 = registers.leaf1[2];
  const bool osxsave = Bit(ecx1, 27);
  const uint64_t xcr0 = osxsave ? registers.xcr0 : 0;
  const bool os_avx = (xcr0 & 0x6) == 0x6;
  const bool os_avx512 = os_avx && (xcr0 & 0xe0) == 0xe0;
  const bool os_amx = (xcr0 & 0x60000) == 0x60000;

  features.avx = os_avx && Bit(ecx1, 28);
  features.fma = features.avx && Bit(ecx1, 12);
  if (max_leaf >= 7) {
    const uint32_t ebx7 = registers.leaf7[1];
    const uint32_t edx7 = registers.leaf7[3];
    features.avx2 = features.avx && Bit(ebx7, 5);
    features.avx512f = os_avx512 && Bit(ebx7, 16);
    features.avx512dq = os_avx512 && Bit(ebx7, 17);
    features.avx512bw = os_avx512 && Bit(ebx7, 30);
    features.avx512vl = os_avx512 && Bit(ebx7, 31);
    features.amx = os_amx && Bit(edx7, 22) && Bit(edx7, 24);  // AMX-BF16 and AMX-TILE
    // Subleaf 1 exists when subleaf 0's eax (the highest subleaf) is at least 1.
    if (registers.leaf7[0] >= 1) features.avx512_bf16 = features.avx512f && Bit(registers.leaf7_1[0], 5);
  }
  return features;
}

CpuidRegisters ReadCpuidRegisters() {
  CpuidRegisters registers;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return registers;
  registers.leaf0[0] = a, registers.leaf0[1] = b, registers.leaf0[2] = c, registers.leaf0[3] = d;
  if (a >= 1 && __get_cpuid(1, &a, &b, &c, &d) != 0) {
    registers.leaf1[0] = a, registers.leaf1[1] = b, registers.leaf1[2] = c, registers.leaf1[3] = d;
    if ((c >> 27) & 1u) {
      uint32_t low = 0, high = 0;
      __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
      registers.xcr0 = (static_cast<uint64_t>(high) << 32) | low;
    }
  }
  if (registers.leaf0[0] >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    registers.leaf7[0] = a, registers.leaf7[1] = b, registers.leaf7[2] = c, registers.leaf7[3] = d;
    if (registers.leaf7[0] >= 1) {
      __cpuid_count(7, 1, a, b, c, d);
      registers.leaf7_1[0] = a, registers.leaf7_1[1] = b, registers.leaf7_1[2] = c, registers.leaf7_1[3] = d;
    }
  }
#endif
  return registers;
}

CpuFeatures DetectCpuFeatures() { return CpuFeaturesFromRegisters(ReadCpuidRegisters()); }

}  // namespace rung

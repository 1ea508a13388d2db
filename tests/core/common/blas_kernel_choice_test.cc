// The BLAS kernel choice (core/common/blas_kernel_choice.h, cpu_features.h) on the cpuid registers
// of real machines and the core OpenBLAS 0.3.21 chose on them.
#include "core/common/blas_kernel_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/common/cpu_features.h"

namespace rung {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Recorded on the development VM of 2026-12-03 ("Intel(R) Xeon(R) Processor", family 6 model 167):
// AVX-512 with BF16 and AMX, enabled by the kernel (XCR0 0x600e7). OpenBLAS 0.3.21 chose SkylakeX.
CpuidRegisters XeonWithAvx512Bf16() {
  CpuidRegisters r;
  r.leaf0[0] = 0x24, r.leaf0[1] = 0x756e6547, r.leaf0[2] = 0x6c65746e, r.leaf0[3] = 0x49656e69;
  r.leaf1[0] = 0x000a0671, r.leaf1[1] = 0x00020800, r.leaf1[2] = 0xfffa3203, r.leaf1[3] = 0x1f8bfbff;
  r.leaf7[0] = 0x2, r.leaf7[1] = 0xf1bf2ffb, r.leaf7[2] = 0x1a415f46, r.leaf7[3] = 0x23c14010;
  r.leaf7_1[0] = 0x1c30;
  r.xcr0 = 0x600e7;
  return r;
}

// The VM of docs/performance.md, "BLAS" (family 6 model 207, Emerald Rapids): the same feature bits, another model number,
// which OpenBLAS 0.3.21 did not know: it chose Prescott.
CpuidRegisters EmeraldRapids() {
  CpuidRegisters r = XeonWithAvx512Bf16();
  r.leaf1[0] = 0x000c06f2;
  return r;
}

// A Skylake-SP (family 6 model 85): AVX-512 F/DQ/BW/VL, no BF16, no AMX.
CpuidRegisters SkylakeServer() {
  CpuidRegisters r = XeonWithAvx512Bf16();
  r.leaf1[0] = 0x00050654;
  r.leaf7[0] = 0x0, r.leaf7[3] = 0x00000000;
  r.leaf7_1[0] = 0;
  r.xcr0 = 0xe7;
  return r;
}

// A Haswell desktop (family 6 model 60): AVX2 and FMA, no AVX-512.
CpuidRegisters HaswellDesktop() {
  CpuidRegisters r = SkylakeServer();
  r.leaf0[0] = 0xd;
  r.leaf1[0] = 0x000306c3;
  r.leaf7[1] = 0x000027ab;  // AVX2 (bit 5), no AVX-512 bits
  r.xcr0 = 0x7;
  return r;
}

// An AMD EPYC of the Zen 3 generation (family 25 model 1): AVX2 and FMA.
CpuidRegisters Zen3() {
  CpuidRegisters r = HaswellDesktop();
  r.leaf0[1] = 0x68747541, r.leaf0[2] = 0x444d4163, r.leaf0[3] = 0x69746e65;  // "AuthenticAMD"
  r.leaf1[0] = 0x00a00f11;
  return r;
}

// A machine whose kernel does not save the AVX-512 registers (XCR0 without opmask and ZMM state):
// the instructions are there, but unusable.
CpuidRegisters Avx512DisabledByTheOs() {
  CpuidRegisters r = XeonWithAvx512Bf16();
  r.xcr0 = 0x7;
  return r;
}

TEST(CpuFeaturesTest, DecodesTheRecordedXeon) {
  const CpuFeatures cpu = CpuFeaturesFromRegisters(XeonWithAvx512Bf16());
  EXPECT_EQ(cpu.vendor, "GenuineIntel");
  EXPECT_EQ(cpu.family, 6);
  EXPECT_EQ(cpu.model, 167);
  EXPECT_EQ(cpu.stepping, 1);
  EXPECT_TRUE(cpu.avx && cpu.avx2 && cpu.fma);
  EXPECT_TRUE(cpu.HasAvx512Kernels());
  EXPECT_TRUE(cpu.avx512_bf16);
  EXPECT_TRUE(cpu.amx);
  EXPECT_EQ(cpu.Describe(),
            "GenuineIntel family 6 model 167 stepping 1, avx avx2 fma avx512f avx512dq avx512bw avx512vl "
            "avx512_bf16 amx_bf16");
}

TEST(CpuFeaturesTest, FoldsTheExtendedFamilyAndModel) {
  EXPECT_EQ(CpuFeaturesFromRegisters(EmeraldRapids()).model, 207);
  const CpuFeatures amd = CpuFeaturesFromRegisters(Zen3());
  EXPECT_EQ(amd.vendor, "AuthenticAMD");
  EXPECT_TRUE(amd.IsAmd());
  EXPECT_EQ(amd.family, 25);
  EXPECT_EQ(amd.model, 1);
}

TEST(CpuFeaturesTest, InstructionsTheOsDoesNotSaveAreNotUsable) {
  const CpuFeatures cpu = CpuFeaturesFromRegisters(Avx512DisabledByTheOs());
  EXPECT_TRUE(cpu.avx2);
  EXPECT_FALSE(cpu.avx512f);
  EXPECT_FALSE(cpu.avx512_bf16);
  EXPECT_FALSE(cpu.HasAvx512Kernels());
  EXPECT_FALSE(cpu.amx);
}

TEST(CpuFeaturesTest, NoRegistersMeansNoFeatures) {
  const CpuFeatures cpu = CpuFeaturesFromRegisters(CpuidRegisters{});
  EXPECT_EQ(cpu.vendor, "");
  EXPECT_FALSE(cpu.avx);
  EXPECT_THAT(KernelCandidates(cpu), IsEmpty());
  EXPECT_EQ(cpu.Describe(), "not x86-64");
}

TEST(CpuFeaturesTest, ThisMachineDecodesConsistently) {
  const CpuFeatures cpu = DetectCpuFeatures();
  // Every AVX-512 kernel feature implies AVX2 (no processor has one without the other).
  if (cpu.HasAvx512Kernels()) {
    EXPECT_TRUE(cpu.avx2);
  }
  if (cpu.avx2) {
    EXPECT_TRUE(cpu.avx);
  }
}

TEST(KernelGenerationTest, RanksOpenBlasCoreNamesAndIgnoresCase) {
  EXPECT_EQ(KernelGeneration("Prescott"), 1);
  EXPECT_EQ(KernelGeneration("Nehalem"), 1);
  EXPECT_EQ(KernelGeneration("Sandybridge"), 2);
  EXPECT_EQ(KernelGeneration("haswell"), 3);
  EXPECT_EQ(KernelGeneration("Zen"), 3);
  EXPECT_EQ(KernelGeneration("SKYLAKEX"), 4);
  // Their sgemm is SkylakeX's: they add bfloat16 kernels only.
  EXPECT_EQ(KernelGeneration("Cooperlake"), 4);
  EXPECT_EQ(KernelGeneration("SapphireRapids"), 4);
  EXPECT_EQ(KernelGeneration("NeoverseN1"), 0);
  EXPECT_EQ(KernelGeneration(""), 0);
}

TEST(KernelCandidatesTest, BestFirstByInstructionSets) {
  EXPECT_THAT(KernelCandidates(CpuFeaturesFromRegisters(XeonWithAvx512Bf16())),
              ElementsAre("Cooperlake", "SkylakeX", "Haswell", "Sandybridge"));
  EXPECT_THAT(KernelCandidates(CpuFeaturesFromRegisters(SkylakeServer())),
              ElementsAre("SkylakeX", "Haswell", "Sandybridge"));
  EXPECT_THAT(KernelCandidates(CpuFeaturesFromRegisters(HaswellDesktop())), ElementsAre("Haswell", "Sandybridge"));
  EXPECT_THAT(KernelCandidates(CpuFeaturesFromRegisters(Zen3())), ElementsAre("Zen", "Haswell", "Sandybridge"));
  EXPECT_THAT(KernelCandidates(CpuFeaturesFromRegisters(Avx512DisabledByTheOs())),
              ElementsAre("Haswell", "Sandybridge"));
}

TEST(PlanKernelChoiceTest, ReplacesPrescottOnTheProcessorOpenBlasDidNotKnow) {
  const KernelPlan plan = PlanKernelChoice(CpuFeaturesFromRegisters(EmeraldRapids()), "Prescott");
  EXPECT_FALSE(plan.keep);
  EXPECT_THAT(plan.to_try, ElementsAre("Cooperlake", "SkylakeX", "Haswell", "Sandybridge"));
  EXPECT_EQ(plan.reason, "OpenBLAS chose Prescott (SSE) on a processor with AVX-512");
}

TEST(PlanKernelChoiceTest, AnAvx2CoreOnAnAvx512ProcessorIsReplacedByTheAvx512Ones) {
  const KernelPlan plan = PlanKernelChoice(CpuFeaturesFromRegisters(XeonWithAvx512Bf16()), "Haswell");
  EXPECT_FALSE(plan.keep);
  EXPECT_THAT(plan.to_try, ElementsAre("Cooperlake", "SkylakeX"));
}

TEST(PlanKernelChoiceTest, KeepsTheBestGeneration) {
  for (const auto& [registers, core] :
       std::vector<std::pair<CpuidRegisters, std::string>>{{SkylakeServer(), "SkylakeX"},
                                                           {HaswellDesktop(), "Haswell"},
                                                           {Zen3(), "Zen"},
                                                           {Zen3(), "Haswell"},
                                                           {Avx512DisabledByTheOs(), "Haswell"},
                                                           // What OpenBLAS 0.3.21 chose on the recorded Xeon:
                                                           // Cooperlake's sgemm is the same code.
                                                           {XeonWithAvx512Bf16(), "SkylakeX"},
                                                           {XeonWithAvx512Bf16(), "SapphireRapids"}}) {
    const KernelPlan plan = PlanKernelChoice(CpuFeaturesFromRegisters(registers), core);
    EXPECT_TRUE(plan.keep) << core;
    EXPECT_THAT(plan.to_try, IsEmpty()) << core;
    EXPECT_THAT(plan.reason, HasSubstr("the best generation of kernel for this processor")) << core;
  }
}

TEST(PlanKernelChoiceTest, AnAmdProcessorTriesZenFirst) {
  const KernelPlan plan = PlanKernelChoice(CpuFeaturesFromRegisters(Zen3()), "Prescott");
  EXPECT_THAT(plan.to_try, ElementsAre("Zen", "Haswell", "Sandybridge"));
}

TEST(PlanKernelChoiceTest, AnUnrankedCoreIsKept) {
  const KernelPlan plan = PlanKernelChoice(CpuFeaturesFromRegisters(XeonWithAvx512Bf16()), "NeoverseV1");
  EXPECT_TRUE(plan.keep);
  EXPECT_EQ(plan.reason, "OpenBLAS runs its core NeoverseV1, which rung does not rank");
}

TEST(PlanKernelChoiceTest, AProcessorWithoutAvxKeepsWhatOpenBlasChose) {
  CpuidRegisters registers = HaswellDesktop();
  registers.xcr0 = 0x3;  // no YMM state: no AVX at all
  const KernelPlan plan = PlanKernelChoice(CpuFeaturesFromRegisters(registers), "Nehalem");
  EXPECT_TRUE(plan.keep);
  EXPECT_EQ(plan.reason, "OpenBLAS chose Nehalem (SSE), and this processor has no later kernel");
}

}  // namespace
}  // namespace rung

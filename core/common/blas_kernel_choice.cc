#include "core/common/blas_kernel_choice.h"

#include <strings.h>

#include <array>
#include <utility>

namespace rung {
namespace {

// OpenBLAS's x86-64 core names (driver/others/dynamic.c) and their generation.
constexpr std::array<std::pair<const char*, int>, 27> kGenerations = {{
    {"Unknown", 1},     {"Katmai", 1},      {"Coppermine", 1}, {"Northwood", 1},   {"Prescott", 1},
    {"Banias", 1},      {"Atom", 1},        {"Core2", 1},      {"Penryn", 1},      {"Dunnington", 1},
    {"Nehalem", 1},     {"Athlon", 1},      {"Opteron", 1},    {"Opteron_SSE3", 1}, {"Barcelona", 1},
    {"Nano", 1},        {"Bobcat", 1},      {"Sandybridge", 2}, {"Bulldozer", 2},  {"Piledriver", 2},
    {"Steamroller", 2}, {"Excavator", 2},   {"Haswell", 3},    {"Zen", 3},         {"SkylakeX", 4},
    {"Cooperlake", 4},  {"SapphireRapids", 4},
}};

const char* GenerationName(int generation) {
  switch (generation) {
    case 1: return "SSE";
    case 2: return "AVX";
    case 3: return "AVX2";
    case 4: return "AVX-512";
    default: return "unranked";
  }
}

}  // namespace

bool SameKernelName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

int KernelGeneration(std::string_view core) {
  for (const auto& [name, generation] : kGenerations) {
    if (SameKernelName(core, name)) return generation;
  }
  return 0;
}

std::vector<std::string> KernelCandidates(const CpuFeatures& cpu) {
  std::vector<std::string> candidates;
  if (cpu.HasAvx512Kernels()) {
    if (cpu.avx512_bf16) candidates.push_back("Cooperlake");
    candidates.push_back("SkylakeX");
  }
  if (cpu.avx2 && cpu.fma) {
    if (cpu.IsAmd()) candidates.push_back("Zen");
    candidates.push_back("Haswell");
  }
  if (cpu.avx) candidates.push_back("Sandybridge");
  return candidates;
}

KernelPlan PlanKernelChoice(const CpuFeatures& cpu, std::string_view current) {
  KernelPlan plan;
  const std::string name(current);
  const int now = KernelGeneration(current);
  if (now == 0) {
    plan.reason = "OpenBLAS runs its core " + name + ", which rung does not rank";
    return plan;
  }
  const std::vector<std::string> candidates = KernelCandidates(cpu);
  for (const std::string& candidate : candidates) {
    if (KernelGeneration(candidate) > now) plan.to_try.push_back(candidate);
  }
  const std::string chose = "OpenBLAS chose " + name + " (" + GenerationName(now) + ")";
  if (plan.to_try.empty()) {
    plan.reason = chose + (candidates.empty() ? ", and this processor has no later kernel"
                                              : ", the best generation of kernel for this processor");
    return plan;
  }
  plan.keep = false;
  plan.reason = chose + " on a processor with " + GenerationName(KernelGeneration(plan.to_try.front()));
  return plan;
}

}  // namespace rung

// sweeps/fit/synthetic_ladder.cc
#include "sweeps/fit/synthetic_ladder.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>

namespace rung::fit {
namespace {

uint64_t Fnv1a(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

// Labels in order of first appearance over the variants.
std::vector<std::string> LabelsInOrder(const std::vector<SyntheticVariant>& variants) {
  std::vector<std::string> labels;
  for (const SyntheticVariant& variant : variants) {
    for (const auto& [label, compute] : variant.points) {
      bool seen = false;
      for (const std::string& known : labels) seen = seen || known == label;
      if (!seen) labels.push_back(label);
    }
  }
  return labels;
}

}  // namespace

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t StudySeed(const std::string& setting_text, int64_t study) {
  return SplitMix64(Fnv1a(setting_text) ^ SplitMix64(static_cast<uint64_t>(study)));
}

namespace {

// variance x min(kMaxVarianceScale, df / chi^2_df); the variance as it is for df 0.
double ScaledVariance(double variance, int df, std::mt19937_64& generator) {
  if (df <= 0) return variance;
  std::chi_squared_distribution<double> chi_squared(df);
  return variance * std::min(kMaxVarianceScale, df / std::max(chi_squared(generator), 1e-12));
}

}  // namespace

LabelNoise ScaledByEstimateUncertainty(const LabelNoise& noise, std::mt19937_64& generator) {
  const double shared = ScaledVariance(noise.rho * noise.sigma * noise.sigma, noise.sigma_df, generator);
  const double own = ScaledVariance((1 - noise.rho) * noise.sigma * noise.sigma, noise.own_df, generator);
  LabelNoise drawn = noise;
  drawn.sigma = std::sqrt(shared + own);
  drawn.rho = shared + own > 0 ? shared / (shared + own) : 0;
  return drawn;
}

GapNoise ScaledByEstimateUncertainty(const GapNoise& noise, std::mt19937_64& generator) {
  GapNoise drawn = noise;
  drawn.sd = std::sqrt(ScaledVariance(noise.sd * noise.sd, noise.df, generator));
  return drawn;
}

LadderResults DrawSyntheticLadder(const SyntheticLadderModel& model, uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::vector<std::string> labels = LabelsInOrder(model.variants);
  LadderResults ladder;
  ladder.source = "synthetic";
  for (int s = 1; s <= model.seeds; ++s) {
    for (const std::string& label : labels) {
      auto given = model.label_noise.find(label);
      const LabelNoise noise = given != model.label_noise.end() ? given->second : LabelNoise{model.sigma, model.rho};
      const double shared_sd = std::sqrt(noise.rho) * noise.sigma;
      const double own_sd = std::sqrt(1 - noise.rho) * noise.sigma;
      const double u = shared_sd * normal(generator);
      // Each variant's draw at this label, in variant order; then the losses (a gap follows the
      // baseline's run, which may come later in the order).
      std::vector<std::pair<const SyntheticVariant*, double>> at_label;  // (variant, compute)
      std::vector<double> draws;
      for (const SyntheticVariant& variant : model.variants) {
        for (const auto& [point_label, compute] : variant.points) {
          if (point_label != label) continue;
          at_label.emplace_back(&variant, compute);
          draws.push_back(normal(generator));
        }
      }
      std::optional<std::pair<double, double>> baseline_run;  // (noise-free, drawn)
      for (size_t i = 0; i < at_label.size(); ++i) {
        const auto& [variant, compute] = at_label[i];
        if (variant->name != model.baseline) continue;
        const double clean = model.baseline_law.Predict(variant->multiplier * compute);
        baseline_run = std::make_pair(clean, clean + u + own_sd * draws[i]);
      }
      for (size_t i = 0; i < at_label.size(); ++i) {
        const auto& [variant, compute] = at_label[i];
        const double clean = model.baseline_law.Predict(variant->multiplier * compute);
        auto gap = model.gap_noise.find({variant->name, label});
        double loss = clean + u + own_sd * draws[i];
        if (gap != model.gap_noise.end() && baseline_run && variant->name != model.baseline) {
          loss = baseline_run->second + (clean - baseline_run->first) + gap->second.sd * draws[i];
        }
        ladder.runs.push_back({variant->name, label, compute, loss, s, std::nullopt, ""});
      }
    }
  }
  return ladder;
}

}  // namespace rung::fit

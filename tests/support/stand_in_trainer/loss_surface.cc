// tests/support/stand_in_trainer/loss_surface.cc
#include "tests/support/stand_in_trainer/loss_surface.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/config/model_arithmetic.h"

namespace rung::stand_in {
namespace {

using nlohmann::json;

constexpr double kTwoPi = 6.283185307179586476925286766559;
constexpr char kVariantOffset[] = "variant_offset";  // the one parameter that is an object

// One parameter: its key, where it lives, and the range it must lie in ("" when any number will do).
struct Parameter {
  const char* key;
  std::function<void(LossSurface&, double)> set;
  std::function<bool(double)> valid;
  const char* range;
};

std::vector<Parameter> Parameters() {
  auto positive = [](double value) { return value > 0; };
  auto non_negative = [](double value) { return value >= 0; };
  auto any = [](double) { return true; };
  return {
      {"lr_ref", [](LossSurface& s, double v) { s.lr_ref = v; }, positive, "> 0"},
      {"n_ref", [](LossSurface& s, double v) { s.n_ref = v; }, positive, "> 0"},
      {"exponent", [](LossSurface& s, double v) { s.exponent = v; }, any, ""},
      {"curvature", [](LossSurface& s, double v) { s.curvature = v; }, non_negative, ">= 0"},
      {"floor", [](LossSurface& s, double v) { s.floor = v; }, any, ""},
      {"noise", [](LossSurface& s, double v) { s.noise = v; }, non_negative, ">= 0"},
      {"initial", [](LossSurface& s, double v) { s.initial = v; }, any, ""},
      {"rate", [](LossSurface& s, double v) { s.rate = v; }, positive, "> 0"},
      {"diverge_above_lr", [](LossSurface& s, double v) { s.diverge_above_lr = v; }, positive, "> 0"},
      {"diverge_at", [](LossSurface& s, double v) { s.diverge_at = v; },
       [](double value) { return value > 0 && value <= 1; }, "in (0, 1]"},
      {"size_gain", [](LossSurface& s, double v) { s.size_gain = v; }, non_negative, ">= 0"},
      {"size_exponent", [](LossSurface& s, double v) { s.size_exponent = v; }, non_negative, ">= 0"},
      {"variant_noise", [](LossSurface& s, double v) { s.variant_noise = v; }, non_negative, ">= 0"},
      {"variant_noise_exponent", [](LossSurface& s, double v) { s.variant_noise_exponent = v; }, any, ""},
  };
}

}  // namespace

StatusOr<LossSurface> ParseLossSurface(std::string_view json_text) {
  LossSurface surface;
  if (json_text.find_first_not_of(" \t\r\n") == std::string_view::npos) return surface;
  const json object = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return Status::InvalidArgument("the loss surface must be a JSON object, e.g. {\"lr_ref\": 3e-3, \"noise\": 0}");
  }
  const std::vector<Parameter> parameters = Parameters();
  for (const auto& [key, value] : object.items()) {
    if (key == kVariantOffset) {
      if (!value.is_object()) {
        return Status::InvalidArgument(std::string("loss surface parameter '") + kVariantOffset +
                                       "' must be an object of variant names to nats, e.g. {\"lerope\": -0.01}, not " +
                                       value.type_name());
      }
      for (const auto& [variant, offset] : value.items()) {
        if (!offset.is_number() || !std::isfinite(offset.get<double>())) {
          return Status::InvalidArgument(std::string("loss surface parameter '") + kVariantOffset + "." + variant +
                                         "' must be a finite number, not " + offset.dump());
        }
        surface.variant_offset[variant] = offset.get<double>();
      }
      continue;
    }
    const Parameter* parameter = nullptr;
    for (const Parameter& candidate : parameters) {
      if (key == candidate.key) parameter = &candidate;
    }
    if (parameter == nullptr) {
      std::string known;
      for (const Parameter& candidate : parameters) known += std::string(known.empty() ? "" : ", ") + candidate.key;
      known += std::string(", ") + kVariantOffset;
      return Status::InvalidArgument("the loss surface has no parameter '" + key + "' (known: " + known + ")");
    }
    if (!value.is_number()) {
      return Status::InvalidArgument("loss surface parameter '" + key + "' must be a number, not " +
                                     value.type_name());
    }
    const double number = value.get<double>();
    if (!std::isfinite(number) || !parameter->valid(number)) {
      return Status::InvalidArgument("loss surface parameter '" + key + "' must be " +
                                     (parameter->range[0] != '\0' ? parameter->range : std::string("finite")) +
                                     ", not " + value.dump());
    }
    parameter->set(surface, number);
  }
  return surface;
}

json LossSurfaceToJson(const LossSurface& surface) {
  json object = {{"lr_ref", surface.lr_ref},       {"n_ref", surface.n_ref},
                 {"exponent", surface.exponent},   {"curvature", surface.curvature},
                 {"floor", surface.floor},         {"noise", surface.noise},
                 {"rate", surface.rate},           {"diverge_above_lr", surface.diverge_above_lr},
                 {"diverge_at", surface.diverge_at}};
  if (surface.initial) object["initial"] = *surface.initial;
  // The size and variant terms only when they add something: a surface without them reads (and
  // identifies its checkpoints) as it did before they existed.
  const LossSurface defaults;
  if (surface.size_gain != defaults.size_gain || surface.size_exponent != defaults.size_exponent) {
    object["size_gain"] = surface.size_gain;
    object["size_exponent"] = surface.size_exponent;
  }
  if (!surface.variant_offset.empty()) object[kVariantOffset] = surface.variant_offset;
  if (surface.variant_noise != defaults.variant_noise ||
      surface.variant_noise_exponent != defaults.variant_noise_exponent) {
    object["variant_noise"] = surface.variant_noise;
    object["variant_noise_exponent"] = surface.variant_noise_exponent;
  }
  return object;
}

double OptimalLearningRate(const LossSurface& surface, double n) {
  return surface.lr_ref * std::pow(n / surface.n_ref, -surface.exponent);
}

double TargetLoss(const LossSurface& surface, double lr, double n, std::string_view variant) {
  const double distance = std::log(lr) - std::log(OptimalLearningRate(surface, n));
  double target = surface.floor + surface.curvature * distance * distance;
  // Each term only when it is set, so that the default surface computes exactly what it always did.
  if (surface.size_gain != 0) target += surface.size_gain * std::pow(n / surface.n_ref, -surface.size_exponent);
  if (auto offset = surface.variant_offset.find(std::string(variant)); offset != surface.variant_offset.end()) {
    target += offset->second;
  }
  return target;
}

double VariantNoise(const LossSurface& surface, double n) {
  if (surface.variant_noise == 0) return 0;
  return surface.variant_noise * std::pow(n / surface.n_ref, surface.variant_noise_exponent);
}

bool Diverges(const LossSurface& surface, double lr) { return lr > surface.diverge_above_lr; }

int64_t DivergenceStep(const LossSurface& surface, int64_t steps) {
  const auto step = static_cast<int64_t>(std::ceil(surface.diverge_at * static_cast<double>(steps)));
  return std::max<int64_t>(1, std::min(step, steps));
}

NormalStream::NormalStream(uint64_t seed) : state_(seed) {}

NormalStream NormalStream::FromState(uint64_t state) {
  NormalStream stream;
  stream.state_ = state;
  return stream;
}

uint64_t NormalStream::NextBits() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double NormalStream::Next() {
  // u1 in (0, 1] so that its logarithm is finite; u2 in [0, 1).
  const double u1 = static_cast<double>((NextBits() >> 11) + 1) * 0x1.0p-53;
  const double u2 = static_cast<double>(NextBits() >> 11) * 0x1.0p-53;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double OffsetDraw(uint64_t seed) {
  // A stream of its own: the seed mixed with a constant, so the steps' stream never starts here.
  return NormalStream(seed ^ 0x6f66667365742d30ULL /* "offset-0" */).Next();
}

double VariantDraw(uint64_t seed, std::string_view variant, double n) {
  uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : variant) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  const auto count = static_cast<uint64_t>(std::llround(n));
  // Odd multipliers keep neighbouring seeds and sizes apart; SplitMix64 mixes the rest. The constant
  // ("variant-") keeps this stream off OffsetDraw's and the steps' for the same seed.
  const uint64_t state = (hash ^ 0x76617269616e742dULL) ^ (seed * 0x9e3779b97f4a7c15ULL) ^ (count * 0xc2b2ae3d27d4eb4fULL);
  return NormalStream(state).Next();
}

double TrialCurve::ValLoss(int64_t step) const {
  if (step >= steps) return final_loss;  // exactly, whatever the rounding of the weight
  const double progress = static_cast<double>(step) / static_cast<double>(steps);
  const double end = std::exp(-rate);
  const double weight = (std::exp(-rate * progress) - end) / (1.0 - end);
  return final_loss + (initial - final_loss) * weight;
}

double TrialCurve::TrainLoss(int64_t step, double z) const {
  if (divergence_step && step >= *divergence_step) return std::numeric_limits<double>::quiet_NaN();
  return ValLoss(step) + noise * z;
}

TrialCurve CurveForTrial(const LossSurface& surface, const TrialConfig& trial, int64_t steps) {
  TrialCurve curve;
  curve.lr = trial.train.lr;
  curve.n = static_cast<double>(CountParameters(trial.model).nonembedding());
  curve.lr_opt = OptimalLearningRate(surface, curve.n);
  curve.variant = trial.model.position.variant;
  curve.target = TargetLoss(surface, curve.lr, curve.n, curve.variant);
  curve.final_loss = curve.target + surface.noise * OffsetDraw(trial.seed);
  if (const double sd = VariantNoise(surface, curve.n); sd != 0) {
    curve.final_loss += sd * VariantDraw(trial.seed, curve.variant, curve.n);
  }
  curve.initial = surface.initial ? *surface.initial : std::log(static_cast<double>(trial.model.vocab_size));
  curve.noise = surface.noise;
  curve.rate = surface.rate;
  curve.steps = steps;
  if (Diverges(surface, curve.lr)) curve.divergence_step = DivergenceStep(surface, steps);
  return curve;
}

}  // namespace rung::stand_in

// tests/support/stand_in_trainer/loss_surface.h
//
// The loss surface rung-stand-in plays instead of training: a deterministic function of the trial
// config, so that what consumes a trainer's records (adaptive learning-rate search, divergence
// handling, the fits, the store) can be tested exactly and fast. Torch-free and protobuf-free.
//
// With N = the model's non-embedding parameter count (core/config/model_arithmetic.h), lr =
// train.lr (the peak learning rate; the schedule does not enter), S = the run's steps and s = the
// steps done (0..S):
//
//   lr_opt(N)      = lr_ref * (N / n_ref)^(-exponent)
//   target(lr, N, v) = floor + curvature * (ln lr - ln lr_opt(N))^2   a parabola in ln lr
//                    + size_gain * (N / n_ref)^(-size_exponent)        the loss falls with model size
//                    + variant_offset[v]                               v = position.variant (0 if absent)
//   final          = target(lr, N, v) + noise * z0                    z0: the seed's offset draw
//                    + variant_noise * (N / n_ref)^variant_noise_exponent * zv
//                                                                     zv: the (seed, v, N) draw
//   curve(s)       = final + (initial - final) * (exp(-rate s/S) - exp(-rate)) / (1 - exp(-rate))
//                    so curve(0) = initial and curve(S) = final exactly; initial defaults to
//                    ln(model.vocab_size), the loss of a uniform guess
//   val_loss(s)    = curve(s)                                         (evaluation steps, final)
//   train_loss(s)  = curve(s) + noise * z_s                           z_s: one draw per step
//   divergence     train.lr > diverge_above_lr: the training loss of step
//                  D = max(1, ceil(diverge_at * S)) is NaN (the trainer reports it and stops)
//
// z0 and z_s are standard normal draws seeded by the config's seed: the same config gives the same
// numbers, and trials that differ only in lr share z0 (the seed moves a trial's whole curve, not
// where its minimum in lr lies). zv is a draw of its own for each (seed, position.variant, N)
// (VariantDraw): two variants of one seed at one model size differ by it, so their paired gap has
// seed noise (z0 cancels in a gap), and a larger variant_noise_exponent makes the larger rungs
// noisier. z0 comes from its own stream (OffsetDraw); the z_s come in order
// from a NormalStream whose state a checkpoint saves, so a resumed run draws what an uninterrupted
// one would.
//
// Every parameter has a default (the fields below) and can be overridden by a JSON object (the
// stand-in reads it from RUNG_STAND_IN_SURFACE), e.g.
//   {"lr_ref": 3e-3, "n_ref": 1e5, "exponent": 0.5, "curvature": 0.3, "floor": 2.0, "noise": 0.01,
//    "diverge_above_lr": 1.0}
// and, for compute multipliers (a loss that falls with N, variants that differ, paired seed noise):
//   {"size_gain": 1.0, "size_exponent": 0.5, "variant_offset": {"lerope": -0.01},
//    "variant_noise": 0.002, "variant_noise_exponent": 2}
// variant_offset is the one parameter that is an object (variant name -> nats). The defaults (size_gain
// 0, no offsets, variant_noise 0) add nothing: the surface is then the parabola alone, as before.
//
// Example:
//   StatusOr<LossSurface> surface = ParseLossSurface(R"({"noise": 0})");
//   TrialCurve curve = CurveForTrial(*surface, trial, trial.train.steps);
//   double loss = curve.ValLoss(curve.steps);   // == TargetLoss(*surface, trial.train.lr, curve.n)
//
// Thread safety: plain values and pure functions; a NormalStream belongs to one thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/common/status.h"
#include "core/config/trial_config.h"

namespace rung::stand_in {

// The surface's parameters, with their defaults.
struct LossSurface {
  double lr_ref = 3e-3;            // the optimal lr of a model of n_ref non-embedding parameters; > 0
  double n_ref = 1e5;              // > 0
  double exponent = 0.5;           // lr_opt falls as N^-exponent
  double curvature = 0.3;          // nats per (ln lr - ln lr_opt)^2; >= 0
  double floor = 2.0;              // the loss at lr_opt, before noise
  double noise = 0.01;             // standard deviation of the seed's offset and of each train loss; >= 0
  std::optional<double> initial;   // the loss at step 0; unset: ln(model.vocab_size)
  double rate = 5.0;               // how fast the curve approaches the final value; > 0
  double diverge_above_lr = 1.0;   // a train.lr above this diverges; > 0
  double diverge_at = 0.5;         // ... at this fraction of the steps; in (0, 1]
  double size_gain = 0;            // nats at N = n_ref of the size term; >= 0
  double size_exponent = 0.5;      // the size term falls as N^-size_exponent; >= 0
  std::map<std::string, double> variant_offset;  // nats added to the target of a position.variant
  double variant_noise = 0;        // standard deviation of the (seed, variant, N) draw at N = n_ref; >= 0
  double variant_noise_exponent = 0;  // ... scaled by (N / n_ref)^variant_noise_exponent
};

// Reads overrides of the defaults from a JSON object ("" or only whitespace: the defaults).
// Errors: INVALID_ARGUMENT for text that is not a JSON object, an unknown key (the message lists the
// known ones), a value that is not a number, or one outside the range its field states.
StatusOr<LossSurface> ParseLossSurface(std::string_view json_text);

// Every parameter as a JSON object (`initial` only when set, and the size and variant terms only when
// they differ from their defaults, so a surface without them reads as it always has): what
// ParseLossSurface reads back.
nlohmann::json LossSurfaceToJson(const LossSurface& surface);

// lr_opt(N) above. REQUIRES: n > 0.
double OptimalLearningRate(const LossSurface& surface, double n);

// target(lr, N, v) above: the final loss without noise ("": no variant offset). REQUIRES: lr > 0, n > 0.
double TargetLoss(const LossSurface& surface, double lr, double n, std::string_view variant = "");

// The standard deviation of the variant draw at N: variant_noise * (N / n_ref)^variant_noise_exponent.
double VariantNoise(const LossSurface& surface, double n);

// Whether a run at peak learning rate `lr` diverges, and the step (1-based) whose training loss is
// then NaN. REQUIRES: steps >= 1.
bool Diverges(const LossSurface& surface, double lr);
int64_t DivergenceStep(const LossSurface& surface, int64_t steps);

// Standard normal draws from a 64-bit state (SplitMix64 for the uniforms, Box-Muller's cosine branch
// for each draw, two uniforms a draw): state() is everything there is to save, and FromState()
// continues the same sequence.
class NormalStream {
 public:
  explicit NormalStream(uint64_t seed);
  static NormalStream FromState(uint64_t state);
  double Next();
  uint64_t state() const { return state_; }

 private:
  NormalStream() = default;
  uint64_t NextBits();
  uint64_t state_ = 0;
};

// z0 of a seed: the first draw of a stream of its own (not the one the steps draw from).
double OffsetDraw(uint64_t seed);

// zv of (seed, variant, N): the first draw of a stream seeded by all three (FNV-1a of the variant,
// mixed with the seed and N rounded to an integer), apart from z0's and the steps' streams.
double VariantDraw(uint64_t seed, std::string_view variant, double n);

// The surface evaluated for one trial of `steps` steps.
struct TrialCurve {
  double lr = 0;               // train.lr
  double n = 0;                // non-embedding parameters
  double lr_opt = 0;           // OptimalLearningRate(surface, n)
  std::string variant;         // model.position.variant
  double target = 0;           // TargetLoss(surface, lr, n, variant)
  double final_loss = 0;       // target + noise * OffsetDraw(seed) + VariantNoise(n) * VariantDraw(...)
  double initial = 0;          // the loss at step 0
  double noise = 0;            // the surface's noise
  double rate = 0;
  int64_t steps = 0;
  std::optional<int64_t> divergence_step;  // set when lr diverges

  // curve(step) above: the validation loss after `step` steps. REQUIRES: 0 <= step <= steps.
  double ValLoss(int64_t step) const;
  // The training loss of `step` (1-based) given its draw z: ValLoss(step) + noise * z, or NaN at
  // the divergence step.
  double TrainLoss(int64_t step, double z) const;
};

// REQUIRES: the trial is resolved and valid (ParseTrialConfig), steps >= 1.
TrialCurve CurveForTrial(const LossSurface& surface, const TrialConfig& trial, int64_t steps);

}  // namespace rung::stand_in

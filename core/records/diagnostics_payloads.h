// core/records/diagnostics_payloads.h
//
// The measurements a trainer's `diagnostics` record carries (trainer_records.h, DiagnosticsRecord), one
// struct per kind, with the same Fields() contract as the records: the trainer fills them where it
// measures (core/diagnostics/attention_diagnostics.cc, core/train/evaluation.cc), the record's JSON
// line and the store's diagnostics table hold their JSON form, the wire (proto/rung.proto, the messages
// of the same names) carries them typed, and the CLI, the figures and the dashboard read their fields.
// proto/trainer_record_proto.h converts by field name and checks the two field for field.
//
//   attention      docs/science.md section 7 on a trained model, per layer and head: E_r by query
//                  position, frequency-pair usage and its pair-by-distance profile, the dominant band,
//                  gap counting (xi_Lambda, xi_alpha, xi_Delta) per layer and pooled, the softmax
//                  regime, RoPE's four failure modes per head, and xi_beta of a learned inverse
//                  temperature
//   niah_grid      needle-in-a-haystack accuracy by needle depth x distractors, per evaluated length
//   band_ablation  LeRoPE's leave-one-out: the loss with each pair's learned frequency reverted to RoPE's
//
// A double that was not measured (a bucket without rows, a mean over no samples) is NaN, written as
// null in JSON. A value written only when it applies, or that records of earlier releases lack, is a
// std::optional. The field names are the keys of the documents the store has kept since schema 1;
// the one older form it reads differently (gap counting before its buckets) is converted where it is
// read (coordinator/store/record_rows.h).
//
// Torch-free and protobuf-free. Thread safety: plain values.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace rung::records {

// One n of the gap-counting grid: the rows read at n (each row z[n - 1, 0..n) of one (sequence, layer,
// head) unit), the ties left out, and the mean logs of the rows counted (NaN when none).
struct GapCountingBucket {
  int64_t n = 0;
  int64_t rows = 0;
  int64_t ties = 0;
  double mean_log_lambda = std::numeric_limits<double>::quiet_NaN();
  double mean_log_alpha = std::numeric_limits<double>::quiet_NaN();
  double mean_log_delta = std::numeric_limits<double>::quiet_NaN();

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("n", self.n);
    field("rows", self.rows);
    field("ties", self.ties);
    field("mean_log_lambda", self.mean_log_lambda);
    field("mean_log_alpha", self.mean_log_alpha);
    field("mean_log_delta", self.mean_log_delta);
  }
};

// Lambda, alpha and Delta at the training length T: their means over the rows that are not ties.
struct GapCountingAtLength {
  int64_t n = 0;
  int64_t rows = 0;
  int64_t ties = 0;
  double lambda_mean = 0;
  double alpha_mean = 0;
  double delta_mean = 0;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("n", self.n);
    field("rows", self.rows);
    field("ties", self.ties);
    field("lambda_mean", self.lambda_mean);
    field("alpha_mean", self.alpha_mean);
    field("delta_mean", self.delta_mean);
  }
};

// The softmax of a row at beta = beta_over_lambda * Lambda, averaged over the rows at T.
struct SoftmaxRegimeAt {
  double beta_over_lambda = 0;
  double normalised_entropy = 0;
  double max_weight = 0;
  double top_two_gap = 0;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("beta_over_lambda", self.beta_over_lambda);
    field("normalised_entropy", self.normalised_entropy);
    field("max_weight", self.max_weight);
    field("top_two_gap", self.top_two_gap);
  }
};

// Gap counting over the grid (paper 004's aggregation): the exponents with their half-IQR intervals
// over units, set when the fit had enough buckets; per layer also the values at T and the regime.
// The counts are unset in records of releases before the aggregation, which gave xi_Lambda with a
// bootstrap interval instead (xi_lambda_ci_low, _high).
struct GapCounting {
  std::vector<GapCountingBucket> buckets;
  std::optional<int64_t> units;
  std::optional<int64_t> rows;
  std::optional<int64_t> ties;
  std::optional<double> tie_share;
  std::optional<double> xi_lambda;
  std::optional<double> xi_lambda_half_iqr;
  std::optional<double> xi_alpha;
  std::optional<double> xi_alpha_half_iqr;
  std::optional<double> xi_delta;
  std::optional<double> xi_delta_half_iqr;
  std::optional<GapCountingAtLength> at_training_length;  // a layer's; not the pooled fit's
  std::vector<SoftmaxRegimeAt> softmax_regime;            // a layer's, one per multiple
  std::optional<double> xi_lambda_ci_low;                 // early releases' interval of xi_lambda
  std::optional<double> xi_lambda_ci_high;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("buckets", self.buckets);
    field("units", self.units);
    field("rows", self.rows);
    field("ties", self.ties);
    field("tie_share", self.tie_share);
    field("xi_lambda", self.xi_lambda);
    field("xi_lambda_half_iqr", self.xi_lambda_half_iqr);
    field("xi_alpha", self.xi_alpha);
    field("xi_alpha_half_iqr", self.xi_alpha_half_iqr);
    field("xi_delta", self.xi_delta);
    field("xi_delta_half_iqr", self.xi_delta_half_iqr);
    field("at_training_length", self.at_training_length);
    field("softmax_regime", self.softmax_regime);
    field("xi_lambda_ci_low", self.xi_lambda_ci_low);
    field("xi_lambda_ci_high", self.xi_lambda_ci_high);
  }
};

// RoPE's failure modes of one head at one context length and precision. `procedure` "appendix_d1": paper
// 003's measurement (core/diagnostics/appendix_d1.h: the model's own score rows over [key] x M [query],
// aliasing at the precision's resolution, one sample); "" in records of earlier releases, which rotated
// one frozen pair per sequence out and counted scores equal after rounding (means over `samples`).
struct HeadFailureModes {
  int64_t length = 0;
  std::string precision;  // bf16 | fp16 | fp32
  std::string procedure;
  int64_t samples = 0;
  double position_inversion = 0;
  double position_inversion_deviation = 0;
  double position_aliasing_fraction = 0;
  double position_aliasing_pairs = 0;
  double token_inversion = 0;
  double token_aliasing = 0;
  // Pairs of distances aliasing for both related keys (appendix_d1); NaN (null) in earlier records.
  double attention_invariance = std::numeric_limits<double>::quiet_NaN();

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("length", self.length);
    field("precision", self.precision);
    field("procedure", self.procedure);
    field("samples", self.samples);
    field("position_inversion", self.position_inversion);
    field("position_inversion_deviation", self.position_inversion_deviation);
    field("position_aliasing_fraction", self.position_aliasing_fraction);
    field("position_aliasing_pairs", self.position_aliasing_pairs);
    field("token_inversion", self.token_inversion);
    field("token_aliasing", self.token_aliasing);
    field("attention_invariance", self.attention_invariance);
  }
};

// One head of one layer.
struct AttentionHead {
  int64_t head = 0;
  std::vector<double> effective_length_by_position;  // E_r at each query position
  std::vector<double> pair_usage;                    // u_f per pair
  double pair_usage_cv = 0;
  std::vector<std::vector<double>> pair_profile;  // [pair][distance bin] (NaN: no visible pair there)
  // Rotary variants: the pair whose contribution varies most with distance, its wavelength (infinite
  // for a zero frequency) and that over the training length, and the effective base.
  std::optional<int64_t> dominant_pair;
  std::optional<double> dominant_wavelength;
  std::optional<double> dominant_wavelength_over_training_length;
  std::optional<double> effective_base;
  std::vector<HeadFailureModes> failure_modes;  // per (length, precision); empty unless asked

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("head", self.head);
    field("effective_length_by_position", self.effective_length_by_position);
    field("pair_usage", self.pair_usage);
    field("pair_usage_cv", self.pair_usage_cv);
    field("pair_profile", self.pair_profile);
    field("dominant_pair", self.dominant_pair);
    field("dominant_wavelength", self.dominant_wavelength);
    field("dominant_wavelength_over_training_length", self.dominant_wavelength_over_training_length);
    field("effective_base", self.effective_base);
    field("failure_modes", self.failure_modes);
  }
};

struct AttentionLayer {
  int64_t layer = 0;
  std::vector<AttentionHead> heads;
  GapCounting gap_counting;
  std::vector<int64_t> pair_profile_edges;  // the distance bins' edges; empty without a profile

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("layer", self.layer);
    field("heads", self.heads);
    field("gap_counting", self.gap_counting);
    field("pair_profile_edges", self.pair_profile_edges);
  }
};

// xi_beta of a learned inverse-temperature table, fitted one way (core/diagnostics/beta_exponent.h).
struct BetaExponentFitRecord {
  bool fitted = false;
  double xi = 0;        // NaN unless fitted
  double standard_error = 0;  // the slope's OLS standard error; NaN below three points (two determine
                              // the line). Records of releases that kept 0.6745 times it as "half_iqr"
                              // are converted where they are read (coordinator/store/record_rows.h).
  double log_a1 = 0;
  std::vector<int64_t> lengths;  // the lengths fitted, when 16 or fewer (else empty)
  int64_t points = 0;
  int64_t skipped = 0;
  std::optional<int64_t> trim;  // the trim fit's first length

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("fitted", self.fitted);
    field("xi", self.xi);
    field("standard_error", self.standard_error);
    field("log_a1", self.log_a1);
    field("lengths", self.lengths);
    field("points", self.points);
    field("skipped", self.skipped);
    field("trim", self.trim);
  }
};

struct InverseTemperatureRecord {
  BetaExponentFitRecord xi_beta_grid;
  BetaExponentFitRecord xi_beta_trim;
  int64_t table_length = 0;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("xi_beta_grid", self.xi_beta_grid);
    field("xi_beta_trim", self.xi_beta_trim);
    field("table_length", self.table_length);
  }
};

// The `attention` diagnostics of one milestone.
struct AttentionDiagnostics {
  std::vector<AttentionLayer> layers;
  GapCounting pooled;        // every layer's rows pooled per n
  std::vector<int64_t> grid;  // the n-grid used
  bool grid_fallback = false;  // the paper's grid did not fit T: a geometric one
  int64_t sequences = 0;  // all the batches'
  int64_t length = 0;  // the evaluated length: T, or `multiple` x T
  double renyi_order = 2;
  int64_t bootstrap = 0;
  // The bootstrap's unit, "batch" or "sequence" (in one layer and head), and the evaluation batches the
  // sequences came in; records of releases before them: (sequence, layer, head) units, one batch.
  std::optional<std::string> bootstrap_unit;
  std::optional<int64_t> batches;
  // What the heads' pair_profile averages: "all_pairs" (every sampled query row and its visible keys)
  // or "query_key" (one pair per sequence, the last query and a designated key: NRW's QUERY and
  // NEEDLE); records before it: all_pairs.
  std::optional<std::string> pair_profile_reading;
  std::optional<std::string> warning;
  std::optional<InverseTemperatureRecord> inverse_temperature;  // the `learned` temperature only
  std::string milestone;                                       // "end", or the fraction / step asked
  // Measured beyond the training length (train.diagnostics_multiples): `length` is this multiple of it,
  // under the length-extension `method` ("none": the model as trained). Absent at the training length.
  std::optional<int64_t> multiple;
  std::optional<std::string> method;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("layers", self.layers);
    field("pooled", self.pooled);
    field("grid", self.grid);
    field("grid_fallback", self.grid_fallback);
    field("sequences", self.sequences);
    field("length", self.length);
    field("renyi_order", self.renyi_order);
    field("bootstrap", self.bootstrap);
    field("warning", self.warning);
    field("inverse_temperature", self.inverse_temperature);
    field("milestone", self.milestone);
    field("bootstrap_unit", self.bootstrap_unit);
    field("batches", self.batches);
    field("pair_profile_reading", self.pair_profile_reading);
    field("multiple", self.multiple);
    field("method", self.method);
  }
};

// One evaluated length of the needle grid: accuracy and distractors placed, [depth][distractors].
struct NiahGridAtLength {
  int64_t multiple = 1;
  int64_t length = 0;
  std::string method;                        // the length-extension method
  std::vector<std::vector<double>> accuracy;  // NaN: a cell without answers
  std::vector<std::vector<double>> placed;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("multiple", self.multiple);
    field("length", self.length);
    field("method", self.method);
    field("accuracy", self.accuracy);
    field("placed", self.placed);
  }
};

struct NiahGridDiagnostics {
  std::vector<double> depths;        // the needle's depth in the context, 0 .. 1
  std::vector<int64_t> distractors;  // distractors asked, 0 .. max
  int64_t instances = 0;             // per cell
  std::vector<NiahGridAtLength> grids;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("depths", self.depths);
    field("distractors", self.distractors);
    field("instances", self.instances);
    field("grids", self.grids);
  }
};

struct BandAblationPair {
  int64_t pair = 0;
  double rope_theta = 0;  // the frequency it was reverted to
  double loss = 0;        // the loss with it reverted to RoPE's frequency
  double delta = 0;       // loss - the trained loss
  // The loss with the band zeroed (its query and key components, so its logit contribution: LeRoPE
  // appendix D.1's ablation), and that loss - the trained loss; absent from records written before it.
  std::optional<double> zeroed_loss;
  std::optional<double> zeroed_delta;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("pair", self.pair);
    field("rope_theta", self.rope_theta);
    field("loss", self.loss);
    field("delta", self.delta);
    field("zeroed_loss", self.zeroed_loss);
    field("zeroed_delta", self.zeroed_delta);
  }
};

struct BandAblationDiagnostics {
  int64_t sequences = 0;  // validation sequences measured
  double loss = 0;        // the trained model's loss on them
  std::vector<BandAblationPair> pairs;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("sequences", self.sequences);
    field("loss", self.loss);
    field("pairs", self.pairs);
  }
};

// One query head's influence (AdaRoPE appendix B.3's Delta_h): the loss increase when its AdaRoPE
// parameters are reset to their values when the trial began (its start: as initialised, or as
// train.init left them), the rest of the model as trained.
struct HeadInfluence {
  int64_t layer = 0;
  int64_t head = 0;                  // the query head
  std::optional<double> all;         // AdaFreq and AdaScale reset together
  std::optional<double> frequency;   // AdaFreq alone: the head's log-frequencies (or log-base)
  std::optional<double> scale;       // AdaScale alone: the head's tau and gamma

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("layer", self.layer);
    field("head", self.head);
    field("all", self.all);
    field("frequency", self.frequency);
    field("scale", self.scale);
  }
};

struct HeadInfluenceDiagnostics {
  int64_t sequences = 0;         // validation sequences measured
  int64_t length = 0;            // their length (the trial's training length)
  double loss = 0;               // the trained model's loss on them
  // What one reset covers where parameters are shared: AdaFreq's "kv_group" (a query head shares its
  // KV group's frequencies), "layer" or "model"; AdaScale's "head", "layer" or "model". Heads sharing a
  // unit report the same influence.
  std::string frequency_unit;
  std::string scale_unit;
  std::vector<HeadInfluence> heads;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("sequences", self.sequences);
    field("length", self.length);
    field("loss", self.loss);
    field("frequency_unit", self.frequency_unit);
    field("scale_unit", self.scale_unit);
    field("heads", self.heads);
  }
};

}  // namespace rung::records

// core/records/trainer_records.h
//
// The records a trainer (rung-train, or the stand-in trainer of the tests and benchmarks) prints on
// stdout, one JSON object per line, told apart by "type". This header is the one definition of
// every record's fields: the trainer emits through it, the worker agent decodes each line once with
// it, the wire (proto/rung.proto, TrainerRecord and the messages it holds) carries the same fields
// under the same names (proto/trainer_record_proto.h converts by those names, and
// tests/proto/trainer_record_proto_test.cc checks the two field for field), and the
// coordinator stores what the typed records say; nobody else parses a trainer's lines.
//
//   provenance   who trained what: rung's commit, LibTorch, BLAS, threads, host, device, the
//                resolved config, the data (with its SHA-256), parameter counts, FLOPs per token,
//                the run's steps, where it starts (a resumed run: start_step > 0) and its world size.
//                The first record of every attempt; the trial becomes RUNNING with it.
//   step         every train.log_every steps and on evaluation steps: position (step, tokens, FLOPs
//                6 N_nonembedding D and with attention, elapsed training seconds) and the metrics
//                (lr, train_loss, gradient norms, throughput; val_loss, val_accuracy on evaluation
//                steps). `replayed`: a resumed run printing again the steps its checkpoint
//                remembers (the store keeps one value per step, from the newest attempt).
//   checkpoint   a checkpoint was published: step, path, reason (periodic, final, signal, ...)
//   diagnostics  `kind` ("attention", "attention_beyond", "niah_grid", "band_ablation", "head_influence"), `step` (and `milestone`, a name for
//                the point of training), `layer`/`head` where it is about one, and the measurement,
//                typed, in the member named as the kind (diagnostics_payloads.h).
//                Keyed by (kind, step, layer, head): a trial may report several.
//   final        the end of a run: validation loss (whole and per position), the learned positional
//                parameters (tensors by name), rotary frequencies per layer, evaluation beyond the
//                training length, throughput, peak RSS.
//   preempted    a stop signal arrived: a checkpoint was written and the run stopped (exit 75)
//   error        the run failed (exit 3: a non-finite loss or gradient), with the step and reason
//
// JSON form. Each field is a key of the same name; "type" names the record. A std::optional field
// that is unset and a bool that is false are left out; a non-finite double is written as null (JSON
// has no NaN) and read back as NaN. A JsonText field holds a JSON document and is written as that
// document (not as a string). Decoding ignores keys it does not know (a newer trainer's additions)
// and leaves missing fields at their defaults (null for an array or an object reads as its default);
// a key of the wrong JSON type is an error.
//
// Adding a field: add it to the struct and its Fields(), and to the proto message of the same name
// (the check test fails until both agree).
//
// Example:
//   StepRecord step;
//   step.step = 10;
//   step.train_loss = 2.5;
//   out << EncodeRecord(step) << '\n';
//   StatusOr<TrainerRecord> record = DecodeRecord(line);
//   if (record.ok()) {
//     if (const StepRecord* step = std::get_if<StepRecord>(&*record)) ...
//   }
//
// Torch-free and protobuf-free (the trainer-only GPU build keeps it). Thread safety: plain values and
// pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/common/status.h"
#include "core/records/diagnostics_payloads.h"

namespace rung::records {

// Traits of the field types, for the codecs (this file's JSON, proto/trainer_record_proto.h).
namespace internal {
template <class T>
struct IsVector : std::false_type {};
template <class T>
struct IsVector<std::vector<T>> : std::true_type {};
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
struct AnyField {
  template <class T>
  void operator()(const char*, T&) const {}
};
// A struct with a Fields() of its own (a nested message).
template <class T, class = void>
struct HasFields : std::false_type {};
template <class T>
struct HasFields<T, std::void_t<decltype(T::Fields(std::declval<T&>(), AnyField{}))>> : std::true_type {};
}  // namespace internal

// A JSON document carried as its text (valid JSON; "" means none). Encoded as the document itself.
struct JsonText {
  std::string text;
  bool empty() const { return text.empty(); }
  bool operator==(const JsonText& other) const { return text == other.text; }
};

// A dense tensor by name, row-major.
struct Tensor {
  std::string name;            // e.g. "positional.lerope_log_scale", "layer_0"
  std::vector<int64_t> shape;  // empty for a scalar
  std::vector<double> values;  // product(shape) values

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("name", self.name);
    field("shape", self.shape);
    field("values", self.values);
  }
};

// FLOPs per training token of a model (core/config/model_arithmetic.h).
struct FlopsPerTokenRecord {
  double nonembedding = 0;  // 6 N_nonembedding: what the fits use
  double attention = 0;     // the attention scores and values
  double matrix = 0;        // every matrix product, embedding output included
  double total = 0;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("nonembedding", self.nonembedding);
    field("attention", self.attention);
    field("matrix", self.matrix);
    field("total", self.total);
  }
};

struct ProvenanceRecord {
  static constexpr std::string_view kType = "provenance";
  std::string commit;          // rung's git commit
  std::string host;
  JsonText blas;               // {"library", "config", "threading", "optimized"}
  std::string torch_version;
  int64_t threads = 0;         // intra-op threads
  bool cuda_available = false;
  std::string device;          // "cpu", "cuda:0"
  JsonText config;             // the resolved trial config
  JsonText data;               // the data source as read: kind, paths, SHA-256, sizes
  JsonText parameters;         // parameter counts by kind
  FlopsPerTokenRecord flops_per_token;
  int64_t steps = 0;           // optimizer steps of the whole run (train.steps)
  int64_t tokens_per_step = 0;
  int64_t start_step = 0;      // > 0: resumed
  std::optional<std::string> resumed_from;  // the checkpoint it resumed from
  int64_t world_size = 1;      // data-parallel ranks
  std::vector<std::string> skipped_checkpoints;  // damaged checkpoints passed over ("PATH: why")
  // The position.variant of the model train.init started from, where the trial's differs from it (a
  // variant changed at initialisation: "rope" for a RoPE model started as AdaRoPE or LeRoPE).
  std::optional<std::string> converted_from;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("commit", self.commit);
    field("host", self.host);
    field("blas", self.blas);
    field("torch_version", self.torch_version);
    field("threads", self.threads);
    field("cuda_available", self.cuda_available);
    field("device", self.device);
    field("config", self.config);
    field("data", self.data);
    field("parameters", self.parameters);
    field("flops_per_token", self.flops_per_token);
    field("steps", self.steps);
    field("tokens_per_step", self.tokens_per_step);
    field("start_step", self.start_step);
    field("resumed_from", self.resumed_from);
    field("world_size", self.world_size);
    field("skipped_checkpoints", self.skipped_checkpoints);
    field("converted_from", self.converted_from);
  }
};

// Its numeric fields but `step` are the metric series of a trial (train_loss, val_loss, lr, tokens,
// ...), each point at the record's step, tokens, flops and elapsed_sec.
struct StepRecord {
  static constexpr std::string_view kType = "step";
  int64_t step = 0;                   // optimizer steps done
  int64_t tokens = 0;                 // training tokens seen
  double flops = 0;                   // 6 N_nonembedding tokens
  double flops_total = 0;             // with attention and the embedding output
  double lr = 0;                      // this step's learning rate
  double train_loss = 0;
  double grad_norm = 0;               // before clipping
  double positional_grad_norm = 0;    // of the positional parameters alone
  double tokens_per_sec = 0;          // since the previous step record
  double elapsed_sec = 0;             // training seconds of the whole run so far
  // The std::optional fields are the evaluation's metrics, set on evaluation steps alone (and every
  // metric of an evaluation is one): ForEachStepMetric tells them from the training ones by that.
  std::optional<double> val_loss;     // on evaluation steps
  std::optional<double> val_accuracy; // on evaluation steps of tasks with answers
  bool replayed = false;              // printed again after a resume
  // Bits per byte of the same evaluation as val_loss (docs/science.md section 11), where the source
  // knows each token's bytes: byte-level text, a prepared folder's manifest.
  std::optional<double> val_bpb;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("step", self.step);
    field("tokens", self.tokens);
    field("flops", self.flops);
    field("flops_total", self.flops_total);
    field("lr", self.lr);
    field("train_loss", self.train_loss);
    field("grad_norm", self.grad_norm);
    field("positional_grad_norm", self.positional_grad_norm);
    field("tokens_per_sec", self.tokens_per_sec);
    field("elapsed_sec", self.elapsed_sec);
    field("val_loss", self.val_loss);
    field("val_accuracy", self.val_accuracy);
    field("replayed", self.replayed);
    field("val_bpb", self.val_bpb);
  }
};

struct CheckpointRecord {
  static constexpr std::string_view kType = "checkpoint";
  int64_t step = 0;
  std::string path;    // the published checkpoint file
  std::string reason;  // periodic | final | signal | stop_after_step

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("step", self.step);
    field("path", self.path);
    field("reason", self.reason);
  }
};

struct DiagnosticsRecord {
  static constexpr std::string_view kType = "diagnostics";
  // "attention", "attention_beyond", "niah_grid", "band_ablation", "head_influence"
  std::string kind;
  int64_t step = 0;              // the step it was measured at
  std::string milestone;         // the point of training: "end", or a fraction / step it was asked at
  std::optional<int64_t> layer;  // where it is about one layer
  std::optional<int64_t> head;   // ... and one head
  // The measurement (diagnostics_payloads.h): the member named as the kind is set.
  std::optional<AttentionDiagnostics> attention;
  // The attention diagnostics beyond the training length (train.diagnostics_multiples), their multiple and
  // method set: a member of their own, so that a reader that predates them never takes one for the
  // training length's.
  std::optional<AttentionDiagnostics> attention_beyond;
  std::optional<NiahGridDiagnostics> niah_grid;
  std::optional<BandAblationDiagnostics> band_ablation;
  std::optional<HeadInfluenceDiagnostics> head_influence;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("kind", self.kind);
    field("step", self.step);
    field("milestone", self.milestone);
    field("layer", self.layer);
    field("head", self.head);
    field("attention", self.attention);
    field("niah_grid", self.niah_grid);
    field("band_ablation", self.band_ablation);
    field("head_influence", self.head_influence);
    field("attention_beyond", self.attention_beyond);
  }
};

// Validation at a multiple of the training length with one length-extension method.
struct ExtrapolationResult {
  int64_t multiple = 1;
  int64_t length = 0;                 // evaluated sequence length
  std::string method;                 // none | pi | ntk_by_parts | yarn
  double val_loss = 0;
  std::optional<double> val_accuracy;
  std::vector<double> val_loss_per_position;
  // The loss over positions inside the training length (< L_train) and beyond it (>= L_train, only for
  // multiples > 1): token-weighted means of the same evaluation as val_loss.
  std::optional<double> val_loss_in_dist;
  std::optional<double> val_loss_extrap;
  std::optional<double> val_bpb;  // bits per byte, as the step record's
  // The loss over the back half of each window, positions >= length / 2 (paper 004's perplexity: every
  // scored token sees at least half the window).
  std::optional<double> val_loss_back_half;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("multiple", self.multiple);
    field("length", self.length);
    field("method", self.method);
    field("val_loss", self.val_loss);
    field("val_accuracy", self.val_accuracy);
    field("val_loss_per_position", self.val_loss_per_position);
    field("val_loss_in_dist", self.val_loss_in_dist);
    field("val_loss_extrap", self.val_loss_extrap);
    field("val_bpb", self.val_bpb);
    field("val_loss_back_half", self.val_loss_back_half);
  }
};

// One cell of a probe (core/config/probe_config.h): its prompts of one length with the needle at one
// depth, under one length extension.
struct ProbeResult {
  std::string probe;       // passkey | niah | template | indexing
  int64_t length = 0;      // prompt tokens, the answer not counted (indexing: the longest prompt's)
  double depth = 0;        // where the needle starts, a fraction of the filler before it (indexing: -1,
                           // its index drawn uniformly)
  std::string method;      // the length extension: none, or a method beyond the training length
  std::string score;       // decode (exact match of the greedy decode) | next_token | choice
  std::string tokenizer;   // what encoded the prompts: a tokenizer file or model folder, or "bytes"
  int64_t instances = 0;   // prompts scored (indexing: lists x queries)
  int64_t correct = 0;
  double accuracy = 0;     // correct / instances
  // indexing (paper 003 appendix D.2) only: the list length; the lists; the standard deviation of the
  // lists' accuracies (ddof 0: rung's reading of the figure's shadow); the prompts' mean tokens (its x
  // axis); the accuracy of answering a uniformly guessed value (1/4, the paper's chance); and the mean
  // accuracy of the best position-blind answer, the list's most frequent value (PositionBlindAccuracy).
  std::optional<int64_t> elements;
  std::optional<int64_t> lists;
  std::optional<double> accuracy_sd;
  std::optional<double> mean_tokens;
  std::optional<double> chance;
  std::optional<double> position_blind;

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("probe", self.probe);
    field("length", self.length);
    field("depth", self.depth);
    field("method", self.method);
    field("score", self.score);
    field("tokenizer", self.tokenizer);
    field("instances", self.instances);
    field("correct", self.correct);
    field("accuracy", self.accuracy);
    field("elements", self.elements);
    field("lists", self.lists);
    field("accuracy_sd", self.accuracy_sd);
    field("mean_tokens", self.mean_tokens);
    field("chance", self.chance);
    field("position_blind", self.position_blind);
  }
};

// Its numeric scalar fields but `step` are the trial's summaries (val_loss, train_tokens_per_sec,
// ...), each probe cell adds to <probe>_accuracy[_<method>] and <probe>_accuracy_<length>[_<method>]
// (an indexing cell: indexing_accuracy and indexing_accuracy_n<elements>)
// (ProbeSummaries), and each extrapolation adds val_loss_<multiple>x[_<method>] (ExtrapolationSummaryName), the same
// as val_loss_full_<multiple>x[...], and val_loss_in_dist_... and val_loss_extrap_... where present.
struct FinalRecord {
  static constexpr std::string_view kType = "final";
  int64_t step = 0;
  int64_t tokens = 0;
  double flops = 0;
  double flops_total = 0;
  double val_loss = 0;
  std::optional<double> val_accuracy;
  std::optional<double> train_loss;  // unknown after a resume at the very end
  std::vector<double> val_loss_per_position;
  std::vector<Tensor> positional_parameters;  // every learned positional parameter
  std::vector<Tensor> frequencies;            // rotary frequencies, one tensor per layer ("layer_<i>")
  std::vector<ExtrapolationResult> extrapolation;
  double train_tokens_per_sec = 0;  // this process, after its first steps
  double wall_sec = 0;              // the whole run, evaluation included
  int64_t peak_rss_bytes = 0;
  std::optional<double> val_bpb;  // bits per byte of the held-out evaluation, as the step record's
  std::vector<ProbeResult> probe;  // train.probe's cells, in (length, method, depth) order

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("step", self.step);
    field("tokens", self.tokens);
    field("flops", self.flops);
    field("flops_total", self.flops_total);
    field("val_loss", self.val_loss);
    field("val_accuracy", self.val_accuracy);
    field("train_loss", self.train_loss);
    field("val_loss_per_position", self.val_loss_per_position);
    field("positional_parameters", self.positional_parameters);
    field("frequencies", self.frequencies);
    field("extrapolation", self.extrapolation);
    field("train_tokens_per_sec", self.train_tokens_per_sec);
    field("wall_sec", self.wall_sec);
    field("peak_rss_bytes", self.peak_rss_bytes);
    field("val_bpb", self.val_bpb);
    field("probe", self.probe);
  }
};

struct PreemptedRecord {
  static constexpr std::string_view kType = "preempted";
  int64_t step = 0;
  int64_t signal = 0;                     // the signal that stopped it; 0 for train stop_after_step
  std::optional<std::string> checkpoint;  // where to resume; unset without a checkpoint folder

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("step", self.step);
    field("signal", self.signal);
    field("checkpoint", self.checkpoint);
  }
};

struct ErrorRecord {
  static constexpr std::string_view kType = "error";
  int64_t step = 0;    // the step that failed
  std::string reason;  // e.g. "non-finite training loss (nan) at step 3"

  template <class Self, class Visitor>
  static void Fields(Self& self, Visitor&& field) {
    field("step", self.step);
    field("reason", self.reason);
  }
};

using TrainerRecord = std::variant<ProvenanceRecord, StepRecord, CheckpointRecord, DiagnosticsRecord, FinalRecord,
                                   PreemptedRecord, ErrorRecord>;

// The record's "type": "provenance", "step", ...
std::string_view RecordType(const TrainerRecord& record);

// One line of JSON, without the newline.
std::string EncodeRecord(const TrainerRecord& record);

// How deep a JsonText document may nest arrays and objects; a line, with its object around the
// document, one level more. JSON is written again recursively (the worker's re-encoding, the
// coordinator's store), so a document nested a hundred thousand levels deep would overflow the
// stack of whoever writes it; records are a few levels deep. DecodeRecord and the wire
// (proto/trainer_record_proto.h) refuse deeper ones. On the wire a JSON object is three nested
// messages (ConfigValue, ConfigObject, ConfigEntry), a list two, protobuf parses at most 100, and a
// ReportMetricsRequest puts five around the value: 30 levels fit.
inline constexpr int kMaxJsonTextDepth = 30;

// Whether `text` nests arrays and objects deeper than `max_depth` levels ("[]" is one; brackets in
// strings do not count). Linear, without recursion; `text` need not be valid JSON.
bool JsonDeeperThan(std::string_view text, int max_depth);

// One line back. Errors: INVALID_ARGUMENT for a line that is not a JSON object, one nested deeper
// than kMaxJsonTextDepth + 1, an object without a string "type", an unknown type, or a field of the
// wrong JSON type or an integer out of int64's range (the message names the field).
StatusOr<TrainerRecord> DecodeRecord(std::string_view line);

// `metric` at an evaluated length: "<metric>_<multiple>x", and "_<method>" after it unless the method
// is none or empty ("val_loss_2x", "val_loss_4x_yarn").
std::string LengthSuffixedName(std::string_view metric, int64_t multiple, const std::string& method);

// The summary name of an extrapolation result: "val_loss_2x", "val_loss_4x_yarn" (likewise for
// val_accuracy): what `rung results --metric` and `rung fit --metric` name.
std::string ExtrapolationSummaryName(std::string_view metric, const ExtrapolationResult& result);

// The stored name of attention diagnostics: "attention" at the training length, else
// LengthSuffixedName("attention", multiple, method) ("attention_4x_dynamic_ntk"); and whether a stored
// name is one of them.
std::string AttentionDiagnosticName(const AttentionDiagnostics& attention);
bool IsAttentionDiagnosticName(std::string_view name);

// A probe's summaries, each the accuracy pooled over its cells (correct over instances):
// <probe>_accuracy[_<method>] over every length and depth, and <probe>_accuracy_<length>[_<method>]
// over the depths of one length ("passkey_accuracy", "passkey_accuracy_1024_yarn"), in first-seen order;
// an indexing cell's is named by its list length ("indexing_accuracy_n64").
std::vector<std::pair<std::string, double>> ProbeSummaries(const std::vector<ProbeResult>& cells);

// Every metric name a trainer reports: the numeric fields of the step record but `step` (series),
// and of the final record (summaries). `rung validate` checks a spec's metric against these and
// the extrapolation summaries the spec's trials ask for.
std::vector<std::string> StepMetricNames();
std::vector<std::string> FinalSummaryNames();

// Calls `visit(name, value)` for every numeric scalar field (int64 or double, set optionals) of a
// step or final record but `step`, in the order of its Fields(). Used by the store to make metric
// points and summaries without naming the fields again.
template <class Record, class Visitor>
void ForEachNumericField(const Record& record, Visitor&& visit) {
  Record::Fields(record, [&](const char* name, const auto& value) {
    using Value = std::decay_t<decltype(value)>;
    if (std::string_view(name) == "step") return;
    if constexpr (std::is_same_v<Value, int64_t>) {
      visit(name, static_cast<double>(value));
    } else if constexpr (std::is_same_v<Value, double>) {
      visit(name, value);
    } else if constexpr (std::is_same_v<Value, std::optional<double>> || std::is_same_v<Value, std::optional<int64_t>>) {
      if (value) visit(name, static_cast<double>(*value));
    }
  });
}

// Calls `visit(name, value, evaluation)` for every metric of a step record (ForEachNumericField's),
// `evaluation` true for those of an evaluation on the validation data: the record's optional fields.
template <class Visitor>
void ForEachStepMetric(const StepRecord& record, Visitor&& visit) {
  StepRecord::Fields(record, [&](const char* name, const auto& value) {
    using Value = std::decay_t<decltype(value)>;
    if (std::string_view(name) == "step") return;
    if constexpr (std::is_same_v<Value, int64_t> || std::is_same_v<Value, double>) {
      visit(name, static_cast<double>(value), false);
    } else if constexpr (std::is_same_v<Value, std::optional<double>> || std::is_same_v<Value, std::optional<int64_t>>) {
      if (value) visit(name, static_cast<double>(*value), true);
    }
  });
}

}  // namespace rung::records

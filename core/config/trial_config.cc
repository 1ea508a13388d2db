#include "core/config/trial_config.h"

#include <algorithm>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/common/checked_arithmetic.h"
#include "core/config/config_limits.h"
#include "core/config/inverse_temperature_form.h"
#include "core/config/json_binding.h"
#include "core/config/length_extension_method.h"
#include "core/config/positional_variant.h"

namespace rung {
namespace {

// Each variant binds its own keys (positional_variant.h); a writer tells it whether it is chosen.
void BindVariantKeys(JsonFieldReader& reader, PositionConfig& p) {
  for (const PositionalVariant* variant : PositionalVariants()) variant->Bind(reader, p);
}
void BindVariantKeys(JsonFieldWriter& writer, PositionConfig& p) {
  for (const PositionalVariant* variant : PositionalVariants()) variant->Bind(writer, p, p.variant == variant->name());
}

template <typename V>
void VisitPosition(V& v, PositionConfig& p) {
  v.RegistryName("variant", p.variant, PositionalVariantNames(), "a positional variant",
                 "`rung validate --help` (or rung-train --help)");
  v.Field("base", p.base);
  v.Field("lr_mult", p.lr_mult);
  v.Field("clip", p.clip);
  v.Field("freeze", p.freeze);
  BindVariantKeys(v, p);
}

template <typename V>
void VisitInverseTemperature(V& v, InverseTemperatureConfig& t) {
  v.RegistryName("form", t.form, InverseTemperatureFormNames(), "an inverse-temperature form",
                 "`rung validate --help` (or rung-train --help)");
  v.Field("xi", t.xi);
  v.Field("n_ref", t.n_ref);
  v.Field("s", t.s);
  v.Field("learn_s", t.learn_s);
  v.Enum("extend", t.extend, {"hold", "power_law"});
}

template <typename V>
void VisitModel(V& v, ModelConfig& m) {
  v.Field("vocab_size", m.vocab_size);
  v.Field("layers", m.layers);
  v.Field("d_model", m.d_model);
  v.Field("heads", m.heads);
  v.Field("kv_heads", m.kv_heads);
  v.Field("head_dim", m.head_dim);
  v.Enum("mlp", m.mlp, {"gelu", "swiglu"});
  v.Field("mlp_hidden", m.mlp_hidden);
  v.Field("qk_norm", m.qk_norm);
  v.Field("norm_eps", m.norm_eps);
  v.Field("qkv_bias", m.qkv_bias);
  v.Field("tie_embeddings", m.tie_embeddings);
  v.Enum("attention", m.attention, {"auto", "exact", "fused"});
}

template <typename V>
void VisitData(V& v, DataConfig& d) {
  v.Enum("source", d.source, {"builtin", "text", "shards", "nrw", "niah", "position_index"});
  v.Field("path", d.path);
  v.Field("val_path", d.val_path);
  v.Field("token_bytes", d.token_bytes);
  v.Enum("format", d.format, {"auto", "llmc", "raw16", "raw32"});
  v.Field("vocab_size", d.vocab_size);
  v.Field("seq_len", d.seq_len);
  v.Field("val_fraction", d.val_fraction);
  v.Field("split_seed", d.split_seed);
  v.Field("doc_separator", d.doc_separator);
  v.Field("cross_doc_mask", d.cross_doc_mask);
  v.Enum("cross_doc_keys", d.cross_doc_keys, {"document", "window"});
  v.Field("eot_token", d.eot_token);
  v.Field("eval_min_doc_tokens", d.eval_min_doc_tokens);
  v.Enum("builtin_documents", d.builtin_documents, {"chapters", "books"});
  v.Enum("builtin_form", d.builtin_form, {"bytes", "bpe-4096"});
  v.Block("nrw", [&](V& b) {
    b.Field("window_centre", d.nrw.window_centre);
    b.Field("window_width", d.nrw.window_width);
    b.Field("buffer", d.nrw.buffer);
  });
  v.Block("niah", [&](V& b) {
    b.Field("max_distractors", d.niah.max_distractors);
    b.Field("key_symbols", d.niah.key_symbols);
    b.Field("value_symbols", d.niah.value_symbols);
    b.Field("filler_symbols", d.niah.filler_symbols);
  });
  v.Block("position_index", [&](V& b) { b.Field("symbols", d.position_index.symbols); });
}

template <typename V>
void VisitTrain(V& v, TrainConfig& t) {
  v.Field("steps", t.steps);
  v.Field("tokens", t.tokens);
  v.Field("batch_size", t.batch_size);
  v.Field("grad_accum", t.grad_accum);
  v.Field("lr", t.lr);
  v.Field("weight_decay", t.weight_decay);
  v.Field("weight_decay_over_steps", t.weight_decay_over_steps);
  v.Enum("weight_decay_mode", t.weight_decay_mode, {"coupled", "independent"});
  v.Field("beta1", t.beta1);
  v.Field("beta2", t.beta2);
  v.Field("eps", t.eps);
  v.Field("clip", t.clip);
  v.Field("freeze_backbone", t.freeze_backbone);
  v.Block("lora", [&](V& l) {
    l.Field("rank", t.lora.rank);
    l.Field("alpha", t.lora.alpha);
    l.Field("dropout", t.lora.dropout);
    l.EnumList("targets", t.lora.targets, LoraTargetNames());
  });
  v.Block("schedule", [&](V& s) {
    s.Enum("name", t.schedule.name, {"cosine", "wsd", "constant"});
    s.Field("warmup_steps", t.schedule.warmup_steps);
    s.Field("decay_fraction", t.schedule.decay_fraction);
    s.Field("final_lr_fraction", t.schedule.final_lr_fraction);
  });
  v.Block("init", [&](V& i) {
    i.Field("checkpoint", t.init.checkpoint);
    i.Field("from_trial", t.init.from_trial);
    i.Enum("parameters", t.init.parameters, {"all", "positional", "backbone"});
    i.Enum("adarope_start", t.init.adarope_start, {"trained", "yarn", "ntk_by_parts", "pi"});
    i.Field("adarope_scale", t.init.adarope_scale);
    i.Enum("model", t.init.model, {"spec", "checkpoint"});
  });
  v.Field("eval_every", t.eval_every);
  v.Field("eval_batches", t.eval_batches);
  v.Field("log_every", t.log_every);
  v.Field("checkpoint_every", t.checkpoint_every);
  v.Field("keep_checkpoints", t.keep_checkpoints);
  v.Field("extrapolation_multiples", t.extrapolation_multiples);
  v.EnumList("extrapolation_methods", t.extrapolation_methods, LengthExtensionMethodNames());
  v.Field("extrapolation_yarn_c", t.extrapolation_yarn_c);
  v.Field("extrapolation_scale", t.extrapolation_scale);
  v.Enum("extrapolation_factor", t.extrapolation_factor, {"document", "window"});
  v.Field("diagnostics_sequences", t.diagnostics_sequences);
  v.Field("diagnostics_batches", t.diagnostics_batches);
  v.Field("diagnostics_bootstrap_unit", t.diagnostics_bootstrap_unit);
  v.Field("diagnostics_at", t.diagnostics_at);
  v.Field("diagnostics_renyi_order", t.diagnostics_renyi_order);
  v.Field("diagnostics_lengths", t.diagnostics_lengths);
  v.Field("diagnostics_grid_ratios", t.diagnostics_grid_ratios);
  v.Field("diagnostics_multiples", t.diagnostics_multiples);
  v.Field("diagnostics_regime_multiples", t.diagnostics_regime_multiples);
  v.Field("diagnostics_beta_trim", t.diagnostics_beta_trim);
  v.Field("diagnostics_pair_profile_bins", t.diagnostics_pair_profile_bins);
  v.Field("diagnostics_failure_lengths", t.diagnostics_failure_lengths);
  v.Field("niah_grid_instances", t.niah_grid_instances);
  v.Block("probe", [&](V& p) {
    p.Enum("kind", t.probe.kind, {"none", "passkey", "niah", "template", "indexing"});
    p.Field("lengths", t.probe.lengths);
    p.Field("depths", t.probe.depths);
    p.Field("instances", t.probe.instances);
    p.Field("key_digits", t.probe.key_digits);
    p.Field("distractors", t.probe.distractors);
    p.Enum("score", t.probe.score, {"decode", "next_token", "choice"});
    p.Field("tokenizer", t.probe.tokenizer);
    p.Field("filler", t.probe.filler);
    p.Field("filler_text", t.probe.filler_text);
    p.Field("prefix", t.probe.prefix);
    p.Field("needle", t.probe.needle);
    p.Field("query", t.probe.query);
    p.Field("answer", t.probe.answer);
    p.Field("elements", t.probe.elements);
    p.Field("queries", t.probe.queries);
  });
  v.Enum("device", t.device, {"cpu", "cuda"});
  v.Enum("precision", t.precision, {"fp32", "bf16"});
}

template <typename V>
void VisitTrial(V& v, TrialConfig& trial) {
  v.Field("seed", trial.seed);
  v.Block("data", [&](V& b) { VisitData(b, trial.data); });
  v.Block("model", [&](V& b) { VisitModel(b, trial.model); });
  v.Block("position", [&](V& b) { VisitPosition(b, trial.model.position); });
  v.Block("inverse_temperature", [&](V& b) { VisitInverseTemperature(b, trial.model.inverse_temperature); });
  v.Block("train", [&](V& b) { VisitTrain(b, trial.train); });
  v.Block("resources", [&](V& b) {
    b.Field("cpus", trial.resources.cpus);
    b.Field("gpus", trial.resources.gpus);
    b.Field("world_size", trial.resources.world_size);
  });
}

Status Locate(const Status& status, const std::vector<ConfigError>& errors,
              const std::function<std::string(const std::string&)>& locate) {
  if (status.ok() || !locate) return status;
  std::string message = "trial config: " + std::to_string(errors.size()) + " error(s)";
  for (const ConfigError& error : errors) {
    std::string where = locate(error.path);
    message += "\n  " + (where.empty() ? std::string() : where + ": ") + error.path + ": " + error.message;
  }
  return Status::InvalidArgument(message);
}

}  // namespace

int64_t DataVocabSize(const DataConfig& data) {
  // Symbol counts that overflow give a vocabulary the limits refuse (config_limits.h).
  constexpr int64_t kOverflow = std::numeric_limits<int64_t>::max();
  if (data.source == "builtin" && data.builtin_form == "bpe-4096") return kBuiltinBpeVocabSize;
  if (data.source == "builtin" || data.source == "text") return 256;
  if (data.source == "nrw") return 5;  // BG, NEEDLE, QUERY, YES, NO
  if (data.source == "niah") {
    // filler, keys, values, separators: KEY_MARK, VALUE_MARK, QUERY, plus BOS
    return CheckedSum({data.niah.filler_symbols, data.niah.key_symbols, data.niah.value_symbols, 4})
        .value_or(kOverflow);
  }
  if (data.source == "position_index") {
    return CheckedAdd(data.position_index.symbols, 2).value_or(kOverflow);  // symbols, QUERY, BOS
  }
  return data.vocab_size;
}

void ResolveTrialConfig(TrialConfig* trial) {
  if (trial->model.vocab_size == 0) trial->model.vocab_size = DataVocabSize(trial->data);
  trial->model.seq_len = trial->data.seq_len;
  trial->model.document_key_counts = trial->data.cross_doc_mask && trial->data.cross_doc_keys == "document";
  ResolveModelConfig(&trial->model);
  if (trial->train.steps == 0 && trial->train.tokens > 0) {
    // Unresolved (steps 0, refused) when tokens per step overflow.
    const std::optional<int64_t> per_step =
        CheckedProduct({trial->train.batch_size, trial->train.grad_accum, trial->data.seq_len});
    if (per_step && *per_step > 0) {
      trial->train.steps = trial->train.tokens / *per_step + (trial->train.tokens % *per_step != 0 ? 1 : 0);
    }
  }
  if (trial->train.weight_decay_over_steps > 0.0 && trial->train.steps > 0) {
    trial->train.weight_decay = trial->train.weight_decay_over_steps / static_cast<double>(trial->train.steps);
  }
}

namespace {

// "LeRoPE and AdaRoPE": the labels of the variants with learned positional parameters (those of a
// default model), in listing order.
std::string LearnedPositionalLabels() {
  ModelConfig model;
  model.seq_len = 128;
  ResolveModelConfig(&model);
  std::vector<std::string> labels;
  for (const PositionalVariant* variant : PositionalVariants()) {
    if (variant->PositionalParameters(model).value().value_or(0) > 0) labels.emplace_back(variant->label());
  }
  std::string text;
  for (size_t i = 0; i < labels.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == labels.size() ? " and " : ", ") + labels[i];
  }
  return text;
}

void CollectTrialErrors(const TrialConfig& trial, std::vector<ConfigError>* errors) {
  ValidateDataConfig(trial.data, errors);
  ValidateModelConfig(trial.model, errors);
  ValidateTrainConfig(trial.train, trial.resources, errors);
  ValidateLoraConfig(trial.train.lora, trial.model, errors);
  if (trial.train.lora.enabled() && trial.train.lora.dropout > 0.0 && trial.resources.world_size > 1) {
    // Every rank draws from the same generator: its masks would be neither one process's nor independent.
    errors->push_back({"train.lora.dropout", "a data-parallel trial (resources.world_size " +
                                                 std::to_string(trial.resources.world_size) +
                                                 ") trains its adapters without dropout; set 0"});
  }
  ValidateConfigLimits(trial, errors);
  if (trial.data.synthetic() && trial.model.vocab_size < DataVocabSize(trial.data)) {
    errors->push_back({"model.vocab_size", "smaller than the task's vocabulary " +
                                               std::to_string(DataVocabSize(trial.data))});
  }
  if ((trial.data.source == "builtin" || trial.data.source == "text") &&
      trial.model.vocab_size < DataVocabSize(trial.data)) {
    errors->push_back({"model.vocab_size", trial.data.builtin_form == "bpe-4096" && trial.data.source == "builtin"
                                               ? "the builtin BPE form needs at least 4096"
                                               : "byte-level text needs at least 256"});
  }
  if (trial.train.extrapolation_scale > 0 && trial.data.cross_doc_mask && trial.train.extrapolation_factor == "document") {
    errors->push_back({"train.extrapolation_scale",
                       "under data.cross_doc_mask with train.extrapolation_factor document each document takes its "
                       "own factor from its length; a factor set apart needs extrapolation_factor: window"});
  }
  const PositionConfig& position = trial.model.position;
  const PositionalVariant* variant = FindPositionalVariant(position.variant);
  if (variant == nullptr) return;  // refused as the config was read
  variant->ValidateTrial(trial, errors);
  const bool learned_positional =
      !position.freeze && variant->PositionalParameters(trial.model).value().value_or(1) > 0;
  const InverseTemperatureForm* form = FindInverseTemperatureForm(trial.model.inverse_temperature.form);
  const bool learned_temperature = form != nullptr && form->TrainsWithFrozenBackbone();
  if (trial.train.freeze_backbone && !learned_positional && !learned_temperature && !trial.train.lora.enabled()) {
    errors->push_back({"train.freeze_backbone",
                       "leaves nothing to train: " +
                           (position.freeze ? std::string("position.freeze is set too")
                                            : "position.variant " + position.variant + " has no learned parameters" +
                                                  variant->FrozenBackboneNote()) +
                           " (only " + LearnedPositionalLabels() +
                           " positional parameters, or a learned inverse temperature, train with the backbone "
                           "frozen)"});
  }
  const InitConfig& init = trial.train.init;
  if (!(init.adarope_scale == 0.0 || (init.adarope_scale >= 1.0 && init.adarope_scale <= 1024.0))) {
    errors->push_back({"train.init.adarope_scale",
                       "must be 0 (data.seq_len over the source's length) or lie in [1, 1024], got " +
                           std::to_string(init.adarope_scale)});
  }
  if (init.adarope_start == "trained" && init.adarope_scale != 0.0) {
    errors->push_back({"train.init.adarope_scale",
                       "is the factor of an extension's start: set train.init.adarope_start (yarn, ntk_by_parts, pi)"});
  }
  if (init.adarope_start != "trained") {
    const std::string& start = init.adarope_start;
    if (position.variant != "adarope") {
      errors->push_back({"train.init.adarope_start",
                         start + " starts AdaRoPE's frequencies and tau; position.variant is " + position.variant});
    }
    if (start != "yarn" && position.adarope.learned_base) {
      errors->push_back({"train.init.adarope_start", start + " changes each frequency by its own factor, which a "
                                                     "learned base (position.adarope.learned_base) cannot hold"});
    }
    if (start == "yarn" && !position.adarope.adascale) {
      errors->push_back({"train.init.adarope_start", "yarn's logit factor is AdaScale's tau, and "
                                                     "position.adarope.adascale is false"});
    }
    if (position.adarope.fixed_log) {
      errors->push_back({"train.init.adarope_start", start + " starts from the source's function, and "
                                                     "position.adarope.fixed_log scales logits from the start"});
    }
    if (init.checkpoint.empty() && init.from_trial.empty()) {
      errors->push_back({"train.init.adarope_start",
                         start + " extends a trained model: give train.init.from_trial or train.init.checkpoint"});
    }
    if (init.parameters == "backbone") {
      errors->push_back({"train.init.adarope_start", start + " starts from the source's positional parameters, "
                                                            "which train.init.parameters: backbone does not copy"});
    }
  }
}

}  // namespace

void ReconcileWithEarlierReleases(const TrialConfig& trial, nlohmann::json* config) {
  const TrainConfig defaults;
  nlohmann::json& train = (*config)["train"];
  if (trial.train.init.adarope_start == defaults.init.adarope_start) train["init"].erase("adarope_start");
  if (trial.train.init.adarope_scale == defaults.init.adarope_scale) train["init"].erase("adarope_scale");
  if (trial.train.init.model == defaults.init.model) train["init"].erase("model");
  if (trial.train.diagnostics_at == defaults.diagnostics_at) train.erase("diagnostics_at");
  // Earlier releases measured the diagnostics on one batch of diagnostics_sequences with (sequence,
  // layer, head) bootstrap units; the paper's several batches and batch units are the defaults now.
  // The two keys count where they measure otherwise than that (the defaults do), and not where no
  // diagnostics run.
  if (trial.train.diagnostics_batches == 1 || trial.train.diagnostics_sequences == 0) {
    train.erase("diagnostics_batches");
  }
  if (trial.train.diagnostics_bootstrap_unit == "sequence" || trial.train.diagnostics_sequences == 0) {
    train.erase("diagnostics_bootstrap_unit");
  }
  if (trial.train.diagnostics_lengths == defaults.diagnostics_lengths) train.erase("diagnostics_lengths");
  if (trial.train.diagnostics_grid_ratios.empty() || trial.train.diagnostics_sequences == 0) {
    train.erase("diagnostics_grid_ratios");
  }
  if (trial.train.diagnostics_multiples.empty() || trial.train.diagnostics_sequences == 0) {
    train.erase("diagnostics_multiples");
  }
  if (trial.train.diagnostics_regime_multiples == defaults.diagnostics_regime_multiples) {
    train.erase("diagnostics_regime_multiples");
  }
  if (trial.train.diagnostics_beta_trim == defaults.diagnostics_beta_trim) train.erase("diagnostics_beta_trim");
  if (trial.train.diagnostics_pair_profile_bins == defaults.diagnostics_pair_profile_bins) {
    train.erase("diagnostics_pair_profile_bins");
  }
  if (trial.train.diagnostics_failure_lengths == defaults.diagnostics_failure_lengths) {
    train.erase("diagnostics_failure_lengths");
  }
  if (trial.train.extrapolation_yarn_c == defaults.extrapolation_yarn_c) train.erase("extrapolation_yarn_c");
  if (trial.train.extrapolation_scale == defaults.extrapolation_scale) train.erase("extrapolation_scale");
  if (trial.train.probe.kind == "none") {
    train.erase("probe");
  } else if (trial.train.probe.kind != "indexing") {
    // The indexing probe's own fields, at their defaults on every other kind (validation refuses others).
    train["probe"].erase("elements");
    train["probe"].erase("queries");
  }
  if (!trial.train.lora.enabled()) {
    train.erase("lora");
  } else {
    // The adapters' targets as a set (their order changes nothing), and the backbone frozen either way.
    nlohmann::json targets = nlohmann::json::array();
    for (const std::string& name : LoraTargetNames()) {
      if (std::find(trial.train.lora.targets.begin(), trial.train.lora.targets.end(), name) !=
          trial.train.lora.targets.end()) {
        targets.push_back(name);
      }
    }
    train["lora"]["targets"] = targets;
    train.erase("freeze_backbone");
  }
  // Added with shared AdaScale; its default is the per-head AdaScale of before.
  if (trial.model.position.adarope.share_scale == "none" && config->contains("position") &&
      (*config)["position"].contains("adarope")) {
    (*config)["position"]["adarope"].erase("share_scale");
  }
  if (trial.train.weight_decay_over_steps == defaults.weight_decay_over_steps) train.erase("weight_decay_over_steps");
  // Read where a masked evaluation extends beyond the training length only: the default changed there.
  const auto& multiples = trial.train.extrapolation_multiples;
  const auto& diagnosed = trial.train.diagnostics_multiples;
  const auto& methods = trial.train.extrapolation_methods;
  const bool beyond = std::any_of(multiples.begin(), multiples.end(), [](int64_t m) { return m > 1; }) ||
                      (trial.train.diagnostics_sequences > 0 &&
                       std::any_of(diagnosed.begin(), diagnosed.end(), [](int64_t m) { return m > 1; }));
  const bool extends = beyond &&
                       std::any_of(methods.begin(), methods.end(), [](const std::string& m) {
                         const LengthExtensionMethod* method = FindLengthExtensionMethod(m);
                         return method == nullptr || !method->keeps_frequencies();
                       });
  if (!trial.data.cross_doc_mask || !extends) train.erase("extrapolation_factor");
  // Read by niah tasks only; it adds the grid record to what a niah trial reports.
  if (trial.data.source != "niah") train.erase("niah_grid_instances");
  // Read under cross-document masking only, where its default changed what beta(n) and AdaScale count,
  // and only by a model that reads n: an inverse temperature, or AdaScale in its query mode.
  const ModelConfig& model = trial.model;
  const PositionalVariant* variant = FindPositionalVariant(model.position.variant);
  const InverseTemperatureForm* form = FindInverseTemperatureForm(model.inverse_temperature.form);
  const bool reads_key_count = (form != nullptr && form->ReadsKeyCount()) ||
                               (variant != nullptr && variant->ReadsKeyCount(model.position));
  if (!trial.data.cross_doc_mask || !reads_key_count) (*config)["data"].erase("cross_doc_keys");
  // NRW's buffer means AdaRoPE's NO band since this release (it cut r W on both sides of each edge).
  if (trial.data.source == "nrw" && trial.data.nrw.buffer > 0.0) {
    (*config)["data"]["nrw"]["buffer_rule"] = "no_beyond_1_plus_r_half_width";
  }
  // Added with Hugging Face imports; their defaults are the model as before.
  const ModelConfig model_defaults;
  if (trial.model.qkv_bias == model_defaults.qkv_bias) (*config)["model"].erase("qkv_bias");
  if (trial.model.tie_embeddings == model_defaults.tie_embeddings) (*config)["model"].erase("tie_embeddings");
  // Added with llm.c shards and the long-document evaluation; their defaults read data as before.
  const DataConfig data_defaults;
  nlohmann::json& data = (*config)["data"];
  if (trial.data.format == data_defaults.format) data.erase("format");
  if (trial.data.eval_min_doc_tokens == data_defaults.eval_min_doc_tokens) data.erase("eval_min_doc_tokens");
  if (trial.data.builtin_documents == data_defaults.builtin_documents) data.erase("builtin_documents");
  if (trial.data.builtin_form == data_defaults.builtin_form) data.erase("builtin_form");
  // A variant's own keys that predate identities' reconciling (the absolute table's), when another
  // variant is chosen (positional_variant.h).
  for (const PositionalVariant* other : PositionalVariants()) {
    if (other->name() == trial.model.position.variant ||
        other->keys_elsewhere() != PositionalVariant::KeysElsewhere::kWrittenNotReconciled) {
      continue;
    }
    for (const std::string& key : other->own_keys()) (*config)["position"].erase(key);
  }
}

StatusOr<TrialConfig> TrialConfigFromIdentity(nlohmann::json identity) {
  if (identity.is_object() && identity.contains("data") && identity["data"].is_object() &&
      identity["data"].contains("nrw") && identity["data"]["nrw"].is_object()) {
    identity["data"]["nrw"].erase("buffer_rule");
  }
  return TrialConfigFromJson(identity);
}

Status ValidateTrialConfig(const TrialConfig& trial) {
  std::vector<ConfigError> errors;
  CollectTrialErrors(trial, &errors);
  return ConfigErrorsToStatus(errors, "trial config");
}

std::optional<TrialConfig> ParseTrialConfig(const nlohmann::json& json, std::vector<ConfigError>* errors) {
  const size_t before = errors->size();
  TrialConfig trial;
  JsonFieldReader reader(&json, "", errors);
  VisitTrial(reader, trial);
  reader.Allow("policy");  // scheduling policy belongs to the coordinator, not the trainer
  reader.Finish();
  // A number refused keeps its key's default, so the rest is still checked: every error at once.
  if (errors->size() != before && !reader.OnlyNumberErrors()) return std::nullopt;
  ResolvePreparedFolder(&trial.data, errors);
  ResolveTrialConfig(&trial);
  CollectTrialErrors(trial, errors);
  if (errors->size() != before) return std::nullopt;
  return trial;
}

StatusOr<TrialConfig> TrialConfigFromJson(const nlohmann::json& json,
                                          const std::function<std::string(const std::string&)>& locate) {
  std::vector<ConfigError> errors;
  std::optional<TrialConfig> trial = ParseTrialConfig(json, &errors);
  if (!trial) return Locate(ConfigErrorsToStatus(errors, "trial config"), errors, locate);
  return *trial;
}

nlohmann::json TrialConfigToJson(const TrialConfig& trial) {
  nlohmann::json json;
  TrialConfig copy = trial;
  JsonFieldWriter writer(&json);
  VisitTrial(writer, copy);
  return json;
}

}  // namespace rung

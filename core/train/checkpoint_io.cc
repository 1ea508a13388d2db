#include "core/train/checkpoint_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <mutex>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include "core/common/write_error.h"
#include "core/config/positional_variant.h"
#include "core/hf/hf_import.h"
#include "core/train/checkpoint.h"
#include "core/train/positional_records.h"

namespace rung {
namespace {

using nlohmann::json;

// The archive's keys (the header lists them).
constexpr int kCheckpointFormat = 1;
constexpr char kMetaKey[] = "meta";
constexpr char kRngKey[] = "rng/cpu";
constexpr char kOptimizerStepCountKey[] = "optimizer/step_count";
std::string ModelKey(const std::string& parameter) { return "model/" + parameter; }
std::string MomentKey(const FlatAdamW& optimizer, int64_t group, const char* moment) {
  return "optimizer/" + optimizer.group_name(group) + "/" + moment;
}

// The parts of a trial that must match for a checkpoint to be resumed (cadence may differ).
json ResumeIdentity(const TrialConfig& trial) {
  json identity = TrialConfigToJson(trial);
  for (const char* key : {"eval_every", "eval_batches", "log_every", "checkpoint_every", "keep_checkpoints"}) {
    identity["train"].erase(key);
  }
  identity.erase("resources");
  ReconcileWithEarlierReleases(trial, &identity);
  // How the diagnostics batch their sequences and resample them changes what a milestone reports, not
  // the training: a checkpoint of a release before them resumes (its later milestones say how they
  // were measured).
  for (const char* key : {"diagnostics_batches", "diagnostics_bootstrap_unit"}) identity["train"].erase(key);
  return identity;
}

// Writes the archive to `path` through a file rung holds: LibTorch's own file writer throws again
// from its destructor after a failed write (std::terminate: rung-train died by SIGABRT on a full
// disk), so the writer function here records the first error and swallows the rest, and the error
// comes back as a value (WriteError: RESOURCE_EXHAUSTED for a full disk).
Status WriteArchive(const std::string& path, const json& meta, Transformer& model, const FlatAdamW& optimizer) {
  torch::serialize::OutputArchive archive;
  archive.write(kMetaKey, c10::IValue(meta.dump()));
  for (const auto& item : model->named_parameters(true)) archive.write(ModelKey(item.key()), item.value());
  archive.write(kOptimizerStepCountKey, torch::tensor(optimizer.step_count(), torch::kLong));
  for (int64_t group = 0; group < optimizer.num_groups(); ++group) {
    archive.write(MomentKey(optimizer, group, "exp_avg"), optimizer.exp_avg(group));
    archive.write(MomentKey(optimizer, group, "exp_avg_sq"), optimizer.exp_avg_sq(group));
  }
  archive.write(kRngKey, at::detail::getDefaultCPUGenerator().get_state());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError("creating", path, errno);
  int first_error = 0;
  archive.save_to([&](const void* data, size_t size) -> size_t {
    const char* bytes = static_cast<const char*>(data);
    for (size_t written = 0; first_error == 0 && written < size;) {
      const ssize_t n = ::write(fd, bytes + written, size - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) first_error = n < 0 ? errno : ENOSPC;
      else written += static_cast<size_t>(n);
    }
    return size;  // never short: the writer's error is ours to report
  });
  if (::close(fd) != 0 && first_error == 0) first_error = errno;
  if (first_error != 0) return WriteError("writing", path, first_error);
  return Status::Ok();
}

void ReadOptimizer(torch::serialize::InputArchive& archive, FlatAdamW& optimizer) {
  torch::Tensor step_count;
  archive.read(kOptimizerStepCountKey, step_count);
  optimizer.set_step_count(step_count.item<int64_t>());
  for (int64_t group = 0; group < optimizer.num_groups(); ++group) {
    torch::Tensor exp_avg, exp_avg_sq;
    archive.read(MomentKey(optimizer, group, "exp_avg"), exp_avg);
    archive.read(MomentKey(optimizer, group, "exp_avg_sq"), exp_avg_sq);
    optimizer.exp_avg(group).copy_(exp_avg);
    optimizer.exp_avg_sq(group).copy_(exp_avg_sq);
  }
}

// An adapter of train.lora (core/model/lora.h): the model's submodule "lora".
bool IsLoraParameter(const std::string& name) { return name.rfind("lora.", 0) == 0; }

// A checkpoint's adapters (those of `source`, the trial it was written for) merged into `model`'s
// backbone: what a checkpoint is as a model. Nothing where the source had none.
Status MergeCheckpointAdapters(torch::serialize::InputArchive& archive, const TrialConfig& source, Transformer& model,
                               const std::string& path) {
  if (!source.train.lora.enabled()) return Status::Ok();
  LoraAdapters adapters(source.model, source.train.lora, /*draw=*/false);
  torch::NoGradGuard no_grad;
  for (auto& item : adapters->named_parameters(true)) {
    torch::Tensor value;
    if (!archive.try_read(ModelKey("lora." + item.key()), value) || value.sizes() != item.value().sizes()) {
      return Status::DataLoss("checkpoint " + path + ": adapter lora." + item.key() +
                              " is missing or of another shape than its train.lora says");
    }
    item.value().copy_(value);
  }
  adapters->MergeInto(*model);
  return Status::Ok();
}

void ReadCpuGenerator(torch::serialize::InputArchive& archive) {
  torch::Tensor rng;
  archive.read(kRngKey, rng);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(rng);
}

}  // namespace

StatusOr<std::string> WriteCheckpoint(const std::string& dir, const TrialConfig& trial, Transformer& model,
                                      const FlatAdamW& optimizer, const TrainingProgress& progress,
                                      const std::deque<records::StepRecord>& remembered) {
  json records_json = json::array();
  for (const records::StepRecord& step : remembered) records_json.push_back(records::EncodeRecord(step));
  const json meta = {{"format", kCheckpointFormat},       {"step", progress.step},
                     {"data_index", progress.data_index}, {"tokens", progress.tokens},
                     {"identity", ResumeIdentity(trial)}, {"records", std::move(records_json)}};
  RUNG_RETURN_IF_ERROR(WriteCheckpointAtomically(dir, progress.step, trial.train.keep_checkpoints,
                                                 [&](const std::string& temp_path) -> Status {
                                                   try {
                                                     return WriteArchive(temp_path, meta, model, optimizer);
                                                   } catch (const std::exception& error) {
                                                     return Status::Internal(std::string("writing checkpoint: ") +
                                                                             error.what());
                                                   }
                                                 }));
  return CheckpointPath(dir, progress.step);
}

StatusOr<ResumedCheckpoint> ReadCheckpoint(const std::string& path, const TrialConfig& trial, Transformer& model,
                                           FlatAdamW& optimizer) {
  if (!std::filesystem::exists(path)) return Status::NotFound("checkpoint " + path + " does not exist");
  ResumedCheckpoint resumed;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    c10::IValue meta_value;
    archive.read(kMetaKey, meta_value);
    const json meta = json::parse(meta_value.toStringRef());
    if (meta.value("format", 0) != kCheckpointFormat) {
      return Status::FailedPrecondition("checkpoint " + path + " has an unknown format");
    }
    const std::string difference = FirstIdentityDifference(meta.at("identity"), ResumeIdentity(trial));
    if (!difference.empty()) {
      return Status::FailedPrecondition("checkpoint " + path + " was written by a different trial config (differs at " +
                                        difference + ")");
    }
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters(true)) {
      torch::Tensor value;
      archive.read(ModelKey(item.key()), value);
      item.value().copy_(value);
    }
    ReadOptimizer(archive, optimizer);
    ReadCpuGenerator(archive);
    resumed.progress.step = meta.at("step").get<int64_t>();
    resumed.progress.data_index = meta.at("data_index").get<int64_t>();
    resumed.progress.tokens = meta.at("tokens").get<int64_t>();
    if (meta.contains("records") && meta["records"].is_array()) {
      // Each an encoded step record; checkpoints of earlier releases hold the records' JSON objects.
      for (const json& entry : meta["records"]) {
        StatusOr<records::TrainerRecord> record =
            records::DecodeRecord(entry.is_string() ? entry.get<std::string>() : entry.dump());
        if (!record.ok()) {
          return Status::DataLoss("checkpoint " + path +
                                  " remembers a step record it cannot read: " + record.status().message());
        }
        if (const auto* step = std::get_if<records::StepRecord>(&*record)) resumed.remembered.push_back(*step);
      }
    }
  } catch (const std::exception& error) {
    return Status::DataLoss("cannot read checkpoint " + path + ": " + error.what());
  }
  return resumed;
}

namespace {

// A checkpoint file, or a trial's checkpoint folder's newest; `what` names the path in messages.
StatusOr<std::string> CheckpointFile(const std::string& path, const std::string& what) {
  if (!std::filesystem::exists(path)) return Status::NotFound(what + " " + path + " does not exist");
  if (!std::filesystem::is_directory(path)) return path;
  std::vector<std::string> checkpoints = ListCheckpoints(path);
  if (checkpoints.empty()) return Status::NotFound(what + " " + path + " is a folder without checkpoints");
  return checkpoints.back();
}

}  // namespace

StatusOr<CheckpointModel> LoadCheckpointModel(const std::string& path) {
  CheckpointModel loaded;
  RUNG_ASSIGN_OR_RETURN(loaded.path, CheckpointFile(path, "checkpoint"));
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(loaded.path);
    c10::IValue meta_value;
    archive.read(kMetaKey, meta_value);
    const json meta = json::parse(meta_value.toStringRef(), nullptr, false);
    if (!meta.is_object() || meta.value("format", 0) != kCheckpointFormat || !meta.contains("identity")) {
      return Status::FailedPrecondition("checkpoint " + loaded.path + " has an unknown format");
    }
    StatusOr<TrialConfig> trial = TrialConfigFromIdentity(meta.at("identity"));
    if (!trial.ok()) {
      return Status::FailedPrecondition("checkpoint " + loaded.path + ": its trial config does not parse: " +
                                        trial.status().message());
    }
    loaded.trial = *trial;
    loaded.step = meta.value("step", int64_t{0});
    Transformer model(loaded.trial.model, Initialization::kEmpty);
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters(true)) {
      torch::Tensor value;
      if (!archive.try_read(ModelKey(item.key()), value) || value.sizes() != item.value().sizes()) {
        return Status::DataLoss("checkpoint " + loaded.path + ": parameter " + item.key() +
                                " is missing or of another shape than its trial config says");
      }
      item.value().copy_(value);
    }
    RUNG_RETURN_IF_ERROR(MergeCheckpointAdapters(archive, loaded.trial, model, loaded.path));
    model->eval();
    loaded.model = model;
  } catch (const c10::Error& error) {
    // LibTorch's message without its backtrace: "PytorchStreamReader failed reading zip archive: ...".
    const std::string message = error.what_without_backtrace();
    return Status::DataLoss("cannot read checkpoint " + loaded.path + " (a rung-train checkpoint is a LibTorch "
                            "archive): " + message.substr(0, message.find('\n')));
  } catch (const std::exception& error) {
    return Status::DataLoss("cannot read checkpoint " + loaded.path + ": " + error.what());
  }
  return loaded;
}

namespace {

// train.init.checkpoint naming a Hugging Face model folder: the trial's model must be the folder's
// (its options, not only its shapes: a base or an epsilon that differs changes the function silently).
Status InitializeFromHfFolder(const InitConfig& init, Transformer& model) {
  StatusOr<hf::ImportedModel> imported = hf::ImportHfModel(init.checkpoint);
  if (!imported.ok()) return Status(imported.status().code(), "train.init.checkpoint: " + imported.status().message());
  const ModelConfig& theirs = imported->config;
  const ModelConfig& ours = model->config();
  std::vector<std::string> differences;
  auto compare = [&](const std::string& key, const auto& mine, const auto& folder) {
    if (mine != folder) differences.push_back(key + ": " + nlohmann::json(folder).dump() + " (here " + nlohmann::json(mine).dump() + ")");
  };
  compare("model.vocab_size", ours.vocab_size, theirs.vocab_size);
  compare("model.layers", ours.layers, theirs.layers);
  compare("model.d_model", ours.d_model, theirs.d_model);
  compare("model.heads", ours.heads, theirs.heads);
  compare("model.kv_heads", ours.kv_heads, theirs.kv_heads);
  compare("model.head_dim", ours.head_dim, theirs.head_dim);
  compare("model.mlp", ours.mlp, theirs.mlp);
  compare("model.mlp_hidden", ours.mlp_hidden, theirs.mlp_hidden);
  compare("model.qk_norm", ours.qk_norm, theirs.qk_norm);
  compare("model.norm_eps", ours.norm_eps, theirs.norm_eps);
  compare("model.qkv_bias", ours.qkv_bias, theirs.qkv_bias);
  compare("model.tie_embeddings", ours.tie_embeddings, theirs.tie_embeddings);
  // A variant that starts as RoPE may take a RoPE folder's backbone (a variant changed at
  // initialisation): its own positional parameters stay at their initial values.
  const PositionalVariant* variant = FindPositionalVariant(ours.position.variant);
  const bool converts = ours.position.variant != theirs.position.variant && theirs.position.variant == "rope" &&
                        variant != nullptr && variant->StartsAsRope(ours.position);
  if (!converts) compare("position.variant", ours.position.variant, theirs.position.variant);
  compare("position.base", ours.position.base, theirs.position.base);
  if (theirs.position.variant == "prope") compare("position.fraction", ours.position.fraction, theirs.position.fraction);
  if (!differences.empty()) {
    std::string message = "train.init.checkpoint " + init.checkpoint + " is a " +
                          hf::HfArchitectureName(imported->hf.architecture) + " this trial's model is not; set";
    for (const std::string& difference : differences) message += "\n  " + difference;
    return Status::FailedPrecondition(message);
  }
  if (init.parameters == "positional") {
    return Status::FailedPrecondition("train.init.parameters positional: " + init.checkpoint +
                                      " is a RoPE model, which has no learned positional parameters");
  }
  const Status runnable = hf::CheckTrialCanRunFolder(imported->hf, init.checkpoint + "/config.json");
  if (!runnable.ok()) return Status(runnable.code(), "train.init.checkpoint: " + runnable.message());
  torch::NoGradGuard no_grad;
  auto source = imported->model->named_parameters(true);
  for (auto& item : model->named_parameters(true)) {
    if (converts && IsPositionalParameter(item.key())) continue;  // at its initial value: RoPE's function
    if (IsLoraParameter(item.key())) continue;  // the trial's own adapters start as drawn
    const torch::Tensor* value = source.find(item.key());
    if (value == nullptr || value->sizes() != item.value().sizes()) {
      return Status::Internal("train.init.checkpoint: the imported model has no parameter " + item.key() + " of its shape");
    }
    item.value().copy_(*value);
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The identity (trial config) a checkpoint was written for, from its meta; null where it has none.
json CheckpointIdentity(torch::serialize::InputArchive& archive) {
  c10::IValue meta_value;
  if (!archive.try_read(kMetaKey, meta_value) || !meta_value.isString()) return json();
  const json meta = json::parse(meta_value.toStringRef(), nullptr, false);
  return meta.is_object() ? meta.value("identity", json()) : json();
}

// AdaRoPE's context-extension start (train.init.adarope_start yarn, ntk_by_parts or pi) from a source
// trained at `source_length`: data.seq_len must not be shorter and position.adarope.l_ref must be it;
// the factor is init.adarope_scale, else data.seq_len over source_length.
Status StartAdaRopeExtension(Transformer& model, const InitConfig& init, int64_t source_length, double yarn_c) {
  const ModelConfig& config = model->config();
  const std::string what = "train.init.adarope_start " + init.adarope_start;
  if (config.seq_len < source_length) {
    return Status::FailedPrecondition(what + " extends a context: data.seq_len " + std::to_string(config.seq_len) +
                                      " is shorter than the source's " + std::to_string(source_length));
  }
  if (config.position.adarope.l_ref != static_cast<double>(source_length)) {
    return Status::FailedPrecondition(what + ": position.adarope.l_ref must be the source's training length " +
                                      std::to_string(source_length) + " (AdaRoPE section 3.4)");
  }
  const double scale = init.adarope_scale > 0
                           ? init.adarope_scale
                           : static_cast<double>(config.seq_len) / static_cast<double>(source_length);
  torch::NoGradGuard no_grad;
  model->positional()->StartContextExtension(init.adarope_start, scale, static_cast<double>(source_length), yarn_c);
  return Status::Ok();
}

}  // namespace

Status InitializeFromCheckpoint(const InitConfig& source, Transformer& model, double yarn_c, std::string* converted_from) {
  InitConfig init = source;
  if (hf::IsHfModelFolder(init.checkpoint)) {
    RUNG_RETURN_IF_ERROR(InitializeFromHfFolder(init, model));
    if (converted_from != nullptr && model->config().position.variant != "rope" &&
        model->config().position.variant != "prope") {
      *converted_from = "rope";  // the folder's RoPE, started as the trial's variant
    }
    if (init.adarope_start == "trained") return Status::Ok();
    // A RoPE folder converted to AdaRoPE, extended from the context it was trained at (AdaRoPE section 5).
    RUNG_ASSIGN_OR_RETURN(const hf::HfModelConfig folder, hf::ReadHfModelConfig(init.checkpoint));
    try {
      return StartAdaRopeExtension(model, init, hf::OriginalContext(folder), yarn_c);
    } catch (const std::exception& error) {
      return Status::FailedPrecondition("train.init.adarope_start " + init.adarope_start + ": " + error.what());
    }
  }
  RUNG_ASSIGN_OR_RETURN(init.checkpoint, CheckpointFile(init.checkpoint, "train.init.checkpoint"));
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(init.checkpoint);
    torch::NoGradGuard no_grad;
    // A RoPE checkpoint into a variant that starts as RoPE: the backbone, the variant's own
    // parameters at their initial values (a variant changed at initialisation).
    const json identity = CheckpointIdentity(archive);
    const json variant_value = identity.is_object() ? identity.value("/position/variant"_json_pointer, json()) : json();
    const std::string source_variant = variant_value.is_string() ? variant_value.get<std::string>() : "";
    const PositionConfig& target = model->config().position;
    const PositionalVariant* variant = FindPositionalVariant(target.variant);
    const bool converts = source_variant == "rope" && target.variant != "rope" && variant != nullptr &&
                          variant->StartsAsRope(target) && init.parameters != "positional";
    int64_t copied = 0;
    for (auto& item : model->named_parameters(true)) {
      if (IsLoraParameter(item.key())) continue;  // the trial's own adapters start as drawn
      const bool positional = IsPositionalParameter(item.key());
      if ((init.parameters == "positional" && !positional) || (init.parameters == "backbone" && positional)) continue;
      if (converts && positional) continue;
      torch::Tensor value;
      if (!archive.try_read(ModelKey(item.key()), value)) {
        return Status::FailedPrecondition("train.init.checkpoint " + init.checkpoint + " has no parameter " + item.key() +
                                          " (a different variant or shape?)");
      }
      if (value.sizes() != item.value().sizes()) {
        return Status::FailedPrecondition("train.init.checkpoint: parameter " + item.key() + " has shape " +
                                          c10::str(value.sizes()) + " there and " + c10::str(item.value().sizes()) +
                                          " here");
      }
      item.value().copy_(value);
      ++copied;
    }
    if (copied == 0) {
      return Status::FailedPrecondition("train.init: no " + init.parameters + " parameters to copy from " + init.checkpoint);
    }
    // A source trained with adapters is its backbone with them merged.
    if (init.parameters != "positional" && identity.is_object() && identity.contains("train") &&
        identity["train"].contains("lora")) {
      StatusOr<TrialConfig> source_trial = TrialConfigFromIdentity(identity);
      if (!source_trial.ok()) {
        return Status::FailedPrecondition("train.init.checkpoint " + init.checkpoint +
                                          ": its trial config does not parse: " + source_trial.status().message());
      }
      RUNG_RETURN_IF_ERROR(MergeCheckpointAdapters(archive, *source_trial, model, init.checkpoint));
    }
    if (converts && converted_from != nullptr) *converted_from = source_variant;
    if (init.adarope_start != "trained") {
      const json length = identity.is_object() ? identity.value("/data/seq_len"_json_pointer, json()) : json();
      if (!length.is_number_integer() || length.get<int64_t>() <= 0) {
        return Status::FailedPrecondition("train.init.adarope_start " + init.adarope_start + ": " + init.checkpoint +
                                          " does not say its training length");
      }
      RUNG_RETURN_IF_ERROR(StartAdaRopeExtension(model, init, length.get<int64_t>(), yarn_c));
    }
  } catch (const std::exception& error) {
    return Status::DataLoss("cannot read train.init.checkpoint " + init.checkpoint + ": " + error.what());
  }
  return Status::Ok();
}

}  // namespace rung

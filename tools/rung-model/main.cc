// rung-model: what rung does with a trained model outside a sweep (LibTorch; `rung eval` and
// `rung export-hf` run it):
//
//   rung-model eval --model DIR|CHECKPOINT (--tokens SHARD|PREPARED | --text FILE) --seq-len T [--stride S]
//                   [--extension as-configured|METHOD --factor s --original-length L ...]
//                   [--by-position] [--format table|json|csv] [--max-windows N] [--bos auto|yes|no]
//   rung-model export-hf --model CHECKPOINT --out DIR
//   rung-model diag --model DIR|CHECKPOINT --tokens SHARD|PREPARED --seq-len T [--sequences N] [--batches K]
//                   (`rung diag --model`: the attention diagnostics of docs/science.md section 7 as one JSON
//                   document {"attention": ..., "head_dim", "base", "seq_len", "architecture"})
//
// --text tokenizes a text file with the model folder's own tokenizer (rung-data encode, which must sit
// beside rung-model). --model is a Hugging Face model folder (config.json and safetensors: core/hf/hf_import.h) or a
// rung-train checkpoint (a file, or a trial's checkpoint folder: its newest). Exit codes: 0 done, 2 bad
// arguments, 4 a model, checkpoint or token file unusable (the message names the file and what is
// wrong), 1 anything else.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/common/blas_kernel_startup.h"
#include "core/common/command_line.h"
#include "core/common/rung_data_encode.h"
#include "core/common/temporary_folder.h"
#include "core/common/cpu_features.h"
#include "core/common/file_bytes.h"
#include "core/config/length_extension_method.h"
#include "core/data/token_shards.h"
#include "core/diagnostics/appendix_d1.h"
#include "core/model/length_extension.h"
#include "core/diagnostics/attention_diagnostics.h"
#include "core/hf/hf_export.h"
#include "core/hf/hf_import.h"
#include "core/hf/bos_policy.h"
#include "core/train/checkpoint_io.h"
#include "core/train/evaluation.h"
#include "core/train/runtime.h"
#include "core/records/record_json.h"
#include "core/train/window_loss.h"

namespace {

constexpr int kExitOk = 0, kExitOther = 1, kExitUsage = 2, kExitData = 4;

int ExitCodeFor(const rung::Status& status) {
  switch (status.code()) {
    case rung::StatusCode::kInvalidArgument: return kExitUsage;
    case rung::StatusCode::kNotFound:
    case rung::StatusCode::kFailedPrecondition:
    case rung::StatusCode::kDataLoss: return kExitData;
    default: return kExitOther;
  }
}

int Fail(const std::string& command, const rung::Status& status) {
  std::cerr << "rung " << command << ": " << status.message() << "\n";
  return ExitCodeFor(status);
}

// The same for a file the user named that cannot be used: exit 4 whatever the status.
int FailUnusable(const std::string& command, const rung::Status& status) {
  std::cerr << "rung " << command << ": " << status.message() << "\n";
  return kExitData;
}

// A model to evaluate: imported from a Hugging Face folder or read from a rung checkpoint.
struct LoadedModel {
  rung::Transformer model{nullptr};
  std::string kind;          // "huggingface" | "rung"
  std::string description;   // "LlamaForCausalLM", or "rung rope (trial config of step N)"
  std::optional<rung::hf::HfModelConfig> hf;
  int64_t original_context = 0;  // the length extensions' L
  std::optional<int64_t> bos;    // the model's BOS id, where it asks for one
  std::string weights_dtype;
};

std::string DtypeName(const torch::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case torch::kBFloat16: return "bf16";
    case torch::kHalf: return "fp16";
    default: return "fp32";
  }
}

rung::StatusOr<LoadedModel> LoadModel(const std::string& path) {
  LoadedModel loaded;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return rung::Status::NotFound("--model " + path +
                                  " does not exist (give a Hugging Face model folder or a rung checkpoint)");
  }
  if (std::filesystem::is_directory(path, error) && !rung::hf::IsHfModelFolder(path) &&
      std::filesystem::is_empty(path, error)) {
    return rung::Status::NotFound("--model " + path +
                                  " is an empty folder: neither a Hugging Face model folder (config.json) nor a "
                                  "checkpoint folder");
  }
  if (rung::hf::IsHfModelFolder(path)) {
    RUNG_ASSIGN_OR_RETURN(rung::hf::ImportedModel imported, rung::hf::ImportHfModel(path));
    loaded.model = imported.model;
    loaded.kind = "huggingface";
    loaded.description = rung::hf::HfArchitectureName(imported.hf.architecture);
    loaded.original_context = rung::hf::OriginalContext(imported.hf);
    if (imported.hf.bos_token_id && rung::hf::FolderAddsBos(path, *imported.hf.bos_token_id)) {
      loaded.bos = imported.hf.bos_token_id;
    }
    loaded.hf = imported.hf;
  } else {
    RUNG_ASSIGN_OR_RETURN(rung::CheckpointModel checkpoint, rung::LoadCheckpointModel(path));
    loaded.model = checkpoint.model;
    loaded.kind = "rung";
    loaded.description = "rung " + checkpoint.trial.model.position.variant + " (step " + std::to_string(checkpoint.step) + ")";
    loaded.original_context = checkpoint.trial.data.seq_len;
  }
  loaded.weights_dtype = DtypeName(loaded.model->named_parameters(true)["embedding"]);
  return loaded;
}

// LibTorch's threads: `threads`, or every core.
void ConfigureThreads(int threads) {
  rung::ConfigureRuntime(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

// The BOS id to prepend for `choice` (auto: where the folder's tokenizer config adds one; yes; no), or
// INVALID_ARGUMENT where yes names none. (config.json's bos_token_id is checked against the vocabulary
// when it is read.)
rung::StatusOr<std::optional<int64_t>> ChooseBos(const std::string& choice, const LoadedModel& loaded,
                                                 const std::string& model_path) {
  if (choice == "no") return std::optional<int64_t>();
  if (choice == "auto") return loaded.bos;
  if (!loaded.hf || !loaded.hf->bos_token_id) {
    return rung::Status::InvalidArgument("--bos yes: " + model_path + " names no bos_token_id");
  }
  return loaded.hf->bos_token_id;
}

// `rows` consecutive stream sequences of `length` positions from the stream's start, each beginning with
// `bos` where given (then `length` - 1 stream tokens follow it). REQUIRES: the stream holds them.
torch::Tensor StreamRows(const rung::TokenShards& stream, int64_t rows, int64_t length, std::optional<int64_t> bos) {
  const int64_t text = bos ? length - 1 : length;
  torch::Tensor tokens = torch::empty({rows, length}, torch::kLong);
  auto out = tokens.accessor<int64_t, 2>();
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t < length; ++t) {
      out[r][t] = bos && t == 0 ? *bos : stream.Token(rung::Split::kValidation, r * text + t - (bos ? 1 : 0));
    }
  }
  return tokens;
}

// The tokens to read: a prepared folder's validation split, or every token of a shard file or folder,
// as their validation split (ids checked against `vocab_size`). Windows are counted by the caller.
rung::StatusOr<std::unique_ptr<rung::TokenShards>> OpenTokens(const std::string& path, int64_t vocab_size) {
  rung::DataConfig data;
  data.source = "shards";
  data.path = path;
  data.vocab_size = vocab_size;
  data.token_bytes = vocab_size > 65536 ? 4 : 2;
  data.seq_len = 1;
  std::error_code error;
  if (!std::filesystem::exists(std::filesystem::path(path) / "manifest.json", error)) data.val_path = path;
  return rung::TokenShards::Open(data, 0);
}

// A text file's ids, tokenized with the model folder's own tokenizer by `rung-data encode` (its
// tokenizer.json, else tokenizer.model, with the folder's special tokens; the text's ids alone, the
// BOS left to --bos): an llm.c shard in a temporary folder removed with it, and each id's decoded length
// in bytes (for bits per byte).
class TextTokens {
 public:
  static rung::StatusOr<std::unique_ptr<TextTokens>> Encode(const std::string& text, const std::string& model,
                                                            int threads);
  const std::string& shard() const { return shard_; }
  const std::vector<int32_t>& byte_lengths() const { return byte_lengths_; }

 private:
  explicit TextTokens(rung::TemporaryFolder folder) : folder_(std::move(folder)) {}
  rung::TemporaryFolder folder_;
  std::string shard_;
  std::vector<int32_t> byte_lengths_;
};

rung::StatusOr<std::unique_ptr<TextTokens>> TextTokens::Encode(const std::string& text, const std::string& model,
                                                              int threads) {
  std::error_code error;
  if (!std::filesystem::is_directory(model, error)) {
    return rung::Status::InvalidArgument("--text: " + model + " is not a model folder, so it has no tokenizer; "
                                         "for a rung checkpoint, prepare the text with rung-data prepare and give --tokens");
  }
  RUNG_ASSIGN_OR_RETURN(rung::TemporaryFolder folder, rung::TemporaryFolder::Make("rung-eval-text"));
  auto out = std::unique_ptr<TextTokens>(new TextTokens(std::move(folder)));
  out->shard_ = out->folder_.File("text.bin");
  const std::string lengths = out->folder_.File("token_byte_lengths.json");
  std::vector<std::string> arguments = {"--tokenizer", model, "--input", text, "--format", "bin", "--no-special-tokens",
                                        "--out", out->shard_, "--token-byte-lengths", lengths};
  if (threads > 0) arguments.insert(arguments.end(), {"--threads", std::to_string(threads)});
  RUNG_RETURN_IF_ERROR(rung::RunRungDataEncode(arguments, "--text " + text + ": tokenizing with " + model + "'s tokenizer failed"));
  std::string lengths_text;
  RUNG_RETURN_IF_ERROR(rung::ReadFileBytes(lengths, "token byte lengths", &lengths_text));
  const nlohmann::json parsed = nlohmann::json::parse(lengths_text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_array()) return rung::Status::Internal("rung-data wrote no token byte lengths to " + lengths);
  out->byte_lengths_ = parsed.get<std::vector<int32_t>>();
  return out;
}

struct EvalOptions {
  std::string model, tokens, text, extension = "as-configured", format = "table", bos = "auto", device = "cpu",
      dtype = "fp32";
  int64_t seq_len = 0, stride = 0, max_windows = 0, original_length = 0;
  double factor = 0.0, yarn_c = 0.1, alpha = 0.0, beta = 0.0;
  bool by_position = false;
  int threads = 0;
};

// The extension the options ask for at window length T.
rung::StatusOr<rung::LengthExtension> ChooseExtension(const EvalOptions& options, const LoadedModel& loaded) {
  if (options.extension == "as-configured") {
    if (loaded.hf) return rung::hf::ConfiguredExtension(*loaded.hf, options.seq_len);
    return rung::LengthExtension{};
  }
  const rung::LengthExtensionMethod* method = rung::FindLengthExtensionMethod(options.extension);
  if (method == nullptr) {
    std::string names;
    for (const std::string& name : rung::LengthExtensionMethodNames()) names += ", " + name;
    return rung::Status::InvalidArgument("--extension " + options.extension + " is not as-configured" + names);
  }
  const rung::ModelConfig& config = loaded.model->config();
  rung::LengthExtension extension;
  extension.method = options.extension;
  extension.train_length = static_cast<double>(options.original_length > 0 ? options.original_length : loaded.original_context);
  extension.scale = options.factor > 0.0 ? options.factor : static_cast<double>(options.seq_len) / extension.train_length;
  extension.yarn_c = options.yarn_c;
  extension.rope_base = config.position.base;
  if (options.extension == "llama3") {
    if (options.alpha > 0.0) extension.low_freq_factor = options.alpha;
    if (options.beta > 0.0) extension.high_freq_factor = options.beta;
  } else {
    if (options.alpha > 0.0) extension.alpha = options.alpha;
    if (options.beta > 0.0) extension.beta = options.beta;
  }
  return extension;
}

// What forward computes in: bf16 where asked and the weights are stored narrow; fp32 weights as they are.
std::string ComputeDtype(const EvalOptions& options, const LoadedModel& loaded) {
  return options.dtype == "bf16" && loaded.weights_dtype != "fp32" ? "bf16" : "fp32";
}

std::string ExtensionText(const rung::LengthExtension& extension) {
  if (!extension.active()) return "none";
  char text[160];
  std::snprintf(text, sizeof(text), "%s, s = %.6g over L = %.0f", extension.method.c_str(), extension.scale,
                extension.train_length);
  return text;
}

int RunEval(const EvalOptions& options) {
  ConfigureThreads(options.threads);
  if (options.stride < 0 || options.stride > options.seq_len) {
    std::cerr << "rung eval: --stride must be between 1 and --seq-len (" << options.seq_len << ")\n";
    return kExitUsage;
  }
  const auto started = std::chrono::steady_clock::now();
  // A model or token file that cannot be used is exit 4, whatever the reason (a lying header, a missing
  // shard, an unknown architecture, an id outside the vocabulary).
  rung::StatusOr<LoadedModel> loaded = LoadModel(options.model);
  if (!loaded.ok()) return FailUnusable("eval", loaded.status());
  const rung::ModelConfig& config = loaded->model->config();
  rung::StatusOr<std::optional<int64_t>> chosen_bos = ChooseBos(options.bos, *loaded, options.model);
  if (!chosen_bos.ok()) return Fail("eval", chosen_bos.status());
  const std::optional<int64_t> bos = *chosen_bos;
  rung::StatusOr<rung::LengthExtension> extension = ChooseExtension(options, *loaded);
  if (!extension.ok()) return Fail("eval", extension.status());
  if (options.device == "cuda" && !torch::cuda::is_available()) {
    std::cerr << "rung eval: --device cuda: this LibTorch sees no CUDA device\n";
    return kExitUsage;
  }
  const torch::Device device = options.device == "cuda" ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  loaded->model->to(device);
  if (options.dtype == "bf16") {
    if (options.device == "cpu" && !rung::DetectCpuFeatures().avx512_bf16) {
      std::cerr << "rung eval: warning: --dtype bf16: this CPU has no AVX512-BF16 instructions; bf16 is emulated "
                   "there and slower than fp32\n";
    }
    loaded->model->set_compute_dtype(torch::kBFloat16);
  }

  std::unique_ptr<TextTokens> text;
  if (!options.text.empty()) {
    rung::StatusOr<std::unique_ptr<TextTokens>> encoded = TextTokens::Encode(options.text, options.model, options.threads);
    if (!encoded.ok()) return Fail("eval", encoded.status());
    text = std::move(*encoded);
    if (static_cast<int64_t>(text->byte_lengths().size()) > config.vocab_size) {
      std::cerr << "rung eval: --text: " << options.model << "'s tokenizer has " << text->byte_lengths().size()
                << " ids, more than the model's vocabulary of " << config.vocab_size << "\n";
      return kExitData;
    }
  }
  const std::string tokens_path = text ? text->shard() : options.tokens;
  const std::string tokens_name = text ? options.text : options.tokens;
  rung::StatusOr<std::unique_ptr<rung::TokenShards>> shards = OpenTokens(tokens_path, config.vocab_size);
  if (!shards.ok()) return FailUnusable("eval", shards.status());
  const rung::TokenShards& stream = **shards;
  const int64_t stream_tokens = stream.SplitTokens(rung::Split::kValidation);
  const std::vector<int32_t>* byte_lengths = text ? &text->byte_lengths() : stream.TokenByteLengths();
  // Dominant-band interpolation: each frequency unit's dominant pair, measured as the sweeps' evaluation
  // measures it (docs/science.md section 9), on up to 4 sequences of the original length from the start of
  // the stream, before any extension.
  const rung::LengthExtensionMethod* method = rung::FindLengthExtensionMethod(extension->method);
  if (method != nullptr && method->needs_dominant_pairs() && extension->active()) {
    const int64_t length = static_cast<int64_t>(extension->train_length);
    const int64_t sequences = std::min<int64_t>(4, stream_tokens / length);
    if (sequences < 1) {
      std::cerr << "rung eval: --extension " << extension->method << " measures each pair's dominance on sequences of "
                << length << " tokens; " << tokens_name << " holds " << stream_tokens << "\n";
      return kExitUsage;
    }
    loaded->model->positional()->set_length_extension(rung::LengthExtension{});
    extension->dominant_pairs = rung::MeasureDominantPairs(
        loaded->model, StreamRows(stream, sequences, length, std::nullopt).to(device), torch::Tensor());
  }
  loaded->model->positional()->set_length_extension(*extension);
  rung::WindowLossOptions window_options;
  window_options.seq_len = options.seq_len;
  window_options.stride = options.stride;
  window_options.max_windows = options.max_windows;
  window_options.bos = bos;
  window_options.device = device;
  if (loaded->hf && loaded->hf->sliding_window) window_options.sliding_window = *loaded->hf->sliding_window;
  if (rung::CountWindows(stream_tokens, window_options) < 1) {
    std::cerr << "rung eval: " << tokens_name << " holds " << stream_tokens << " tokens, fewer than one window of "
              << options.seq_len << (bos ? "" : " + 1") << "\n";
    return kExitUsage;
  }
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  if (terminal) {
    window_options.progress = [](int64_t done, int64_t all) {
      std::fprintf(stderr, "\rrung eval: window %lld/%lld", static_cast<long long>(done), static_cast<long long>(all));
      if (done == all) std::fprintf(stderr, "\n");
    };
  }
  const auto evaluating = std::chrono::steady_clock::now();
  const rung::WindowLoss loss = rung::EvaluateWindows(
      loaded->model, stream_tokens, [&](int64_t i) { return stream.Token(rung::Split::kValidation, i); },
      byte_lengths, window_options);
  const auto finished = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(finished - evaluating).count();
  const double total_seconds = std::chrono::duration<double>(finished - started).count();
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  const int64_t peak_bytes = static_cast<int64_t>(usage.ru_maxrss) * 1024;
  const double mean = loss.mean_loss();
  const nlohmann::json bits_per_byte =
      loss.bytes_scored > 0 ? nlohmann::json(loss.loss_sum / std::log(2.0) / loss.bytes_scored) : nlohmann::json();
  nlohmann::json by_position = nlohmann::json::array();
  for (int64_t p = 0; p < options.seq_len; ++p) {
    by_position.push_back(loss.position_count[p] > 0
                              ? nlohmann::json(loss.position_loss_sum[p] / static_cast<double>(loss.position_count[p]))
                              : nlohmann::json());
  }
  const double tokens_per_second = seconds > 0 ? static_cast<double>(loss.windows * options.seq_len) / seconds : 0.0;

  if (options.format == "json") {
    nlohmann::json out = {
        {"model", {{"path", options.model}, {"kind", loaded->kind}, {"architecture", loaded->description},
                   {"weights_dtype", loaded->weights_dtype}, {"compute_dtype", ComputeDtype(options, *loaded)},
                   {"device", options.device}}},
        {"tokens", {{"path", tokens_name}, {"stream_tokens", stream_tokens}}},
        {"seq_len", options.seq_len},
        {"stride", options.stride > 0 ? options.stride : options.seq_len},
        {"bos", bos ? nlohmann::json(*bos) : nlohmann::json()},
        {"sliding_window", window_options.sliding_window > 0 ? nlohmann::json(window_options.sliding_window) : nlohmann::json()},
        {"extension", {{"method", extension->active() ? extension->method : "none"},
                       {"scale", extension->scale},
                       {"original_length", extension->train_length},
                       {"as_configured", options.extension == "as-configured"}}},
        {"windows", loss.windows},
        {"tokens_scored", loss.tokens_scored},
        {"mean_loss", mean},
        {"perplexity", std::exp(mean)},
        {"bits_per_byte", bits_per_byte},
        {"seconds", seconds},
        {"seconds_with_load", total_seconds},
        {"tokens_per_second", tokens_per_second},
        {"peak_rss_bytes", peak_bytes},
    };
    if (options.by_position) out["by_position"] = by_position;
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  if (options.format == "csv") {
    if (options.by_position) {
      std::cout << "position,mean_loss,windows\n";
      for (int64_t p = 0; p < options.seq_len; ++p) {
        if (loss.position_count[p] == 0) continue;
        std::printf("%lld,%.6f,%lld\n", static_cast<long long>(p), loss.position_loss_sum[p] / loss.position_count[p],
                    static_cast<long long>(loss.position_count[p]));
      }
    } else {
      std::cout << "seq_len,windows,tokens_scored,mean_loss,perplexity,bits_per_byte,extension,scale\n";
      std::printf("%lld,%lld,%lld,%.6f,%.6f,%s,%s,%.6g\n", static_cast<long long>(options.seq_len),
                  static_cast<long long>(loss.windows), static_cast<long long>(loss.tokens_scored), mean, std::exp(mean),
                  bits_per_byte.is_null() ? "" : std::to_string(bits_per_byte.get<double>()).c_str(),
                  extension->active() ? extension->method.c_str() : "none", extension->scale);
    }
    return kExitOk;
  }
  std::printf("model        %s (%s, %s weights, computing in %s on %s)\n", options.model.c_str(),
              loaded->description.c_str(), loaded->weights_dtype.c_str(), ComputeDtype(options, *loaded).c_str(),
              options.device.c_str());
  std::printf("tokens       %s (%lld tokens%s)\n", tokens_name.c_str(), static_cast<long long>(stream_tokens),
              text ? ", tokenized with the model folder's tokenizer" : "");
  std::printf("extension    %s%s\n", ExtensionText(*extension).c_str(),
              options.extension == "as-configured" ? " (as configured)" : "");
  std::printf("windows      %lld of %lld tokens, stride %lld%s\n", static_cast<long long>(loss.windows),
              static_cast<long long>(options.seq_len),
              static_cast<long long>(options.stride > 0 ? options.stride : options.seq_len),
              bos ? (", BOS " + std::to_string(*bos) + " prepended to each").c_str() : "");
  if (window_options.sliding_window > 0 && window_options.sliding_window < options.seq_len) {
    std::printf("attention    sliding window of %lld keys (the model's sliding_window)\n",
                static_cast<long long>(window_options.sliding_window));
  }
  std::printf("scored       %lld tokens\n", static_cast<long long>(loss.tokens_scored));
  std::printf("mean loss    %.4f nats (perplexity %.4g)\n", mean, std::exp(mean));
  if (!bits_per_byte.is_null()) std::printf("bits/byte    %.4f\n", bits_per_byte.get<double>());
  std::printf("time         %.2f s (%.0f tokens/s; %.2f s with loading)\n", seconds, tokens_per_second, total_seconds);
  std::printf("peak memory  %.1f MiB\n", static_cast<double>(peak_bytes) / (1024.0 * 1024.0));
  if (options.by_position) {
    // The curve in up to 16 ranges of positions.
    const int64_t ranges = std::min<int64_t>(16, options.seq_len);
    std::printf("\nloss by position\n");
    for (int64_t r = 0; r < ranges; ++r) {
      const int64_t begin = r * options.seq_len / ranges, end = (r + 1) * options.seq_len / ranges;
      double sum = 0;
      int64_t count = 0;
      for (int64_t p = begin; p < end; ++p) sum += loss.position_loss_sum[p], count += loss.position_count[p];
      if (count > 0) {
        std::printf("  %6lld-%-6lld %.4f\n", static_cast<long long>(begin), static_cast<long long>(end - 1), sum / count);
      }
    }
  }
  return kExitOk;
}

struct DiagnoseOptions {
  std::string model, tokens, bos = "auto";
  int64_t seq_len = 0, sequences = 16, batches = 1;
  int threads = 0;
};

// `rung diag --model`: the diagnostics the trainer measures at a milestone (core/diagnostics/
// attention_diagnostics.h), with its defaults, on the first sequences x batches windows of T tokens of
// the stream, under the model's own rope_scaling; printed as one JSON document.
int RunDiagnose(const DiagnoseOptions& options) {
  ConfigureThreads(options.threads);
  rung::StatusOr<LoadedModel> loaded = LoadModel(options.model);
  if (!loaded.ok()) return FailUnusable("diag", loaded.status());
  const rung::ModelConfig& config = loaded->model->config();
  if (!config.position.rotary()) {
    std::cerr << "rung diag: --model " << options.model << " does not rotate queries and keys\n";
    return kExitUsage;
  }
  if (loaded->hf && loaded->hf->sliding_window && options.seq_len > *loaded->hf->sliding_window) {
    std::cerr << "rung diag: " << options.model << " attends over a sliding window of " << *loaded->hf->sliding_window
              << " tokens; the diagnostics read whole causal rows: give --seq-len " << *loaded->hf->sliding_window
              << " or less\n";
    return kExitUsage;
  }
  rung::StatusOr<std::optional<int64_t>> chosen_bos = ChooseBos(options.bos, *loaded, options.model);
  if (!chosen_bos.ok()) return Fail("diag", chosen_bos.status());
  const std::optional<int64_t> bos = *chosen_bos;
  rung::StatusOr<std::unique_ptr<rung::TokenShards>> shards = OpenTokens(options.tokens, config.vocab_size);
  if (!shards.ok()) return FailUnusable("diag", shards.status());
  const rung::TokenShards& stream = **shards;
  const int64_t rows = options.sequences * options.batches;
  const int64_t text_per_row = bos ? options.seq_len - 1 : options.seq_len;
  const int64_t available = stream.SplitTokens(rung::Split::kValidation);
  if (available < rows * text_per_row) {
    std::cerr << "rung diag: " << options.tokens << " holds " << available << " tokens, fewer than " << rows
              << " sequences of " << options.seq_len << "\n";
    return kExitUsage;
  }
  const torch::Tensor tokens = StreamRows(stream, rows, options.seq_len, bos);
  if (loaded->hf) loaded->model->positional()->set_length_extension(rung::hf::ConfiguredExtension(*loaded->hf, options.seq_len));
  // The trainer's defaults (TrainConfig's diagnostics_*), on these batches.
  rung::DiagnosticsOptions diagnostics = rung::DiagnosticsOptionsOf(rung::TrainConfig{}, 0);
  // RoPE's failure modes of a folder are `rung failure-modes`'s (with its <bos>, window and lengths).
  diagnostics.failure_lengths.clear();
  diagnostics.batch_sequences = options.sequences;
  diagnostics.bootstrap_unit = options.batches > 1 ? rung::kBootstrapUnitBatch : rung::kBootstrapUnitSequence;
  torch::NoGradGuard no_grad;
  const rung::records::AttentionDiagnostics attention =
      rung::MeasureAttentionDiagnostics(loaded->model, tokens, torch::Tensor(), diagnostics);
  const nlohmann::json out = {{"attention", rung::records::DocumentJson(attention)},
                              {"head_dim", config.head_dim},
                              {"base", config.position.base},
                              {"seq_len", options.seq_len},
                              {"architecture", loaded->description},
                              {"sequences", rows}};
  std::cout << out.dump() << "\n";
  return kExitOk;
}

struct FailureModesOptions {
  std::string model, bos = "auto", format = "table";
  int64_t layer = 0, head = 0, length = 1024;
  // The paper's tokens (appendix D.1, sections 3 and 4): a query, a related key, a second related key
  // and an unrelated one; as texts the model folder's tokenizer encodes, or as ids.
  std::string query = " pet";
  std::vector<std::string> keys = {" cat", " dog", " number"};
  int64_t query_id = -1;
  std::vector<int64_t> key_ids;
  bool scores = false;
  std::string order = "given";
  int reference_draws = 16;
  int threads = 0;
};

// A text's one token: the folder's tokenizer's (rung-data encode), or for a byte-level rung model the
// byte; INVALID_ARGUMENT where it is several tokens or the model has no tokenizer.
rung::StatusOr<std::vector<int64_t>> SingleTokens(const std::vector<std::string>& texts, const LoadedModel& loaded,
                                                  const std::string& model_path) {
  std::vector<int64_t> ids;
  if (!loaded.hf) {
    if (loaded.model->config().vocab_size > 256) {
      return rung::Status::InvalidArgument("--query and --keys: " + model_path + " is a rung checkpoint without a "
                                           "tokenizer here; give --query-id and --key-ids");
    }
    for (const std::string& text : texts) {
      if (text.size() != 1) {
        return rung::Status::InvalidArgument("'" + text + "' is " + std::to_string(text.size()) +
                                             " bytes; a byte-level model's token is one byte (or give ids)");
      }
      ids.push_back(static_cast<unsigned char>(text[0]));
    }
    return ids;
  }
  RUNG_ASSIGN_OR_RETURN(const std::vector<std::vector<int32_t>> encoded,
                        rung::EncodeTextsWithRungData(model_path, texts, /*special_tokens=*/false,
                                                      "--query and --keys: encoding with " + model_path));
  for (size_t i = 0; i < texts.size(); ++i) {
    if (encoded[i].size() != 1) {
      std::string listed;
      for (int32_t id : encoded[i]) listed += (listed.empty() ? "" : " ") + std::to_string(id);
      return rung::Status::InvalidArgument("'" + texts[i] + "' is " + std::to_string(encoded[i].size()) +
                                           " tokens (" + listed + ") under " + model_path +
                                           "'s tokenizer; give a text of one token, or ids");
    }
    ids.push_back(encoded[i][0]);
  }
  return ids;
}

// `rung failure-modes`: paper 003's measurement of one head (core/diagnostics/appendix_d1.h).
int RunFailureModes(const FailureModesOptions& options) {
  ConfigureThreads(options.threads);
  rung::StatusOr<LoadedModel> loaded = LoadModel(options.model);
  if (!loaded.ok()) return FailUnusable("failure-modes", loaded.status());
  rung::StatusOr<std::optional<int64_t>> chosen_bos = ChooseBos(options.bos, *loaded, options.model);
  if (!chosen_bos.ok()) return Fail("failure-modes", chosen_bos.status());
  rung::AppendixD1Options d1;
  d1.layer = options.layer;
  d1.head = options.head;
  d1.length = options.length;
  d1.bos_token = chosen_bos->value_or(-1);
  std::vector<std::string> names;
  if (options.query_id >= 0 || !options.key_ids.empty()) {
    if (options.query_id < 0 || options.key_ids.empty()) {
      std::cerr << "rung failure-modes: --query-id and --key-ids go together\n";
      return kExitUsage;
    }
    d1.query_token = options.query_id;
    d1.key_tokens = options.key_ids;
    for (int64_t id : options.key_ids) names.push_back("id " + std::to_string(id));
  } else {
    std::vector<std::string> texts = {options.query};
    texts.insert(texts.end(), options.keys.begin(), options.keys.end());
    rung::StatusOr<std::vector<int64_t>> ids = SingleTokens(texts, *loaded, options.model);
    if (!ids.ok()) return Fail("failure-modes", ids.status());
    d1.query_token = ids->front();
    d1.key_tokens.assign(ids->begin() + 1, ids->end());
    for (const std::string& key : options.keys) names.push_back("'" + key + "'");
  }
  const int64_t window = d1.length + 1 + (d1.bos_token >= 0 ? 1 : 0);
  if (loaded->hf && loaded->hf->sliding_window && window > *loaded->hf->sliding_window) {
    std::cerr << "rung failure-modes: " << options.model << " attends over a sliding window of "
              << *loaded->hf->sliding_window << " tokens and rung's pass here is fully causal: give --length "
              << *loaded->hf->sliding_window - (window - d1.length) << " or less\n";
    return kExitUsage;
  }
  if (loaded->hf) loaded->model->positional()->set_length_extension(rung::hf::ConfiguredExtension(*loaded->hf, window));
  rung::StatusOr<rung::AppendixD1Scores> scores = rung::MeasureAppendixD1Scores(loaded->model, d1);
  if (!scores.ok()) return Fail("failure-modes", scores.status());
  const std::vector<rung::Precision> precisions = {rung::Precision::kBf16, rung::Precision::kFp16, rung::Precision::kFp32};
  const rung::AppendixD1FailureModes modes = rung::MeasureAppendixD1FailureModes(
      *scores, precisions, options.order == "score" ? rung::KeyOrder::kByNearestScore : rung::KeyOrder::kGiven);
  // The Gaussian reference with the head's own frequencies (its KV group's row).
  const rung::ModelConfig& config = loaded->model->config();
  torch::Tensor theta = loaded->model->positional()->Frequencies(d1.layer).detach();
  const rung::LengthExtension& extension = loaded->model->positional()->length_extension();
  if (extension.active()) theta = rung::ExtendFrequencies(theta, extension, d1.layer);  // as the model runs at M
  theta = theta.to(torch::kDouble).cpu();
  theta = theta.dim() == 2 ? theta[theta.size(0) == 1 ? 0 : d1.head / (config.heads / config.kv_heads)] : theta;
  std::vector<double> head_theta(theta.data_ptr<double>(), theta.data_ptr<double>() + theta.numel());
  const rung::AppendixD1Means reference =
      rung::GaussianAppendixD1Reference(head_theta, d1.length, options.reference_draws, /*seed=*/0, precisions);
  if (options.format == "json") {
    nlohmann::json out = rung::AppendixD1ToJson(*scores, modes, options.scores);
    out["architecture"] = loaded->description;
    out["layer"] = d1.layer;
    out["head"] = d1.head;
    out["query_token"] = d1.query_token;
    out["bos_token"] = d1.bos_token >= 0 ? nlohmann::json(d1.bos_token) : nlohmann::json(nullptr);
    out["order"] = options.order;
    nlohmann::json gaussian = {{"draws", reference.draws},
                               {"position_inversion", reference.position_inversion},
                               {"token_inversion", std::isfinite(reference.token_inversion)
                                                       ? nlohmann::json(reference.token_inversion) : nlohmann::json(nullptr)}};
    for (const rung::AppendixD1MeanPrecision& row : reference.precisions) {
      gaussian["precisions"].push_back({{"precision", rung::PrecisionName(row.precision)}, {"epsilon", row.epsilon},
                                        {"position_aliasing_pairs", row.aliasing_pairs}, {"with_pair", row.with_pair},
                                        {"attention_invariance_pairs", row.invariance_pairs},
                                        {"token_aliasing", row.token_aliasing}});
    }
    out["gaussian_reference"] = std::move(gaussian);
    std::cout << out.dump() << "\n";
    return kExitOk;
  }
  const bool by_id = options.query_id >= 0;
  const std::string query_name = by_id ? "id " + std::to_string(d1.query_token)
                                       : "'" + options.query + "' (id " + std::to_string(d1.query_token) + ")";
  std::printf("%s, layer %lld head %lld, M = %lld, query %s, keys", loaded->description.c_str(),
              static_cast<long long>(d1.layer), static_cast<long long>(d1.head), static_cast<long long>(d1.length),
              query_name.c_str());
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name = by_id ? names[i] : names[i] + " (id " + std::to_string(d1.key_tokens[i]) + ")";
    std::printf("%s %s", i == 0 ? "" : ",", name.c_str());
  }
  std::printf("%s\n", d1.bos_token >= 0 ? ", after <bos>" : ", no <bos>");
  if (options.order == "score") {
    std::printf("keys ordered by their score at m = 1, highest first:");
    for (size_t i = 0; i < modes.key_tokens.size(); ++i) {
      std::printf("%s id %lld", i == 0 ? "" : ",", static_cast<long long>(modes.key_tokens[i]));
    }
    std::printf("\n");
  }
  std::printf("beside: the mean of %d Gaussian draws of q and three keys with the head's frequencies, keys ordered "
              "by their score at m = 1\n\n", reference.draws);
  std::printf("%-20s %-12s %s\n", "", "head", "gaussian");
  std::printf("%-20s %-12.4f %.4f\n", "position_inversion", modes.position_inversion, reference.position_inversion);
  if (names.size() > 1) std::printf("%-20s %-12.4f %.4f\n", "token_inversion", modes.token_inversion, reference.token_inversion);
  for (size_t p = 0; p < modes.precisions.size(); ++p) {
    const rung::AppendixD1Precision& row = modes.precisions[p];
    const rung::AppendixD1MeanPrecision& gauss = reference.precisions[p];
    const std::string name = rung::PrecisionName(row.precision);
    std::printf("%-20s %-12.4g %.4g\n", (name + " epsilon").c_str(), row.epsilons[0], gauss.epsilon);
    std::printf("%-20s %-12lld %.1f\n", (name + " aliasing_pairs").c_str(), static_cast<long long>(row.aliasing_pairs[0]),
                gauss.aliasing_pairs);
    std::printf("%-20s %-12.4f %.4f\n", (name + " with_pair").c_str(), row.position_aliasing.fraction, gauss.with_pair);
    if (names.size() > 1) {
      std::printf("%-20s %-12lld %.1f\n", (name + " invariance").c_str(),
                  static_cast<long long>(row.attention_invariance.pairs), gauss.invariance_pairs);
      std::printf("%-20s %-12lld %.1f\n", (name + " token_aliasing").c_str(), static_cast<long long>(row.token_aliasing),
                  gauss.token_aliasing);
    }
  }
  return kExitOk;
}

int RunExport(const std::string& model_path, const std::string& out) {
  rung::ConfigureRuntime(1);
  if (rung::hf::IsHfModelFolder(model_path)) {
    std::cerr << "rung export-hf: " << model_path << " is a Hugging Face folder already; give a rung checkpoint\n";
    return kExitUsage;
  }
  rung::StatusOr<rung::CheckpointModel> checkpoint = rung::LoadCheckpointModel(model_path);
  if (!checkpoint.ok()) return FailUnusable("export-hf", checkpoint.status());
  const rung::Status exported = rung::hf::ExportHfModel(checkpoint->model, out);
  if (!exported.ok()) return Fail("export-hf", exported);
  std::cout << "rung export-hf: wrote " << out << " (" << checkpoint->path << ")\n";
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rung-model: evaluate a Hugging Face model folder or a rung checkpoint on tokens, or export a "
               "checkpoint as a Hugging Face folder (rung eval, rung export-hf).\n"
               "Exit codes: 0 done, 2 bad arguments, 4 a model, checkpoint or token file unusable, 1 other.",
               // Users run it as `rung eval` and `rung export-hf`: its usage lines say so.
               "rung"};
  app.require_subcommand(1);
  EvalOptions eval;
  CLI::App* eval_command = app.add_subcommand(
      "eval", "The mean next-token loss of a model over windows of a token stream, and by position");
  eval_command->add_option("--model", eval.model, "A Hugging Face model folder (config.json, safetensors) or a rung "
                                                  "checkpoint (a file, or a checkpoint folder: its newest)")->required();
  CLI::Option* tokens_option =
      eval_command->add_option("--tokens", eval.tokens, "A token shard (llm.c or raw), a folder of them, or a rung-data "
                                                        "prepared folder (its validation split)");
  CLI::Option* text_option = eval_command->add_option(
      "--text", eval.text, "A text file instead of --tokens, tokenized with the model folder's tokenizer "
                           "(tokenizer.json or tokenizer.model, by rung-data encode; the whole file one document)");
  tokens_option->excludes(text_option);
  eval_command->callback([&] {
    if (eval.tokens.empty() && eval.text.empty()) throw CLI::RequiredError("--tokens or --text");
  });
  eval_command->add_option("--seq-len", eval.seq_len, "Window length T in tokens")->required()->check(rung::PositiveNumberCheck());
  eval_command->add_option("--stride", eval.stride, "Sliding windows every S tokens, each scoring only its new "
                                                    "tokens (default: T, consecutive windows)")->check(rung::PositiveNumberCheck());
  eval_command->add_option("--extension", eval.extension,
                           "as-configured (the model's own rope_scaling; none for a rung checkpoint) or a method "
                           "replacing it: " + [] {
                             std::string names;
                             for (const std::string& name : rung::LengthExtensionMethodNames()) names += (names.empty() ? "" : ", ") + name;
                             return names;
                           }());
  eval_command->add_option("--factor", eval.factor, "The extension's scale s (default T / L)")->check(CLI::PositiveNumber);
  eval_command->add_option("--original-length", eval.original_length,
                           "L, the length the model was trained at (default: its config's)")->check(rung::PositiveNumberCheck());
  eval_command->add_option("--yarn-c", eval.yarn_c, "yarn: the temperature coefficient c (0.1)")->check(CLI::NonNegativeNumber);
  eval_command->add_option("--alpha", eval.alpha, "ntk_by_parts, yarn, yarn_hf: alpha (beta_slow, 1); llama3: low_freq_factor (1)")
      ->check(CLI::PositiveNumber);
  eval_command->add_option("--beta", eval.beta, "ntk_by_parts, yarn, yarn_hf: beta (beta_fast, 32); llama3: high_freq_factor (4)")
      ->check(CLI::PositiveNumber);
  eval_command->add_option("--bos", eval.bos, "Prepend the model's BOS to each window: auto (where its "
                                              "tokenizer adds one: tokenizer_config.json's add_bos_token, else "
                                              "tokenizer.json's template), yes, no")
      ->check(CLI::IsMember({"auto", "yes", "no"}));
  eval_command->add_option("--max-windows", eval.max_windows, "Evaluate at most N windows (default: all)")
      ->check(rung::PositiveNumberCheck());
  eval_command->add_flag("--by-position", eval.by_position, "Also the mean loss at each position of the window");
  eval_command->add_option("--format", eval.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  eval_command->add_option("--device", eval.device, "cpu, or cuda (the first GPU; a CUDA build of LibTorch)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  eval_command->add_option("--dtype", eval.dtype, "fp32 (default), or bf16: compute in bf16 where the weights are "
                                                  "stored in bf16 or fp16 (fp32 weights compute in fp32)")
      ->check(CLI::IsMember({"fp32", "bf16"}));
  eval_command->add_option("--threads", eval.threads, "CPU threads (default: all)")->check(rung::PositiveNumberCheck());

  std::string export_model, export_out;
  CLI::App* export_command = app.add_subcommand(
      "export-hf", "Write a rung checkpoint as a Hugging Face model folder (RoPE or p-RoPE models with a gated MLP)");
  export_command->add_option("--model", export_model, "A rung checkpoint (a file, or a checkpoint folder: its newest)")->required();
  export_command->add_option("--out", export_out, "The folder to write (must not exist, or be empty)")->required();

  DiagnoseOptions diagnose;
  CLI::App* diag_command = app.add_subcommand(
      "diag", "The attention diagnostics of a model on windows of a token stream, as one JSON document (rung diag --model)");
  diag_command->add_option("--model", diagnose.model, "A Hugging Face model folder or a rung checkpoint")->required();
  diag_command->add_option("--tokens", diagnose.tokens, "A token shard, a folder of them, or a prepared folder")->required();
  diag_command->add_option("--seq-len", diagnose.seq_len, "Sequence length T")->required()->check(rung::PositiveNumberCheck());
  diag_command->add_option("--sequences", diagnose.sequences, "Sequences per batch (default 16)")
      ->check(rung::PositiveNumberCheck());
  diag_command->add_option("--batches", diagnose.batches, "Batches, the bootstrap's units (default 1: sequences are)")
      ->check(rung::PositiveNumberCheck());
  diag_command->add_option("--bos", diagnose.bos, "auto, yes or no, as rung eval's")->check(CLI::IsMember({"auto", "yes", "no"}));
  diag_command->add_option("--threads", diagnose.threads, "CPU threads (default: all)")->check(rung::PositiveNumberCheck());

  FailureModesOptions failure;
  CLI::App* failure_command = app.add_subcommand(
      "failure-modes", "Paper 003's measurement of one head (its appendix D.1): the scores of a query against each "
                       "key token repeated M times, and RoPE's four failure modes on them at bf16, fp16 and fp32");
  failure_command->add_option("--model", failure.model, "A Hugging Face model folder or a rung checkpoint")->required();
  failure_command->add_option("--layer", failure.layer, "The head's layer (default 0)")->check(CLI::NonNegativeNumber);
  failure_command->add_option("--head", failure.head, "The head (default 0)")->check(CLI::NonNegativeNumber);
  failure_command->add_option("--length", failure.length, "The context M: the key repeated M times (default 1024)")
      ->check(CLI::Range(int64_t{2}, int64_t{1} << 20));
  failure_command->add_option("--query", failure.query, "The query as a text of one token (default ' pet')");
  failure_command->add_option("--keys", failure.keys, "1 to 3 keys as texts of one token, comma-separated: related, "
                                                     "a second related one, unrelated (default ' cat',' dog',' number')")
      ->delimiter(',')->expected(1, 3);
  failure_command->add_option("--query-id", failure.query_id, "The query as a token id (with --key-ids)")
      ->check(CLI::NonNegativeNumber);
  failure_command->add_option("--key-ids", failure.key_ids, "1 to 3 key token ids, comma-separated")
      ->delimiter(',')->expected(1, 3);
  failure_command->add_option("--bos", failure.bos, "Start with the model's <bos>: auto (where its tokenizer adds one), "
                                                   "yes or no")->check(CLI::IsMember({"auto", "yes", "no"}));
  failure_command->add_option("--format", failure.format, "table or json")->check(CLI::IsMember({"table", "json"}));
  failure_command->add_flag("--scores", failure.scores, "json: each key's scores S(1..M) too");
  failure_command->add_option("--order", failure.order, "The keys' roles: given (as listed: related, related, "
                                                        "unrelated), or score (by their score at m = 1, highest first)")
      ->check(CLI::IsMember({"given", "score"}));
  failure_command->add_option("--reference-draws", failure.reference_draws,
                              "Gaussian draws of the reference beside the head (default 16)")
      ->check(CLI::Range(1, 4096));
  failure_command->add_option("--threads", failure.threads, "CPU threads (default: all)")->check(rung::PositiveNumberCheck());

  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  try {
    if (eval_command->parsed()) return RunEval(eval);
    if (diag_command->parsed()) return RunDiagnose(diagnose);
    if (failure_command->parsed()) return RunFailureModes(failure);
    return RunExport(export_model, export_out);
  } catch (const std::exception& error) {
    std::cerr << "rung-model: " << error.what() << "\n";
    return kExitOther;
  }
}

// rung-bench-profile: where the time of one training step goes. Builds the model of a shape, trains
// a few steps on random tokens with the real optimizer, and records the ATen operators of the
// timed steps with LibTorch's profiler into a Chrome trace (aggregate it with
// bench/summarize_trace.py).
//
//   rung-bench-profile --d-model 128 --layers 4 --heads 4 --seq 256 --batch 16 --variant rope --threads 2 --out trace.json
//
// --attention slabs|tiled|composite forces one attention kernel (attention.h) to compare them.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include "core/common/command_line.h"
#include "core/common/provenance.h"
#include "core/config/model_config.h"
#include "core/model/attention.h"
#include "core/model/transformer.h"
#include "core/train/batch_tensors.h"
#include "core/train/flat_adamw.h"
#include "core/train/runtime.h"

int main(int argc, char** argv) {
  CLI::App app{"rung-bench-profile: profile the training step of one model shape"};
  int64_t d_model = 128, layers = 4, heads = 4, seq = 256, batch = 16, steps = 10, warmup = 5;
  int threads = 2;
  std::string variant = "rope", out = "trace.json", attention = "auto";
  app.add_option("--d-model", d_model);
  app.add_option("--layers", layers);
  app.add_option("--heads", heads);
  app.add_option("--seq", seq);
  app.add_option("--batch", batch);
  app.add_option("--steps", steps, "Timed steps (unprofiled), then as many profiled");
  app.add_option("--warmup", warmup, "Unprofiled steps first");
  app.add_option("--threads", threads);
  app.add_option("--variant", variant);
  app.add_option("--out", out, "Chrome trace file");
  app.add_option("--attention", attention, "Attention kernel: auto (the model's choice), slabs, tiled or composite")
      ->check(CLI::IsMember({"auto", "slabs", "tiled", "composite"}));
  if (const std::optional<int> stop = rung::ParseCommandLine(app, argc, argv)) return *stop;
  rung::ConfigureRuntime(threads);

  rung::ModelConfig config;
  config.vocab_size = 256;
  config.layers = layers;
  config.d_model = d_model;
  config.heads = heads;
  config.seq_len = seq;
  config.position.variant = variant;
  rung::ResolveModelConfig(&config);
  rung::Transformer model(config);
  if (attention != "auto") {
    const rung::AttentionKernel kernel = attention == "slabs"   ? rung::AttentionKernel::kCpuSlabs
                                         : attention == "tiled" ? rung::AttentionKernel::kCpuTiled
                                                                : rung::AttentionKernel::kComposite;
    model->set_attention_kernel(static_cast<int>(kernel));
  }
  rung::ParameterGroups groups = model->parameter_groups();
  rung::FlatAdamWOptions options;
  options.lr = 1e-3;
  options.clip_max_norm = {1.0, 1.0};
  rung::FlatAdamW optimizer({{"decay", groups.decay, 1.0, 0.1, 0},
                             {"no_decay", groups.no_decay, 1.0, 0.0, 0},
                             {"positional", groups.positional, 1.0, 0.0, 1},
                             {"positional_freq", groups.positional_freq, 10.0, 0.0, 1}},
                            options);
  auto step = [&]() {
    auto tokens = torch::randint(0, 256, {batch, seq + 1}, torch::kLong);
    optimizer.ZeroGrad();
    auto logits = model->forward(tokens.narrow(1, 0, seq));
    rung::TensorBatch batch;
    batch.targets = tokens.narrow(1, 1, seq).contiguous();
    auto loss = rung::MeanLoss(logits, batch);  // the trainer's loss
    loss.backward();
    optimizer.ClipGradients();
    optimizer.Step(1.0);
  };
  for (int64_t index = 0; index < warmup; ++index) step();
  // The same number of steps unprofiled first: the profiler's own cost stays out of this figure.
  std::vector<double> step_seconds;
  for (int64_t index = 0; index < steps; ++index) {
    const auto begin = std::chrono::steady_clock::now();
    step();
    step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  }
  std::sort(step_seconds.begin(), step_seconds.end());
  const double median_step = step_seconds[step_seconds.size() / 2];
  auto start = std::chrono::steady_clock::now();
  {
    torch::autograd::profiler::RecordProfile guard(out);
    for (int64_t index = 0; index < steps; ++index) step();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "{\"tokens_per_sec\": " << static_cast<double>(batch * seq) / median_step
            << ", \"median_step_seconds\": " << median_step
            << ", \"tokens_per_sec_profiled\": " << steps * batch * seq / seconds
            << ", \"peak_rss_bytes\": " << rung::PeakRssBytes() << "}\n";
  return 0;
}

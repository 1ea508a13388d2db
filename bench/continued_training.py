#!/usr/bin/python3
"""Continued training of a 135M-shape model at seq_len 1024 on the machine's cores: tokens/s and peak
memory with the backbone trained, frozen (AdaRoPE's positional parameters alone) and with LoRA adapters,
side by side in one run, each from the same Hugging Face folder as a user would start.

The shape is SmolLM2-135M's (d_model 576, 30 layers, 9 heads of 64 with 3 KV heads, SwiGLU 1536, a
49,152-token vocabulary, tied embeddings, RoPE base 100,000). The driver first makes the folder a user
would download: a one-step rung-train run of that shape, exported by `rung-model export-hf`. Then, one
process at a time and in an order reversed on every other repeat:
  full     position.variant rope, every parameter trained
  frozen   position.variant adarope (a variant changed at initialisation), train.freeze_backbone
  lora     position.variant adarope, train.lora {rank 8, alpha 16, targets q, k, v, o}
each a rung-train run of --steps optimizer steps of one sequence of 1024 tokens (the builtin corpus's
bytes; the vocabulary is the folder's), starting from the folder (train.init.checkpoint, model:
checkpoint), no evaluation but the final one on one batch, no diagnostics. Before each repeat
rung-bench-mm measures the fp32 peak of a 2048^3 torch::mm with the same threads.

Reported per mode, medians over repeats: training tokens/s (the final record's, which leaves out the
first 5 steps of the process), the step time (1024 tokens over it), the peak RSS of the whole process
(wait4's ru_maxrss: the folder's import included), and the trained parameter count (the provenance
record's parameters.trained).

Run from the repository root:
  /usr/bin/python3 bench/continued_training.py --build-dir build --repeats 2
Prints a markdown table (for bench/README.md) and writes every run to --out-json.
"""
import argparse
import json
import os
import shutil
import statistics
import sys

from bench_common import blas_kernel, json_lines
from train_throughput import run_process, tail

SHAPE = {"layers": 30, "d_model": 576, "heads": 9, "kv_heads": 3, "head_dim": 64, "mlp": "swiglu",
         "mlp_hidden": 1536, "vocab_size": 49152, "tie_embeddings": True}
SEQ_LEN = 1024
MODES = ("full", "frozen", "lora")


def base_config(args, steps):
    return {
        "seed": 0,
        "data": {"source": "builtin", "seq_len": SEQ_LEN},
        "train": {"steps": steps, "batch_size": 1, "lr": 3e-4,
                  "schedule": {"name": "constant", "warmup_steps": 0},
                  "eval_every": 0, "eval_batches": 1, "log_every": 1, "diagnostics_sequences": 0},
        "resources": {"cpus": args.threads},
    }


def source_config(args):
    config = base_config(args, 1)
    config["model"] = dict(SHAPE)
    config["position"] = {"variant": "rope", "base": 100000.0}
    return config


def mode_config(mode, folder, args):
    config = base_config(args, args.steps)
    config["train"]["init"] = {"checkpoint": folder, "model": "checkpoint"}
    if mode != "full":
        config["position"] = {"variant": "adarope"}
    if mode == "frozen":
        config["train"]["freeze_backbone"] = True
    if mode == "lora":
        config["train"]["lora"] = {"rank": 8, "alpha": 16, "targets": ["q", "k", "v", "o"]}
    return config


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
    return path


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--steps", type=int, default=8, help="optimizer steps per run (the first 5 are warm-up)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out-json", default=None, help="default: BUILD_DIR/bench/continued_training.json")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per process")
    args = ap.parse_args()
    if args.steps < 7:
        ap.error("--steps must be at least 7 (tokens/s leaves out the first 5)")

    build = os.path.abspath(args.build_dir)
    binaries = {name: os.path.join(build, "bin", name) for name in ("rung-train", "rung-model", "rung-bench-mm")}
    for path in binaries.values():
        if not os.path.exists(path):
            sys.exit(f"continued_training: missing {path} (cmake --build BUILD_DIR --target rung-train rung-model rung-bench-mm)")
    work = os.path.join(build, "bench", "continued_training")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out_json = args.out_json or os.path.join(build, "bench", "continued_training.json")
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(args.threads)

    # The folder a user would start from.
    checkpoints, folder = os.path.join(work, "source_ckpt"), os.path.join(work, "smollm2-135m-shape")
    rc, _, _, _ = run_process([binaries["rung-train"], "--config", write_json(os.path.join(work, "source.json"),
                                                                             source_config(args)),
                               "--checkpoint-dir", checkpoints], os.path.join(work, "source.log"), env, args.timeout)
    if rc != 0:
        sys.exit("continued_training: the source run failed:\n" + tail(os.path.join(work, "source.log")))
    rc, _, _, _ = run_process([binaries["rung-model"], "export-hf", "--model", checkpoints, "--out", folder],
                              os.path.join(work, "export.log"), env, args.timeout)
    if rc != 0:
        sys.exit("continued_training: export-hf failed:\n" + tail(os.path.join(work, "export.log")))
    shutil.rmtree(checkpoints)

    kernel, why = blas_kernel(binaries["rung-train"], env)
    if kernel is None:
        sys.exit("continued_training: rung-train --blas-kernel failed: " + why)
    runs = []
    for repeat in range(args.repeats):
        rc, stdout, _, _ = run_process([binaries["rung-bench-mm"], "--threads", str(args.threads)],
                                       os.path.join(work, f"mm-{repeat}.log"), env, args.timeout)
        mm = next((x for x in reversed(json_lines(stdout)) if "mm_gflops" in x), {})
        runs.append({"repeat": repeat, "mode": "mm", "mm_gflops": mm.get("mm_gflops"), "blas": mm.get("blas")})
        for mode in (MODES if repeat % 2 == 0 else tuple(reversed(MODES))):
            config = write_json(os.path.join(work, f"{mode}.json"), mode_config(mode, folder, args))
            log = os.path.join(work, f"{mode}-{repeat}.log")
            rc, stdout, wall, rss = run_process([binaries["rung-train"], "--config", config], log, env, args.timeout)
            records = json_lines(stdout)
            final = next((r for r in records if r.get("type") == "final"), {})
            provenance = next((r for r in records if r.get("type") == "provenance"), {})
            run = {"repeat": repeat, "mode": mode, "rc": rc, "wall_s": wall, "peak_rss_bytes": rss,
                   "tokens_per_sec": final.get("train_tokens_per_sec"),
                   "step_s": SEQ_LEN / final["train_tokens_per_sec"] if final.get("train_tokens_per_sec") else None,
                   "converted_from": provenance.get("converted_from"),
                   "parameters": provenance.get("parameters"), "val_loss": final.get("val_loss")}
            if rc != 0:
                run["error"] = tail(log)
            runs.append(run)
            print(f"repeat {repeat} {mode}: rc {rc}, {run['tokens_per_sec']} tokens/s, "
                  f"{rss / 2**20:.0f} MiB, {wall:.0f} s", file=sys.stderr, flush=True)
    with open(out_json, "w") as f:
        json.dump(runs, f, indent=2)

    mm = median_or_none([r["mm_gflops"] for r in runs if r["mode"] == "mm"])
    blas = next((r["blas"] for r in runs if r["mode"] == "mm" and r.get("blas")), {}) or {}
    print(f"BLAS kernel {kernel.get('name')} ({kernel.get('source')}); mm peak (2048^3 fp32, {args.threads} threads, "
          f"median of repeats) {mm} GFLOP/s; BLAS {json.dumps(blas)}")
    print()
    print("| mode | trained | trained parameters | tokens/s | step | peak RSS | of full's tokens/s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    full_tps = median_or_none([r["tokens_per_sec"] for r in runs if r["mode"] == "full" and r["rc"] == 0])
    for mode in MODES:
        ok = [r for r in runs if r["mode"] == mode and r["rc"] == 0]
        tps = median_or_none([r["tokens_per_sec"] for r in ok])
        step = median_or_none([r["step_s"] for r in ok])
        rss = median_or_none([r["peak_rss_bytes"] for r in ok])
        trained = {"full": "every parameter", "frozen": "AdaRoPE's positional parameters",
                   "lora": "adapters (rank 8 on q, k, v, o) and AdaRoPE's"}[mode]
        ratio = f"{tps / full_tps:.2f}x" if tps and full_tps else "-"
        count = next((r["parameters"].get("trained") for r in ok if isinstance(r.get("parameters"), dict)), None)
        count_text = f"{count:,}" if count is not None else "?"
        print(f"| {mode} | {trained} | {count_text} | {tps:,.0f} | {step:.2f} s | {rss / 2**30:.2f} GiB | {ratio} |"
              if tps and step and rss else f"| {mode} | {trained} | {count_text} | failed | | | |")
    if any(r.get("rc", 0) != 0 for r in runs):
        sys.exit("continued_training: some runs failed (see --out-json)")


if __name__ == "__main__":
    main()

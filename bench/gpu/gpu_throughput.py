#!/usr/bin/env python3
"""GPU training throughput: rung-train (rope, lerope, adarope) against the same model in plain PyTorch.

Driven by bench/gpu/run.sh (which builds rung-train first); see bench/gpu/README.md. Writes a random
token file (uint16, vocabulary 50257: throughput does not depend on the text), one rung-train trial
config per variant (data.source shards, train.device cuda, train.precision bf16), runs each
rung-train and bench/gpu/reference_gpt.py (eager, and with --compile also torch.compile) one at a
time on the same GPU, measures the GPU's bf16 matmul peak with torch, and prints a markdown table:
tokens/s, achieved TFLOP/s, share of the matmul peak, rung against PyTorch.

FLOPs/token = 6 x (matrix parameters, output head included) + 6 x layers x seq x d_model (causal
attention: half of the PaLM/llm.c count 12 x layers x seq x d_model), as rung's records count them.

Shapes:
  gpt2-124m  12 layers, d_model 768, 12 heads, seq 1024, vocabulary 50257 (GPT-2 small)
  tiny       2 layers, d_model 64, 4 heads, seq 128, vocabulary 50257 (a smoke run, also on the CPU)
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/
from bench_common import REPO, flops_per_token, json_lines  # noqa: E402  (shared with bench/train_throughput.py)

SHAPES = {
    "gpt2-124m": {"layers": 12, "d_model": 768, "heads": 12, "seq": 1024, "vocab": 50257},
    "tiny": {"layers": 2, "d_model": 64, "heads": 4, "seq": 128, "vocab": 50257},
}


def rung_config(shape, variant, args, data_path):
    cuda = args.device == "cuda"
    return {
        "seed": args.seed,
        "data": {"source": "shards", "path": data_path, "token_bytes": 2, "vocab_size": shape["vocab"],
                 "seq_len": shape["seq"], "val_fraction": 0.01},
        "model": {"layers": shape["layers"], "d_model": shape["d_model"], "heads": shape["heads"], "mlp": "gelu"},
        "position": {"variant": variant},
        "train": {
            "steps": args.steps,
            "batch_size": args.batch,
            "lr": 6e-4,
            "schedule": {"name": "cosine", "warmup_steps": 10},
            "eval_every": 0,
            "eval_batches": 1,
            "log_every": 10,
            "diagnostics_sequences": 0,
            "device": args.device,
            "precision": args.precision,
        },
        "resources": {"cpus": args.threads, "gpus": 1 if cuda else 0},
    }


def run(cmd, log_path, timeout):
    """Runs cmd (stdout captured, stderr to log_path); returns (exit code, stdout)."""
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=log, text=True, cwd=REPO, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            log.write(f"\n[gpu_throughput] timed out after {timeout} s\n")
            return 124, expired.stdout or ""
        log.write("\n[stdout]\n" + done.stdout)
    return done.returncode, done.stdout


def matmul_peak_tflops(device):
    """bf16 (CUDA) or fp32 (CPU) throughput of a square torch.mm, in TFLOP/s."""
    import torch

    n, dtype = (8192, torch.bfloat16) if device == "cuda" else (1024, torch.float32)
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    repeats = 20 if device == "cuda" else 3
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    return 2 * n ** 3 * repeats / (time.perf_counter() - start) / 1e12


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build-gpu", help="folder with bin/rung-train (make gpu-build)")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="gpt2-124m")
    ap.add_argument("--batch", type=int, default=16, help="sequences per step (both implementations)")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup-steps", type=int, default=10, help="reference: first steps not timed "
                    "(rung-train leaves out its first 5 steps itself)")
    ap.add_argument("--variants", default="rope,lerope,adarope")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    ap.add_argument("--compile", action="store_true", help="also run the reference under torch.compile")
    ap.add_argument("--threads", type=int, default=4, help="CPU threads of each process")
    ap.add_argument("--tokens", type=int, default=1 << 25, help="tokens in the random data file")
    ap.add_argument("--out-dir", default=None, help="configs, logs, data, results (default BUILD_DIR/bench-gpu)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    args = ap.parse_args()

    shape = SHAPES[args.shape]
    build = os.path.join(REPO, args.build_dir) if not os.path.isabs(args.build_dir) else args.build_dir
    rung_train = os.path.join(build, "bin", "rung-train")
    if not os.access(rung_train, os.X_OK):
        sys.exit(f"gpu_throughput: {rung_train} missing: build it with `make gpu-build` (or bench/gpu/run.sh)")
    out = args.out_dir or os.path.join(build, "bench-gpu")
    os.makedirs(out, exist_ok=True)

    data_path = os.path.join(out, f"random-{shape['vocab']}-{args.tokens}.bin")
    if not os.path.exists(data_path):
        rng = np.random.default_rng(args.seed)
        rng.integers(0, shape["vocab"], size=args.tokens, dtype=np.uint16).tofile(data_path)

    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # OpenMP pools of both implementations
    runs = []
    for variant in [v for v in args.variants.split(",") if v]:
        config_path = os.path.join(out, f"{args.shape}-{variant}.json")
        with open(config_path, "w") as f:
            json.dump(rung_config(shape, variant, args, data_path), f, indent=1)
        print(f"gpu_throughput: rung-train {variant} ...", file=sys.stderr)
        code, stdout = run([rung_train, "--config", config_path, "--threads", str(args.threads)],
                           os.path.join(out, f"{args.shape}-rung-{variant}.log"), args.timeout)
        records = json_lines(stdout)
        final = next((r for r in reversed(records) if r.get("type") == "final"), {})
        provenance = next((r for r in records if r.get("type") == "provenance"), {})
        runs.append({"impl": "rung", "variant": variant, "exit": code, "tokens_per_sec": final.get("train_tokens_per_sec"),
                     "loss": final.get("train_loss"), "torch": provenance.get("torch_version"),
                     "flops_per_token_reported": (provenance.get("flops_per_token") or {}).get("total")})

    reference = [os.environ.get("PYTHON", sys.executable), os.path.join(REPO, "bench", "gpu", "reference_gpt.py"),
                 "--data", data_path, "--vocab", str(shape["vocab"]), "--d-model", str(shape["d_model"]),
                 "--layers", str(shape["layers"]), "--heads", str(shape["heads"]), "--seq", str(shape["seq"]),
                 "--batch", str(args.batch), "--steps", str(args.steps), "--warmup-steps", str(args.warmup_steps),
                 "--device", args.device, "--precision", args.precision, "--seed", str(args.seed)]
    for compiled in ([False, True] if args.compile else [False]):
        name = "torch.compile" if compiled else "eager"
        print(f"gpu_throughput: PyTorch {name} ...", file=sys.stderr)
        code, stdout = run(reference + (["--compile"] if compiled else []),
                           os.path.join(out, f"{args.shape}-pytorch-{name}.log"), args.timeout)
        record = next((r for r in reversed(json_lines(stdout)) if r.get("impl") == "pytorch"), {})
        runs.append({"impl": "pytorch", "variant": f"rope ({name})", "exit": code,
                     "tokens_per_sec": record.get("tokens_per_sec"), "loss": record.get("final_loss"),
                     "torch": record.get("torch"), "gpu": record.get("device")})

    peak = matmul_peak_tflops(args.device)
    fpt = flops_per_token(shape, shape["vocab"])
    eager = next((r["tokens_per_sec"] for r in runs if r["variant"] == "rope (eager)"), None)
    rope = next((r["tokens_per_sec"] for r in runs if r["impl"] == "rung" and r["variant"] == "rope"), None)
    device_name = next((r.get("gpu") for r in runs if r.get("gpu")), args.device)

    print(f"\nGPU throughput, {args.shape} ({shape['layers']} layers, d_model {shape['d_model']}, {shape['heads']} heads, "
          f"seq {shape['seq']}, vocabulary {shape['vocab']}, untied head), batch {args.batch}, {args.steps} steps, "
          f"{args.precision}, on {device_name}; FLOPs/token {fpt / 1e6:.1f} M; "
          f"{'bf16' if args.device == 'cuda' else 'fp32'} matmul peak {peak:.3g} TFLOP/s\n")
    print("| impl | variant | tokens/s | TFLOP/s | % of matmul peak | vs PyTorch eager | vs rung rope | final loss | exit |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in runs:
        tps = r["tokens_per_sec"]
        cells = [r["impl"], r["variant"]]
        if tps:
            tflops = tps * fpt / 1e12
            cells += [f"{tps:,.0f}", f"{tflops:.3g}", f"{100 * tflops / peak:.1f}%",
                      f"{tps / eager:.2f}x" if eager else "n/a",
                      f"{tps / rope:.2f}x" if rope else "n/a"]
        else:
            cells += ["failed"] + [""] * 4
        cells += [f"{r['loss']:.3f}" if isinstance(r.get("loss"), (int, float)) else "n/a", str(r["exit"])]
        print("| " + " | ".join(cells) + " |")
    gpt2_fpt = flops_per_token(SHAPES["gpt2-124m"], SHAPES["gpt2-124m"]["vocab"])
    print(f"\nAnchor: llm.c trains GPT-2 124M (vocabulary 50257, tied embeddings) at about 460k tokens/s per H100, "
          f"i.e. {460e3 * gpt2_fpt / 1e12:.0f} TFLOP/s at {gpt2_fpt / 1e6:.1f} M FLOPs/token (tying changes parameters, "
          f"not FLOPs).")
    with open(os.path.join(out, f"{args.shape}-results.json"), "w") as f:
        json.dump({"shape": shape, "args": vars(args), "flops_per_token": fpt, "matmul_peak_tflops": peak,
                   "runs": runs}, f, indent=1)
    failed = [r for r in runs if r["exit"] != 0 or not r["tokens_per_sec"]]
    if failed:
        print(f"gpu_throughput: {len(failed)} run(s) failed; logs in {out}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

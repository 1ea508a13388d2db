#!/usr/bin/python3
"""Whole rung-train runs at long context: peak RSS, the share of a run that diagnostics and evaluation
take, and training's fraction of the torch::mm peak, side by side in one run.

For each repeat the driver runs, one process at a time: rung-bench-mm (the fp32 peak of a 2048^3
torch::mm), then for each seq_len (order reversed on every other repeat) one short rung-train run of the
shape the issue names (d_model 128, 4 layers, 4 heads, RoPE, 4096 tokens per batch: batch_size
4096 / seq_len, at least 1) with the protocol's defaults for everything measured besides training
(train.eval_every 100 with 8 evaluation batches, diagnostics_sequences 4 at the end) and a 2x
extrapolation evaluation (train.extrapolation_multiples [2]); at 4096 also a run with [4].

Every record line is timestamped as it arrives (rung-train flushes each one), which splits the run:
  step time     median gap between consecutive step records (log_every 1), the first 2 left out
  held-out      the last step record's gap minus one step (the final step record carries val_loss)
  end of run    from the last step record to the final record: diagnostics, band ablation,
                extrapolation evaluation
The share of a 1,000-step run is then (10 held-outs + end of run) / (1000 steps + 10 held-outs + end of
run). Peak RSS is the kernel's ru_maxrss of the whole process (wait4). Training's fraction of the mm
peak: bench/train_throughput.py's definition (the run's peak: the median of the measurements taken
before each repeat), with the final record's train_tokens_per_sec.

Run from the repository root:
  /usr/bin/python3 bench/long_context.py --build-dir build --repeats 3
Prints a markdown table (for bench/README.md) and writes every run to --out-json.
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import threading
import time

from bench_common import REPO, flops_per_token, json_lines
from train_throughput import mm_peak_command, parse_mm_peak, peak_fraction, run_peak

VOCAB = 256
TOKENS_PER_BATCH = 4096
RUN_STEPS = 1000  # the run whose share is projected
EVAL_EVERY = 100
GOAL_RSS_2X_4096 = 1.5e9
GOAL_RSS_4X_4096 = 2.0e9
GOAL_SHARE = 0.15
GOAL_PEAK_FRACTION = 0.55


def rung_config(seq_len, multiples, args):
    return {
        "seed": 0,
        "data": {"source": "builtin", "seq_len": seq_len},
        "model": {"layers": 4, "d_model": 128, "heads": 4, "mlp": "gelu"},
        "position": {"variant": "rope"},
        "train": {
            "steps": args.steps,
            "batch_size": max(1, TOKENS_PER_BATCH // seq_len),
            "lr": 0.003,
            "schedule": {"name": "cosine", "warmup_steps": 2},
            "eval_every": EVAL_EVERY,
            "eval_batches": 8,
            "log_every": 1,
            "diagnostics_sequences": 4,
            "extrapolation_multiples": multiples,
        },
        "resources": {"cpus": args.threads},
    }


def run_timed(cmd, log_path, env, timeout):
    """Runs cmd; returns (rc, [(arrival seconds, record)], wall_s, maxrss_bytes) with each stdout line
    timestamped as it arrives."""
    start = time.perf_counter()
    arrivals = []
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        log.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, env=env, cwd=REPO, text=True, bufsize=1)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        for line in proc.stdout:
            now = time.perf_counter() - start
            for record in json_lines(line):
                arrivals.append((now, record))
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        rc = os.waitstatus_to_exitcode(status)
        timer.cancel()
        log.write("\n[stdout records]\n" + "\n".join(json.dumps(r)[:400] for _, r in arrivals) + "\n")
    return rc, arrivals, time.perf_counter() - start, usage.ru_maxrss * 1024


def phases(arrivals):
    steps = [(t, r) for t, r in arrivals if r.get("type") == "step"]
    final = next(((t, r) for t, r in arrivals if r.get("type") == "final"), None)
    if len(steps) < 5 or final is None:
        return None
    gaps = [steps[i][0] - steps[i - 1][0] for i in range(3, len(steps) - 1)]
    step_s = statistics.median(gaps)
    held_out_s = max(0.0, (steps[-1][0] - steps[-2][0]) - step_s)
    end_s = final[0] - steps[-1][0]
    evals = RUN_STEPS // EVAL_EVERY - 1  # the last one is the final step's
    overhead = evals * held_out_s + held_out_s + end_s
    return {
        "step_s": step_s,
        "held_out_s": held_out_s,
        "end_of_run_s": end_s,
        "projected_share": overhead / (RUN_STEPS * step_s + overhead),
        "train_tokens_per_sec": final[1].get("train_tokens_per_sec"),
        "reported_peak_rss_bytes": final[1].get("peak_rss_bytes"),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=12, help="optimizer steps per run (log_every 1)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lengths", default="1024,2048,4096,8192")
    ap.add_argument("--out-json", default=None, help="default: BUILD_DIR/bench/long_context.json")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per process")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the configs, run nothing")
    args = ap.parse_args()
    if args.steps < 6:
        ap.error("--steps must be at least 6")

    build = args.build_dir if os.path.isabs(args.build_dir) else os.path.join(REPO, args.build_dir)
    rung_train = os.path.join(build, "bin", "rung-train")
    bench_mm = os.path.join(build, "bin", "rung-bench-mm")
    work = os.path.join(build, "bench", "long_context")
    os.makedirs(os.path.join(work, "configs"), exist_ok=True)
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    out_json = args.out_json or os.path.join(build, "bench", "long_context.json")
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(args.threads)

    cases = [(int(n), [2]) for n in args.lengths.split(",") if n]
    if any(n == 4096 for n, _ in cases):
        cases.append((4096, [4]))
    configs = {}
    for seq_len, multiples in cases:
        name = f"T{seq_len}-x{multiples[0]}"
        path = os.path.join(work, "configs", name + ".json")
        with open(path, "w") as f:
            json.dump(rung_config(seq_len, multiples, args), f, indent=1)
        configs[(seq_len, multiples[0])] = (name, path)
    if args.dry_run:
        for name, path in configs.values():
            print(name, path)
        return
    for path in (rung_train, bench_mm):
        if not os.path.exists(path):
            sys.exit(f"long_context: missing {path} (cmake --build BUILD_DIR --target rung-train rung-bench-mm)")

    runs = []
    for repeat in range(args.repeats):
        rc, arrivals, _, _ = run_timed(mm_peak_command(bench_mm, args.threads),
                                       os.path.join(work, "logs", f"mm-{repeat}.log"), env, args.timeout)
        mm = parse_mm_peak("\n".join(json.dumps(r) for _, r in arrivals))
        runs.append({"repeat": repeat, "kind": "mm", "mm_gflops": mm["mm_gflops"], "blas_kernel": mm["blas_kernel"], "rc": rc})
        order = list(configs.items()) if repeat % 2 == 0 else list(reversed(list(configs.items())))
        for (seq_len, multiple), (name, path) in order:
            log = os.path.join(work, "logs", f"{name}-{repeat}.log")
            cmd = [rung_train, "--config", path, "--threads", str(args.threads)]
            rc, arrivals, wall, rss = run_timed(cmd, log, env, args.timeout)
            run = {"repeat": repeat, "kind": "run", "seq_len": seq_len, "multiple": multiple, "rc": rc,
                   "wall_s": wall, "peak_rss_bytes": rss, "log": log}
            run.update(phases(arrivals) or {"error": "no step or final records"})
            runs.append(run)
            print(f"[repeat {repeat}] {name}: rc {rc}, {wall:.1f} s, peak RSS {rss / 1e9:.2f} GB, "
                  f"step {run.get('step_s', 0):.3f} s, end of run {run.get('end_of_run_s', 0):.1f} s, "
                  f"share {run.get('projected_share', 0):.1%}", file=sys.stderr, flush=True)

    peak = run_peak(r["mm_gflops"] for r in runs if r["kind"] == "mm")
    for run in runs:
        tps = run.get("train_tokens_per_sec") if run["kind"] == "run" else None
        if tps and peak:
            shape = {"d_model": 128, "layers": 4, "seq": run["seq_len"]}
            run["peak_fraction"] = peak_fraction(tps, flops_per_token(shape, VOCAB), peak)

    with open(out_json, "w") as f:
        json.dump({"runs": runs, "steps": args.steps, "threads": args.threads}, f, indent=1)

    def median(seq_len, multiple, key):
        values = [r[key] for r in runs if r.get("seq_len") == seq_len and r.get("multiple") == multiple and key in r]
        return statistics.median(values) if values else None

    mm_values = [r["mm_gflops"] for r in runs if r["kind"] == "mm" and r.get("mm_gflops")]
    print(f"\nmm peak (median of {len(mm_values)}): {peak or 0:.1f} GFLOP/s\n")
    print("| seq_len | evaluated | batch | peak RSS | step | held-out eval | end of run | share of 1,000 steps "
          "| training tokens/s | % of mm peak |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (seq_len, multiple) in configs:
        cells = [median(seq_len, multiple, key) for key in
                 ("peak_rss_bytes", "step_s", "held_out_s", "end_of_run_s", "projected_share",
                  "train_tokens_per_sec", "peak_fraction")]
        if cells[0] is None:
            continue
        rss, step, held, end, share, tps, frac = cells
        print(f"| {seq_len} | {multiple}x | {max(1, TOKENS_PER_BATCH // seq_len)} | {rss / 1e9:.2f} GB | "
              f"{step:.3f} s | {held:.2f} s | {end:.1f} s | {share:.1%} | {tps or 0:,.0f} | "
              f"{(frac or 0):.0%} |")
    print(f"\nGoals: peak RSS <= {GOAL_RSS_2X_4096 / 1e9:.1f} GB at 4096 (2x), <= {GOAL_RSS_4X_4096 / 1e9:.1f} GB "
          f"(4x); share <= {GOAL_SHARE:.0%}; training >= {GOAL_PEAK_FRACTION:.0%} of the mm peak.")


if __name__ == "__main__":
    main()

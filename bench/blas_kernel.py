#!/usr/bin/env python3
"""rung's BLAS kernel choice, measured: rung-train and rung-bench-mm as they start against the best
kernel forced, and against the generic kernel a processor unknown to OpenBLAS gets.

Four ways of starting, interleaved within each repeat (their order reversed on odd repeats), each
running rung-bench-mm (2048^3 fp32) and then rung-train on one shape:

  as it starts      no OPENBLAS_CORETYPE: OpenBLAS's choice, replaced by rung where the processor has
                    a later generation (what a user runs)
  best forced       OPENBLAS_CORETYPE=<best>, where <best> is the kernel rung chooses when it starts
                    from Prescott (the best candidate that passes its check)
  Prescott forced   OPENBLAS_CORETYPE=Prescott: what Debian's OpenBLAS runs on a processor it does not
                    know (a model-207 Xeon)
  rung from Prescott  RUNG_BLAS_KERNEL_TEST_START=Prescott: started as on such a processor, rung
                    chooses (one execv more than a user's start)

It also times `rung-train --blas-kernel` (start-up alone, the cache warm) in each way. Ratios are
medians of per-repeat ratios (runs paired within a repeat). Prints a markdown table; --out-json keeps
every run.

Usage: /usr/bin/python3 bench/blas_kernel.py --build-dir build [--repeats 3] [--steps 60] [--threads 2]
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

from bench_common import REPO, blas_kernel, json_lines
from train_throughput import SHAPES, parse_rung, rung_config, run_process

MODES = ["as it starts", "best forced", "Prescott forced", "rung from Prescott"]


def clean_environment(threads):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE" and not k.startswith("RUNG_BLAS_KERNEL")}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    return env


def kernel_of(rung_train, env):
    kernel, error = blas_kernel(rung_train, env)
    if kernel is None:
        sys.exit(f"blas_kernel: {rung_train} --blas-kernel failed: {error}")
    return kernel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shape", default="small", choices=sorted(SHAPES))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--out-json", default=None)
    args = ap.parse_args()

    build = os.path.join(REPO, args.build_dir)
    rung_train = os.path.join(build, "bin", "rung-train")
    bench_mm = os.path.join(build, "bin", "rung-bench-mm")
    for path in (rung_train, bench_mm):
        if not os.path.exists(path):
            sys.exit(f"blas_kernel: missing {path} (cmake --build {args.build_dir} --target rung-train rung-bench-mm)")
    work = os.path.join(build, "bench", "blas_kernel")
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)
    config = os.path.join(work, f"{args.shape}.json")
    with open(config, "w") as f:
        json.dump(rung_config(SHAPES[args.shape], "rope", args), f, indent=2)

    base = clean_environment(args.threads)
    user = kernel_of(rung_train, base)
    best = kernel_of(rung_train, dict(base, RUNG_BLAS_KERNEL_TEST_START="Prescott"))
    if best["source"] != "rung":
        sys.exit(f"blas_kernel: no kernel later than Prescott for this processor ({best.get('reason')})")
    environments = {
        "as it starts": base,
        "best forced": dict(base, OPENBLAS_CORETYPE=best["name"]),
        "Prescott forced": dict(base, OPENBLAS_CORETYPE="Prescott"),
        "rung from Prescott": dict(base, RUNG_BLAS_KERNEL_TEST_START="Prescott"),
    }

    runs = []
    started = datetime.datetime.now(datetime.timezone.utc)
    for r in range(args.repeats):
        order = MODES if r % 2 == 0 else list(reversed(MODES))
        for mode in order:
            env = environments[mode]
            tag = mode.replace(" ", "-")
            t0 = time.perf_counter()
            kernel = kernel_of(rung_train, env)
            start_s = time.perf_counter() - t0
            rc, out, _, _ = run_process([bench_mm, "--threads", str(args.threads)],
                                        os.path.join(work, "logs", f"r{r}-{tag}-mm.log"), env, args.timeout)
            mm = next((x for x in reversed(json_lines(out)) if "mm_gflops" in x), {}) if rc == 0 else {}
            rc, out, wall, maxrss = run_process([rung_train, "--config", config],
                                                os.path.join(work, "logs", f"r{r}-{tag}-train.log"), env, args.timeout)
            train = parse_rung(out) if rc == 0 else {}
            runs.append({"repeat": r, "mode": mode, "kernel": kernel["name"], "source": kernel["source"],
                         "start_s": start_s, "mm_gflops": mm.get("mm_gflops"), "mm_kernel": (mm.get("kernel") or {}).get("name"),
                         "tokens_per_sec": train.get("tokens_per_sec"), "rc": rc})
            print(f"[{r}] {mode}: kernel {kernel['name']} ({kernel['source']}), start {start_s:.2f} s, "
                  f"mm {mm.get('mm_gflops') or 0:.1f} GFLOP/s, {train.get('tokens_per_sec') or 0:,.0f} tokens/s",
                  file=sys.stderr, flush=True)

    def by(mode, key):
        return [x[key] for x in runs if x["mode"] == mode and x[key] is not None]

    def paired_ratio(mode, key):
        ratios = []
        for r in range(args.repeats):
            a = next((x[key] for x in runs if x["repeat"] == r and x["mode"] == mode), None)
            b = next((x[key] for x in runs if x["repeat"] == r and x["mode"] == "best forced"), None)
            if a and b:
                ratios.append(a / b)
        return statistics.median(ratios) if ratios else None

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model\t")), "?")
    shape = SHAPES[args.shape]
    print(f"Measured {started:%Y-%m-%d %H:%M} UTC on {cpu} (model {model}), {os.cpu_count()} CPUs, {args.threads} "
          f"threads; OpenBLAS's own choice here {user.get('openblas_choice') or user['name']} ({user['source']}: "
          f"{user.get('reason')}); best kernel {best['name']}; {args.repeats} interleaved repeats; rung-train "
          f"{args.shape} (d_model {shape['d_model']}, {shape['layers']} layers, seq {shape['seq']}, batch "
          f"{shape['batch']}, {args.steps} steps, rope).")
    print()
    print("| start | kernel | mm GFLOP/s (median) | rung-train tokens/s (median) | tokens/s vs best forced "
          "| mm vs best forced | start-up s (median) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for mode in MODES:
        kernels = sorted(set(x["kernel"] for x in runs if x["mode"] == mode))
        med = lambda values: statistics.median(values) if values else None
        tokens, mm, start = med(by(mode, "tokens_per_sec")), med(by(mode, "mm_gflops")), med(by(mode, "start_s"))
        rt, rm = paired_ratio(mode, "tokens_per_sec"), paired_ratio(mode, "mm_gflops")
        print(f"| {mode} | {', '.join(kernels)} | {mm or 0:.1f} | {tokens or 0:,.0f} | {rt or 0:.2f}x | {rm or 0:.2f}x "
              f"| {start or 0:.2f} |")
    out_json = args.out_json or os.path.join(work, "blas_kernel.json")
    with open(out_json, "w") as f:
        json.dump({"started": started.isoformat(), "user_start": user, "best": best, "runs": runs}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

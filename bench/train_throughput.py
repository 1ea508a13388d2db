#!/usr/bin/python3
"""Training throughput of rung-train against a plain-PyTorch reference, side by side in one run.

For each repeat the driver runs, one process at a time, for each shape:
  1. rung-bench-mm: the mm peak (below), just before the shape's training processes,
  2. rung-train once per positional variant and bench/reference_train.py (rope) once, in an order that
     is reversed on every other repeat (ours, ref, ... then ..., ref, ours), so that drift on a shared
     machine hits both sides alike.
It then reports medians over repeats and ratios of runs paired within a repeat (median of the
per-repeat ratios): rung / PyTorch at rope, achieved FLOP/s as a fraction of the run's mm peak, and the
tokens/s lost by lerope and adarope against rope. FLOPs per token (docs/science.md
section 5) = 6 * (all matrix parameters, output head included) + 6 * layers * seq * d_model.

THE MM PEAK, defined here once for every "% of the mm peak" in bench/ (long_context.py imports it): the
median GFLOP/s of rung-bench-mm (a 2048 x 2048 x 2048 fp32 torch::mm, 25 timed products) with the same
LibTorch, the same BLAS library and kernel (the one rung's programs choose; OPENBLAS_CORETYPE for the
reference) and the same intra-op threads as the training runs, measured in the same run before each
shape; the run's peak is the median of those measurements. (On a shared 2-core VM one measurement
moves by tens of percent from one minute to the next while training's tokens/s moves much less, so a
fraction over the nearest single measurement would mostly track the measurement's own noise; the range
of the measurements is printed beside the figures.) A training process's fraction of the peak = its
steady tokens/s x FLOPs per token / the run's peak. Every figure names the BLAS kernel it was taken on.

Peak memory: the peak resident set of every process as the kernel accounts it (ru_maxrss from wait4,
the same measure for both implementations), next to the figure the process reports itself.

Run from the repository root under Debian's python (the one with python3-torch):
  /usr/bin/python3 bench/train_throughput.py --build-dir build --repeats 3
Prints a markdown table (for bench/README.md) and writes everything to --out-json.
"""
import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import threading
import time

from bench_common import REPO, blas_kernel, flops_per_token, json_lines, matrix_params

SHAPES = {
    "tiny": {"d_model": 64, "layers": 2, "heads": 4, "seq": 128, "batch": 32},
    "small": {"d_model": 128, "layers": 4, "heads": 4, "seq": 256, "batch": 16},
    # long contexts: the small model, 4096 tokens per batch (--shapes long-1024,long-2048,...)
    **{f"long-{seq}": {"d_model": 128, "layers": 4, "heads": 4, "seq": seq, "batch": max(1, 4096 // seq)}
       for seq in (1024, 2048, 4096, 8192)},
}
VOCAB = 256
# The goals: speed against the reference, and the fraction of the mm peak (training at the machine's
# peak: >= 65% at the small shape, >= 55% at every long one).
GOAL_SPEEDUP = {"tiny": 1.3, "small": 1.2}
GOAL_PEAK_FRACTION = {"small": 0.65, **{f"long-{seq}": 0.55 for seq in (1024, 2048, 4096, 8192)}}
MM_PEAK_SIZE = 2048
MM_PEAK_REPEATS = 25


def mm_peak_command(bench_mm, threads):
    """One measurement of the mm peak (see the module docstring)."""
    return [bench_mm, "--threads", str(threads), "--size", str(MM_PEAK_SIZE), "--repeats", str(MM_PEAK_REPEATS)]


def run_peak(measurements):
    """The run's mm peak: the median of its measurements (GFLOP/s), or None without any."""
    values = [m for m in measurements if m]
    return statistics.median(values) if values else None


def parse_mm_peak(stdout):
    """{"mm_gflops", "blas", "blas_kernel"} from rung-bench-mm's output (None where it printed none)."""
    mm = next((x for x in reversed(json_lines(stdout)) if "mm_gflops" in x), {})
    return {"mm_gflops": mm.get("mm_gflops"), "blas": mm.get("blas"), "blas_kernel": (mm.get("kernel") or {}).get("name")}


def peak_fraction(tokens_per_sec, flops_per_token_value, mm_gflops):
    """A training run's fraction of the mm peak (see the module docstring), or None without both."""
    if not tokens_per_sec or not mm_gflops:
        return None
    return tokens_per_sec * flops_per_token_value / (mm_gflops * 1e9)
GOAL_MAX_OVERHEAD = {"small": 0.10}  # lerope, adarope vs rope: at most 10% fewer tokens/s


def rung_config(shape, variant, args):
    return {
        "seed": args.seed,
        "data": {"source": "builtin", "seq_len": shape["seq"]},
        "model": {"layers": shape["layers"], "d_model": shape["d_model"], "heads": shape["heads"], "mlp": "gelu"},
        "position": {"variant": variant},
        "train": {
            "steps": args.steps,
            "batch_size": shape["batch"],
            "lr": 0.003,
            "schedule": {"name": "cosine", "warmup_steps": 10},
            "eval_every": 0,
            "eval_batches": 1,
            "log_every": args.log_every,
            # Training alone: no end-of-run diagnostics (they never enter tokens/s, only the wall time).
            "diagnostics_sequences": 0,
        },
        "resources": {"cpus": args.threads},
    }


def run_process(cmd, log_path, env, timeout):
    """Runs cmd with stdout captured and stderr to log_path. Returns (rc, stdout, wall_s, maxrss_bytes).

    The child is reaped with os.wait4 so that its own ru_maxrss is known (RUSAGE_CHILDREN would be
    the maximum over every child so far)."""
    start = time.perf_counter()
    with open(log_path, "w") as log:
        log.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        log.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, env=env, cwd=REPO, text=True)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        stdout = proc.stdout.read()
        proc.stdout.close()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        timer.cancel()
        if proc.returncode == -9:
            log.write(f"\n[train_throughput] killed (timeout {timeout} s?)\n")
        log.write("\n[stdout]\n" + stdout)
    return proc.returncode, stdout, time.perf_counter() - start, usage.ru_maxrss * 1024


def tail(path, lines=15):
    try:
        with open(path) as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def parse_rung(stdout):
    """tokens/s (and how it was obtained), self-reported peak RSS, final loss, params from rung-train."""
    records = json_lines(stdout)
    final = next((r for r in reversed(records) if r.get("type") == "final"), {})
    steps = [r for r in records if r.get("type") == "step" and "tokens_per_sec" in r]
    tps, source = None, None
    if "train_tokens_per_sec" in final:
        tps, source = final["train_tokens_per_sec"], "final.train_tokens_per_sec"
    elif "tokens_per_sec" in final:
        tps, source = final["tokens_per_sec"], "final.tokens_per_sec"
    elif steps:
        kept = steps[1:] if len(steps) > 2 else steps  # the first logged window includes warm-up
        tps, source = statistics.median(r["tokens_per_sec"] for r in kept), f"median of {len(kept)} step records"
    loss = final.get("train_loss", final.get("loss", steps[-1].get("loss") if steps else None))
    return {
        "tokens_per_sec": tps,
        "tokens_per_sec_source": source,
        "reported_peak_rss_bytes": final.get("peak_rss_bytes"),
        "final_loss": loss,
        "params": final.get("params", final.get("parameters")),
    }


def parse_reference(stdout):
    rec = next((r for r in reversed(json_lines(stdout)) if r.get("impl") == "pytorch"), {})
    return {
        "tokens_per_sec": rec.get("tokens_per_sec"),
        "tokens_per_sec_source": "reference timed steps",
        "reported_peak_rss_bytes": rec.get("peak_rss_bytes"),
        "final_loss": rec.get("final_loss"),
        "params": rec.get("params"),
        "torch": rec.get("torch"),
        "blas": rec.get("blas"),
        "blas_kernel": rec.get("blas_kernel"),
    }


def median_or_none(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, spec, none="n/a"):
    return none if value is None else format(value, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=60, help="optimizer steps per training run")
    ap.add_argument("--warmup-steps", type=int, default=5, help="untimed first steps of the reference")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--shapes", default="tiny,small")
    ap.add_argument("--variants", default="rope,lerope,adarope", help="rung-train variants (reference: rope)")
    ap.add_argument("--out-json", default=None, help="default: BUILD_DIR/bench/train_throughput.json")
    ap.add_argument("--data", default=None, help="byte file for the reference (default: the builtin corpus, "
                    "BUILD_DIR/data/builtin/austen.txt, the file rung-train's builtin source reads)")
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter with python3-torch 1.13")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per process")
    ap.add_argument("--rung-train-arg", action="append", default=[], help="extra argument for rung-train")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and the configs, run nothing")
    args = ap.parse_args()

    shapes = [s for s in args.shapes.split(",") if s]
    variants = [v for v in args.variants.split(",") if v]
    for s in shapes:
        if s not in SHAPES:
            ap.error(f"unknown shape {s!r} (known: {', '.join(SHAPES)})")
    if args.steps <= args.warmup_steps:
        ap.error("--steps must exceed --warmup-steps")
    build = os.path.join(REPO, args.build_dir) if not os.path.isabs(args.build_dir) else args.build_dir
    rung_train = os.path.join(build, "bin", "rung-train")
    bench_mm = os.path.join(build, "bin", "rung-bench-mm")
    reference = os.path.join(REPO, "bench", "reference_train.py")
    data = args.data or os.path.join(build, "data", "builtin", "austen.txt")
    data = data if os.path.isabs(data) else os.path.join(REPO, data)
    work = os.path.join(build, "bench")
    out_json = args.out_json or os.path.join(work, "train_throughput.json")
    os.makedirs(os.path.join(work, "configs"), exist_ok=True)
    os.makedirs(os.path.join(work, "logs"), exist_ok=True)

    problems = []
    for path, hint in [(rung_train, "cmake --build BUILD_DIR --target rung-train"),
                       (bench_mm, "cmake --build BUILD_DIR --target rung-bench-mm"),
                       (data, "deploy/fetch-builtin-corpus.sh"),
                       (args.python, "deploy/install-deps.sh")]:
        if not os.path.exists(path):
            problems.append(f"missing {path} ({hint})")
    if problems and not args.dry_run:
        sys.exit("train_throughput: " + "; ".join(problems))

    # Same threads for both sides: the trainers set their intra-op threads themselves (resources.cpus,
    # --threads); OMP_NUM_THREADS keeps OpenMP (and OpenMP OpenBLAS) pools to the same size.
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(args.threads)
    # Same BLAS kernel for both sides: rung's programs choose theirs before main (docs/performance.md,
    # "BLAS"); the reference gets the one rung-train runs, through OPENBLAS_CORETYPE.
    kernel = {}
    if not args.dry_run and os.path.exists(rung_train):
        kernel = blas_kernel(rung_train, env)[0] or {}
    reference_env = dict(env)
    if kernel.get("name"):
        reference_env["OPENBLAS_CORETYPE"] = kernel["name"]

    # Configs, written once.
    configs = {}
    for s in shapes:
        for v in variants:
            path = os.path.join(work, "configs", f"{s}-{v}.json")
            with open(path, "w") as f:
                json.dump(rung_config(SHAPES[s], v, args), f, indent=2)
                f.write("\n")
            configs[(s, v)] = path

    def reference_cmd(s):
        sh = SHAPES[s]
        return [args.python, reference, "--data", data, "--d-model", str(sh["d_model"]), "--layers",
                str(sh["layers"]), "--heads", str(sh["heads"]), "--seq", str(sh["seq"]), "--batch",
                str(sh["batch"]), "--steps", str(args.steps), "--warmup-steps", str(args.warmup_steps),
                "--threads", str(args.threads), "--seed", str(args.seed), "--log-every", str(args.log_every),
                "--variant", "rope"]

    def rung_cmd(s, v):
        return [rung_train, "--config", configs[(s, v)]] + args.rung_train_arg

    # The plan: per repeat and shape, the mm peak then [ours rope, ref rope, ours other variants...], the
    # shape's list reversed on odd repeats.
    plan = []
    for r in range(args.repeats):
        for s in shapes:
            plan.append((r, "mm", s, None))
            if "rope" in variants:  # ours rope next to the reference, then the other variants
                order = [("rung", "rope"), ("pytorch", "rope")] + [("rung", v) for v in variants if v != "rope"]
            else:
                order = [("rung", v) for v in variants] + [("pytorch", "rope")]
            if r % 2:
                order.reverse()
            plan += [(r, impl, s, v) for impl, v in order]

    command_line = "/usr/bin/python3 " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO)] + sys.argv[1:])
    if args.dry_run:
        for r, impl, s, v in plan:
            cmd = mm_peak_command(bench_mm, args.threads) if impl == "mm" else (
                rung_cmd(s, v) if impl == "rung" else reference_cmd(s))
            print(f"repeat {r}: " + " ".join(shlex.quote(c) for c in cmd))
        for key, path in configs.items():
            print(f"{path}: {json.dumps(rung_config(SHAPES[key[0]], key[1], args))}")
        if problems:
            print("would fail: " + "; ".join(problems))
        return 0

    runs = []
    started = datetime.datetime.now(datetime.timezone.utc)
    for i, (r, impl, s, v) in enumerate(plan):
        name = f"{s}-mm" if impl == "mm" else f"{s}-{impl}-{v}"
        log_path = os.path.join(work, "logs", f"r{r}-{name}.log")
        if impl == "mm":
            cmd = mm_peak_command(bench_mm, args.threads)
        elif impl == "rung":
            cmd = rung_cmd(s, v)
        else:
            cmd = reference_cmd(s)
        rc, stdout, wall, maxrss = run_process(cmd, log_path, reference_env if impl == "pytorch" else env, args.timeout)
        rec = {"repeat": r, "impl": impl, "shape": s, "variant": v, "rc": rc, "wall_s": wall,
               "peak_rss_bytes": maxrss, "log": log_path}
        if impl == "mm":
            rec.update(parse_mm_peak(stdout))
            summary = f"{fmt(rec['mm_gflops'], '.1f')} GFLOP/s"
        else:
            rec.update(parse_rung(stdout) if impl == "rung" else parse_reference(stdout))
            summary = f"{fmt(rec['tokens_per_sec'], ',.0f')} tokens/s, peak RSS {fmt(maxrss and maxrss / 2**20, '.0f')} MiB"
        if rc != 0 or (impl == "mm" and rec["mm_gflops"] is None) or (impl != "mm" and rec["tokens_per_sec"] is None):
            rec["error"] = f"rc {rc}; see {log_path}"
            summary = f"FAILED (rc {rc}), log {log_path}\n{tail(log_path)}"
        print(f"[{i + 1}/{len(plan)}] repeat {r} {name}: {summary} ({wall:.1f} s)", file=sys.stderr, flush=True)
        runs.append(rec)

    # Per-repeat pairing.
    def find(r, impl, s, v):
        return next((x for x in runs if x["repeat"] == r and x["impl"] == impl and x["shape"] == s
                     and x["variant"] == v and "error" not in x), None)

    mm_by_shape = {(x["repeat"], x["shape"]): x["mm_gflops"] for x in runs if x["impl"] == "mm" and "error" not in x}
    mm_median = run_peak(mm_by_shape.values())
    rows, summary = [], {}
    for s in shapes:
        fpt = flops_per_token(SHAPES[s], VOCAB)
        shape_summary = {"flops_per_token": fpt, "matrix_params": matrix_params(SHAPES[s], VOCAB), "rows": {}}
        entries = [("rung", v) for v in variants] + [("pytorch", "rope")]
        for impl, v in entries:
            per = [find(r, impl, s, v) for r in range(args.repeats)]
            tps = [p["tokens_per_sec"] if p else None for p in per]
            ref = [find(r, "pytorch", s, "rope") for r in range(args.repeats)]
            base = [find(r, "rung", s, "rope") for r in range(args.repeats)]
            vs_ref = [t / q["tokens_per_sec"] if t and q else None for t, q in zip(tps, ref)]
            frac = [peak_fraction(t, fpt, mm_median) for t in tps]
            overhead = [1 - t / b["tokens_per_sec"] if t and b else None for t, b in zip(tps, base)]
            row = {
                "impl": impl, "variant": v,
                "tokens_per_sec": tps,
                "tokens_per_sec_median": median_or_none(tps),
                "tokens_per_sec_min": min((t for t in tps if t), default=None),
                "tokens_per_sec_max": max((t for t in tps if t), default=None),
                "vs_pytorch_paired_median": median_or_none(vs_ref) if impl == "rung" else None,
                "gflops_median": (median_or_none(tps) or 0) * fpt / 1e9 or None,
                "peak_fraction_median": median_or_none(frac),
                "overhead_vs_rope_paired_median": median_or_none(overhead) if impl == "rung" and v != "rope" else None,
                "peak_rss_bytes_median": median_or_none(p["peak_rss_bytes"] for p in per if p),
                "reported_peak_rss_bytes_median": median_or_none(p.get("reported_peak_rss_bytes") for p in per if p),
                "final_loss_median": median_or_none(p.get("final_loss") for p in per if p),
                "params": next((p.get("params") for p in per if p and p.get("params")), None),
                "tokens_per_sec_source": next((p["tokens_per_sec_source"] for p in per if p), None),
                "failed_runs": sum(1 for p in per if p is None),
            }
            shape_summary["rows"][f"{impl}:{v}"] = row
            rows.append((s, row))
        summary[s] = shape_summary

    goals = []
    for s in shapes:
        rr = summary[s]["rows"]
        if s in GOAL_SPEEDUP and "rung:rope" in rr:
            got = rr["rung:rope"]["vs_pytorch_paired_median"]
            goals.append((f"{s}: rung / PyTorch tokens/s (rope)", got, f">= {GOAL_SPEEDUP[s]:.2f}x",
                          got is not None and got >= GOAL_SPEEDUP[s], f"{fmt(got, '.2f')}x"))
        if s in GOAL_PEAK_FRACTION and "rung:rope" in rr:
            got = rr["rung:rope"]["peak_fraction_median"]
            goals.append((f"{s}: achieved FLOP/s / mm peak (rope)", got, f">= {GOAL_PEAK_FRACTION[s]:.0%}",
                          got is not None and got >= GOAL_PEAK_FRACTION[s], fmt(got, ".1%")))
        if s in GOAL_MAX_OVERHEAD:
            for v in variants:
                if v != "rope" and f"rung:{v}" in rr and "rung:rope" in rr:
                    got = rr[f"rung:{v}"]["overhead_vs_rope_paired_median"]
                    goals.append((f"{s}: {v} tokens/s lost vs rope", got, f"<= {GOAL_MAX_OVERHEAD[s]:.0%}",
                                  got is not None and got <= GOAL_MAX_OVERHEAD[s], fmt(got, ".1%")))

    blas = next((x.get("blas") for x in runs if x["impl"] == "mm" and x.get("blas")), None)
    ref_blas = next((x.get("blas") for x in runs if x["impl"] == "pytorch" and x.get("blas")), None)
    ref_torch = next((x.get("torch") for x in runs if x["impl"] == "pytorch" and x.get("torch")), None)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    blas_lib = next((b for b in (blas or []) if "libopenblas" in b or "libblas" in b), None)
    mm_kernel = next((x.get("blas_kernel") for x in runs if x["impl"] == "mm" and x.get("blas_kernel")), None)
    ref_kernel = next((x.get("blas_kernel") for x in runs if x["impl"] == "pytorch" and x.get("blas_kernel")), None)
    kernel_words = (f", kernel {kernel.get('name') or '?'} ({kernel.get('source') or '?'}; rung-bench-mm "
                    f"{mm_kernel or '?'}, reference {ref_kernel or '?'})")

    md = []
    md.append(f"Measured {started:%Y-%m-%d %H:%M} UTC on {cpu}, {os.cpu_count()} CPUs, {args.threads} threads, "
              f"BLAS {blas_lib or 'unknown'}" + kernel_words
              + ("" if (ref_blas is None or blas is None or set(ref_blas) == set(blas)) else " (reference: "
                 + ", ".join(ref_blas) + ")")
              + f", PyTorch reference torch {ref_torch or '?'}; {args.repeats} interleaved repeats of {args.steps} "
              f"steps; the run's mm peak (2048^3 fp32, the median of {len(mm_by_shape)} measurements taken before "
              f"the shapes: bench/train_throughput.py) {fmt(mm_median, '.1f')} GFLOP/s, measurements "
              f"{fmt(min(mm_by_shape.values(), default=None), '.1f')}-{fmt(max(mm_by_shape.values(), default=None), '.1f')}.")
    md.append("")
    md.append("| shape | impl | variant | tokens/s (median) | range | vs PyTorch | GFLOP/s | mm before it "
              "| % of mm peak | overhead vs rope | peak RSS MiB | final loss |")
    md.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s, row in rows:
        mib = row["peak_rss_bytes_median"]
        failed = f" ({row['failed_runs']} failed)" if row["failed_runs"] else ""
        span = ("n/a" if row["tokens_per_sec_min"] is None else
                f"{row['tokens_per_sec_min']:,.0f}-{row['tokens_per_sec_max']:,.0f}")
        shape_peak = median_or_none(g for (_, shape), g in mm_by_shape.items() if shape == s)
        md.append("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |".format(
            s, "rung" if row["impl"] == "rung" else "PyTorch", row["variant"],
            fmt(row["tokens_per_sec_median"], ",.0f") + failed,
            span,
            fmt(row["vs_pytorch_paired_median"], ".2f", "") + ("x" if row["vs_pytorch_paired_median"] else ""),
            fmt(row["gflops_median"], ".1f"),
            fmt(shape_peak, ".1f"),
            fmt(row["peak_fraction_median"], ".1%"),
            fmt(row["overhead_vs_rope_paired_median"], ".1%", ""),
            fmt(mib and mib / 2**20, ".0f"),
            fmt(row["final_loss_median"], ".3f")))
    md.append("")
    md.append("| goal | measured | target | met |")
    md.append("|---|---:|---:|---|")
    for name, _, target, ok, shown in goals:
        md.append(f"| {name} | {shown} | {target} | {'yes' if ok else 'NO'} |")
    md.append("")
    md.append("Ratios and fractions are medians of per-repeat values (runs paired within a repeat); "
              "peak RSS is the kernel's ru_maxrss of each process. Command:")
    md.append("")
    md.append("    " + command_line)
    markdown = "\n".join(md)
    print(markdown)

    result = {
        "command": command_line,
        "started_utc": started.isoformat(),
        "host": {"cpu": cpu, "cpus": os.cpu_count(), "node": platform.node()},
        "settings": {"threads": args.threads, "repeats": args.repeats, "steps": args.steps,
                     "reference_warmup_steps": args.warmup_steps, "shapes": {s: SHAPES[s] for s in shapes},
                     "variants": variants, "seed": args.seed, "data": data,
                     "env": {k: env[k] for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}},
        "blas": {"rung_bench_mm": blas, "reference": ref_blas, "kernel": kernel, "rung_bench_mm_kernel": mm_kernel,
                 "reference_kernel": ref_kernel},
        "mm_gflops_by_shape": {f"{r}:{s}": g for (r, s), g in mm_by_shape.items()},
        "mm_gflops_median": mm_median,
        "summary": summary,
        "goals": [{"goal": g[0], "measured": g[1], "target": g[2], "met": g[3]} for g in goals],
        "runs": runs,
        "markdown": markdown,
    }
    os.makedirs(os.path.dirname(os.path.abspath(out_json)), exist_ok=True)
    with open(out_json, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"\nwrote {out_json}", file=sys.stderr)
    return 1 if any("error" in x for x in runs) else 0


if __name__ == "__main__":
    sys.exit(main())

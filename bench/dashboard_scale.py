#!/usr/bin/env python3
"""bench/dashboard_scale.py: `rung dashboard` on a large sweep (a scale check).

Fills a coordinator with one sweep of --trials trials x --steps logged steps (rung-stand-in on
--workers workers, a step record every step, val_loss every --eval-every), then starts `rung
dashboard` on it and measures:
  - each JSON endpoint the sweep page reads: wall time and response size (plain and gzip),
    and the most points any curve carries;
  - the sweep page in Debian's chromium (bench/dashboard_render.mjs, playwright-core): time from
    navigation to the page ready (table, progress and curves drawn), and to a re-draw after a
    control change (log y);
  - the dashboard's resident memory (VmRSS, VmHWM) after all that.
Prints a markdown table and writes everything to --out-json. Standard library only; needs
`cmake --build build --target rung rung-coordinator rung-worker rung-stand-in rung_dashboard_web`.

    /usr/bin/python3 bench/dashboard_scale.py --build-dir build --trials 1000 --steps 2000 --workers 4
"""
import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from orchestration import Cluster, log, proc_status, wait_for_succeeded  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SPEC = """name: dashboard-scale
description: dashboard scale benchmark (rung-stand-in trains nothing)
metric: {{name: val_loss, goal: minimize}}
baseline: {{position.variant: rope}}
data: {{source: builtin, seq_len: 16}}
model: {{mlp: gelu}}
train: {{batch_size: 2, steps: {steps}, lr: 1.0e-3, eval_every: {eval_every}, log_every: 1, checkpoint_every: 100000}}
resources: {{cpus: 1}}
policy: {{max_retries: 0, max_failed: 10, priority: 1}}
ladder:
  rungs:
    - {{layers: 1, d_model: 16, heads: 2}}
    - {{layers: 2, d_model: 32, heads: 2}}
sweep:
  position.variant: [rope, lerope]
  seed: [{seeds}]
"""


def fetch(url, token, gzip_ok):
    request = urllib.request.Request(url, headers={"Authorization": "Bearer " + token,
                                                   **({"Accept-Encoding": "gzip"} if gzip_ok else {})})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=300) as response:
        body = response.read()
        encoding = response.headers.get("Content-Encoding", "")
    seconds = time.perf_counter() - started
    text = gzip.decompress(body) if encoding == "gzip" else body
    return seconds, len(body), json.loads(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--trials", type=int, default=1000, help="a multiple of 4 (2 rungs x 2 variants x seeds)")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--keep", help="keep the run folder here (and reuse it if it holds a finished sweep)")
    parser.add_argument("--out-json", default="build/bench/dashboard_scale.json")
    args = parser.parse_args()
    bin_dir = os.path.abspath(os.path.join(args.build_dir, "bin"))
    root = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="rung-dashboard-scale-")
    os.makedirs(root, exist_ok=True)
    report = {"trials": args.trials, "steps": args.steps, "workers": args.workers, "root": root}
    cluster = Cluster(bin_dir, root, dict(os.environ))
    try:
        fresh = not os.path.exists(os.path.join(root, "rung.db"))
        cluster.start_coordinator()
        if fresh:
            spec = os.path.join(root, "dashboard-scale.yaml")
            with open(spec, "w") as out:
                out.write(SPEC.format(steps=args.steps, eval_every=args.eval_every,
                                      seeds=", ".join(str(s) for s in range(args.trials // 4))))
            cluster.submit(spec)
            cluster.start_workers(args.workers, os.path.join(bin_dir, "rung-stand-in"), {})
            started = time.time()
            wait_for_succeeded(cluster.db, "dashboard-scale", args.trials, args.timeout,
                               on_poll=lambda n: None)
            report["fill_seconds"] = time.time() - started
            log(f"filled: {args.trials} trials x {args.steps} steps in {report['fill_seconds']:.0f} s")
            cluster.stop_workers()
        dashboard, origin, token = cluster.start_dashboard()
        report["rss_start_kib"] = proc_status(dashboard.pid)
        endpoints = {}
        for name, path in [("sweeps", "/api/sweeps"), ("sweep", "/api/sweeps/1"), ("trials", "/api/sweeps/1/trials"),
                           ("results best", "/api/sweeps/1/results?summary=best"),
                           ("curves", "/api/sweeps/1/curves?metric=val_loss&points=400"),
                           ("train_loss curves", "/api/sweeps/1/curves?metric=train_loss&points=400"),
                           ("fit", "/api/sweeps/1/fit")]:
            seconds, plain_bytes, body = fetch(origin + path, token, False)
            gz_seconds, gz_bytes, _ = fetch(origin + path, token, True)
            entry = {"seconds": seconds, "bytes": plain_bytes, "gzip_seconds": gz_seconds, "gzip_bytes": gz_bytes}
            if "curves" in name:
                entry["curves"] = len(body["trials"])
                entry["max_points_per_curve"] = max((len(t["points"]) for t in body["trials"]), default=0)
            endpoints[name] = entry
            log(f"{name}: {seconds:.2f} s, {plain_bytes:,} bytes ({gz_bytes:,} gzip)")
        report["endpoints"] = endpoints
        render = subprocess.run(
            ["node", os.path.join(REPO, "bench", "dashboard_render.mjs")],
            env=dict(os.environ, DASHBOARD_URL=f"{origin}/?token={token}", SWEEP_ID="1",
                     NODE_PATH=os.path.abspath(os.path.join(args.build_dir, "dashboard-node", "node_modules"))),
            capture_output=True, text=True, timeout=600)
        if render.returncode != 0:
            raise RuntimeError(f"dashboard_render.mjs failed: {render.stderr}{render.stdout}")
        report["render"] = json.loads(render.stdout.strip().splitlines()[-1])
        report["rss_end_kib"] = proc_status(dashboard.pid)
        log(f"render: {report['render']}; dashboard RSS {report['rss_end_kib']}")
    finally:
        cluster.stop()
    os.makedirs(os.path.dirname(os.path.abspath(args.out_json)), exist_ok=True)
    with open(args.out_json, "w") as out:
        json.dump(report, out, indent=2)
    print(f"| measure ({args.trials} trials x {args.steps} steps) | value |")
    print("|---|---:|")
    print(f"| sweep page ready in chromium (navigation to table, progress and curves drawn) | {report['render']['ready_ms'] / 1000:.2f} s |")
    print(f"| the table's best and last columns filled in | {report['render']['summaries_ms'] / 1000:.2f} s |")
    print(f"| re-draw after a control change (log y) | {report['render']['redraw_ms'] / 1000:.2f} s |")
    for name, entry in report["endpoints"].items():
        extra = f", {entry['max_points_per_curve']} points per curve at most" if "max_points_per_curve" in entry else ""
        print(f"| `{name}` response | {entry['seconds']:.2f} s, {entry['bytes'] / 1e6:.2f} MB ({entry['gzip_bytes'] / 1e6:.2f} MB gzip){extra} |")
    print(f"| dashboard RSS after the page and every endpoint (VmHWM) | {report['rss_end_kib']['VmRSS'] / 1024:.0f} MiB ({report['rss_end_kib']['VmHWM'] / 1024:.0f} MiB) |")


if __name__ == "__main__":
    main()

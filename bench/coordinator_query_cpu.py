#!/usr/bin/env python3
"""bench/coordinator_query_cpu.py: the coordinator's CPU per request of the queries a results table
and a trials table make, on a filled sweep, for two coordinator binaries side by side.

Takes the run folder that bench/dashboard_scale.py --keep filled (1,000 trials x 2,000 steps), copies
its database once per coordinator, starts each binary on its copy (127.0.0.1, port 0) and, through
a Python client (python/rung) of that binary's protocol, sends each request --requests times,
reading the coordinator's user + system CPU from /proc before and after. The client runs in a
process of its own (PYTHONPATH --before-client or --after-client, the package folder of that
release's python/ with its stubs), so that binaries of different protocol versions compare. Rounds
alternate the binaries (A B A B ...), and each figure is the median over --rounds rounds.

    /usr/bin/python3 bench/coordinator_query_cpu.py --run /tmp/dash-scale-run \\
        --before /tmp/coord-before --before-client /tmp/client-before \\
        --after build/bin/rung-coordinator --after-client python
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from orchestration import cpu_seconds  # noqa: E402

QUERIES = {
    "results (rung_label x variant)": lambda c: c.results(1, group_by=["rung_label", "position.variant"]),
    "results (one row a trial)": lambda c: c.results(1),
    "trials (every page)": lambda c: c.trials(1),
}


def start(binary, folder):
    process = subprocess.Popen(
        [binary, "--listen", "127.0.0.1:0", "--db", os.path.join(folder, "rung.db"), "--user-token-file",
         os.path.join(folder, "user.token"), "--worker-token-file", os.path.join(folder, "worker.token"),
         "--check-at-start", "none"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        raise RuntimeError(f"{binary} did not start: {line!r}")
    return process, line.split()[-1]


def query_child(address, token_file, pid, requests):
    """In the client's own process: each query's coordinator CPU per request, as JSON on stdout."""
    import json
    import rung
    with rung.connect(address, token_file, timeout=600) as client:
        figures = {}
        for label, query in QUERIES.items():
            query(client)  # warm: statement cache, page cache
            before = sum(cpu_seconds(pid))
            for _ in range(requests):
                query(client)
            figures[label] = (sum(cpu_seconds(pid)) - before) / requests
    print(json.dumps(figures))


def measure(binary, client, source, requests):
    import json
    folder = tempfile.mkdtemp(prefix="rung-query-cpu-")
    try:
        for name in ("rung.db", "user.token", "worker.token"):
            shutil.copy(os.path.join(source, name), folder)
        process, address = start(binary, folder)
        try:
            child = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--query-child", address,
                 os.path.join(folder, "user.token"), str(process.pid), str(requests)],
                env=dict(os.environ, PYTHONPATH=os.path.abspath(client)), check=True, stdout=subprocess.PIPE,
                text=True)
            return json.loads(child.stdout.strip().splitlines()[-1])
        finally:
            process.terminate()
            process.wait(timeout=60)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--query-child":
        query_child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, help="a run folder bench/dashboard_scale.py --keep filled")
    parser.add_argument("--before", required=True, help="the coordinator binary to compare against")
    parser.add_argument("--after", required=True, help="the coordinator binary measured")
    parser.add_argument("--before-client", default="python", help="PYTHONPATH of a client of --before's protocol")
    parser.add_argument("--after-client", default="python", help="PYTHONPATH of a client of --after's protocol")
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.run, "worker.token")):
        raise SystemExit(f"{args.run}: no worker.token (a folder bench/dashboard_scale.py --keep filled?)")
    runs = {"before": [], "after": []}
    for _ in range(args.rounds):
        for name in ("before", "after"):
            runs[name].append(measure(getattr(args, name), getattr(args, name + "_client"), args.run, args.requests))
    print(f"| query (coordinator CPU per request, median of {args.rounds} rounds of {args.requests}) "
          "| before | after | after / before |")
    print("|---|---:|---:|---:|")
    for label in QUERIES:
        before = statistics.median(run[label] for run in runs["before"])
        after = statistics.median(run[label] for run in runs["after"])
        print(f"| {label} | {before:.3f} s | {after:.3f} s | {after / before:.2f} |")


if __name__ == "__main__":
    main()

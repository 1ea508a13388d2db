#!/usr/bin/env python3
"""bench/precision/plan_vs_real.py: `rung plan`'s predicted interval widths against the widths a real
CPU ladder then reports.

1. Runs the pilot (plan-pilot.yaml: rope and LeRoPE, 2 rungs, 3 seeds) with `rung run`.
2. Serves it (`rung serve`) and asks `rung plan --noise-from 1` for the ladder of plan-ladder.yaml
   (the same 2 rungs, 6 fresh seeds) and for its first 3 seeds: the predicted median width and the
   10th-90th percentile range of the hermite estimator's 95% interval at each rung.
3. Runs that ladder, exports its ladder CSV and fits it (`rung fit --from-csv`) with all 6 seeds and
   with the first 3: the widths a researcher would then read.
4. Prints a markdown table: one row per (seeds, variant, rung), predicted against real, and whether the
   real width falls within the predicted 10-90% range. One real ladder is one draw: over many rows
   about 80% should fall within the range.

Usage: bench/precision/plan_vs_real.py [--bin build/bin] [--dir DIR] [--studies 400] [--workers 2] [--reuse]
"""
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(command, env=None):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit("plan_vs_real: " + " ".join(command) + " failed (" + str(result.returncode) + "):\n" +
                 result.stderr[-4000:])
    return result.stdout


class Served:
    """`rung serve DIR` in the background; the environment its commands need."""

    def __init__(self, rung, directory):
        self.process = subprocess.Popen([rung, "serve", directory], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        self.env = dict(os.environ)
        for _ in range(20):
            line = self.process.stdout.readline()
            match = re.match(r"export (RUNG_COORDINATOR|RUNG_TOKEN_FILE)=(\S+)", line)
            if match:
                self.env[match.group(1)] = match.group(2)
            if "RUNG_COORDINATOR" in self.env and "RUNG_TOKEN_FILE" in self.env:
                return
        self.close()
        sys.exit("plan_vs_real: rung serve " + directory + " printed no address")

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def seeds_spec(source, seeds, directory):
    """A copy of the spec at `source` with its seed axis set to `seeds`."""
    with open(source) as spec:
        text = spec.read()
    text = re.sub(r"seed: \[[^\]]*\]", "seed: [" + ", ".join(str(s) for s in seeds) + "]", text)
    path = os.path.join(directory, "ladder-" + str(len(seeds)) + "-seeds.yaml")
    with open(path, "w") as out:
        out.write(text)
    return path


def real_widths(rung, ladder_csv, seeds, directory):
    """(variant, rung) -> the hermite 95% interval's width a fit of these seeds of the ladder reports."""
    rows = list(csv.DictReader(io.StringIO(ladder_csv)))
    kept = [row for row in rows if int(row["seed"]) in seeds]
    path = os.path.join(directory, "ladder-" + str(len(seeds)) + "-seeds.csv")
    with open(path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0].keys()))
        writer.writeheader()
        writer.writerows(kept)
    report = run([rung, "fit", "--from-csv", path, "--baseline", "rope", "--format", "csv"])
    widths = {}
    for row in csv.DictReader(io.StringIO(report)):
        if row["estimator"] == "hermite" and row["variant"] != "rope" and row["ci_low"]:
            widths[(row["variant"], row["label"])] = float(row["ci_high"]) - float(row["ci_low"])
    return widths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--dir", default="")
    parser.add_argument("--studies", type=int, default=400)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--multiplier", type=float, default=1.0,
                        help="the CM rung plan assumes (the width depends on it: the pilot's CM is about 1)")
    parser.add_argument("--reuse", action="store_true", help="keep the runs already in --dir (their rung.db)")
    args = parser.parse_args()
    rung = os.path.join(args.bin, "rung")
    directory = args.dir or tempfile.mkdtemp(prefix="plan-vs-real-")
    os.makedirs(directory, exist_ok=True)

    pilot_dir = os.path.join(directory, "pilot")
    if not (args.reuse and os.path.exists(os.path.join(pilot_dir, "rung.db"))):
        run([rung, "run", os.path.join(HERE, "plan-pilot.yaml"), "--workers", str(args.workers), "--dir", pilot_dir])
    ladder_spec = os.path.join(HERE, "plan-ladder.yaml")
    seed_sets = {3: [3, 4, 5], 6: [3, 4, 5, 6, 7, 8]}
    predicted = {}
    served = Served(rung, pilot_dir)
    try:
        for count, seeds in seed_sets.items():
            spec = seeds_spec(ladder_spec, seeds, directory)
            plan = json.loads(run([rung, "plan", spec, "--noise-from", "1", "--studies", str(args.studies),
                                   "--multiplier", str(args.multiplier), "--max-seeds", "2", "--format", "json"],
                                  env=served.env))
            predicted[count] = plan
    finally:
        served.close()

    ladder_dir = os.path.join(directory, "ladder")
    if not (args.reuse and os.path.exists(os.path.join(ladder_dir, "rung.db"))):
        run([rung, "run", ladder_spec, "--workers", str(args.workers), "--dir", ladder_dir])
    served = Served(rung, ladder_dir)
    try:
        ladder_csv = run([rung, "export", "1", "--table", "ladder"], env=served.env)
    finally:
        served.close()

    plan = predicted[3]
    print("rung plan from the pilot (" + pilot_dir + "): seed sd " + "%.4g" % plan["seed_sd"] + " nats, pairing " +
          "%.5g" % plan["pairing"] + " (per rung: " + ", ".join(
              "%s sd %.3g pairing %.5g" % (label, noise["seed_sd"], noise["pairing"])
              for label, noise in plan["noise_by_rung"].items()) + "), loss curve L = %.4g + %.4g C^-%.4g" % (
              plan["loss_law"]["e"], plan["loss_law"]["a"], plan["loss_law"]["alpha"]) + "; assumed CM " +
          "%g" % plan["multiplier"] + ", " + str(args.studies) + " simulated ladders; hermite, 95% jackknife gap t")
    print()
    print("| seeds | variant | rung | predicted width (median) | predicted 10-90% | real width | within |")
    print("|---:|---|---|---:|---:|---:|---|")
    within = 0
    total = 0
    for count, seeds in seed_sets.items():
        real = real_widths(rung, ladder_csv, seeds, directory)
        for cell in predicted[count]["as_written"]:
            key = (cell["variant"], cell["rung"])
            width = real.get(key)
            low, high = cell["width_p10"], cell["width_p90"]
            inside = width is not None and low is not None and low <= width <= high
            within += inside
            total += 1
            print("| %d | %s | %s | %.4g | %.4g - %.4g | %s | %s |" % (
                count, cell["variant"], cell["rung"], cell["width_median"], low, high,
                "-" if width is None else "%.4g" % width, "yes" if inside else "no"))
    print()
    print("%d of %d real widths within the predicted 10-90%% range; runs in %s" % (within, total, directory))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Training tokens/s of two rung-train binaries side by side: a release against the one before it.

Runs both on the same trial (the "small" shape of train_throughput.py: d_model 128, 4 layers, 4 heads,
seq 256, batch 16, rope, no diagnostics; --seq T gives its long shapes, 4096 tokens a step), one process
at a time, alternating which goes first on each
repeat, and prints each run's train_tokens_per_sec (the final record's, after the warm-up steps), the
medians and the median of the per-repeat ratios (new / old). Only Python's standard library.

  /usr/bin/python3 bench/compare_trainers.py --old OLD/rung-train --new build/bin/rung-train --repeats 4 [--seq 1024]

Each binary finds the builtin corpus beside its own folder (<bin>/../data/builtin).
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

CONFIG = {
    "seed": 0,
    "data": {"source": "builtin", "seq_len": 256},
    "model": {"layers": 4, "d_model": 128, "heads": 4, "mlp": "gelu"},
    "position": {"variant": "rope"},
    "train": {"steps": 60, "batch_size": 16, "lr": 0.003, "schedule": {"name": "cosine", "warmup_steps": 10},
              "eval_every": 0, "eval_batches": 1, "log_every": 10, "diagnostics_sequences": 0},
    "resources": {"cpus": 2},
}


def tokens_per_sec(binary, config_path, threads):
    out = subprocess.run([binary, "--config", config_path, "--threads", str(threads)], capture_output=True,
                         text=True, check=True).stdout
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    final = [record for record in records if record.get("type") == "final"][-1]
    return final["train_tokens_per_sec"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", required=True, help="the earlier rung-train")
    parser.add_argument("--new", required=True, help="the rung-train to compare")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seq", type=int, default=256,
                        help="seq_len: 256 is the small shape (batch 16); longer ones train 4096 tokens a step")
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()
    if args.seq < 1 or args.steps < 1 or args.repeats < 1 or args.threads < 1:
        parser.error("--seq, --steps, --repeats and --threads must be at least 1")
    config_data = json.loads(json.dumps(CONFIG))
    config_data["data"]["seq_len"] = args.seq
    config_data["train"]["batch_size"] = 16 if args.seq == 256 else max(1, 4096 // args.seq)
    config_data["train"]["steps"] = args.steps
    with tempfile.TemporaryDirectory() as scratch:
        config_path = os.path.join(scratch, "trial.json")
        with open(config_path, "w") as config:
            json.dump(config_data, config)
        runs = {"old": [], "new": []}
        for repeat in range(args.repeats):
            order = ["old", "new"] if repeat % 2 == 0 else ["new", "old"]
            for name in order:
                runs[name].append(tokens_per_sec(getattr(args, name), config_path, args.threads))
    ratios = [new / old for new, old in zip(runs["new"], runs["old"])]
    print(json.dumps({"old": runs["old"], "new": runs["new"], "median_old": statistics.median(runs["old"]),
                      "median_new": statistics.median(runs["new"]),
                      "median_ratio_new_over_old": statistics.median(ratios)}))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The main job until the coordinator lands: trains one small model of every positional variant
# with rung-train on the builtin corpus (Jane Austen, byte-level) and prints their validation curves.
# Usage: deploy/quickstart.sh [BUILD_DIR]   (make quickstart builds and fetches the corpus first)
set -euo pipefail
build=${1:-build}
out="$build/quickstart"
mkdir -p "$out"
threads=$(nproc)
variants=(nope rope prope lerope adarope alibi)

for variant in "${variants[@]}"; do
  cat > "$out/$variant.json" <<JSON
{"seed": 0,
 "data": {"source": "builtin", "seq_len": 128},
 "model": {"layers": 2, "d_model": 64, "heads": 4, "mlp": "gelu"},
 "position": {"variant": "$variant"},
 "train": {"steps": 300, "batch_size": 32, "lr": 0.003,
           "schedule": {"name": "cosine", "warmup_steps": 30},
           "eval_every": 50, "eval_batches": 16, "log_every": 50},
 "resources": {"cpus": $threads}}
JSON
  echo "quickstart: training $variant ($out/$variant.jsonl)" >&2
  "$build/bin/rung-train" --config "$out/$variant.json" > "$out/$variant.jsonl"
done

/usr/bin/python3 - "$out" "${variants[@]}" <<'PY'
import json, math, sys
out, variants = sys.argv[1], sys.argv[2:]
curves, finals = {}, {}
for v in variants:
    records = [json.loads(line) for line in open(f"{out}/{v}.jsonl")]
    curves[v] = {r["step"]: r["val_loss"] for r in records if r["type"] == "step" and "val_loss" in r}
    finals[v] = next(r for r in records if r["type"] == "final")
steps = sorted(set().union(*[c.keys() for c in curves.values()]))
bits = lambda nats: nats / math.log(2)
print("\nvalidation loss, bits per byte (builtin corpus, d_model 64, 2 layers, seq 128)\n")
print("  step " + "".join(f"{v:>9}" for v in variants))
for s in steps:
    print(f"{s:6d} " + "".join(f"{bits(curves[v][s]):9.3f}" if s in curves[v] else f"{'':>9}" for v in variants))
print("\ntokens/s " + "".join(f"{finals[v]['train_tokens_per_sec']:9.0f}" for v in variants))
print(f"\nper-trial JSON lines (provenance, steps, final with learned positional parameters): {out}/<variant>.jsonl")
PY

#!/usr/bin/env python3
"""Aggregates a Chrome trace from rung-bench-profile: self time per operator, largest first; with
--by-kind, the same self times summed by what they do in the step (matrix products, attention, norms,
...), each operator placed by its name (rung's own kernels record their forward as rung::NAME and their
backward as CppNode<...NAME...>).

  python3 bench/summarize_trace.py trace.json [TOP] [--by-kind]
"""
import json, sys
from collections import defaultdict

# (kind, substrings of operator names), first match wins.
KINDS = [
    ("matrix products (aten::mm, addmm, bmm)", ["aten::mm", "aten::addmm", "aten::bmm", "aten::matmul", "MmBackward"]),
    ("attention kernels", ["SlabAttention", "TiledAttention"]),
    ("q/k/v rotation", ["Rotary", "RotateQkv", "RotateAndTranspose"]),
    ("residual add + RMSNorm", ["ResidualRmsNorm", "AddRmsNorm"]),
    ("MLP activation", ["gelu", "Gelu", "SwiGlu", "silu"]),
    ("cross-entropy", ["TokenCrossEntropy", "log_softmax", "nll_loss"]),
    ("optimizer (clip norm, AdamW, zeroing)", ["AdamWUpdate", "aten::norm", "aten::zero_", "aten::mul_"]),
    ("embedding", ["embedding"]),
]

if len(sys.argv) < 2 or sys.argv[1].startswith("--"):
    sys.exit(__doc__)
try:
    with open(sys.argv[1]) as trace:
        events = json.load(trace)
except (OSError, ValueError) as error:
    sys.exit(f"summarize_trace: cannot read the trace {sys.argv[1]}: {error}")
if isinstance(events, dict):
    events = events.get("traceEvents", [])
events = [e for e in events if e.get("ph") == "X"]
# self time: duration minus the durations of directly nested events on the same thread
events.sort(key=lambda e: (e.get("tid"), e["ts"], -e["dur"]))
total = defaultdict(float)
count = defaultdict(int)
stack = []
for e in events:
    while stack and (stack[-1]["tid"] != e.get("tid") or stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"]):
        stack.pop()
    if stack:
        total[stack[-1]["name"]] -= e["dur"]
    total[e["name"]] += e["dur"]
    count[e["name"]] += 1
    stack.append(e)
grand = sum(v for v in total.values())
positional = [a for a in sys.argv[2:] if not a.startswith("--")]
if "--by-kind" in sys.argv:
    kinds = defaultdict(float)
    for name, value in total.items():
        kind = next((k for k, keys in KINDS if any(key in name for key in keys)), "other (fills, copies, adds, views)")
        kinds[kind] += value
    print(f"{'kind':50s} {'self ms':>10s} {'share':>7s}")
    for kind, value in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"{kind[:50]:50s} {value / 1000:10.1f} {100 * value / grand:6.1f}%")
else:
    print(f"{'operator':50s} {'self ms':>10s} {'share':>7s} {'calls':>7s}")
    for name, value in sorted(total.items(), key=lambda kv: -kv[1])[: int(positional[0]) if positional else 30]:
        print(f"{name[:50]:50s} {value / 1000:10.1f} {100 * value / grand:6.1f}% {count[name]:7d}")
print(f"{'total':50s} {grand / 1000:10.1f}")

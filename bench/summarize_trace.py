#!/usr/bin/env python3
"""Aggregates a Chrome trace from rung-bench-profile: self time per operator, largest first."""
import json, sys
from collections import defaultdict

events = json.load(open(sys.argv[1]))
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
print(f"{'operator':50s} {'self ms':>10s} {'share':>7s} {'calls':>7s}")
for name, value in sorted(total.items(), key=lambda kv: -kv[1])[: int(sys.argv[2]) if len(sys.argv) > 2 else 30]:
    print(f"{name[:50]:50s} {value / 1000:10.1f} {100 * value / grand:6.1f}% {count[name]:7d}")
print(f"{'total':50s} {grand / 1000:10.1f}")

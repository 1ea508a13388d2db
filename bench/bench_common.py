"""Helpers shared by the benchmark drivers bench/train_throughput.py and bench/gpu/gpu_throughput.py
(standard library only: the drivers themselves need no torch)."""
import json
import os
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def json_lines(text):
    """The JSON objects among the lines of text (lines starting with '{' that parse)."""
    records = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except ValueError:
                pass
    return records


def blas_kernel(rung_train, env):
    """The "kernel" object of `rung-train --blas-kernel` (name, source, reason, ...) in `env`, or None
    when it fails (its stderr is then in the second value)."""
    out = subprocess.run([rung_train, "--blas-kernel"], capture_output=True, text=True, env=env, timeout=300)
    if out.returncode != 0:
        return None, out.stderr
    return json.loads(out.stdout).get("kernel"), ""


def matrix_params(shape, vocab):
    """Matrix parameters of rung's model: per layer qkv, out projection and the 4d MLP; output head."""
    d, layers = shape["d_model"], shape["layers"]
    return layers * (3 * d * d + d * d + 2 * 4 * d * d) + d * vocab


def flops_per_token(shape, vocab):
    """Training FLOPs per token (docs/science.md section 5): 6 x matrix parameters (output head included)
    + 6 x layers x seq x d_model (causal attention)."""
    return 6 * matrix_params(shape, vocab) + 6 * shape["layers"] * shape["seq"] * shape["d_model"]

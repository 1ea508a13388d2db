"""The Hugging Face import on CUDA (`make gpu-check`): a small random Llama folder with YaRN rope_scaling
and a Qwen3 folder (tests/hf/hf_reference.py writes both), evaluated by `rung-model eval` on the CPU and
on the GPU; the mean losses must agree with each other and with the plain-PyTorch reference forward of
the first window, within 1e-4. Exit 0 when they do, 1 otherwise; prints one line per check.

  python3 bench/gpu/check_hf_import.py --bin build-gpu/bin
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "hf"))
import hf_reference  # noqa: E402


def evaluate(binary, model, tokens, device, seq_len):
    out = subprocess.run([binary, "eval", "--model", model, "--tokens", tokens, "--seq-len", str(seq_len),
                          "--max-windows", "1", "--bos", "no", "--format", "json", "--device", device],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["mean_loss"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="build-gpu/bin")
    args = parser.parse_args()
    binary = os.path.join(args.bin, "rung-model")
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        seq_len = 96
        ids = np.random.default_rng(0).integers(0, 101, size=seq_len + 1).astype("<u2")
        tokens = os.path.join(work, "tokens.bin")
        ids.tofile(tokens)
        cases = {
            "llama-yarn": dict(arch="llama", hidden=64, max_pos=32,
                               rope_scaling={"rope_type": "yarn", "factor": 4.0}),
            "qwen3": dict(arch="qwen3"),
        }
        for name, options in cases.items():
            folder = os.path.join(work, name)
            hf_reference.make_checkpoint(folder, seed=1, **options)
            reference = hf_reference.forward(folder, [int(t) for t in ids])["mean_loss"]
            cpu = evaluate(binary, folder, tokens, "cpu", seq_len)
            cuda = evaluate(binary, folder, tokens, "cuda", seq_len)
            ok = abs(cpu - reference) < 1e-4 and abs(cuda - reference) < 1e-4
            failures += not ok
            print(f"{name}: reference {reference:.6f}, rung cpu {cpu:.6f}, rung cuda {cuda:.6f}: "
                  f"{'ok' if ok else 'MISMATCH'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

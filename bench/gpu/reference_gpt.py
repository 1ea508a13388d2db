#!/usr/bin/env python3
"""Plain-PyTorch reference of rung's model for the GPU benchmark (bench/gpu/README.md).

The model and step of `rung-train` with `position.variant: rope`, written the way a researcher would
in PyTorch 2.x: nn.Modules, F.scaled_dot_product_attention(is_causal=True), bf16 autocast on CUDA
(RoPE angles and cos/sin in fp32), torch.optim.AdamW (fused on CUDA), clip_grad_norm_, optional
torch.compile. Model: bench/reference_model.py (shared with bench/reference_train.py) with the
vocabulary of the data (50257 for the GPT-2 shape) and SDPA attention where torch has it.

Data: random windows of a flat little-endian uint16 token file (the same file rung-train reads).
Timing: `--steps` optimizer steps; the first `--warmup-steps` (and torch.compile's compilation) are
not timed; the timed window starts and ends with a device synchronisation. tokens/s = timed steps *
batch * seq / seconds.

Runs on PyTorch 1.13 too (CPU smoke runs: no SDPA there, so attention falls back to the explicit
softmax, and no torch.compile). Prints one JSON line on stdout at the end; progress on stderr.

Example (a tiny CPU run):
  python3 bench/gpu/reference_gpt.py --data tokens.bin --vocab 50257 --device cpu --precision fp32 \\
      --d-model 64 --layers 2 --heads 4 --seq 128 --batch 4 --steps 8 --warmup-steps 2
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/
from reference_model import GPT, HAS_SDPA  # noqa: E402  (bench/reference_model.py, shared with bench/reference_train.py)

def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="flat little-endian uint16 token file")
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--d-model", type=int, default=768)
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=30, help="optimizer steps in all, warm-up included")
    ap.add_argument("--warmup-steps", type=int, default=10, help="first steps, not timed")
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--precision", choices=["bf16", "fp32"], default="bf16", help="bf16: autocast on CUDA")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model (PyTorch >= 2)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if args.steps <= args.warmup_steps:
        ap.error("--steps must exceed --warmup-steps")
    device = torch.device(args.device)
    if args.precision == "bf16" and device.type != "cuda":
        ap.error("--precision bf16 autocasts on CUDA only; use fp32 on the CPU")
    if args.compile and not hasattr(torch, "compile"):
        ap.error("--compile needs PyTorch >= 2")

    torch.manual_seed(args.seed)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    tokens = np.memmap(args.data, dtype=np.uint16, mode="r")
    if tokens.size < args.seq + 1:
        sys.exit(f"reference_gpt: {args.data} holds {tokens.size} tokens, fewer than seq + 1")
    rng = np.random.default_rng(args.seed)

    def batch():
        starts = rng.integers(0, tokens.size - args.seq - 1, size=args.batch)
        window = np.stack([tokens[s:s + args.seq + 1] for s in starts]).astype(np.int64)
        window = torch.from_numpy(window)
        if device.type == "cuda":
            window = window.pin_memory().to(device, non_blocking=True)
        return window[:, :-1], window[:, 1:]

    model = GPT(args.vocab, args.d_model, args.layers, args.heads, args.seq, sdpa=HAS_SDPA).to(device)
    params = sum(p.numel() for p in model.parameters())
    fused = {"fused": True} if device.type == "cuda" and "fused" in torch.optim.AdamW.__init__.__code__.co_varnames else {}
    optimizer = torch.optim.AdamW(model.optimizer_groups(args.weight_decay), lr=args.lr, betas=(0.9, 0.95),
                                  eps=1e-8, **fused)
    step_model = torch.compile(model) if args.compile else model
    autocast = (torch.autocast(device_type="cuda", dtype=torch.bfloat16) if args.precision == "bf16"
                else torch.autocast(device_type=device.type, enabled=False))

    loss_value, timed_start = float("nan"), None
    for step in range(args.steps):
        if step == args.warmup_steps:
            synchronize(device)
            timed_start = time.perf_counter()
        inputs, targets = batch()
        with autocast:
            loss = step_model(inputs, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 10 == 0 or step == args.steps - 1:
            loss_value = loss.item()
            print(f"reference_gpt: step {step} loss {loss_value:.4f}", file=sys.stderr)
    synchronize(device)
    seconds = time.perf_counter() - timed_start
    timed_tokens = (args.steps - args.warmup_steps) * args.batch * args.seq
    record = {
        "impl": "pytorch",
        "compile": args.compile,
        "tokens_per_sec": timed_tokens / seconds,
        "final_loss": loss_value,
        "params": params,
        "torch": torch.__version__,
        "sdpa": HAS_SDPA,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "peak_memory_bytes": torch.cuda.max_memory_allocated(device) if device.type == "cuda" else None,
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()

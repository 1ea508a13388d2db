#!/usr/bin/python3
"""Plain-PyTorch reference of rung's model and training step, for the throughput benchmark.

The same model, data and optimizer as `rung-train` with `position.variant: rope`, written the way a
researcher would write it in PyTorch 1.13 (nanoGPT style): nn.Modules, manual causal attention (1.13
has no scaled_dot_product_attention), torch.optim.AdamW with two parameter groups, clip_grad_norm_.
No torch.compile (not in 1.13), no hand-fused kernels.

Model: bench/reference_model.py (shared with bench/gpu/reference_gpt.py) with byte vocab 256 and the
explicit masked-softmax attention (sdpa=False), in fp32.

Timing: `--steps` optimizer steps in all; the first `--warmup-steps` are not timed. tokens/s =
timed steps * batch * seq / wall time of the timed steps (data sampling included, as in rung-train).

Runs only under Debian's /usr/bin/python3 (python3-torch 1.13.1). Prints one JSON line on stdout at
the end; progress goes to stderr.

Example:
  /usr/bin/python3 bench/reference_train.py --data build/data/builtin/austen.txt \
      --d-model 64 --layers 2 --heads 4 --seq 128 --batch 32 --steps 60 --threads 2
"""
import argparse
import json
import math
import resource
import sys
import time

import torch  # noqa: E402  (torch.set_num_interop_threads must run before any parallel work)

torch.set_num_interop_threads(1)

import numpy as np  # noqa: E402

from reference_model import GPT  # noqa: E402  (bench/reference_model.py, shared with bench/gpu/reference_gpt.py)

VOCAB = 256


def lr_at(step, total_steps, peak_lr, warmup_steps):
    """Linear warmup to peak_lr, then cosine to zero at the last step."""
    if step < warmup_steps:
        return peak_lr * (step + 1) / warmup_steps
    progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
    return peak_lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def loaded_blas():
    """Shared objects with 'blas' in their path mapped into this process (which BLAS torch really uses)."""
    libs = set()
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if "blas" in path.lower():
                    libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def openblas_kernel():
    """The kernel OpenBLAS runs in this process (openblas_get_corename), or None for another BLAS."""
    import ctypes
    for lib in loaded_blas():
        try:
            corename = ctypes.CDLL(lib).openblas_get_corename
        except (OSError, AttributeError):
            continue
        corename.restype = ctypes.c_char_p
        return corename().decode()
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="byte file (e.g. build/data/builtin/austen.txt)")
    ap.add_argument("--d-model", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=60, help="optimizer steps in all, warm-up included")
    ap.add_argument("--warmup-steps", type=int, default=5, help="first steps, not timed")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--lr-warmup-steps", type=int, default=10, help="linear LR warmup before cosine")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--variant", choices=["rope"], default="rope",
                    help="positional variant (the reference implements rope only)")
    args = ap.parse_args()
    if args.steps <= args.warmup_steps:
        ap.error("--steps must exceed --warmup-steps")

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    data = torch.from_numpy(np.fromfile(args.data, dtype=np.uint8))
    if data.numel() <= args.seq + 1:
        ap.error(f"{args.data}: {data.numel()} bytes, need more than seq + 1")
    gen = torch.Generator().manual_seed(args.seed)
    offsets = torch.arange(args.seq + 1)

    def get_batch():
        starts = torch.randint(data.numel() - args.seq - 1, (args.batch,), generator=gen)
        windows = data[starts[:, None] + offsets].long()  # [B, seq + 1]
        return windows[:, :-1], windows[:, 1:]

    model = GPT(VOCAB, args.d_model, args.layers, args.heads, args.seq, sdpa=False)
    model.train()
    optimizer = torch.optim.AdamW(model.optimizer_groups(args.weight_decay), lr=args.lr,
                                  betas=(0.9, 0.95), eps=1e-8)

    tokens_per_step = args.batch * args.seq
    t0 = None
    loss_value = float("nan")
    for step in range(args.steps):
        if step == args.warmup_steps:
            t0 = time.perf_counter()
        lr = lr_at(step, args.steps, args.lr, args.lr_warmup_steps)
        for group in optimizer.param_groups:
            group["lr"] = lr
        x, y = get_batch()
        loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            loss_value = loss.item()
            print(f"step {step + 1}/{args.steps} loss {loss_value:.4f} lr {lr:.2e}", file=sys.stderr)
    elapsed = time.perf_counter() - t0
    timed_steps = args.steps - args.warmup_steps

    print(json.dumps({
        "impl": "pytorch",
        "variant": args.variant,
        "tokens_per_sec": timed_steps * tokens_per_step / elapsed,
        "steps": args.steps,
        "timed_steps": timed_steps,
        "final_loss": loss_value,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "params": sum(p.numel() for p in model.parameters()),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "blas": loaded_blas(),
        "blas_kernel": openblas_kernel(),
        "shape": {"d_model": args.d_model, "layers": args.layers, "heads": args.heads,
                  "seq": args.seq, "batch": args.batch},
    }), flush=True)


if __name__ == "__main__":
    main()

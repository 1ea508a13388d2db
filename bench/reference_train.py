#!/usr/bin/python3
"""Plain-PyTorch reference of rung's model and training step, for the throughput benchmark.

The same model, data and optimizer as `rung-train` with `position.variant: rope`, written the way a
researcher would write it in PyTorch 1.13 (nanoGPT style): nn.Modules, manual causal attention (1.13
has no scaled_dot_product_attention), torch.optim.AdamW with two parameter groups, clip_grad_norm_.
No torch.compile (not in 1.13), no hand-fused kernels.

Model (docs science.md sections 1, 2, 4): byte vocab 256; embedding std 1/sqrt(d); `layers` pre-norm
blocks of RMSNorm -> fused qkv -> interleaved RoPE (pairs (2f, 2f+1), theta_f = 10000^(-2f/hd), cos/sin
in fp32) -> causal softmax attention -> out projection -> residual; RMSNorm -> MLP 4d with exact GELU
-> residual; final RMSNorm; untied output head. No biases. Init std 1/sqrt(fan_in), output projections
of attention and MLP scaled by 1/sqrt(2 * layers).

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
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

VOCAB = 256


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(seq_len, head_dim, base=10000.0):
    """cos, sin of angle pos * theta_f, shape [seq_len, head_dim / 2], fp32."""
    f = torch.arange(0, head_dim // 2, dtype=torch.float32)
    theta = base ** (-2.0 * f / head_dim)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), theta)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    """Rotates interleaved pairs (2f, 2f+1) of x [B, H, T, hd] by cos/sin [T, hd/2]."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    return out.flatten(-2)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, seq_len, layers):
        super().__init__()
        assert d_model % n_head == 0 and (d_model // n_head) % 2 == 0
        self.n_head = n_head
        self.head_dim = d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        nn.init.normal_(self.qkv.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.proj.weight, std=1.0 / math.sqrt(d_model) / math.sqrt(2 * layers))
        cos, sin = rope_tables(seq_len, self.head_dim)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        mask = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
        self.register_buffer("mask", mask.view(1, 1, seq_len, seq_len), persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)  # [B, H, T, hd]
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:T], self.sin[:T]
        q = apply_rope(q, cos, sin)
        k = apply_rope(k, cos, sin)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        att = att.masked_fill(~self.mask[:, :, :T, :T], float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v  # [B, H, T, hd]
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, d_model, layers):
        super().__init__()
        self.fc = nn.Linear(d_model, 4 * d_model, bias=False)
        self.gelu = nn.GELU()  # exact (erf)
        self.proj = nn.Linear(4 * d_model, d_model, bias=False)
        nn.init.normal_(self.fc.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.proj.weight, std=1.0 / math.sqrt(4 * d_model) / math.sqrt(2 * layers))

    def forward(self, x):
        return self.proj(self.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, d_model, n_head, seq_len, layers):
        super().__init__()
        self.norm1 = RMSNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, seq_len, layers)
        self.norm2 = RMSNorm(d_model)
        self.mlp = MLP(d_model, layers)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class GPT(nn.Module):
    def __init__(self, d_model, layers, n_head, seq_len):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, seq_len, layers) for _ in range(layers)])
        self.norm_f = RMSNorm(d_model)
        self.head = nn.Linear(d_model, VOCAB, bias=False)
        nn.init.normal_(self.embed.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(d_model))

    def forward(self, idx, targets):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))

    def optimizer_groups(self, weight_decay):
        """Weight decay on the 2-D matrices except the embedding; none on embedding and norm gains."""
        decay, no_decay = [], []
        for name, p in self.named_parameters():
            (decay if p.dim() == 2 and not name.startswith("embed.") else no_decay).append(p)
        return [{"params": decay, "weight_decay": weight_decay},
                {"params": no_decay, "weight_decay": 0.0}]


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

    model = GPT(args.d_model, args.layers, args.heads, args.seq)
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
        "shape": {"d_model": args.d_model, "layers": args.layers, "heads": args.heads,
                  "seq": args.seq, "batch": args.batch},
    }), flush=True)


if __name__ == "__main__":
    main()

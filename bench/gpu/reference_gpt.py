#!/usr/bin/env python3
"""Plain-PyTorch reference of rung's model for the GPU benchmark (bench/gpu/README.md).

The model and step of `rung-train` with `position.variant: rope`, written the way a researcher would
in PyTorch 2.x: nn.Modules, F.scaled_dot_product_attention(is_causal=True), bf16 autocast on CUDA
(RoPE angles and cos/sin in fp32), torch.optim.AdamW (fused on CUDA), clip_grad_norm_, optional
torch.compile. Model: vocabulary from the data (50257 for the GPT-2 shape), embedding std
1/sqrt(d); `layers` pre-norm blocks of RMSNorm -> fused qkv -> interleaved RoPE (pairs (2f, 2f+1),
theta_f = 10000^(-2f/hd)) -> causal attention -> out projection -> residual; RMSNorm -> MLP 4d,
exact GELU -> residual; final RMSNorm; untied output head (as rung); no biases.

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
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rope_tables(seq_len, head_dim, base=10000.0):
    """cos, sin of pos * theta_f, [seq_len, head_dim / 2], fp32."""
    f = torch.arange(0, head_dim // 2, dtype=torch.float32)
    theta = base ** (-2.0 * f / head_dim)
    angles = torch.outer(torch.arange(seq_len, dtype=torch.float32), theta)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    """Rotates interleaved pairs (2f, 2f+1) of x [B, H, T, hd] by fp32 cos/sin [T, hd/2]."""
    x0, x1 = x[..., 0::2].float(), x[..., 1::2].float()
    out = torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1)
    return out.flatten(-2).type_as(x)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, seq_len, layers):
        super().__init__()
        self.n_head, self.head_dim = n_head, d_model // n_head
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        nn.init.normal_(self.qkv.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.proj.weight, std=1.0 / math.sqrt(d_model) / math.sqrt(2 * layers))
        cos, sin = rope_tables(seq_len, self.head_dim)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        if not HAS_SDPA:
            mask = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
            self.register_buffer("mask", mask.view(1, 1, seq_len, seq_len), persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, self.cos[:T], self.sin[:T]), apply_rope(k, self.cos[:T], self.sin[:T])
        if HAS_SDPA:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
            att = F.softmax(att.masked_fill(~self.mask[:, :, :T, :T], float("-inf")), dim=-1)
            y = att @ v
        return self.proj(y.transpose(1, 2).contiguous().view(B, T, C))


class MLP(nn.Module):
    def __init__(self, d_model, layers):
        super().__init__()
        self.fc = nn.Linear(d_model, 4 * d_model, bias=False)
        self.proj = nn.Linear(4 * d_model, d_model, bias=False)
        nn.init.normal_(self.fc.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.proj.weight, std=1.0 / math.sqrt(4 * d_model) / math.sqrt(2 * layers))

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x)))  # exact (erf) GELU, as rung


class Block(nn.Module):
    def __init__(self, d_model, n_head, seq_len, layers):
        super().__init__()
        self.norm1, self.norm2 = RMSNorm(d_model), RMSNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, seq_len, layers)
        self.mlp = MLP(d_model, layers)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    def __init__(self, vocab, d_model, layers, n_head, seq_len):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, seq_len, layers) for _ in range(layers)])
        self.norm_f = RMSNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        nn.init.normal_(self.embed.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(d_model))

    def forward(self, idx, targets):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))

    def optimizer_groups(self, weight_decay):
        decay, no_decay = [], []
        for name, p in self.named_parameters():
            (decay if p.dim() == 2 and not name.startswith("embed.") else no_decay).append(p)
        return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


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

    model = GPT(args.vocab, args.d_model, args.layers, args.heads, args.seq).to(device)
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

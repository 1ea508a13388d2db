"""rung's model (position.variant rope) in plain PyTorch: shared by bench/reference_train.py (CPU,
PyTorch 1.13) and bench/gpu/reference_gpt.py (GPU, PyTorch 2.x; also 1.13 for CPU smoke runs).

Model (docs/science.md sections 1, 2, 4): vocabulary `vocab`; embedding std 1/sqrt(d); `layers`
pre-norm blocks of RMSNorm -> fused qkv -> interleaved RoPE (pairs (2f, 2f+1), theta_f = 10000^(-2f/hd),
cos/sin in fp32) -> causal softmax attention -> out projection -> residual; RMSNorm -> MLP 4d with exact
GELU -> residual; final RMSNorm; untied output head. No biases. Init std 1/sqrt(fan_in), output
projections of attention and MLP scaled by 1/sqrt(2 * layers).

Attention is F.scaled_dot_product_attention(is_causal=True) with `sdpa=True` (PyTorch >= 2.0,
HAS_SDPA), else the explicit masked softmax. Norms, RoPE and the cross-entropy run in fp32 under bf16
autocast; in fp32 those casts do nothing.
"""
import math

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
    """cos, sin of angle pos * theta_f, shape [seq_len, head_dim / 2], fp32."""
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
    def __init__(self, d_model, n_head, seq_len, layers, sdpa):
        super().__init__()
        assert d_model % n_head == 0 and (d_model // n_head) % 2 == 0
        self.n_head = n_head
        self.head_dim = d_model // n_head
        self.sdpa = sdpa
        self.qkv = nn.Linear(d_model, 3 * d_model, bias=False)
        self.proj = nn.Linear(d_model, d_model, bias=False)
        nn.init.normal_(self.qkv.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.proj.weight, std=1.0 / math.sqrt(d_model) / math.sqrt(2 * layers))
        cos, sin = rope_tables(seq_len, self.head_dim)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        if not sdpa:
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
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
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
        self.gelu = nn.GELU()  # exact (erf), as rung
        self.proj = nn.Linear(4 * d_model, d_model, bias=False)
        nn.init.normal_(self.fc.weight, std=1.0 / math.sqrt(d_model))
        nn.init.normal_(self.proj.weight, std=1.0 / math.sqrt(4 * d_model) / math.sqrt(2 * layers))

    def forward(self, x):
        return self.proj(self.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, d_model, n_head, seq_len, layers, sdpa):
        super().__init__()
        self.norm1 = RMSNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, seq_len, layers, sdpa)
        self.norm2 = RMSNorm(d_model)
        self.mlp = MLP(d_model, layers)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class GPT(nn.Module):
    def __init__(self, vocab, d_model, layers, n_head, seq_len, sdpa):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.blocks = nn.ModuleList([Block(d_model, n_head, seq_len, layers, sdpa) for _ in range(layers)])
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
        """Weight decay on the 2-D matrices except the embedding; none on embedding and norm gains."""
        decay, no_decay = [], []
        for name, p in self.named_parameters():
            (decay if p.dim() == 2 and not name.startswith("embed.") else no_decay).append(p)
        return [{"params": decay, "weight_decay": weight_decay},
                {"params": no_decay, "weight_decay": 0.0}]

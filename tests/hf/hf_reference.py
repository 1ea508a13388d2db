#!/usr/bin/python3
"""Plain-PyTorch reference for Hugging Face causal-LM checkpoints (test oracle).

What it is
    An independent re-implementation, in float32 PyTorch with no dependency on
    `transformers` or `safetensors`, of the eager forward pass of the Hugging
    Face decoder-only architectures that rung's C++ importer reads:
    LlamaForCausalLM (and SmolLM, which is Llama with tied embeddings),
    MistralForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM.  It also writes
    tiny random checkpoints in the Hugging Face folder format (config.json plus
    hand-written safetensors, optionally sharded with model.safetensors.index.json)
    so that the C++ tests can import them and compare against `forward`.

Semantics followed
    transformers 4.5x: modeling_llama.py, modeling_mistral.py, modeling_qwen2.py,
    modeling_qwen3.py (eager attention path) and modeling_rope_utils.py
    (ROPE_INIT_FUNCTIONS plus the dynamic_rope_update decorator).  Written from
    memory of that code, not copied.

    * RMSNorm: h = x.float(); h = h * rsqrt(mean(h^2, -1) + eps); weight * h.
    * Rotary: cos/sin = cat(freqs, freqs).{cos,sin}() * attention_scaling with
      freqs = position (float32) x inv_freq (float32); q' = q cos + rotate_half(q) sin,
      rotate_half pairs element i with i + d/2.
    * Qwen3: q_norm / k_norm (RMSNorm over head_dim) applied per head BEFORE rotary.
    * Qwen2: q/k/v projections carry a bias, o_proj does not.
    * GQA via repeat_kv; scores = q k^T * head_dim**-0.5; causal mask; Mistral with
      sliding_window W: key j visible from query i iff 0 <= i - j < W (the eager
      sliding-window mask of transformers); softmax in float32.
    * MLP: down(silu(gate(x)) * up(x)); final norm; lm_head or tied embed_tokens.

    RoPE scaling (rope_scaling["rope_type"], falling back to the older "type"):
    * default: inv_freq = 1 / base ** (arange(0, dim, 2, int64).float() / dim), scaling 1.
    * linear:  default inv_freq / factor.
    * dynamic: dynamic NTK as the dynamic_rope_update decorator applies it for one
      forward over positions 0..T-1: seq_len = T; if T > max_position_embeddings,
      base' = base * (factor * T / max_pos - (factor - 1)) ** (dim / (dim - 2))
      and inv_freq is recomputed from base'; otherwise the default inv_freq.
      max_pos here is config.max_position_embeddings (transformers' rotary
      module uses that, not rope_scaling["original_max_position_embeddings"]).
    * yarn: beta_fast (default 32) / beta_slow (default 1), find_correction_dim /
      find_correction_range with floor/ceil when rope_scaling["truncate"] (default
      true), clamped to [0, dim - 1]; linear ramp over dim // 2 (max += 0.001 when
      min == max); inv_freq = interp * (1 - extrap_factor) + extrap * extrap_factor
      with extrap_factor = 1 - ramp.  attention_factor = rope_scaling's
      attention_factor if given, else get_mscale(factor, mscale) /
      get_mscale(factor, mscale_all_dim) when both mscale and mscale_all_dim are
      truthy, else 0.1 * ln(factor) + 1 (1.0 for factor <= 1).
      FACTOR REASSIGNMENT: as in transformers 4.5x, when rope_scaling contains
      "original_max_position_embeddings", that value is used for the correction
      range AND `factor` is REPLACED by config.max_position_embeddings /
      original_max_position_embeddings before anything else uses it (so it
      affects both inv_freq_interpolation and the default attention_factor;
      rope_scaling["factor"] is then ignored).  Without that key,
      original_max_position_embeddings = config.max_position_embeddings and
      rope_scaling["factor"] is used.  (This is the behaviour reported in transformers
      issue #38224 and changed by PR #40320 in Aug 2025, after which an explicit
      factor takes precedence; it matters for real configs whose
      max_position_embeddings != factor * original_max_position_embeddings.)
    * llama3: low/high_freq_factor, original_max_position_embeddings; wavelen =
      2 pi / inv_freq; wavelen > old_len / low -> inv / factor; wavelen < old_len /
      high -> unchanged; in between smooth = (old_len / wavelen - low) / (high - low),
      inv = (1 - smooth) * inv / factor + smooth * inv.
    dim = int(head_dim * partial_rotary_factor), partial_rotary_factor 1.0 by default.

CLI
    hf_reference.py make --arch {llama,smollm,mistral,qwen2,qwen3} --out DIR
        [--seed 0] [--dtype bf16|f16|f32 (bf16)] [--shards 1] [--vocab 101]
        [--hidden 32] [--layers 2] [--heads 4] [--kv-heads 2] [--head-dim N]
        [--intermediate 48] [--max-pos 64] [--rope-theta 10000]
        [--rope-scaling JSON] [--sliding-window N] [--tie {auto,yes,no}]
        [--always-head-dim]
      head_dim defaults to hidden / heads (qwen3: 12, explicit).  config.json
      carries head_dim for qwen3 always, for the others only when it differs from
      hidden / heads (or with --always-head-dim, as real 4.5x LlamaConfig /
      MistralConfig.save_pretrained do).

    hf_reference.py forward --model DIR (--tokens 3,5,7 | --tokens-file F)
        [--bos] [--out FILE.json]
      Prints (or writes) JSON {"logits": [[vocab floats] per position],
      "losses": [next-token CE in nats at positions 0..L-2], "mean_loss" (null
      for a single token),
      "inv_freq": [...], "attention_scaling"}.  --bos prepends config's
      bos_token_id; the losses then score exactly the given tokens.

Random weights (make): one torch.Generator seeded with --seed; matrices normal with
std gain / sqrt(fan_in), gain 0.5 except q_proj and k_proj which use 1.5 (with 0.5
the attention scores have std ~0.25 and attention is nearly uniform, which would
hide rotary and mask errors); qwen2 biases std 0.1; norm weights (incl. qwen3
q_norm/k_norm) 1 + 0.1 N(0,1); embeddings std 1.  The values returned by
make_checkpoint are those stored, i.e. already rounded to --dtype (bf16: round to
nearest even via torch's .to(torch.bfloat16)).

config.json: rope_scaling is written exactly as given (transformers' config
__init__ would additionally copy an old "type" key into "rope_type"; readers must
accept either).  Qwen2/Qwen3 get use_sliding_window false, sliding_window null.

Python API: make_checkpoint(out_dir, arch, ...) and forward(model_dir, tokens, bos=False);
also read_safetensors(path), load_weights(model_dir), rope_parameters(config, seq_len).
"""

import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch

ARCHS = ("llama", "smollm", "mistral", "qwen2", "qwen3", "phi3")

_DTYPES = {  # CLI name -> (torch dtype, safetensors name, config torch_dtype)
    "bf16": (torch.bfloat16, "BF16", "bfloat16"),
    "f16": (torch.float16, "F16", "float16"),
    "f32": (torch.float32, "F32", "float32"),
}
_ST_ELEM = {"BF16": 2, "F16": 2, "F32": 4}


# ----------------------------------------------------------------------------
# safetensors (hand-written reader and writer)
# ----------------------------------------------------------------------------

def tensor_bytes(t, st_dtype):
    """Raw little-endian bytes of tensor t converted to st_dtype."""
    t = t.detach().contiguous()
    if st_dtype == "F32":
        return t.to(torch.float32).numpy().astype("<f4").tobytes()
    if st_dtype == "F16":
        return t.to(torch.float16).numpy().astype("<f2").tobytes()
    if st_dtype == "BF16":
        # torch rounds float32 -> bfloat16 to nearest even; reinterpret as int16.
        return t.to(torch.bfloat16).view(torch.int16).numpy().astype("<i2").tobytes()
    raise ValueError("unsupported dtype " + st_dtype)


def bytes_to_tensor(buf, st_dtype, shape):
    """float32 tensor from raw little-endian bytes."""
    if st_dtype == "F32":
        a = np.frombuffer(buf, dtype="<f4").astype(np.float32)
    elif st_dtype == "F16":
        a = np.frombuffer(buf, dtype="<f2").astype(np.float32)
    elif st_dtype == "BF16":
        u = np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16
        a = u.view(np.float32)
    else:
        raise ValueError("unsupported safetensors dtype " + st_dtype)
    return torch.from_numpy(a.copy()).reshape(shape)


def write_safetensors(path, tensors, st_dtype):
    """tensors: dict name -> tensor. Sorted by name, packed contiguously."""
    header = {}
    chunks = []
    offset = 0
    for name in sorted(tensors):
        b = tensor_bytes(tensors[name], st_dtype)
        header[name] = {"dtype": st_dtype, "shape": list(tensors[name].shape),
                        "data_offsets": [offset, offset + len(b)]}
        chunks.append(b)
        offset += len(b)
    header["__metadata__"] = {"format": "pt"}
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    pad = (-(8 + len(hjson))) % 8
    hjson += b" " * pad
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for b in chunks:
            f.write(b)
    return offset


def read_safetensors_header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n).decode("utf-8"))
    return n, header


def read_safetensors(path):
    """dict name -> float32 tensor."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n].decode("utf-8"))
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        shape = info["shape"]
        want = _ST_ELEM[info["dtype"]] * int(np.prod(shape, dtype=np.int64))
        if e - b != want:
            raise ValueError("%s: %s has %d bytes, shape needs %d" % (path, name, e - b, want))
        out[name] = bytes_to_tensor(data[base + b:base + e], info["dtype"], shape)
    return out


def load_weights(model_dir):
    """All weights of a HF folder (single file or sharded), upcast to float32."""
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            wmap = json.load(f)["weight_map"]
        out = {}
        for fname in sorted(set(wmap.values())):
            part = read_safetensors(os.path.join(model_dir, fname))
            for name, t in part.items():
                if wmap.get(name) != fname:
                    raise ValueError("%s in %s not mapped there by the index" % (name, fname))
                out[name] = t
        missing = set(wmap) - set(out)
        if missing:
            raise ValueError("index names tensors not found: %s" % sorted(missing))
        return out
    return read_safetensors(os.path.join(model_dir, "model.safetensors"))


# ----------------------------------------------------------------------------
# make
# ----------------------------------------------------------------------------

def make_config(arch, vocab=101, hidden=32, layers=2, heads=4, kv_heads=2, head_dim=None,
                intermediate=48, max_pos=64, rope_theta=10000.0, rope_scaling=None,
                sliding_window=None, tie="auto", dtype="bf16", always_head_dim=False,
                partial_rotary_factor=None):
    if arch not in ARCHS:
        raise ValueError("unknown arch " + arch)
    default_hd = hidden // heads
    if head_dim is None:
        head_dim = 12 if arch == "qwen3" else default_hd
    if tie == "auto":
        tied = arch == "smollm"
    else:
        tied = tie == "yes"
    arch_name = {"llama": "LlamaForCausalLM", "smollm": "LlamaForCausalLM",
                 "mistral": "MistralForCausalLM", "qwen2": "Qwen2ForCausalLM",
                 "qwen3": "Qwen3ForCausalLM", "phi3": "Phi3ForCausalLM"}[arch]
    model_type = {"llama": "llama", "smollm": "llama", "mistral": "mistral",
                  "qwen2": "qwen2", "qwen3": "qwen3", "phi3": "phi3"}[arch]
    eps = 1e-5 if arch in ("llama", "smollm", "mistral", "phi3") else 1e-6
    c = {"architectures": [arch_name], "model_type": model_type}
    if arch in ("llama", "smollm", "qwen3"):
        c["attention_bias"] = False
    c["attention_dropout"] = 0.0
    c["bos_token_id"] = 1
    c["eos_token_id"] = 2
    if arch == "qwen3" or head_dim != default_hd or always_head_dim:
        c["head_dim"] = head_dim
    c["hidden_act"] = "silu"
    c["hidden_size"] = hidden
    c["initializer_range"] = 0.02
    c["intermediate_size"] = intermediate
    c["max_position_embeddings"] = max_pos
    if arch in ("qwen2", "qwen3"):
        c["max_window_layers"] = layers
    if arch in ("llama", "smollm"):
        c["mlp_bias"] = False
        c["pretraining_tp"] = 1
    c["num_attention_heads"] = heads
    c["num_hidden_layers"] = layers
    c["num_key_value_heads"] = kv_heads
    c["rms_norm_eps"] = eps
    c["rope_scaling"] = rope_scaling
    c["rope_theta"] = float(rope_theta)
    if arch == "phi3":
        # Phi3Config (Phi-4-mini style): fused qkv_proj and gate_up_proj, partial_rotary_factor.
        c["original_max_position_embeddings"] = max_pos
        c["partial_rotary_factor"] = 1.0 if partial_rotary_factor is None else float(partial_rotary_factor)
        c["sliding_window"] = sliding_window
    elif arch == "mistral":
        c["sliding_window"] = sliding_window
    elif arch in ("qwen2", "qwen3"):
        # Qwen2Config/Qwen3Config store sliding_window only when use_sliding_window.
        c["sliding_window"] = None
        c["use_sliding_window"] = False
    c["tie_word_embeddings"] = tied
    c["torch_dtype"] = _DTYPES[dtype][2]
    c["transformers_version"] = "4.51.3"
    c["use_cache"] = True
    c["vocab_size"] = vocab
    return c


def _head_dim(config):
    hd = config.get("head_dim")
    return hd if hd else config["hidden_size"] // config["num_attention_heads"]


QK_GAIN = 1.5


def random_weights(config, seed=0):
    """HF-named float32 tensors: matrices normal with std gain/sqrt(fan_in) (gain 0.5,
    QK_GAIN for q_proj/k_proj), biases std 0.1, norm weights 1 + 0.1 N(0,1),
    embeddings std 1.  One torch.Generator seeded with `seed`, tensors drawn in
    layer order."""
    g = torch.Generator().manual_seed(int(seed))
    H = config["hidden_size"]
    I = config["intermediate_size"]
    V = config["vocab_size"]
    nh = config["num_attention_heads"]
    nkv = config["num_key_value_heads"]
    hd = _head_dim(config)
    mt = config["model_type"]

    def mat(out_f, in_f, gain=0.5):
        return torch.randn(out_f, in_f, generator=g) * (gain / math.sqrt(in_f))

    def norm(n):
        return 1.0 + 0.1 * torch.randn(n, generator=g)

    def bias(n):
        return 0.1 * torch.randn(n, generator=g)

    w = {"model.embed_tokens.weight": torch.randn(V, H, generator=g)}
    for i in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % i
        w[p + "input_layernorm.weight"] = norm(H)
        # q/k get gain 1.5 (score std ~2): with 0.5 the scores have std ~0.25 and
        # attention is nearly uniform, which would hide rotary/mask errors.
        w[p + "self_attn.q_proj.weight"] = mat(nh * hd, H, QK_GAIN)
        w[p + "self_attn.k_proj.weight"] = mat(nkv * hd, H, QK_GAIN)
        w[p + "self_attn.v_proj.weight"] = mat(nkv * hd, H)
        w[p + "self_attn.o_proj.weight"] = mat(H, nh * hd)
        if mt == "qwen2":
            w[p + "self_attn.q_proj.bias"] = bias(nh * hd)
            w[p + "self_attn.k_proj.bias"] = bias(nkv * hd)
            w[p + "self_attn.v_proj.bias"] = bias(nkv * hd)
        if mt == "qwen3":
            w[p + "self_attn.q_norm.weight"] = norm(hd)
            w[p + "self_attn.k_norm.weight"] = norm(hd)
        w[p + "post_attention_layernorm.weight"] = norm(H)
        w[p + "mlp.gate_proj.weight"] = mat(I, H)
        w[p + "mlp.up_proj.weight"] = mat(I, H)
        w[p + "mlp.down_proj.weight"] = mat(H, I)
    w["model.norm.weight"] = norm(H)
    if not config["tie_word_embeddings"]:
        w["lm_head.weight"] = mat(V, H)
    if mt == "phi3":  # Phi-3 stores q, k, v as one qkv_proj and gate, up as one gate_up_proj
        for i in range(config["num_hidden_layers"]):
            p = "model.layers.%d." % i
            w[p + "self_attn.qkv_proj.weight"] = torch.cat(
                [w.pop(p + "self_attn.%s_proj.weight" % n) for n in ("q", "k", "v")], dim=0)
            w[p + "mlp.gate_up_proj.weight"] = torch.cat(
                [w.pop(p + "mlp.gate_proj.weight"), w.pop(p + "mlp.up_proj.weight")], dim=0)
    return w


def round_to_dtype(t, dtype):
    """float32 value a tensor has after storing it as dtype ('bf16'|'f16'|'f32')."""
    return t.to(_DTYPES[dtype][0]).to(torch.float32)


def make_checkpoint(out_dir, arch, seed=0, dtype="bf16", shards=1, vocab=101, hidden=32,
                    layers=2, heads=4, kv_heads=2, head_dim=None, intermediate=48, max_pos=64,
                    rope_theta=10000.0, rope_scaling=None, sliding_window=None, tie="auto",
                    always_head_dim=False, partial_rotary_factor=None):
    """Write a random HF checkpoint to out_dir. Returns (config, weights) where
    weights are float32 values exactly as stored (rounded to dtype)."""
    if isinstance(rope_scaling, str):
        rope_scaling = json.loads(rope_scaling)
    config = make_config(arch, vocab, hidden, layers, heads, kv_heads, head_dim, intermediate,
                         max_pos, rope_theta, rope_scaling, sliding_window, tie, dtype,
                         always_head_dim, partial_rotary_factor)
    weights = random_weights(config, seed)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    st = _DTYPES[dtype][1]
    names = sorted(weights)
    shards = max(1, int(shards))
    if shards == 1:
        write_safetensors(os.path.join(out_dir, "model.safetensors"), weights, st)
    else:
        if shards > len(names):
            raise ValueError("more shards than tensors")
        # Contiguous runs of the sorted names, balanced by count.
        wmap = {}
        total = 0
        for k in range(shards):
            lo = k * len(names) // shards
            hi = (k + 1) * len(names) // shards
            fname = "model-%05d-of-%05d.safetensors" % (k + 1, shards)
            part = {n: weights[n] for n in names[lo:hi]}
            total += write_safetensors(os.path.join(out_dir, fname), part, st)
            for n in part:
                wmap[n] = fname
        with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total},
                       "weight_map": {n: wmap[n] for n in sorted(wmap)}}, f, indent=2)
            f.write("\n")
    return config, {n: round_to_dtype(t, dtype) for n, t in weights.items()}


# ----------------------------------------------------------------------------
# RoPE parameters (modeling_rope_utils semantics)
# ----------------------------------------------------------------------------

def _rope_dim_base(config):
    dim = int(_head_dim(config) * config.get("partial_rotary_factor", 1.0))
    return dim, config.get("rope_theta", 10000.0)


def _default_inv_freq(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def rope_type(config):
    rs = config.get("rope_scaling")
    if not rs:
        return "default"
    return rs.get("rope_type", rs.get("type", "default"))


def rope_parameters(config, seq_len):
    """(inv_freq float32 [dim/2], attention_scaling) used for positions 0..seq_len-1."""
    dim, base = _rope_dim_base(config)
    rs = config.get("rope_scaling") or {}
    rt = rope_type(config)
    if rt == "default":
        return _default_inv_freq(base, dim), 1.0
    if rt == "linear":
        return _default_inv_freq(base, dim) / rs["factor"], 1.0
    if rt == "dynamic":
        max_pos = config["max_position_embeddings"]
        factor = rs["factor"]
        if seq_len <= max_pos:
            # Init-time parameters (seq_len = max_pos gives base' = base).
            return _default_inv_freq(base, dim), 1.0
        # dynamic_rope_update passes seq_len as a 0-d int64 tensor; mirror that.
        sl = torch.tensor(seq_len, dtype=torch.int64)
        new_base = base * ((factor * sl / max_pos) - (factor - 1)) ** (dim / (dim - 2))
        inv = 1.0 / (new_base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        return inv, 1.0
    if rt == "yarn":
        return _yarn(config, dim, base, rs)
    if rt == "llama3":
        inv = _default_inv_freq(base, dim)
        factor = rs["factor"]
        low = rs["low_freq_factor"]
        high = rs["high_freq_factor"]
        old = rs["original_max_position_embeddings"]
        low_wl = old / low
        high_wl = old / high
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    raise ValueError("unsupported rope_type %r" % rt)


def yarn_get_mscale(scale, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def yarn_correction_dim(num_rotations, dim, base, max_pos):
    return (dim * math.log(max_pos / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def yarn_correction_range(low_rot, high_rot, dim, base, max_pos, truncate=True):
    low = yarn_correction_dim(low_rot, dim, base, max_pos)
    high = yarn_correction_dim(high_rot, dim, base, max_pos)
    if truncate:
        low = math.floor(low)
        high = math.ceil(high)
    return max(low, 0), min(high, dim - 1)


def yarn_linear_ramp(lo, hi, n):
    if lo == hi:
        hi += 0.001
    return torch.clamp((torch.arange(n, dtype=torch.float32) - lo) / (hi - lo), 0, 1)


def _yarn(config, dim, base, rs):
    factor = rs["factor"]
    attention_factor = rs.get("attention_factor")
    mscale = rs.get("mscale")
    mscale_all_dim = rs.get("mscale_all_dim")
    if "original_max_position_embeddings" in rs:
        orig = rs["original_max_position_embeddings"]
        factor = config["max_position_embeddings"] / orig  # transformers 4.5x reassignment
    else:
        orig = config["max_position_embeddings"]
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = float(yarn_get_mscale(factor, mscale) /
                                     yarn_get_mscale(factor, mscale_all_dim))
        else:
            attention_factor = yarn_get_mscale(factor)
    beta_fast = rs.get("beta_fast") or 32
    beta_slow = rs.get("beta_slow") or 1
    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    extrap = 1.0 / pos_freqs
    interp = 1.0 / (factor * pos_freqs)
    lo, hi = yarn_correction_range(beta_fast, beta_slow, dim, base, orig,
                                   rs.get("truncate", True))
    extrap_factor = 1 - yarn_linear_ramp(lo, hi, dim // 2)
    inv = interp * (1 - extrap_factor) + extrap * extrap_factor
    return inv, float(attention_factor)


def rotary_cos_sin(inv_freq, attention_scaling, T):
    pos = torch.arange(T, dtype=torch.int64).float()
    freqs = pos[:, None] * inv_freq.float()[None, :]  # == inv_freq @ position_ids, transposed
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * attention_scaling, emb.sin() * attention_scaling


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def apply_rotary(x, cos, sin):
    """x [heads, T, d]; cos/sin [T, d]."""
    return x * cos[None] + rotate_half(x) * sin[None]


# ----------------------------------------------------------------------------
# forward
# ----------------------------------------------------------------------------

def rms_norm(x, weight, eps):
    x = x.float()
    var = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(var + eps))


def attention_mask(config, T):
    """Boolean [T, T]: True where query i may attend to key j."""
    i = torch.arange(T)[:, None]
    j = torch.arange(T)[None, :]
    allowed = j <= i
    if config.get("model_type") == "mistral" and config.get("sliding_window"):
        allowed = allowed & ((i - j) < int(config["sliding_window"]))
    # Qwen2/Qwen3 with use_sliding_window would also window some layers; the
    # checkpoints written here never enable it.
    if config.get("use_sliding_window"):
        raise NotImplementedError("use_sliding_window true is not modelled")
    return allowed


def _linear(x, w, b=None):
    y = x @ w.t()
    return y + b if b is not None else y


def _unfuse_phi3(config, w):
    """Phi3's fused qkv_proj / gate_up_proj as Llama's separate projections (modeling_phi3: q, k, v are
    consecutive row blocks; gate_up_proj's first half is the gate)."""
    nh = config["num_attention_heads"]
    nkv = config.get("num_key_value_heads") or nh
    hd = _head_dim(config)
    w = dict(w)
    for l in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % l
        qkv = w.pop(p + "self_attn.qkv_proj.weight")
        w[p + "self_attn.q_proj.weight"] = qkv[: nh * hd]
        w[p + "self_attn.k_proj.weight"] = qkv[nh * hd: (nh + nkv) * hd]
        w[p + "self_attn.v_proj.weight"] = qkv[(nh + nkv) * hd:]
        gate, up = w.pop(p + "mlp.gate_up_proj.weight").chunk(2, dim=0)
        w[p + "mlp.gate_proj.weight"] = gate
        w[p + "mlp.up_proj.weight"] = up
    return w


def apply_partial_rotary(x, cos, sin):
    """modeling_phi3's apply_rotary_pos_emb: the first cos.shape[-1] dimensions rotate (rotate_half
    within them), the rest pass through."""
    r = cos.shape[-1]
    return torch.cat([apply_rotary(x[..., :r], cos, sin), x[..., r:]], dim=-1)


def forward_logits(config, w, ids):
    if config["model_type"] == "phi3":
        w = _unfuse_phi3(config, w)
    T = len(ids)
    H = config["hidden_size"]
    nh = config["num_attention_heads"]
    nkv = config.get("num_key_value_heads") or nh
    hd = _head_dim(config)
    eps = config["rms_norm_eps"]
    mt = config["model_type"]
    inv_freq, att_scale = rope_parameters(config, T)
    cos, sin = rotary_cos_sin(inv_freq, att_scale, T)
    allowed = attention_mask(config, T)
    neg = torch.finfo(torch.float32).min
    ids_t = torch.tensor(ids, dtype=torch.int64)
    x = w["model.embed_tokens.weight"][ids_t]  # [T, H]
    for l in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = _linear(h, w[p + "self_attn.q_proj.weight"], w.get(p + "self_attn.q_proj.bias"))
        k = _linear(h, w[p + "self_attn.k_proj.weight"], w.get(p + "self_attn.k_proj.bias"))
        v = _linear(h, w[p + "self_attn.v_proj.weight"], w.get(p + "self_attn.v_proj.bias"))
        q = q.view(T, nh, hd)
        k = k.view(T, nkv, hd)
        v = v.view(T, nkv, hd)
        if mt == "qwen3":
            q = rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q = q.transpose(0, 1)  # [nh, T, hd]
        k = k.transpose(0, 1)
        v = v.transpose(0, 1)
        q = apply_partial_rotary(q, cos, sin)
        k = apply_partial_rotary(k, cos, sin)
        rep = nh // nkv
        k = k.repeat_interleave(rep, dim=0)  # repeat_kv: head h uses kv head h // rep
        v = v.repeat_interleave(rep, dim=0)
        scores = (q @ k.transpose(1, 2)) * (hd ** -0.5)
        scores = scores.masked_fill(~allowed[None], neg)
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
        a = (probs @ v).transpose(0, 1).reshape(T, nh * hd)
        x = x + _linear(a, w[p + "self_attn.o_proj.weight"], w.get(p + "self_attn.o_proj.bias"))
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        m = torch.nn.functional.silu(_linear(h, w[p + "mlp.gate_proj.weight"])) * \
            _linear(h, w[p + "mlp.up_proj.weight"])
        x = x + _linear(m, w[p + "mlp.down_proj.weight"])
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w.get("lm_head.weight")
    if head is None or config.get("tie_word_embeddings", False):
        head = w["model.embed_tokens.weight"]
    return x @ head.t(), inv_freq, att_scale


def load_config(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        return json.load(f)


def forward(model_dir, tokens, bos=False):
    """Float32 HF forward of one sequence; see the module docstring for the output."""
    config = load_config(model_dir)
    w = load_weights(model_dir)
    ids = [int(t) for t in tokens]
    if bos:
        ids = [int(config["bos_token_id"])] + ids
    if not ids:
        raise ValueError("no tokens")
    V = config["vocab_size"]
    for t in ids:
        if not 0 <= t < V:
            raise ValueError("token %d outside vocab %d" % (t, V))
    with torch.no_grad():
        logits, inv_freq, att_scale = forward_logits(config, w, ids)
        if len(ids) > 1:
            lp = torch.log_softmax(logits[:-1], dim=-1)
            tgt = torch.tensor(ids[1:], dtype=torch.int64)
            losses = (-lp[torch.arange(len(ids) - 1), tgt]).tolist()
        else:
            losses = []
    return {
        "logits": logits.tolist(),
        "losses": losses,
        "mean_loss": (sum(losses) / len(losses)) if losses else None,
        "inv_freq": inv_freq.tolist(),
        "attention_scaling": float(att_scale),
    }


# ----------------------------------------------------------------------------
# CLI
# ----------------------------------------------------------------------------

def _parse_tokens(s):
    return [int(t) for t in s.replace(",", " ").split()]


def main(argv=None):
    ap = argparse.ArgumentParser(description="Plain-PyTorch HF causal-LM reference (test oracle)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make", help="write a tiny random HF checkpoint")
    mk.add_argument("--arch", required=True, choices=ARCHS)
    mk.add_argument("--out", required=True)
    mk.add_argument("--seed", type=int, default=0)
    mk.add_argument("--dtype", default="bf16", choices=sorted(_DTYPES))
    mk.add_argument("--shards", type=int, default=1)
    mk.add_argument("--vocab", type=int, default=101)
    mk.add_argument("--hidden", type=int, default=32)
    mk.add_argument("--layers", type=int, default=2)
    mk.add_argument("--heads", type=int, default=4)
    mk.add_argument("--kv-heads", type=int, default=2)
    mk.add_argument("--head-dim", type=int, default=None)
    mk.add_argument("--intermediate", type=int, default=48)
    mk.add_argument("--max-pos", type=int, default=64)
    mk.add_argument("--rope-theta", type=float, default=10000.0)
    mk.add_argument("--rope-scaling", default=None, help="JSON object, e.g. '{\"rope_type\":\"linear\",\"factor\":2}'")
    mk.add_argument("--sliding-window", type=int, default=None)
    mk.add_argument("--tie", default="auto", choices=("auto", "yes", "no"))
    mk.add_argument("--always-head-dim", action="store_true",
                    help="write head_dim to config.json even when it equals hidden/heads")
    mk.add_argument("--partial-rotary-factor", type=float, default=None, help="phi3: the share of a head that rotates")
    fw = sub.add_parser("forward", help="float32 logits/losses of a HF checkpoint")
    fw.add_argument("--model", required=True)
    g = fw.add_mutually_exclusive_group(required=True)
    g.add_argument("--tokens")
    g.add_argument("--tokens-file")
    fw.add_argument("--bos", action="store_true")
    fw.add_argument("--out", default=None)
    a = ap.parse_args(argv)

    if a.cmd == "make":
        if a.heads % a.kv_heads:
            ap.error("--heads must be a multiple of --kv-heads")
        rs = json.loads(a.rope_scaling) if a.rope_scaling else None
        if rs is not None and not isinstance(rs, dict):
            ap.error("--rope-scaling must be a JSON object")
        make_checkpoint(a.out, a.arch, seed=a.seed, dtype=a.dtype, shards=a.shards, vocab=a.vocab,
                        hidden=a.hidden, layers=a.layers, heads=a.heads, kv_heads=a.kv_heads,
                        head_dim=a.head_dim, intermediate=a.intermediate, max_pos=a.max_pos,
                        rope_theta=a.rope_theta, rope_scaling=rs, sliding_window=a.sliding_window,
                        tie=a.tie, always_head_dim=a.always_head_dim,
                        partial_rotary_factor=a.partial_rotary_factor)
        return 0
    if a.tokens_file:
        with open(a.tokens_file) as f:
            toks = _parse_tokens(f.read())
    else:
        toks = _parse_tokens(a.tokens)
    res = forward(a.model, toks, bos=a.bos)
    text = json.dumps(res)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
            f.write("\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

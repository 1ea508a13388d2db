#!/usr/bin/python3
"""Paper 003's appendix D.1 measurement of one head, written independently of rung (test oracle).

For a Hugging Face folder (the float32 forward of tests/hf/hf_reference.py: its weights reader, RMSNorm,
projections and rotate_half rotation), a layer L, a head h, a query id and key ids and a context M:
for each key, the input [<bos>] + [key] * M + [query], the forward pass through layers 0..L-1, then
layer L's rotated q of the last position and rotated k of every position (no 1/sqrt(d)), and
S(m) = q_last . k_{last - m} for m = 1..M. Then, by brute force over every pair:
  position_inversion   share of (i < ceil(M/2) <= j) with S[i] < S[j], S[i] = S(i + 1), the first key
  token_inversion      the first key against the last: ordered by their scores at m = 1, the share of m
                       where the lower one is above
  per precision (f = 7, 10, 23 fraction bits), eps_k = 2^-f max(sqrt(d), sum over rotation pairs
  (n, n + d/2) of |q_n| |k_n|) with the key at m = 1:
  aliasing_pairs       per key, pairs i < j with |S[i] - S[j]| < eps_k
  with_pair            share of distances of the first key with a partner
  invariance_pairs     pairs aliasing for both the first and the second key
  token_aliasing       #{m : |S1 - S2| < max(eps_1, eps_2)}
Prints one JSON object.
"""
import argparse
import importlib.util
import json
import math
import os

import torch

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("hf_reference", os.path.join(_here, "hf_reference.py"))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)


def layer_q_k(config, w, ids, layer):
    """Layer `layer`'s rotated q [nh, T, hd] and k [nkv, T, hd] for the sequence ids."""
    T = len(ids)
    nh = config["num_attention_heads"]
    nkv = config.get("num_key_value_heads") or nh
    hd = ref._head_dim(config)
    eps = config["rms_norm_eps"]
    mt = config["model_type"]
    inv_freq, att_scale = ref.rope_parameters(config, T)
    cos, sin = ref.rotary_cos_sin(inv_freq, att_scale, T)
    allowed = ref.attention_mask(config, T)
    x = w["model.embed_tokens.weight"][torch.tensor(ids, dtype=torch.int64)]
    for l in range(layer + 1):
        p = "model.layers.%d." % l
        h = ref.rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = ref._linear(h, w[p + "self_attn.q_proj.weight"], w.get(p + "self_attn.q_proj.bias")).view(T, nh, hd)
        k = ref._linear(h, w[p + "self_attn.k_proj.weight"], w.get(p + "self_attn.k_proj.bias")).view(T, nkv, hd)
        v = ref._linear(h, w[p + "self_attn.v_proj.weight"], w.get(p + "self_attn.v_proj.bias")).view(T, nkv, hd)
        if mt == "qwen3":
            q = ref.rms_norm(q, w[p + "self_attn.q_norm.weight"], eps)
            k = ref.rms_norm(k, w[p + "self_attn.k_norm.weight"], eps)
        q = ref.apply_rotary(q.transpose(0, 1), cos, sin)
        k = ref.apply_rotary(k.transpose(0, 1), cos, sin)
        if l == layer:
            return q, k
        v = v.transpose(0, 1)
        rep = nh // nkv
        kk = k.repeat_interleave(rep, dim=0)
        vv = v.repeat_interleave(rep, dim=0)
        scores = (q @ kk.transpose(1, 2)) * (hd ** -0.5)
        scores = scores.masked_fill(~allowed[None], torch.finfo(torch.float32).min)
        a = (torch.softmax(scores, dim=-1) @ vv).transpose(0, 1).reshape(T, nh * hd)
        x = x + ref._linear(a, w[p + "self_attn.o_proj.weight"], w.get(p + "self_attn.o_proj.bias"))
        h = ref.rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        x = x + ref._linear(torch.nn.functional.silu(ref._linear(h, w[p + "mlp.gate_proj.weight"])) *
                            ref._linear(h, w[p + "mlp.up_proj.weight"]), w[p + "mlp.down_proj.weight"])
    raise ValueError("layer %d beyond the model" % layer)


def measure(folder, layer, head, query, keys, length, bos):
    config = ref.load_config(folder)
    w = ref.load_weights(folder)
    nh = config["num_attention_heads"]
    nkv = config.get("num_key_value_heads") or nh
    hd = ref._head_dim(config)
    scores, amplitudes = [], []
    for key in keys:
        ids = ([bos] if bos is not None else []) + [key] * length + [query]
        with torch.no_grad():
            q, k = layer_q_k(config, w, ids, layer)
        last = len(ids) - 1
        qv = q[head, last].double()
        kv = k[head // (nh // nkv)].double()
        scores.append([float(qv @ kv[last - m]) for m in range(1, length + 1)])
        half = hd // 2
        k1 = kv[last - 1]
        amplitudes.append(sum(math.hypot(qv[n], qv[n + half]) * math.hypot(k1[n], k1[n + half]) for n in range(half)))
    s1 = torch.tensor(scores[0], dtype=torch.float64)
    near = int(math.ceil(length / 2))
    inversion = float((s1[:near, None] < s1[None, near:]).double().mean())
    token_inversion = None
    if len(keys) > 1:
        a, b = torch.tensor(scores[0], dtype=torch.float64), torch.tensor(scores[-1], dtype=torch.float64)
        if a[0] != b[0]:
            hi, lo = (a, b) if a[0] > b[0] else (b, a)
            token_inversion = float((hi < lo).double().mean())
    upper = torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)
    precisions = []
    for name, bits in (("bf16", 7), ("fp16", 10), ("fp32", 23)):
        epsilons = [2.0 ** -bits * max(math.sqrt(hd), amp) for amp in amplitudes]
        close = []
        for s, e in zip(scores, epsilons):
            t = torch.tensor(s, dtype=torch.float64)
            close.append(((t[:, None] - t[None, :]).abs() < e) & upper)
        row = {"precision": name, "epsilons": epsilons,
               "aliasing_pairs": [int(c.sum()) for c in close],
               "with_pair": float((close[0] | close[0].t()).any(dim=1).double().mean())}
        if len(keys) > 1:
            row["invariance_pairs"] = int((close[0] & close[1]).sum())
            t1, t2 = torch.tensor(scores[0], dtype=torch.float64), torch.tensor(scores[1], dtype=torch.float64)
            row["token_aliasing"] = int(((t1 - t2).abs() < max(epsilons[0], epsilons[1])).sum())
        precisions.append(row)
    return {"scores": scores, "amplitude_sums": amplitudes, "position_inversion": inversion,
            "token_inversion": token_inversion, "precisions": precisions}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--layer", type=int, default=0)
    ap.add_argument("--head", type=int, default=0)
    ap.add_argument("--query", type=int, required=True)
    ap.add_argument("--keys", required=True, help="comma-separated ids")
    ap.add_argument("--length", type=int, required=True)
    ap.add_argument("--bos", type=int, default=None)
    args = ap.parse_args()
    keys = [int(k) for k in args.keys.split(",")]
    print(json.dumps(measure(args.model, args.layer, args.head, args.query, keys, args.length, args.bos)))


if __name__ == "__main__":
    main()

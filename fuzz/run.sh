#!/usr/bin/env bash
# Runs the libFuzzer targets of a RUNG_FUZZ build over their committed corpora (docs/fuzzing.md).
# Each target first replays fuzz/regressions/<target>/ (every file whole; not open/), then fuzzes for its share
# of the time, niced, over fuzz/corpus/<target>/ (FUZZ_MAX_LEN=N: inputs up to N bytes);
# what it finds new goes to <build>/fuzz-scratch/<target>/ (never into the committed corpus), a
# crashing input to <build>/fuzz-artifacts/<target>/. Exits 1 when any target crashed (or leaked,
# timed out, ran out of memory), naming the artifacts.
# Usage: fuzz/run.sh BUILD_DIR (--seconds N | --total N) [TARGET...]
#   --seconds N   N seconds for each target (`make fuzz FUZZ_SECONDS=N`)
#   --total N     N seconds for all of them together, split evenly (`make fuzz-ci`: 120)
#   TARGET        records, ladder_csv, trial_config, sweep_spec, token_data, rpc, safetensors,
#                 hf_folder_metadata, dashboard_http, hf_tokenizer (default: all;
#                 hf_tokenizer where the build has it)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
all_targets=(records ladder_csv trial_config sweep_spec token_data rpc safetensors hf_folder_metadata dashboard_http)

if (($# < 3)); then
  sed -n '2,13p' "$0" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
mode=$2
amount=$3
shift 3
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=("${all_targets[@]}")
  # Built only where ICU is found (fuzz/CMakeLists.txt).
  [[ -x "$build/fuzz/hf_tokenizer_fuzzer" ]] && targets+=(hf_tokenizer)
fi
case "$mode" in
  --seconds) seconds=$amount ;;
  --total) seconds=$((amount / ${#targets[@]})) ;;
  *) echo "fuzz/run.sh: expected --seconds or --total, not $mode" >&2; exit 2 ;;
esac
((seconds > 0)) || { echo "fuzz/run.sh: less than a second per target" >&2; exit 2; }
# libFuzzer's input size limit: its default (the largest seed, at least 4096 bytes) unless FUZZ_MAX_LEN.
max_len=()
[[ -n "${FUZZ_MAX_LEN:-}" ]] && max_len=(-max_len="$FUZZ_MAX_LEN")

failed=()
for target in "${targets[@]}"; do
  binary="$build/fuzz/${target}_fuzzer"
  [[ -x "$binary" ]] || { echo "fuzz/run.sh: no $binary (build the rung_fuzzers target)" >&2; exit 2; }
  scratch="$build/fuzz-scratch/$target"
  artifacts="$build/fuzz-artifacts/$target"
  mkdir -p "$scratch" "$artifacts"
  log="$build/fuzz-artifacts/$target.log"
  : > "$log"
  # Memory: an allocation over 2 GiB, or a process over 2 GiB, is a finding (an allocation bomb).
  limits=(-timeout=25 -rss_limit_mb=2048 -malloc_limit_mb=2048 -artifact_prefix="$artifacts/")
  # The regression inputs first, each whole (some are larger than what the fuzzing generates); those
  # in open/ crash still (handed over, docs/fuzzing.md) and are not replayed.
  regressions=()
  if [[ -d "$root/fuzz/regressions/$target" ]]; then
    mapfile -t regressions < <(find "$root/fuzz/regressions/$target" -maxdepth 1 -type f | sort)
  fi
  if ((${#regressions[@]})) && ! nice -n 15 "$binary" "${limits[@]}" "${regressions[@]}" >> "$log" 2>&1; then
    failed+=("$target")
    tail -n 40 "$log" >&2
    continue
  fi
  echo "fuzz/run.sh: $target for ${seconds}s (${#regressions[@]} regression inputs passed)"
  inputs=("$scratch")
  [[ -d "$root/fuzz/corpus/$target" ]] && inputs+=("$root/fuzz/corpus/$target")
  if ! nice -n 15 "$binary" -max_total_time="$seconds" "${max_len[@]}" "${limits[@]}" -print_final_stats=1 \
      "${inputs[@]}" >> "$log" 2>&1; then
    failed+=("$target")
    tail -n 40 "$log" >&2
  fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
    "$build/fuzz-artifacts/$target.log" | sed "s/^/  $target /" || true
done

if ((${#failed[@]})); then
  echo "fuzz/run.sh: FAILED: ${failed[*]}; the inputs are in $build/fuzz-artifacts/<target>/ (docs/fuzzing.md:" \
       "minimise, save under fuzz/regressions/<target>/, add a test)" >&2
  exit 1
fi
echo "fuzz/run.sh: ok (${targets[*]})"

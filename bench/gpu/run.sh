#!/usr/bin/env bash
# The GPU benchmark in one command (bench/gpu/README.md): builds rung-train against the CUDA LibTorch
# of the python3 that has PyTorch (`make gpu-build`) unless BUILD_DIR/bin/rung-train exists, then
# runs rung-train (rope, lerope, adarope) and the same model in plain PyTorch on this GPU and prints
# a table of tokens/s and TFLOP/s.
#
#   bench/gpu/run.sh [--build-dir build-gpu] [--rebuild] [gpu_throughput.py options...]
#   e.g. bench/gpu/run.sh --batch 16 --steps 40 --compile
#   PYTHON=/opt/conda/bin/python3 bench/gpu/run.sh     (the python3 whose torch to build against and compare with)
set -euo pipefail
cd "$(dirname "$0")/../.."

python=${PYTHON:-python3}
build="build-gpu"
rebuild=0
args=()
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

if ! "$python" -c 'import torch, numpy' 2>/dev/null; then
  echo "run.sh: $python has no torch (or numpy): set PYTHON to the python3 of your PyTorch installation" >&2
  exit 2
fi
if ((rebuild)) || [[ ! -x "$build/bin/rung-train" ]]; then
  make gpu-build GPU_BUILD="$build" PYTHON="$python"
fi
export PYTHON=$python
exec "$python" bench/gpu/gpu_throughput.py --build-dir "$build" "${args[@]}"

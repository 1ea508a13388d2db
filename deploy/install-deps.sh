#!/usr/bin/env bash
# Installs the Debian 12 packages rung needs to build, test and run, and pins LibTorch's BLAS to
# OpenBLAS (OpenMP variant). Idempotent: installs only what is missing; safe to run on every build.
# Usage: deploy/install-deps.sh [--with-bench]   (bench adds Optuna for the tuning comparison)
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libtorch-dev libopenblas0-openmp libblas3
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libceres-dev libeigen3-dev libssl-dev
  gnuplot-nox shellcheck libgloo-dev
  clang-14 libfuzzer-14-dev
  r-cran-janeaustenr r-base-core
  libsentencepiece-dev sentencepiece libicu-dev
  libcpp-httplib-dev chromium
  python3-grpcio python3-protobuf python3-pandas python3-scipy
  python3-torch
  slurmctld slurmd slurm-client munge openssl iproute2
)
# `rung dashboard`'s page is bundled at build time with npm (coordinator/dashboard/web): use the
# node and npm the machine has (a nodejs that ships npm conflicts with Debian's npm), else Debian's.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
if [[ "${1:-}" == "--with-bench" ]]; then
  packages+=(python3-optuna)
fi

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  echo "install-deps: installing ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# LibTorch calls BLAS through the libblas.so.3 alternative. Reference BLAS and the pthread OpenBLAS
# are both much slower than the OpenMP build (docs/performance.md, "BLAS"); pin the OpenMP build.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  target="/usr/lib/${arch}/openblas-openmp/${lib}"
  if [[ -e "$target" ]]; then
    current=$(update-alternatives --query "${lib}-${arch}" 2>/dev/null | awk '/^Value:/{print $2}')
    if [[ "$current" != "$target" ]]; then
      sudo_cmd=()
      [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
      "${sudo_cmd[@]}" update-alternatives --set "${lib}-${arch}" "$target"
    fi
  else
    echo "install-deps: warning: $target not found; LibTorch will run on a slow BLAS" >&2
  fi
done
echo "install-deps: ok (BLAS: $(readlink -f "/usr/lib/${arch}/libblas.so.3"))"

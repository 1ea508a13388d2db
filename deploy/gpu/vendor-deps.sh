#!/usr/bin/env bash
# Unpacks the Debian 12 packages that rung-train links besides LibTorch into OUT_DIR (default
# third_party/gpu-deps, ignored by git), for the GPU build on a machine that has a compiler, CMake,
# CUDA and PyTorch but no Debian -dev packages and no network (deploy/README.md, "GPU build").
# Run it here, on Debian 12, then copy the source tree with OUT_DIR to the GPU machine; there
# `make gpu-build` passes -DRUNG_DEPS_PREFIX=OUT_DIR, and rung-train's run path points into it.
#
#   deploy/gpu/vendor-deps.sh [OUT_DIR]
#
# What rung-train needs, and why:
#   libyaml-cpp-dev, libyaml-cpp0.7   trial configs (core/config/yaml_document.cc)
#   nlohmann-json3-dev                configs and records (header-only)
#   libcli11-dev                      the command line (header-only)
#   libssl-dev, libssl3               SHA-256 of data files (core/data/sha256.cc, libcrypto)
# Writes OUT_DIR/MANIFEST with each package's version. Idempotent: downloads again only what changed.
set -euo pipefail

out=${1:-third_party/gpu-deps}
packages=(libyaml-cpp-dev libyaml-cpp0.7 nlohmann-json3-dev libcli11-dev libssl-dev libssl3)

if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
  echo "vendor-deps: needs apt-get and dpkg (run it on Debian 12, not on the GPU machine)" >&2
  exit 2
fi
mkdir -p "$out/debs"
out=$(cd "$out" && pwd)
cd "$out/debs"
if ! apt-get download "${packages[@]}" 2>/dev/null; then
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  apt-get download "${packages[@]}"
fi

: > "$out/MANIFEST"
for package in "${packages[@]}"; do
  # The newest downloaded .deb of each package (older versions may be left from earlier runs).
  deb=$(find . -maxdepth 1 -name "${package}_*.deb" | sort -V | tail -n 1)
  dpkg -x "$deb" "$out"
  echo "$package $(dpkg-deb -f "$deb" Version)" >> "$out/MANIFEST"
done
echo "vendor-deps: unpacked ${packages[*]} into $out (versions in $out/MANIFEST)"

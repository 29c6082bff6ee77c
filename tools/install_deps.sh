#!/usr/bin/env bash
# Installs every Debian package etc needs to build, test and benchmark.
# Idempotent: quiet and quick when everything is already present.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libflatbuffers-dev flatbuffers-compiler
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libdnnl-dev
  libeigen3-dev
  libcli11-dev nlohmann-json3-dev catch2 graphviz time
  python3-onnx python3-numpy python3-torch python3-torchvision
)

missing=()
# Node.js and npm (for the ONNX Runtime peer and npm-hosted models) may come
# from another source than Debian; install Debian's only when absent.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi

sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

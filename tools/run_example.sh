#!/usr/bin/env bash
# The main job on the bundled example model: install what is needed, build,
# compile the ONNX model into a program file, describe it, and run it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install_deps.sh"
"$root/tools/build.sh"
etc="$root/build/tools/etc"
model="$root/tests/models/example/mini_cnn.onnx"
out="$root/build/example"
mkdir -p "$out"
set -x
"$etc" preprocess "$model" -o "$out/mini_cnn.etp"
"$etc" info "$out/mini_cnn.etp"
"$etc" run "$out/mini_cnn.etp" --input image="$root/tests/models/example/image.npy" \
  --output-dir "$out" --iterations 50

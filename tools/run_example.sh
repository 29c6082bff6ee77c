#!/usr/bin/env bash
# The main job on the bundled example model: install what is needed, build,
# show how it partitions for XNNPACK, compile it into a program file with its
# XNNPACK delegate, describe it, and run it; then
# partition a model with mixed support for the demo backend and run it delegated.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install_deps.sh"
"$root/tools/build.sh"
etc="$root/build/tools/etc"
model="$root/tests/models/example/mini_cnn.onnx"
out="$root/build/example"
mkdir -p "$out"
set -x
"$etc" partition "$model" --backend xnnpack
"$etc" preprocess "$model" --backend xnnpack -o "$out/mini_cnn.etp"
"$etc" info "$out/mini_cnn.etp"
"$etc" run "$out/mini_cnn.etp" --input image="$root/tests/models/example/image.npy" \
  --output-dir "$out" --iterations 50
# Delegation: which nodes the demo backend takes and why the rest stay portable,
# then the same model compiled with demo delegates and run.
mixed="$root/tests/models/example/mixed_ops.onnx"
"$etc" partition "$mixed" --backend demo
"$etc" preprocess "$mixed" --backend demo -o "$out/mixed_ops.etp"
"$etc" info "$out/mixed_ops.etp"
"$etc" run "$out/mixed_ops.etp" --random-inputs --output-dir "$out"

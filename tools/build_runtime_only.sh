#!/usr/bin/env bash
# Builds the runtime alone, as a deployment does, into build-runtime/: no
# compiler (-DETC_BUILD_COMPILER=OFF) and no XNNPACK backend
# (-DETC_BACKEND_XNNPACK=OFF), so it needs flatbuffers, Eigen and threads only.
# Builds the runtime's tests too (tests/runtime, ctest in build-runtime/).
# A Debug build gets line tables only (-g1): a fifth less compile time than
# full debug info, and failures still name file and line.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$root/build-runtime}
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
  -DETC_BUILD_COMPILER=OFF -DETC_BACKEND_XNNPACK=OFF -DETC_BACKEND_ONEDNN=OFF >/dev/null
ninja -C "$build_dir" -j"$(nproc)" | { grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' || true; }
test -x "$build_dir/tests/runtime/etc_runtime_tests"

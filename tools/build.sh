#!/usr/bin/env bash
# Configures and builds etc into build/ (Release; BUILD_TYPE and BUILD_DIR override).
#   ETC_SANITIZE=ON tools/build.sh   builds with ASan + UBSan into build-asan/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitize=${ETC_SANITIZE:-OFF}
default_dir=$root/build
[ "$sanitize" = "ON" ] && default_dir=$root/build-asan
build_dir=${BUILD_DIR:-$default_dir}
build_type=${BUILD_TYPE:-$([ "$sanitize" = "ON" ] && echo RelWithDebInfo || echo Release)}
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DETC_SANITIZE="$sanitize" >/dev/null
ninja -C "$build_dir" -j"$(nproc)" | grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' || true
test -x "$build_dir/tools/etc"

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
# Sanitizer builds use -O1 (as the sanitizers recommend) and line tables only
# (-g1): reports name file and line, and the build is much faster than -O2 -g.
extra=()
[ "$sanitize" = "ON" ] && extra=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG")
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" -DETC_SANITIZE="$sanitize" "${extra[@]}" >/dev/null
ninja -C "$build_dir" -j"$(nproc)" | grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' || true
test -x "$build_dir/tools/etc" && test -x "$build_dir/tools/etc-compiler"

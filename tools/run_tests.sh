#!/usr/bin/env bash
# Every test, under the sanitizers: install what is needed, fetch/generate the
# real models, then
#   1. build everything with ASan + UBSan (build-asan/) and run all of ctest
#      there, as many tests at once as there are cores: unit tests, the ONNX
#      conformance suite in its five modes, the command-line tests, the
#      real-model tests, and the fuzz targets replaying their regression
#      corpus (tests/fuzz/regressions);
#   2. build the runtime alone, as a deployment does (no compiler, no XNNPACK),
#      into build-runtime/ (Debug: assertions on) and run its tests;
#   3. build the runtime with XNNPACK under ThreadSanitizer (build-tsan/) and
#      run the threaded tests: one program, several Methods executing at once
#      on different threads over the shared XNNPACK thread pool, the
#      pool itself (task_pool_test.cpp) and the recurrent kernels' products
#      split over it (packed_gemv_test.cpp).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install_deps.sh"
ETC_SANITIZE=ON "$root/tools/build.sh"
"$root/tests/models/prepare_models.sh"
(cd "$root/build-asan" && ctest --output-on-failure -j "$(nproc)")
BUILD_TYPE=Debug "$root/tools/build_runtime_only.sh"  # unoptimised: it checks the build and its tests, not speed
(cd "$root/build-runtime" && ctest --output-on-failure -j "$(nproc)")
tsan="$root/build-tsan"
# Unoptimised: the threaded test runs one small program, and -O0 compiles the
# runtime in a tenth less time than -O1 (495 against 543 s of CPU).
cmake -S "$root" -B "$tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" \
  -DETC_BUILD_COMPILER=OFF -DETC_BACKEND_XNNPACK=ON -DETC_BACKEND_ONEDNN=OFF -DETC_TSAN=ON >/dev/null
ninja -C "$tsan" etc_threads_test | { grep -vE '^\[[0-9]+/[0-9]+\] (Building|Linking)' || true; }
# history_size=7: the longest access history, so that the stack of an
# access made on a pool thread is restored and the suppressions
# (tests/tsan.supp) can see its XNNPACK frames.
TSAN_OPTIONS="suppressions=$root/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1 history_size=7" \
  "$tsan/tests/runtime/etc_threads_test"

#!/usr/bin/env bash
# Builds the fuzz targets with clang + libFuzzer + ASan + UBSan into
# build-fuzz/, makes a seed corpus for each from the test models and the ONNX
# test data, and runs each target for a bounded time. Prints, per target, the
# executions, the coverage (libFuzzer's cov: edges) and the findings; a
# finding is left in build-fuzz/findings/TARGET/ and makes the exit non-zero.
#   tools/fuzz.sh [SECONDS_PER_TARGET=600] [TARGET...]
# Every finding, once fixed, goes into tests/fuzz/regressions/TARGET/, which
# the normal and sanitizer builds replay in ctest (docs/fuzzing.md).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(onnx_import onnx_graph program xnnpack_blob demo_blob onednn_blob etdump tensor_file)
out="$root/build-fuzz"

CC=clang CXX=clang++ cmake -S "$root" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DETC_FUZZ=ON >/dev/null
ninja -C "$out" $(printf 'etc_fuzz_%s ' "${targets[@]}") etc_fuzz_extract_blobs etc >/dev/null

corpus="$out/corpus"
seeds="$out/seeds"
if [ ! -d "$seeds" ]; then
  mkdir -p "$seeds"/{onnx_import,program,etdump,tensor_file,onnx_graph}
  data=/usr/share/libonnx-testdata/data/node
  # Small ONNX models, each under every delegation choice (first byte).
  for model in "$root"/tests/models/example/*.onnx $(ls -d "$data"/test_*/model.onnx | awk 'NR % 8 == 0'); do
    name=$(basename "$(dirname "$model")")-$(basename "$model" .onnx)
    for d in 0 1 2; do { printf "\\x0$d"; cat "$model"; } >"$seeds/onnx_import/$name-$d"; done
  done
  # Programs of the example models, portable and delegated, and their ETDumps.
  for model in "$root"/tests/models/example/*.onnx; do
    name=$(basename "$model" .onnx)
    "$out/tools/etc" preprocess "$model" -o "$seeds/program/$name.etp" -q
    "$out/tools/etc" preprocess "$model" --backend xnnpack -o "$seeds/program/$name-xnnpack.etp" -q
    "$out/tools/etc" preprocess "$model" --backend demo -o "$seeds/program/$name-demo.etp" -q || true
    "$out/tools/etc" preprocess "$model" --backend xnnpack --fallback portable -o "$seeds/program/$name-fallback.etp" -q
    "$out/tools/etc" preprocess "$model" --backend onednn -o "$seeds/program/$name-onednn.etp" -q || true
    "$out/tools/etc" preprocess "$model" --backend onednn --compile-spec onednn:prepack=on \
      -o "$seeds/program/$name-onednn-packed.etp" -q || true
    "$out/tools/etc" run "$seeds/program/$name.etp" --random-inputs --runtime-delegate xnnpack --profile \
      --etdump "$seeds/etdump/$name-load-time.etdump" -q >/dev/null 2>&1 || true
    for p in "$seeds/program/$name"*.etp; do
      "$out/tools/etc" run "$p" --random-inputs --etdump "$seeds/etdump/$(basename "$p" .etp).etdump" -q \
        >/dev/null 2>&1 || true
    done
  done
  "$out/tests/fuzz/etc_fuzz_extract_blobs" "$seeds/blobs" "$seeds"/program/*.etp >/dev/null
  mkdir -p "$seeds/blobs/xnnpack" "$seeds/blobs/demo" "$seeds/blobs/onednn"
  # Input tensors: .npy (selector byte 1) and .pb (selector byte 0).
  for f in "$root"/tests/models/example/*.npy; do { printf '\x01'; cat "$f"; } >"$seeds/tensor_file/$(basename "$f")"; done
  for f in $(ls "$data"/test_*/test_data_set_0/input_0.pb | awk 'NR % 16 == 0'); do
    { printf '\x00'; cat "$f"; } >"$seeds/tensor_file/$(basename "$(dirname "$(dirname "$f")")").pb"
  done
fi

seed_dir() {
  case $1 in
    xnnpack_blob) echo "$seeds/blobs/xnnpack" ;;
    demo_blob) echo "$seeds/blobs/demo" ;;
    onednn_blob) echo "$seeds/blobs/onednn" ;;
    *) echo "$seeds/$1" ;;
  esac
}

# A program or blob may declare any size: allocations above 2 GiB fail as
# they would on a small device (new throws, init returns
# MemoryAllocationFailed) instead of counting as findings.
export ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=2048:detect_leaks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
printf '%-14s %12s %10s %8s %s\n' target executions coverage corpus findings
for t in "${targets[@]}"; do
  mkdir -p "$corpus/$t" "$out/findings/$t"
  log="$out/fuzz-$t.log"
  (cd "$out/findings/$t" && "$out/tests/fuzz/etc_fuzz_$t" "$corpus/$t" "$(seed_dir "$t")" \
     "$root/tests/fuzz/regressions/$t" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=6144 \
     -malloc_limit_mb=4096 -max_len=1048576 -print_final_stats=1 >"$log" 2>&1) || true
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*' || echo 0)
  files=$(ls "$corpus/$t" | wc -l)
  found=$(ls "$out/findings/$t" | grep -E '^(crash|leak|timeout|oom)-' | wc -l || true)
  printf '%-14s %12s %10s %8s %s\n' "$t" "$execs" "$cov" "$files" "$found"
  [ "$found" -eq 0 ] || status=1
done
exit $status

#!/usr/bin/env bash
# Every test: install what is needed, build, fetch/generate the real models,
# then run the unit tests, the ONNX conformance suite, the CLI tests and the
# real-model end-to-end tests; then build the runtime alone, as a deployment
# does (no compiler, no XNNPACK), into build-runtime/ and run its tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install_deps.sh"
"$root/tools/build.sh"
"$root/tests/models/prepare_models.sh"
(cd "$root/build" && ctest --output-on-failure)
"$root/tools/build_runtime_only.sh"
(cd "$root/build-runtime" && ctest --output-on-failure)

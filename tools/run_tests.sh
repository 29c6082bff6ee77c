#!/usr/bin/env bash
# Every test: install what is needed, build, fetch/generate the real models,
# then run the unit tests, the ONNX conformance suite, the CLI tests and the
# real-model end-to-end tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install_deps.sh"
"$root/tools/build.sh"
"$root/tests/models/prepare_models.sh"
cd "$root/build"
ctest --output-on-failure

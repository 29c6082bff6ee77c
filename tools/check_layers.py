#!/usr/bin/python3
"""Fails when a source file includes across a forbidden layer (the dependency
rules of the design: the runtime never reaches the compiler, ONNX, protobuf
or spdlog; XNNPACK and oneDNN only in their backends; a load-time delegate above the
halves of its backend; the IR below the rest of the
compiler; a preprocessor reaches only its own backend's partitioner). Prints every offending include as FILE:LINE: reason.

    tools/check_layers.py [ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
PROJECT = ("runtime/", "compiler/", "partitioners/", "preprocessors/", "delegates/", "tools/", "tests/")
# Third-party headers the runtime must never see, and XNNPACK's, which only
# its backend may include.
NOT_IN_RUNTIME = ("onnx/", "google/protobuf/", "spdlog/", "nlohmann/", "CLI/")
XNNPACK_HEADERS = ("xnnpack.h", "pthreadpool.h", "cpuinfo.h")
ONEDNN_HEADERS = ("dnnl.hpp", "dnnl.h", "omp.h")
# ONNX and protobuf: only the front end (compiler/import/onnx and the driver
# from an ONNX file) and the CLI's TensorProto reader, so that the rest of the
# compiler, the load-time delegate and `etc run` link without them.
ONNX_HEADERS = ("onnx/", "google/protobuf/")
ONNX_ALLOWED = ("compiler/import/onnx/", "compiler/driver.", "tools/etc/tensor_pb.cpp")

# (folder, project folders it may include), most specific first.
RULES = [
    ("runtime/", ("runtime/",)),
    ("compiler/ir/", ("compiler/ir/", "compiler/common/", "runtime/")),
    ("compiler/", ("compiler/", "runtime/")),
    ("partitioners/", ("partitioners/", "compiler/", "runtime/")),
    ("preprocessors/", ("preprocessors/", "compiler/", "runtime/")),
    # Load-time delegates build their backend's blob at load time with its
    # ahead-of-time half: they sit above both halves.
    ("delegates/", ("delegates/", "preprocessors/", "partitioners/", "compiler/", "runtime/")),
]


def allowed_for(path):
    for folder, allowed in RULES:
        if path.startswith(folder):
            return folder, allowed
    return None, None


def same_backend(path, header):
    """A backend's preprocess re-checks nodes with its own partitioner's rules
    (preprocessors/NAME may include partitioners/NAME), so the two agree."""
    parts = path.split("/")
    return parts[0] == "preprocessors" and len(parts) > 2 and header.startswith(f"partitioners/{parts[1]}/")


def check(path, text):
    folder, allowed = allowed_for(path)
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        m = INCLUDE.match(line)
        if not m:
            continue
        header = m.group(2)
        where = f"{path}:{number}"
        if header in XNNPACK_HEADERS and not path.startswith(("runtime/backends/xnnpack/", "tests/", "tools/")):
            problems.append(f"{where}: <{header}> outside runtime/backends/xnnpack")
        if header in ONEDNN_HEADERS and not path.startswith(("runtime/backends/onednn/", "tests/", "tools/")):
            problems.append(f"{where}: <{header}> outside runtime/backends/onednn")
        if header.startswith(ONNX_HEADERS) and not path.startswith(ONNX_ALLOWED + ("tests/",)):
            problems.append(f"{where}: {header} outside the ONNX front end")
        if header.startswith(("compiler/import/onnx/", "compiler/driver.h")) and not path.startswith(
                ONNX_ALLOWED + ("tests/",)) and not path.startswith(tuple(f"tools/etc/cmd_{c}.cpp" for c in (
                    "partition", "preprocess", "debug"))):
            problems.append(f"{where}: {header} from outside the ONNX front end and etc-compiler's commands")
        if folder is None:
            continue
        if folder == "runtime/" and header.startswith(NOT_IN_RUNTIME):
            problems.append(f"{where}: the runtime includes {header}")
        if header.startswith(PROJECT) and not header.startswith(allowed) and not same_backend(path, header):
            problems.append(f"{where}: {folder} may not include {header}")
    return problems


def main():
    problems = []
    for top in ("runtime", "compiler", "partitioners", "preprocessors", "delegates", "tools"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".h", ".hpp", ".cpp", ".cc")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, ROOT).replace(os.sep, "/")
                with open(full, encoding="utf-8", errors="replace") as f:
                    problems += check(rel, f.read())
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) cross a forbidden layer", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

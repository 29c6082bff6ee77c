#!/usr/bin/python3
"""Benchmark of the foundation (portable kernels only). Prints:
  - compile time of a ResNet-50-sized model (torchvision resnet50, opset 13)
  - program size vs. the ONNX file, for each model
  - arena size vs. the lower bound (largest sum of bytes live at one time)
  - portable-kernel latency of resnet18 (median of N runs after warm-up, 1 thread)

    tools/bench_portable.py [--etc build/tools/etc] [--iterations 20]

Models are prepared by tests/models/prepare_models.sh (resnet50 is exported here).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, "tests", "models", "fetched")


def etc(binary, *args):
    proc = subprocess.run([binary, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"etc {' '.join(args)} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--etc", default=os.path.join(ROOT, "build", "tools", "etc"))
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--compile-repeats", type=int, default=3)
    args = ap.parse_args()
    subprocess.run([os.path.join(ROOT, "tests", "models", "prepare_models.sh")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests", "models", "export_torchvision.py"), MODELS,
                    "resnet50@13"], check=True, stdout=subprocess.DEVNULL)
    models = [("resnet50_op13", []), ("resnet18_op13", []), ("mobilenet_v2_op13", []),
              ("ppocr_cls", ["--input-shape", "x=1x3x48x192"])]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in models:
            onnx_path = os.path.join(MODELS, name + ".onnx")
            program = os.path.join(tmp, name + ".etp")
            compiles = [etc(args.etc, "preprocess", onnx_path, "-o", program, "--json", *flags)
                        for _ in range(args.compile_repeats)]
            info = compiles[-1]
            run = etc(args.etc, "run", program, "--random-inputs", "--warmup", "3",
                      "--iterations", str(args.iterations), "--json")
            rows.append({
                "model": name,
                "compile_ms": statistics.median(c["compile_ms"] for c in compiles),
                "onnx_bytes": os.path.getsize(onnx_path),
                "program_bytes": info["file_bytes"],
                "arena_bytes": info["arena_bytes"],
                "lower_bound_bytes": info["arena_lower_bound_bytes"],
                "latency_ms": run["latency_ms"],
            })
    print(f"{'model':<20} {'compile ms':>10} {'onnx MB':>8} {'etp MB':>8} {'etp/onnx':>8} "
          f"{'arena MB':>9} {'bound MB':>9} {'arena/bound':>11} {'median ms':>10} {'min ms':>8}")
    for r in rows:
        mb = 1 << 20
        print(f"{r['model']:<20} {r['compile_ms']:>10.0f} {r['onnx_bytes'] / mb:>8.2f} {r['program_bytes'] / mb:>8.2f} "
              f"{r['program_bytes'] / r['onnx_bytes']:>8.3f} {r['arena_bytes'] / mb:>9.2f} "
              f"{r['lower_bound_bytes'] / mb:>9.2f} {r['arena_bytes'] / max(1, r['lower_bound_bytes']):>11.3f} "
              f"{r['latency_ms']['median']:>10.2f} {r['latency_ms']['min']:>8.2f}")
    print("latency: portable kernels, 1 thread, median of", args.iterations, "runs after 3 warm-up runs")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""One program compiled for a range of input sizes against a program
compiled for each fixed size, and ONNX Runtime at that size, on the same
CPU: PP-OCRv4's detector (compiled for 320..960 x 320..960, run at 320x320,
640x640 and 960x736) and recogniser (48 x 160..640, run at widths 160, 320
and 640). Per size and thread count: the median latency of each (in
process, after warm-up; `etc run --input` with the size's input file, the
ranged program resizing to it), alternating round by round, each going
first in turn; dyn/fixed and dyn/ORT are medians over rounds of each
round's ratio.

    tools/bench_dynamic.py [--etc build/tools/etc] [--threads 1,2] [--rounds 3]
                           [--iterations 10] [--portable]

With --portable the etc programs are compiled without --backend (portable
kernels); by default with --backend xnnpack.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

from bench_xnnpack import FETCHED, MODELS_DIR, ROOT, run_measured

CASES = [
    ("ppocr_det.onnx", "x=1x3x320..960x320..960",
     [("320x320", "ppocr_det.320x320.input.npy"), ("640x640", "ppocr_det.input.npy"),
      ("960x736", "ppocr_det.960x736.input.npy")]),
    ("ppocr_rec.onnx", "x=1x3x48x160..640",
     [("48x160", "ppocr_rec.48x160.input.npy"), ("48x320", "ppocr_rec.input.npy"),
      ("48x640", "ppocr_rec.48x640.input.npy")]),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--etc", default=os.path.join(ROOT, "build", "tools", "etc"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--portable", action="store_true")
    args = ap.parse_args()
    subprocess.run([os.path.join(MODELS_DIR, "prepare_models.sh")], check=True, stdout=subprocess.DEVNULL)
    backend = [] if args.portable else ["--backend", "xnnpack"]
    ort_bench = os.path.join(MODELS_DIR, "ort_bench.js")
    print(f"etc {'portable kernels' if args.portable else '--backend xnnpack'}")
    print(f"{'model':16} {'size':8} {'thr':>3} {'dyn ms':>8} {'fixed ms':>8} {'ORT ms':>8} {'dyn/fixed':>9}"
          f" {'dyn/ORT':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for model, ranged_flag, sizes in CASES:
            onnx_path = os.path.join(FETCHED, model)
            ranged = os.path.join(tmp, "ranged.etp")
            run_measured([args.etc, "preprocess", onnx_path, "-o", ranged, "-q", "--input-shape", ranged_flag,
                          *backend])
            for size, input_file in sizes:
                x = os.path.join(FETCHED, input_file)
                dims = "1x3x" + size
                fixed = os.path.join(tmp, "fixed.etp")
                run_measured([args.etc, "preprocess", onnx_path, "-o", fixed, "-q", "--input-shape", "x=" + dims,
                              *backend])
                for t in [int(v) for v in args.threads.split(",")]:
                    ms = {"dyn": [], "fixed": [], "ort": []}
                    for r in range(args.rounds):
                        order = ["dyn", "fixed", "ort"]
                        for which in order[r % 3:] + order[:r % 3]:
                            if which == "ort":
                                out, _ = run_measured(["node", ort_bench, onnx_path, str(t), str(args.iterations),
                                                       str(args.warmup), "x=" + dims])
                                ms["ort"].append(json.loads(out)["median_ms"])
                                continue
                            out, _ = run_measured([args.etc, "run", ranged if which == "dyn" else fixed,
                                                   "--input", "x=" + x, "--threads", str(t), "--warmup",
                                                   str(args.warmup), "--iterations", str(args.iterations),
                                                   "--json"])
                            ms[which].append(json.loads(out)["latency_ms"]["median"])
                    vs_fixed = statistics.median(d / f for d, f in zip(ms["dyn"], ms["fixed"]))
                    vs_ort = statistics.median(d / o for d, o in zip(ms["dyn"], ms["ort"]))
                    print(f"{model[:-5]:16} {size:8} {t:3d} {statistics.median(ms['dyn']):8.2f}"
                          f" {statistics.median(ms['fixed']):8.2f} {statistics.median(ms['ort']):8.2f}"
                          f" {vs_fixed:9.3f} {vs_ort:8.3f}", flush=True)


if __name__ == "__main__":
    main()

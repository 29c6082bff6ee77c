#!/usr/bin/python3
"""etc with the XNNPACK backend (or others: --backend) against ONNX Runtime on
the same CPU. Prints,
per model and thread count, the median latency of each (in process, after
warm-up; the two alternate round by round, each going first in turn), the
ratio etc/ORT (the median over rounds of each round's etc median over its
ORT median, measured back to back, with the rounds' smallest and largest)
and the geometric mean of the ratios; the fastest iteration of each over all
rounds and their ratio (on a machine whose caches other tenants share, the
medians carry their slow spells, the fastest runs less of them); then cold start (etc: process start to first
output; ORT: session creation plus first run) and peak RSS of each process,
over --cold-runs fresh processes of each, alternating (medians, largest RSS),
and etc's cold start against the bound it is held to: twice the time to
read the program from the page cache plus one warm run (its median above).
etc's cold start is the wall time of its process less that of /bin/true
started the same way in the same alternation (the fork, exec and timing
around a process, which ORT's in-process figure does not carry: 5-15 ms on
a busy VM, more than a small model's whole start). Beside it, what etc's
own steps took in the same processes (`etc run --json` startup_ms: load,
init and first run), measured in process as ORT's figure is; and etc's peak
RSS against its bound: the program file, the arena and the delegates'
activations (`etc run --json` arena_bytes and delegate_activation_bytes)
and 20 MiB ("?" where a backend does not say). Weights a backend copies,
packs or transforms at init count against the 20 MiB.

    tools/bench_xnnpack.py [--etc build/tools/etc] [--threads 1,2] [--iterations 30]
                           [--rounds 3] [--models resnet18,mobilenet_v2] [--load-time] [--cold-runs 5]
                           [--backend onednn [--backend xnnpack]] [--compile-spec onednn:prepack=on]

--backend (repeatable, default xnnpack) is passed to `etc preprocess` in
order: `--backend onednn --backend xnnpack` gives oneDNN first pick.

With --load-time, each model is also compiled without --backend and run with
`--runtime-delegate xnnpack` (XNNPACK taken when the program is loaded), in
the same alternation, and reported next to the ahead-of-time program.

Models: torchvision exports (opset 13, seeded random weights) made by
tests/models/export_torchvision.py, and the other model classes
tests/models/prepare_models.sh makes or fetches into tests/models/fetched/:
transformer_encoder, lstm, gru, lstm_speech (torch exports), ppocr_det (PP-OCRv4 detector,
640x640), ppocr_rec (PP-OCRv4 recogniser, 48x320), lraspp (LR-ASPP MobileNetV3
segmenter, 320x320). `--models all` runs every
one. ONNX Runtime is npm onnxruntime-node (prepare_models.sh installs it).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS_DIR = os.path.join(ROOT, "tests", "models")
FETCHED = os.path.join(MODELS_DIR, "fetched")
DEFAULT_MODELS = ["resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
                  "efficientnet_b0", "shufflenet_v2_x1_0", "googlenet"]
# Models beyond torchvision: file in tests/models/fetched and fixed input
# shapes (their exports leave some dims dynamic).
OTHER_MODELS = {
    "transformer_encoder": ("transformer_encoder.onnx", []),
    "lstm": ("lstm.onnx", []),
    "gru": ("gru.onnx", []),
    "lstm_speech": ("lstm_speech.onnx", []),
    "ppocr_det": ("ppocr_det.onnx", ["x=1x3x640x640"]),
    "ppocr_rec": ("ppocr_rec.onnx", ["x=1x3x48x320"]),
    "lraspp": ("lraspp.onnx", []),
}
BENCHMARK_SET = ["resnet18", "resnet50", "googlenet", "mobilenet_v2", "mobilenet_v3_small", "efficientnet_b0", *OTHER_MODELS]


def run_measured(cmd):
    """Runs cmd; returns (stdout, wall seconds)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return out, wall


def run_with_rss(cmd):
    """Like run_measured, plus the peak RSS (MiB) of cmd's process alone. GNU time
    measures it: a child forked straight from this Python process would report
    Python's own peak too (Linux keeps the pre-exec high-water mark)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        out, wall = run_measured(["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd])
        kib = int(rss.read().strip().splitlines()[-1])
    return out, wall, kib / 1024.0


def input_flags(model_path):
    model = onnx.load(model_path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    flags = []
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        dims = [d.dim_value for d in inp.type.tensor_type.shape.dim]
        flags.append(f"{inp.name}={'x'.join(str(d) for d in dims)}")
    return flags


def read_ms(path):
    """The fastest of three reads of the whole file (from the page cache, as
    the program has just been written and run), in ms."""
    times = []
    for _ in range(3):
        start = time.perf_counter()
        with open(path, "rb", buffering=0) as f:
            while f.read(8 << 20):
                pass
        times.append((time.perf_counter() - start) * 1000.0)
    return min(times)


def prepare(models):
    """Fetches or makes the models of the set, and exports the torchvision
    ones among `models` (names) that are not there yet."""
    subprocess.run([os.path.join(MODELS_DIR, "prepare_models.sh")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["/usr/bin/python3", os.path.join(MODELS_DIR, "export_torchvision.py"), FETCHED,
                    *[m + "@13" for m in models if m not in OTHER_MODELS]], check=True, stdout=subprocess.DEVNULL)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--etc", default=os.path.join(ROOT, "build", "tools", "etc"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--iterations", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cold-runs", type=int, default=5,
                    help="fresh processes of each for cold start and peak RSS (0: latency only)")
    ap.add_argument("--load-time", action="store_true",
                    help="also run each model compiled without --backend with --runtime-delegate xnnpack")
    ap.add_argument("--backend", action="append", help="etc preprocess --backend (repeatable; default xnnpack)")
    ap.add_argument("--compile-spec", action="append", default=[], help="etc preprocess --compile-spec (repeatable)")
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma-separated names, or 'all' (the benchmark set: " + ",".join(BENCHMARK_SET) + ")")
    args = ap.parse_args()
    if args.rounds < 1 or args.iterations < 1 or args.warmup < 0 or args.cold_runs < 0:
        ap.error("--rounds and --iterations take 1 or more, --warmup and --cold-runs 0 or more")
    threads = [int(t) for t in args.threads.split(",")]
    models = BENCHMARK_SET if args.models == "all" else args.models.split(",")
    backend_flags = [f for b in (args.backend or ["xnnpack"]) for f in ("--backend", b)]
    backend_flags += [f for c in args.compile_spec for f in ("--compile-spec", c)]
    print("etc preprocess " + " ".join(backend_flags))

    prepare(models)
    ort_bench = os.path.join(MODELS_DIR, "ort_bench.js")

    latency_rows, cold_rows, load_rows = [], [], []
    ratios = {t: [] for t in threads}
    min_ratios = {t: [] for t in threads}
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            file, fixed = OTHER_MODELS.get(name, (f"{name}_op13.onnx", []))
            onnx_path = os.path.join(FETCHED, file)
            shape_flags = [f for s in fixed for f in ("--input-shape", s)]
            # Weights prepacked by oneDNN are packed for a thread count: one
            # program per thread count then, each run at its own.
            per_threads = any("prepack=on" in c for c in args.compile_spec)
            programs = {}
            for t in threads:
                programs[t] = os.path.join(tmp, f"{name}.{t if per_threads else 'all'}.etp")
                extra = ["--compile-spec", f"onednn:threads={t}"] if per_threads else []
                if per_threads or t == threads[0]:
                    compiled = json.loads(run_measured([args.etc, "preprocess", onnx_path, *backend_flags, *extra,
                                                        "-o", programs[t], "--json", *shape_flags])[0])
            part = compiled.get("partitioning", {})
            shapes = fixed or input_flags(onnx_path)
            portable = os.path.join(tmp, name + ".portable.etp")
            if args.load_time:
                run_measured([args.etc, "preprocess", onnx_path, "-o", portable, *shape_flags])
            warm_ms = {}  # etc's median at each thread count
            for t in threads:
                program = programs[t]
                etc_ms, ort_ms, load_ms = [], [], []
                etc_min, ort_min = [], []
                order = ["etc", "ort"] + (["load"] if args.load_time else [])
                for r in range(args.rounds):  # alternate them, round by round, each first in turn
                    for which in order[r % len(order):] + order[:r % len(order)]:
                        if which in ("etc", "load"):
                            flags = ["--runtime-delegate", "xnnpack"] if which == "load" else []
                            out, _ = run_measured([args.etc, "run", portable if which == "load" else program,
                                                   "--random-inputs", "--threads", str(t), "--warmup",
                                                   str(args.warmup), "--iterations", str(args.iterations), "--json",
                                                   *flags])
                            latency = json.loads(out)["latency_ms"]
                            (load_ms if which == "load" else etc_ms).append(latency["median"])
                            if which == "etc":
                                etc_min.append(latency["min"])
                        else:
                            out, _ = run_measured(["node", ort_bench, onnx_path, str(t), str(args.iterations),
                                                   str(args.warmup), *shapes])
                            ort = json.loads(out)
                            ort_ms.append(ort["median_ms"])
                            ort_min.append(ort["min_ms"])
                # The ratio pairs each round's two medians, measured back to back,
                # so a slow spell of the machine weighs on both sides of it.
                paired = sorted(e / o for e, o in zip(etc_ms, ort_ms))
                warm_ms[t] = statistics.median(etc_ms)
                ratio = statistics.median(paired)
                ratios[t].append(ratio)
                min_ratio = min(etc_min) / min(ort_min)
                min_ratios[t].append(min_ratio)
                latency_rows.append((name, t, statistics.median(etc_ms), statistics.median(ort_ms), ratio,
                                     paired[0], paired[-1], min(etc_min), min(ort_min), min_ratio,
                                     part.get("partitions", "-"), part.get("node_coverage", 0.0)))
                if load_ms:
                    load_rows.append((name, t, statistics.median(etc_ms), statistics.median(load_ms),
                                      statistics.median(lo / e for lo, e in zip(load_ms, etc_ms))))
            # Cold start and peak RSS, one thread count (the last), fresh
            # processes, etc and ORT alternating: the median of each (one
            # start alone swings with the machine), the largest peak RSS.
            t = threads[-1]
            etc_walls, etc_inside, spawn_walls, ort_colds, etc_rss, ort_rss = [], [], [], [], 0.0, 0.0
            working = 0  # bytes: the program's arena and its delegates' activations
            for _ in range(args.cold_runs):
                _, wall, _ = run_with_rss(["/bin/true"])
                spawn_walls.append(wall * 1000.0)
                out, wall, rss = run_with_rss([args.etc, "run", programs[t], "--random-inputs", "--threads", str(t),
                                               "--iterations", "1", "--json"])
                etc_walls.append(wall * 1000.0)
                summary = json.loads(out)
                startup = summary["startup_ms"]
                etc_inside.append(startup["load"] + startup["init"] + startup["first_run"])
                # None where a backend does not say: the bound is then unknown.
                delegated = summary["delegate_activation_bytes"]
                working = None if delegated is None else summary["arena_bytes"] + delegated
                etc_rss = max(etc_rss, rss)
                out, _, rss = run_with_rss(["node", ort_bench, onnx_path, str(t), "1", "0", *shapes])
                ort = json.loads(out)
                ort_colds.append(ort["create_ms"] + ort["first_run_ms"])
                ort_rss = max(ort_rss, rss)
            if not spawn_walls:  # --cold-runs 0: latency only
                continue
            spawn = statistics.median(spawn_walls)
            etc_cold, ort_cold = statistics.median(etc_walls) - spawn, statistics.median(ort_colds)
            # The bound the cold start is held to: twice a read of the
            # program from the page cache (the fastest of three) plus one
            # warm run.
            bound = 2 * (read_ms(programs[t]) + warm_ms[t])
            # The bound peak RSS is held to: the program file, the arena and
            # the delegates' activations, and 20 MiB.
            rss_bound = None if working is None else (os.path.getsize(programs[t]) + working) / 2**20 + 20
            cold_rows.append((name, etc_cold, spawn, statistics.median(etc_inside), ort_cold, etc_cold / ort_cold,
                              bound, etc_rss, ort_rss, rss_bound))

    print("| model | threads | etc ms | ORT ms | etc/ORT | rounds' etc/ORT | etc fastest ms | ORT fastest ms "
          "| fastest etc/ORT | partitions | nodes delegated |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, t, e, o, r, lo, hi, emin, omin, rmin, parts, cov in latency_rows:
        print(f"| {name} | {t} | {e:.2f} | {o:.2f} | {r:.2f} | {lo:.2f}–{hi:.2f} | {emin:.2f} | {omin:.2f} "
              f"| {rmin:.2f} | {parts} | {cov * 100:.0f}% |")
    for t in threads:
        print(f"geometric mean etc/ORT at {t} thread(s): {geomean(ratios[t]):.3f} "
              f"(fastest runs: {geomean(min_ratios[t]):.3f})")
    if load_rows:
        print()
        print("| model | threads | ahead-of-time ms | load-time delegate ms | load-time/ahead-of-time |")
        print("|---|---|---|---|---|")
        for name, t, e, lo, r in load_rows:
            print(f"| {name} | {t} | {e:.2f} | {lo:.2f} | {r:.2f} |")
    if not cold_rows:
        return
    print()
    print(f"| model | etc cold start ms (process start to first output; median of {args.cold_runs}) "
          "| process spawn ms (/bin/true, subtracted) "
          "| etc load + init + first run ms (in process, as ORT's; median) "
          "| ORT session creation + first run ms (median) | ratio "
          "| bound ms: 2 x (program read from page cache + warm run) | cold start / bound | in process / bound "
          "| etc peak RSS MiB (largest) | ORT peak RSS MiB (largest) "
          "| RSS bound MiB: program + arena + delegates' activations + 20 | etc RSS / bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, e, spawn, inside, o, r, bound, erss, orss, rbound in cold_rows:
        rss = "? | ?" if rbound is None else f"{rbound:.1f} | {erss / rbound:.2f}"
        print(f"| {name} | {e:.1f} | {spawn:.1f} | {inside:.1f} | {o:.1f} | {r:.2f} | {bound:.1f} | {e / bound:.2f} "
              f"| {inside / bound:.2f} | {erss:.1f} | {orss:.1f} | {rss} |")


if __name__ == "__main__":
    main()

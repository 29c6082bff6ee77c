#!/usr/bin/python3
"""What tracing costs. Prints, per model and thread count, the median latency of
`etc run` (XNNPACK backend), the median over rounds and the fastest single run, with no tracer, with the event recorder attached
(instruction and delegate events, --etdump), and in profiling mode (--etdump
--profile: every XNNPACK node its own stage), each as a ratio to no tracer.
With --baseline-etc, the same program also runs on another etc build (e.g. one
without tracing support) so the cost of tracing support compiled in but off
can be read off. Configurations alternate round by round.

    tools/bench_tracing.py [--etc build/tools/etc] [--baseline-etc OTHER/tools/etc]
                           [--threads 1,2] [--iterations 50] [--rounds 5]
                           [--models resnet18,mobilenet_v2,efficientnet_b0,transformer_encoder]

Models come from tests/models/prepare_models.sh (tests/models/fetched/).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FETCHED = os.path.join(ROOT, "tests", "models", "fetched")
DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "efficientnet_b0", "transformer_encoder"]


def model_path(name):
    for candidate in (f"{name}_op13.onnx", f"{name}.onnx"):
        path = os.path.join(FETCHED, candidate)
        if os.path.exists(path):
            return path
    sys.exit(f"{name}: not in {FETCHED}; run tests/models/prepare_models.sh")


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return proc.stdout


def latency_ms(etc, program, threads, iterations, extra):
    """(median, min) latency of one `etc run` of `iterations` runs."""
    out = run([etc, "run", program, "--random-inputs", "--threads", str(threads), "--iterations",
               str(iterations), "--warmup", "5", "--json", *extra])
    latency = json.loads(out)["latency_ms"]
    return latency["median"], latency["min"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--etc", default=os.path.join(ROOT, "build", "tools", "etc"))
    parser.add_argument("--baseline-etc", help="another etc build to compare with (no tracer)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        etdump = os.path.join(tmp, "run.etdump")
        configs = [("no tracer", args.etc, [])]
        if args.baseline_etc:
            configs.insert(0, ("baseline", args.baseline_etc, []))
        configs += [("events", args.etc, ["--etdump", etdump]),
                    ("profile", args.etc, ["--etdump", etdump, "--profile"])]
        header = f"{'model':<22}{'thr':>4}{'stat':>7}" + "".join(f"{name:>16}" for name, _, _ in configs)
        print(header + "    (ms; ratio to 'no tracer')")
        for name in args.models.split(","):
            program = os.path.join(tmp, name + ".etp")
            run([args.etc, "preprocess", model_path(name), "--backend", "xnnpack", "-o", program])
            for threads in [int(t) for t in args.threads.split(",")]:
                medians = {c[0]: [] for c in configs}
                best = {c[0]: float("inf") for c in configs}
                for _ in range(args.rounds):
                    for cname, etc, extra in configs:
                        median, fastest = latency_ms(etc, program, threads, args.iterations, extra)
                        medians[cname].append(median)
                        best[cname] = min(best[cname], fastest)
                # The median of the rounds' medians, and the fastest run of
                # all rounds (least touched by other load on the machine).
                for stat, values in (("median", {c: statistics.median(v) for c, v in medians.items()}),
                                     ("min", best)):
                    base = values["no tracer"]
                    cells = "".join(f"{values[c]:>9.3f} {values[c] / base:>5.3f}" for c, _, _ in configs)
                    print(f"{name:<22}{threads:>4}{stat:>7}{cells}", flush=True)


if __name__ == "__main__":
    main()

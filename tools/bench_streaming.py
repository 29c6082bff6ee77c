#!/usr/bin/python3
"""A stateful streaming model run as it is used, etc against ONNX Runtime on
the same CPU: Silero VAD v5 over its 100-chunk test streams (16 kHz, 576
samples; 8 kHz, 288), the state fed back after every chunk. etc: `etc run
--chunks --feedback` with `--backend xnnpack`, median per-chunk latency of
the second pass over the stream (the first warms up); ONNX Runtime: the same
through tests/models/ort_stream.js (npm onnxruntime-node, graph optimization
'all'; its time includes the Node binding's per-call cost). The two
alternate round by round, each going first in turn; etc/ORT is the median of
each round's ratio, with the rounds' range.

    tools/bench_streaming.py [--etc build/tools/etc] [--threads 1,2] [--rounds 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from bench_xnnpack import FETCHED, MODELS_DIR, ROOT, geomean, run_measured

STREAMS = [("silero_vad_v5 16 kHz", "16000", 576), ("silero_vad_v5 8 kHz", "8000", 288)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--etc", default=os.path.join(ROOT, "build", "tools", "etc"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    subprocess.run([os.path.join(MODELS_DIR, "prepare_models.sh")], check=True, stdout=subprocess.DEVNULL)
    model = os.path.join(FETCHED, "silero_vad_v5.onnx")
    state = os.path.join(FETCHED, "silero_vad_v5.state.npy")
    print(f"{'stream':22} {'thr':>3} {'etc ms':>8} {'ORT ms':>8} {'etc/ORT':>8}  range")
    ratios = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, sr, samples in STREAMS:
            chunks = os.path.join(FETCHED, f"silero_vad_v5.{sr}.chunks.npy")
            rate = os.path.join(FETCHED, f"silero_vad_v5.{sr}.sr.npy")
            program = os.path.join(tmp, f"vad{sr}.etp")
            run_measured([args.etc, "preprocess", model, "-o", program, "--backend", "xnnpack", "-q",
                          "--input-shape", f"input=1x{samples}", "--input-shape", "state=2x1x128"])
            for t in [int(x) for x in args.threads.split(",")]:
                etc_ms, ort_ms, paired = [], [], []
                for r in range(args.rounds):
                    def run_etc():
                        out, _ = run_measured([args.etc, "run", program, "--chunks", f"input={chunks}", "--input",
                                               f"state={state}", "--input", f"sr={rate}", "--feedback",
                                               "stateN=state", "--iterations", "100", "--warmup", "100",
                                               "--threads", str(t), "--json"])
                        return json.loads(out)["latency_ms"]["median"]

                    def run_ort():
                        out, _ = run_measured(["node", os.path.join(MODELS_DIR, "ort_stream.js"), "bench", str(t),
                                               model, f"input={chunks}", "stateN=state", f"state={state}",
                                               f"sr={rate}"])
                        return json.loads(out)["median_ms"]

                    if r % 2 == 0:
                        e, o = run_etc(), run_ort()
                    else:
                        o, e = run_ort(), run_etc()
                    etc_ms.append(e)
                    ort_ms.append(o)
                    paired.append(e / o)
                ratio = statistics.median(paired)
                ratios.setdefault(t, []).append(ratio)
                print(f"{name:22} {t:>3} {statistics.median(etc_ms):8.4f} {statistics.median(ort_ms):8.4f} "
                      f"{ratio:8.3f}  {min(paired):.2f}-{max(paired):.2f}")
    for t, rs in ratios.items():
        print(f"geometric mean etc/ORT at {t} thread(s): {geomean(rs):.3f}")


if __name__ == "__main__":
    sys.exit(main())

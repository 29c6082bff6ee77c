#!/usr/bin/python3
"""End-to-end: real models (torchvision CNNs, PaddleOCR's classifier,
detector and recogniser, a transformer encoder, an LSTM and a bidirectional
GRU, an LR-ASPP segmenter) compiled by etc match their references, on
portable kernels alone and delegated to XNNPACK (at 1 and 2 threads, and
XNNPACK alone). Silero VAD v5, which branches on its sample-rate input at
run time, runs over 100 chunks with its state fed back (`etc run --chunks
--feedback`) at 16 and 8 kHz, matching ONNX Runtime on every chunk. The
PP-OCRv4 detector and recogniser, each compiled once for a range of sizes,
run at three of them.

Models come from tests/models/prepare_models.sh. Metric: max|etc - ref| / max|ref|.
    ETC_BIN=build/tools/etc /usr/bin/python3 tests/e2e/test_real_models.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models", "fetched")
ETC = os.environ.get("ETC_BIN", os.path.join(HERE, "..", "..", "build", "tools", "etc"))
TOLERANCE = 1e-4


def runtime_backends():
    """Backends this etc can run here (a build may leave oneDNN out)."""
    listing = json.loads(subprocess.run([ETC, "backends", "--json"], capture_output=True, text=True,
                                        check=True).stdout)["backends"]
    return {b["name"] for b in listing if b["runtime"] and b["available"]}


RUNTIME_BACKENDS = runtime_backends()


def skip_without_backends(test, mode_flags):
    for i, flag in enumerate(mode_flags[:-1]):
        if flag == "--backend" and mode_flags[i + 1] not in RUNTIME_BACKENDS:
            test.skipTest(f"this build cannot run backend {mode_flags[i + 1]}")

# (model file, input name, input file, reference file, extra preprocess flags)
CASES = [
    ("resnet18_op13.onnx", "input", "resnet18_op13.input.npy", "resnet18_op13.reference.npy", []),
    ("resnet18_op17.onnx", "input", "resnet18_op17.input.npy", "resnet18_op17.reference.npy", []),
    ("mobilenet_v2_op13.onnx", "input", "mobilenet_v2_op13.input.npy", "mobilenet_v2_op13.reference.npy", []),
    ("mobilenet_v2_op17.onnx", "input", "mobilenet_v2_op17.input.npy", "mobilenet_v2_op17.reference.npy", []),
    ("ppocr_cls.onnx", "x", "ppocr_cls.input.npy", "ppocr_cls.reference/softmax_0.tmp_0.npy",
     ["--input-shape", "x=1x3x48x192"]),
    ("ppocr_det.onnx", "x", "ppocr_det.input.npy", "ppocr_det.reference/sigmoid_0.tmp_0.npy",
     ["--input-shape", "x=1x3x640x640"]),
    ("ppocr_rec.onnx", "x", "ppocr_rec.input.npy", "ppocr_rec.reference/softmax_11.tmp_0.npy",
     ["--input-shape", "x=1x3x48x320"]),
    ("transformer_encoder.onnx", "x", "transformer_encoder.input.npy", "transformer_encoder.reference.npy", []),
    ("lstm.onnx", "x", "lstm.input.npy", "lstm.reference.npy", []),
    ("gru.onnx", "x", "gru.input.npy", "gru.reference.npy", []),
    ("lstm_speech.onnx", "x", "lstm_speech.input.npy", "lstm_speech.reference.npy", []),
    ("lraspp.onnx", "input", "lraspp.input.npy", "lraspp.reference.npy", []),
] + [(f"{m}_op13.onnx", "input", f"{m}_op13.input.npy", f"{m}_op13.reference.npy", [])
     for m in ["mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0", "efficientnet_b0", "googlenet"]]

# (test name suffix, preprocess flags, run flags)
MODES = [
    ("portable", [], []),
    ("xnnpack_1_thread", ["--backend", "xnnpack"], ["--threads", "1"]),
    ("xnnpack_2_threads", ["--backend", "xnnpack"], ["--threads", "2"]),
    # XNNPACK alone, as on a CPU without AVX-512 (no native convolutions,
    # swishes or epilogue fusions).
    ("xnnpack_only", ["--backend", "xnnpack", "--compile-spec", "xnnpack:native_convolution=off"],
     ["--threads", "1"]),
    # The portable program with XNNPACK taken at load time.
    ("runtime_delegate_xnnpack", [], ["--runtime-delegate", "xnnpack", "--threads", "2"]),
    # oneDNN takes all it can, XNNPACK what it leaves: both in one program.
    ("onednn_xnnpack", ["--backend", "onednn", "--backend", "xnnpack", "--assign", "priority"], ["--threads", "2"]),
]


def run(*args):
    proc = subprocess.run([ETC, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise AssertionError(f"etc {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


PROGRAMS = tempfile.TemporaryDirectory()
_compiled = {}


def compiled(path, *flags):
    """The program `etc preprocess path *flags` writes, compiled once: modes
    that differ only in how the program runs (threads, a load-time delegate)
    share it. A model's tests run one after another (unittest sorts them by
    name), so only the current model's programs are kept."""
    key = (path, flags)
    if any(p != path for p, _ in _compiled):
        for program in _compiled.values():
            os.remove(program)
        _compiled.clear()
    if key not in _compiled:
        program = os.path.join(PROGRAMS.name, f"{len(_compiled)}.etp")
        run("preprocess", path, "-o", program, *flags)
        _compiled[key] = program
    return _compiled[key]


class RealModels(unittest.TestCase):
    def check_model(self, model, input_name, input_file, reference, flags, mode_flags, run_flags):
        skip_without_backends(self, mode_flags)
        path = os.path.join(MODELS, model)
        if not os.path.exists(path):
            self.fail(f"{path} missing: run tests/models/prepare_models.sh")
        program = compiled(path, *flags, *mode_flags)
        with tempfile.TemporaryDirectory() as tmp:
            run("run", program, "--input", f"{input_name}={os.path.join(MODELS, input_file)}", "--output-dir", tmp,
                *run_flags)
            outputs = [f for f in os.listdir(tmp) if f.endswith(".npy")]
            self.assertEqual(len(outputs), 1, outputs)
            got = np.load(os.path.join(tmp, outputs[0]))
        ref = np.load(os.path.join(MODELS, reference))
        self.assertEqual(got.shape, ref.shape)
        gap = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
        print(f"{model} {' '.join(mode_flags + run_flags)}: max|etc-ref|/max|ref| = {gap:.2e}", file=sys.stderr)
        self.assertLessEqual(gap, TOLERANCE)


class StreamingVad(unittest.TestCase):
    def check_vad(self, sr, samples, mode_flags, run_flags):
        skip_without_backends(self, mode_flags)
        path = os.path.join(MODELS, "silero_vad_v5.onnx")
        if not os.path.exists(path):
            self.fail(f"{path} missing: run tests/models/prepare_models.sh")
        # The sample rate stays a run-time input: the model's If on it is compiled, not folded.
        program = compiled(path, "--input-shape", f"input=1x{samples}", "--input-shape", "state=2x1x128",
                           *mode_flags)
        with tempfile.TemporaryDirectory() as tmp:
            prefix = os.path.join(MODELS, f"silero_vad_v5.{sr}")
            run("run", program, "--chunks", f"input={prefix}.chunks.npy",
                "--input", f"state={os.path.join(MODELS, 'silero_vad_v5.state.npy')}",
                "--input", f"sr={prefix}.sr.npy", "--feedback", "stateN=state", "--iterations", "100",
                "--output-dir", tmp, *run_flags)
            for name in ["output", "stateN"]:
                got = np.load(os.path.join(tmp, name + ".npy"))
                ref = np.load(os.path.join(prefix + ".reference", name + ".npy"))
                self.assertEqual(got.shape, ref.shape)
                gap = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
                print(f"silero_vad_v5 {sr} Hz {name} {' '.join(mode_flags + run_flags)}: "
                      f"max|etc-ref|/max|ref| over 100 chunks = {gap:.2e}", file=sys.stderr)
                self.assertLessEqual(gap, TOLERANCE)


class DynamicShapes(unittest.TestCase):
    def check_sizes(self, model, shape_flag, output, cases, backend=(), run_flags=()):
        """One program compiled for a range of sizes, run at each case's size."""
        program = compiled(os.path.join(MODELS, model), "--input-shape", shape_flag, *backend)
        with tempfile.TemporaryDirectory() as tmp:
            for size, inputs, ref in cases:
                out = os.path.join(tmp, size)
                run("run", program, "--input", f"x={os.path.join(MODELS, inputs)}", "--output-dir", out, *run_flags)
                got = np.load(os.path.join(out, output))
                want = np.load(os.path.join(MODELS, ref, output))
                self.assertEqual(got.shape, want.shape)
                gap = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
                print(f"{model} compiled for {shape_flag} {' '.join(backend)}, run {' '.join(run_flags)} at {size}: "
                      f"max|etc-ref|/max|ref| = {gap:.2e}",
                      file=sys.stderr)
                self.assertLessEqual(gap, TOLERANCE)

    DET = [("320x320", "ppocr_det.320x320.input.npy", "ppocr_det.320x320.reference"),
           ("640x640", "ppocr_det.input.npy", "ppocr_det.reference"),
           ("960x736", "ppocr_det.960x736.input.npy", "ppocr_det.960x736.reference")]
    REC = [("48x160", "ppocr_rec.48x160.input.npy", "ppocr_rec.48x160.reference"),
           ("48x320", "ppocr_rec.input.npy", "ppocr_rec.reference"),
           ("48x640", "ppocr_rec.48x640.input.npy", "ppocr_rec.48x640.reference")]

    def test_ppocr_det_one_program_for_a_range_of_sizes(self):
        self.check_sizes("ppocr_det.onnx", "x=1x3x320..960x320..960", "sigmoid_0.tmp_0.npy", self.DET)

    def test_ppocr_rec_one_program_for_a_range_of_widths(self):
        self.check_sizes("ppocr_rec.onnx", "x=1x3x48x160..640", "softmax_11.tmp_0.npy", self.REC)

    def test_ppocr_det_one_xnnpack_program_for_a_range_of_sizes(self):
        self.check_sizes("ppocr_det.onnx", "x=1x3x320..960x320..960", "sigmoid_0.tmp_0.npy", self.DET,
                         ("--backend", "xnnpack"))

    def test_ppocr_det_ranged_with_the_load_time_delegate(self):
        self.check_sizes("ppocr_det.onnx", "x=1x3x320..960x320..960", "sigmoid_0.tmp_0.npy", self.DET,
                         run_flags=("--runtime-delegate", "xnnpack"))

    def test_ppocr_rec_ranged_with_the_load_time_delegate(self):
        self.check_sizes("ppocr_rec.onnx", "x=1x3x48x160..640", "softmax_11.tmp_0.npy", self.REC,
                         run_flags=("--runtime-delegate", "xnnpack"))

    def test_ppocr_rec_one_xnnpack_program_for_a_range_of_widths(self):
        self.check_sizes("ppocr_rec.onnx", "x=1x3x48x160..640", "softmax_11.tmp_0.npy", self.REC,
                         ("--backend", "xnnpack"))


for sr, samples in [(16000, 576), (8000, 288)]:
    for m in MODES:
        setattr(StreamingVad, f"test_silero_vad_v5_{sr}_{m[0]}",
                lambda self, sr=sr, samples=samples, m=m: self.check_vad(sr, samples, m[1], m[2]))


def make_test(case, mode):
    return lambda self: self.check_model(*case, mode[1], mode[2])


for c in CASES:
    for m in MODES:
        setattr(RealModels, "test_" + c[0].replace(".onnx", "") + "_" + m[0], make_test(c, m))

if __name__ == "__main__":
    unittest.main()

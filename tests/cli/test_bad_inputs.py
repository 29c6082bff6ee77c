#!/usr/bin/python3
"""Bad input of every kind ends with a clear message and a non-zero exit, never
a crash, and never a leftover output file.

    ETC_BIN=build/tools/etc /usr/bin/python3 tests/cli/test_bad_inputs.py
"""
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cli_support import ETC, TempDirCase


def small_model(op_type="Relu", dims=(2, 3), **node_attrs):
    """x -> Add(x, c) -> op_type -> y, opset 13."""
    c = numpy_helper.from_array(np.arange(dims[-1], dtype=np.float32), "c")
    nodes = [helper.make_node("Add", ["x", "c"], ["s"], name="add0"),
             helper.make_node(op_type, ["s"], ["y"], name="last", **node_attrs)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(dims))], [c])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


class CliCase(TempDirCase):
    def etc(self, *args):
        return subprocess.run([ETC, *args], capture_output=True, text=True, timeout=120)

    def assert_fails(self, args, *needles, code=1):
        proc = self.etc(*args)
        self.assertEqual(proc.returncode, code, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
        self.assertIn("error:", proc.stderr)
        for needle in needles:
            self.assertIn(needle, proc.stderr)
        return proc.stderr

    def assert_no_leftovers(self, *keep):
        left = sorted(f for f in os.listdir(self.dir) if f not in keep)
        self.assertEqual(left, [], "files left behind")

    def write(self, name, data):
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(self.path(name), mode) as f:
            f.write(data)
        return self.path(name)

    def save_model(self, name, model):
        onnx.save(model, self.path(name))
        return self.path(name)


class PreprocessBadInput(CliCase):
    def check_rejected(self, model_path, *needles):
        out = self.path("out.etp")
        self.assert_fails(["preprocess", model_path, "-o", out], model_path, *needles)
        self.assertFalse(os.path.exists(out))

    def test_missing_file(self):
        self.check_rejected(self.path("nope.onnx"), "no such file")

    def test_empty_file(self):
        self.check_rejected(self.write("empty.onnx", b""), "empty file")

    def test_random_bytes(self):
        rng = random.Random(5)
        self.check_rejected(self.write("random.onnx", bytes(rng.randrange(256) for _ in range(4096))), "not a valid ONNX")

    def test_text_file(self):
        self.check_rejected(self.write("notes.onnx", "this is a text file, not a model\n" * 20), "not a valid ONNX")

    def test_every_truncation_of_a_model(self):
        good = small_model().SerializeToString()
        for length in range(1, len(good), 7):
            path = self.write("cut.onnx", good[:length])
            proc = self.etc("preprocess", path, "-o", self.path("out.etp"))
            self.assertEqual(proc.returncode, 1, f"length {length}: {proc.stderr}")
            self.assertIn("cut.onnx", proc.stderr)
            self.assertFalse(os.path.exists(self.path("out.etp")))

    def test_unsupported_ops_are_listed_together(self):
        nodes = [helper.make_node("Add", ["x", "x"], ["a"], name="fine"),
                 helper.make_node("NonZero", ["a"], ["b"], name="nz"),
                 helper.make_node("Det", ["x"], ["d"], name="det_node")]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                                  [helper.make_tensor_value_info("b", TensorProto.INT64, [2, None]),
                                   helper.make_tensor_value_info("d", TensorProto.FLOAT, [])])
        path = self.save_model("unsupported.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
        self.check_rejected(path, "2 node(s)", "'nz' (NonZero)", "'det_node' (Det)")

    def test_zero_counts_the_checker_lets_through_are_refused_before_shape_inference(self):
        # ONNX's shape inference divides by these (a zero stride was SIGFPE).
        for op, attrs, name in (("Conv", {"strides": [0, 0]}, "strides"), ("MaxPool", {"strides": [1, 0]}, "strides"),
                                ("MaxPool", {"dilations": [0, 1]}, "dilations"),
                                ("Conv", {"group": 0}, "group"), ("SpaceToDepth", {"blocksize": 0}, "blocksize")):
            inputs = ["x", "w"] if op == "Conv" else ["x"]
            kernel = {} if op == "SpaceToDepth" else {"kernel_shape": [2, 2]}
            w = numpy_helper.from_array(np.ones((4, 3, 2, 2), dtype=np.float32), "w")
            node = helper.make_node(op, inputs, ["y"], name="n0", **kernel, **attrs)
            graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c", "d"])],
                                      [w] if op == "Conv" else [])
            path = self.save_model(f"{op}_{name}_{len(os.listdir(self.dir))}.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
            with self.subTest(op=op, attribute=name):
                self.check_rejected(path, f"node 'n0' ({op})", f"attribute '{name}' must be positive")

    def huge_model(self, name, nodes, inputs, initializers=(), out_rank=2):
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [f"d{i}" for i in range(out_rank)])
        graph = helper.make_graph(nodes, "g", inputs, [y], list(initializers))
        return self.save_model(name, helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))

    def test_counts_that_overflow_or_exceed_the_limits_are_refused_at_compile_time(self):
        relu = [helper.make_node("Relu", ["x"], ["y"], name="r")]
        big_input = self.huge_model("big_input.onnx", relu, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 40, 4])])
        self.check_rejected(big_input, "input 'x'", "16 TiB, above --max-tensor-bytes (4 GiB)")
        # 2^32 * 2^32 wraps to 0 in 64 bits: a product that overflows must not pass as empty.
        wrap = self.huge_model("wrap.onnx", relu, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1 << 32, 1 << 32])])
        self.check_rejected(wrap, "more elements than a 64-bit count can hold")
        # Empty, yet the program format bounds the other dims (they size its strides).
        for dims, why in (([0, 1 << 40, 4096], "non-zero dims span more than 2^48 bytes"),
                          ([1 << 41, 0], "a dim above 2^40")):
            empty = self.huge_model(f"empty_{len(dims)}.onnx", relu,
                                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)], out_rank=len(dims))
            with self.subTest(dims=dims):
                self.check_rejected(empty, "input 'x'", why)
        wrap_const = numpy_helper.from_array(np.zeros((0,), dtype=np.float32), "w")
        wrap_const.ClearField("dims")
        wrap_const.dims.extend([1 << 32, 1 << 32, 0])
        add = [helper.make_node("Add", ["x", "w"], ["y"], name="a")]
        self.check_rejected(self.huge_model("wrap_const.onnx", add, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                            [wrap_const], out_rank=3), "tensor 'w'", "64-bit count")
        for op, extra, consts in (
                ("Expand", ["shape"], [numpy_helper.from_array(np.array([1 << 22, 1024], dtype=np.int64), "shape")]),
                ("Tile", ["reps"], [numpy_helper.from_array(np.array([1 << 30, 1 << 10], dtype=np.int64), "reps")]),
                ("Pad", ["pads"], [numpy_helper.from_array(np.array([0, 0, 1 << 20, 1 << 20], dtype=np.int64), "pads")])):
            node = [helper.make_node(op, ["x", *extra], ["y"], name="grow")]
            path = self.huge_model(f"{op}.onnx", node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1024])], consts)
            with self.subTest(op=op):
                self.check_rejected(path, f"node 'grow' ({op})", "above --max-tensor-bytes")
        # A constant OneHot would build along its huge depth: refused before it is made.
        one_hot = [helper.make_node("OneHot", ["x", "depth", "values"], ["y"], name="grow")]
        consts = [numpy_helper.from_array(np.array(1 << 40, dtype=np.int64), "depth"),
                  numpy_helper.from_array(np.array([0, 1], dtype=np.float32), "values")]
        path = self.huge_model("one_hot.onnx", one_hot, [helper.make_tensor_value_info("x", TensorProto.INT64, [2])],
                               consts)
        self.check_rejected(path, "node 'grow' (OneHot)", "the output", "above --max-tensor-bytes")

    def test_quantized_operators_name_the_input_that_is_wrong(self):
        w = numpy_helper.from_array(np.ones((4, 3, 3, 3), dtype=np.int8), "w")
        scalars = [numpy_helper.from_array(np.array(0.1, dtype=np.float32), "xs"),
                   numpy_helper.from_array(np.array(3, dtype=np.uint8), "xz"),
                   numpy_helper.from_array(np.array(0.2, dtype=np.float32), "ys"),
                   numpy_helper.from_array(np.array(1, dtype=np.uint8), "yz")]
        cases = (
            ("ws_len", [numpy_helper.from_array(np.full(3, 0.1, np.float32), "ws"),
                        numpy_helper.from_array(np.zeros(4, np.int8), "wz")], "'ws' has 3 values but the input has 4"),
            ("wz_type", [numpy_helper.from_array(np.full(4, 0.1, np.float32), "ws"),
                         numpy_helper.from_array(np.zeros(4, np.uint8), "wz")], "zero point 'wz' is uint8, its input 'w' int8"))
        for name, extra, why in cases:
            node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], name="qconv")
            graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 3, 5, 5])],
                                      [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4, 3, 3])],
                                      [w, *scalars, *extra])
            path = self.save_model(name + ".onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
            with self.subTest(case=name):
                self.check_rejected(path, "node 'qconv' (QLinearConv)", why)

    def test_a_model_that_crashes_libonnx_shape_inference_is_an_error(self):
        # Found by fuzzing: libonnx reads a ConvTranspose weight of rank 1 out of bounds.
        c0 = numpy_helper.from_array(np.zeros((0,), dtype=np.int64), "c0")
        nodes = [helper.make_node("Softmax", ["c0"], ["t0"], name="n0"),
                 helper.make_node("ConvTranspose", ["x", "t0"], ["y"], name="n1")]
        path = self.huge_model("crash.onnx", nodes, [helper.make_tensor_value_info("x", TensorProto.INT32, [3, 1, 1])],
                               [c0], out_rank=3)
        self.check_rejected(path, "ONNX checker or shape inference crashed on this model (signal 11)")

    def test_a_huge_declared_input_is_refused_before_shape_inference(self):
        # libonnx would build a rank-2^40 shape for ConstantOfShape (a hang found by fuzzing).
        nodes = [helper.make_node("ConstantOfShape", ["x"], ["y"], name="n0")]
        path = self.huge_model("cos.onnx", nodes, [helper.make_tensor_value_info("x", TensorProto.INT64, [1 << 40])],
                               out_rank=1)
        self.check_rejected(path, "input 'x'", "8 TiB, above --max-tensor-bytes")

    def test_a_range_without_a_countable_length_is_refused(self):
        for limit in (np.inf, np.nan, 1e12):
            consts = [numpy_helper.from_array(np.array(v, dtype=np.float32), n)
                      for v, n in ((0.0, "start"), (limit, "limit"), (1.0, "delta"))]
            node = [helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range0")]
            path = self.huge_model(f"range_{len(os.listdir(self.dir))}.onnx", node,
                                   [], consts, out_rank=1)
            with self.subTest(limit=limit):
                self.check_rejected(path, "node 'range0' (Range)",
                                    "above --max-tensor-bytes" if limit == 1e12 else "no countable number of elements")

    def test_limit_flags_raise_or_lower_the_limits(self):
        relu = [helper.make_node("Relu", ["x"], ["y"], name="r")]
        model = self.huge_model("mid.onnx", relu, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1024, 1024])])
        out = self.path("out.etp")
        self.assert_fails(["preprocess", model, "-o", out, "--max-tensor-bytes", "1M"], "4 MiB", "above --max-tensor-bytes (1 MiB)")
        self.assert_fails(["--max-program-bytes", "4M", "preprocess", model, "-o", out], "--max-program-bytes (4 MiB)")
        self.assertFalse(os.path.exists(out))
        self.assert_fails(["preprocess", model, "-o", out, "--max-file-bytes", "16"], "mid.onnx", "above --max-file-bytes (16 bytes)")
        proc = self.etc("preprocess", model, "-o", out, "--max-tensor-bytes", "8M")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = self.etc("preprocess", model, "-o", out, "--max-tensor-bytes", "lots")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--max-tensor-bytes", proc.stderr)

    def test_missing_external_data_file(self):
        model = small_model(dims=(2, 1024))
        path = self.path("ext.onnx")
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="ext.data", size_threshold=0)
        os.remove(self.path("ext.data"))
        self.check_rejected(path, "ext.data", "missing")

    def test_external_data_loads_when_present(self):
        model = small_model(dims=(2, 1024))
        path = self.path("ext.onnx")
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="ext.data", size_threshold=0)
        proc = self.etc("preprocess", path, "-o", self.path("out.etp"))
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_external_data_through_a_symlink_out_of_the_folder_is_refused(self):
        model = small_model(dims=(2, 1024))
        os.makedirs(self.path("m"))
        path = os.path.join(self.dir, "m", "ext.onnx")
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="ext.data", size_threshold=0)
        # The data moves out of the folder; a link with the same name points at it.
        os.rename(os.path.join(self.dir, "m", "ext.data"), self.path("outside.data"))
        os.symlink(self.path("outside.data"), os.path.join(self.dir, "m", "ext.data"))
        out = self.path("out.etp")
        self.assert_fails(["preprocess", path, "-o", out], "ext.data", "leads outside the model's folder")
        self.assertFalse(os.path.exists(out))

    def test_special_files_are_refused_at_once(self):
        # A FIFO would block and a device never end; neither is read.
        fifo = self.path("model.onnx")
        os.mkfifo(fifo)
        self.check_rejected(fifo, "is a FIFO, not a regular file")
        self.check_rejected("/dev/zero", "is a character device")
        model = small_model(dims=(2, 1024))
        path = os.path.join(self.dir, "ext.onnx")
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="ext.data", size_threshold=0)
        os.remove(self.path("ext.data"))
        os.mkfifo(self.path("ext.data"))
        self.check_rejected(path, "ext.data", "is a FIFO")

    def test_interrupted_compiles_leave_nothing_behind(self):
        # A 64 MiB constant makes writing the program take a while; SIGINT,
        # SIGTERM or SIGKILL at any moment leaves either no output or the
        # complete one, and never a temporary file.
        big = numpy_helper.from_array(np.ones((16, 1024, 1024), dtype=np.float32), "c")
        graph = helper.make_graph([helper.make_node("Add", ["x", "c"], ["y"], name="add")], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 1024, 1024])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 1024, 1024])], [big])
        model = self.save_model("big.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
        out = self.path("big.etp")
        rng = random.Random(7)
        for trial, sig in enumerate([signal.SIGINT, signal.SIGTERM, signal.SIGKILL] * 3):
            proc = subprocess.Popen([ETC, "preprocess", model, "-o", out], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.05, 0.6))
            proc.send_signal(sig)
            proc.wait(timeout=60)
            with self.subTest(trial=trial, signal=sig):
                self.assert_no_leftovers("big.onnx", "big.etp")
                if os.path.exists(out):  # finished before the signal: complete
                    self.assertEqual(self.etc("info", out).returncode, 0)
                    os.remove(out)

    def test_dynamic_dim_names_the_flag(self):
        model = small_model()
        model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
        path = self.save_model("dyn.onnx", model)
        self.check_rejected(path, "'x'", "dynamic", "--input-shape x=")

    def test_input_shape_for_unknown_input(self):
        path = self.save_model("m.onnx", small_model())
        self.assert_fails(["preprocess", path, "-o", self.path("out.etp"), "--input-shape", "nope=1x2"], "nope")
        self.assertFalse(os.path.exists(self.path("out.etp")))

    def test_output_folder_missing(self):
        path = self.save_model("m.onnx", small_model())
        self.assert_fails(["preprocess", path, "-o", self.path("no/such/dir/out.etp")], "does not exist")
        self.assert_no_leftovers("m.onnx")


class RunBadInput(CliCase):
    def compile_small(self):
        model = self.save_model("m.onnx", small_model())
        program = self.path("m.etp")
        proc = self.etc("preprocess", model, "-o", program)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return program

    def test_flipped_bytes_never_crash(self):
        good = open(self.compile_small(), "rb").read()
        np.save(self.path("x.npy"), np.ones((2, 3), np.float32))
        rng = random.Random(11)
        for _ in range(60):
            bad = bytearray(good)
            pos = rng.randrange(len(bad))
            bad[pos] ^= 1 << rng.randrange(8)
            self.write("bad.etp", bytes(bad))
            proc = self.etc("run", self.path("bad.etp"), "--input", "x=" + self.path("x.npy"))
            # A flip in constant data can go unnoticed; anything else must be a clean error.
            self.assertIn(proc.returncode, (0, 1), f"byte {pos}: exit {proc.returncode}\n{proc.stderr}")
            if proc.returncode == 1:
                self.assertIn("bad.etp", proc.stderr)

    def test_truncated_program(self):
        good = open(self.compile_small(), "rb").read()
        path = self.write("cut.etp", good[: len(good) // 2])
        self.assert_fails(["run", path, "--random-inputs"], "cut.etp")

    def test_text_file_as_program(self):
        path = self.write("notes.etp", "hello\n" * 50)
        self.assert_fails(["run", path, "--random-inputs"], "notes.etp", "not an etc program")

    def test_streaming_flags(self):
        program = self.compile_small()
        np.save(self.path("x.npy"), np.ones((2, 3), np.float32))
        x = "x=" + self.path("x.npy")
        self.assert_fails(["run", program, "--input", x, "--feedback", "nope=x"],
                          "m.etp", "no output 'nope'")
        self.assert_fails(["run", program, "--input", x, "--feedback", "y=z"], "m.etp", "no input 'z'")
        self.assert_fails(["run", program, "--input", x, "--feedback", "y"], "OUTPUT=INPUT")
        np.save(self.path("bad_chunks.npy"), np.ones((4, 3, 3), np.float32))
        self.assert_fails(["run", program, "--chunks", "x=" + self.path("bad_chunks.npy")],
                          "bad_chunks.npy", "float32[N, ...]", "float32[4, 3, 3]")
        np.save(self.path("chunks.npy"), np.ones((4, 2, 3), np.float32))
        self.assert_fails(["run", program, "--chunks", "x=" + self.path("chunks.npy"), "--input", x],
                          "also given by --chunks")
        # y = relu(x + [0, 1, 2]) fed back into x three times, on chunks whose first run uses chunk 0.
        chunks = np.stack([np.full((2, 3), k, np.float32) for k in range(4)])
        np.save(self.path("chunks.npy"), chunks)
        out = self.path("out")
        proc = self.etc("run", program, "--chunks", "x=" + self.path("chunks.npy"), "--iterations", "4",
                        "--output-dir", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = np.load(os.path.join(out, "y.npy"))
        np.testing.assert_array_equal(got, np.maximum(chunks + np.arange(3, dtype=np.float32), 0))
        proc = self.etc("run", program, "--input", x, "--feedback", "y=x", "--iterations", "3", "--output-dir", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        want = np.broadcast_to(1 + 3 * np.arange(3, dtype=np.float32), (2, 3))  # x + 3c after 3 runs
        np.testing.assert_array_equal(np.load(os.path.join(out, "y.npy")), want)

    def test_sizes_outside_a_compiled_range(self):
        model = small_model(dims=("n", 3))
        path = self.save_model("dyn.onnx", model)
        program = self.path("dyn.etp")
        proc = self.etc("preprocess", path, "-o", program, "--input-shape", "x=1..4x3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        info = json.loads(self.etc("info", program, "--json").stdout)
        self.assertEqual(info["inputs"][0]["shape"], [4, 3])
        self.assertEqual(info["inputs"][0]["min_shape"], [1, 3])
        np.save(self.path("x5.npy"), np.ones((5, 3), np.float32))
        self.assert_fails(["run", program, "--input", "x=" + self.path("x5.npy")],
                          "dyn.etp", "x5.npy", "input 'x' dim 0 is 5", "1..4")
        np.save(self.path("x2.npy"), np.ones((2, 3), np.float32))
        out = self.path("out")
        proc = self.etc("run", program, "--input", "x=" + self.path("x2.npy"), "--output-dir", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(np.load(os.path.join(out, "y.npy")).shape, (2, 3))
        # The XNNPACK delegate resizes with the program: same outputs as the portable kernels.
        delegated = self.path("x.etp")
        proc = self.etc("preprocess", path, "-o", delegated, "--input-shape", "x=1..4x3", "--backend", "xnnpack")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        out_x = self.path("out_x")
        proc = self.etc("run", delegated, "--input", "x=" + self.path("x2.npy"), "--output-dir", out_x)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        np.testing.assert_array_equal(np.load(os.path.join(out_x, "y.npy")), np.load(os.path.join(out, "y.npy")))
        self.assert_fails(["run", delegated, "--input", "x=" + self.path("x5.npy")], "input 'x' dim 0 is 5", "1..4")
        # A backend whose delegates cannot resize is refused when compiling.
        self.assert_fails(["preprocess", path, "-o", self.path("d.etp"), "--input-shape", "x=1..4x3", "--backend",
                           "demo"], "dyn.onnx", "backend 'demo'", "cannot resize")
        self.assertFalse(os.path.exists(self.path("d.etp")))
        self.assert_fails(["preprocess", path, "-o", self.path("x.etp"), "--input-shape", "x=4..1x3"],
                          "runs backwards")

    def test_wrong_input_shape(self):
        program = self.compile_small()
        np.save(self.path("x.npy"), np.ones((3, 3), np.float32))
        out = self.path("out")
        self.assert_fails(["run", program, "--input", "x=" + self.path("x.npy"), "--output-dir", out],
                          "x.npy", "expected float32[2, 3]", "got float32[3, 3]")
        self.assertFalse(os.path.exists(out) and os.listdir(out))

    def test_wrong_input_dtype(self):
        program = self.compile_small()
        np.save(self.path("x.npy"), np.ones((2, 3), np.int64))
        self.assert_fails(["run", program, "--input", "x=" + self.path("x.npy")], "expected float32[2, 3]", "got int64")

    def test_missing_input_file(self):
        program = self.compile_small()
        self.assert_fails(["run", program, "--input", "x=" + self.path("none.npy")], "none.npy")

    def test_unknown_input_name(self):
        program = self.compile_small()
        np.save(self.path("x.npy"), np.ones((2, 3), np.float32))
        self.assert_fails(["run", program, "--input", "z=" + self.path("x.npy")], "'z'", "x: float32[2, 3]")

    def test_input_not_given(self):
        program = self.compile_small()
        self.assert_fails(["run", program], "input 'x'", "--random-inputs")

    def test_integer_division_of_int_min_by_minus_one_does_not_trap(self):
        a = helper.make_tensor_value_info("a", TensorProto.INT32, [2])
        b = helper.make_tensor_value_info("b", TensorProto.INT32, [2])
        for op in ("Div", "Mod"):
            graph = helper.make_graph([helper.make_node(op, ["a", "b"], ["y"], name="d0")], "g", [a, b],
                                      [helper.make_tensor_value_info("y", TensorProto.INT32, [2])])
            model = self.save_model(f"{op}.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
            program = self.path(f"{op}.etp")
            self.assertEqual(self.etc("preprocess", model, "-o", program).returncode, 0)
            np.save(self.path("a.npy"), np.array([np.iinfo(np.int32).min, 7], dtype=np.int32))
            np.save(self.path("b.npy"), np.array([-1, 0], dtype=np.int32))
            out = self.path(f"out_{op}")
            proc = self.etc("run", program, "--input", "a=" + self.path("a.npy"), "--input", "b=" + self.path("b.npy"),
                            "--output-dir", out)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            want = [np.iinfo(np.int32).min, 0] if op == "Div" else [0, 0]
            self.assertEqual(np.load(os.path.join(out, "y.npy")).tolist(), want)

    def test_more_threads_than_cores_are_capped_with_a_warning(self):
        program = self.path("p.etp")
        self.assertEqual(self.etc("preprocess", self.save_model("m.onnx", small_model()), "-o", program).returncode, 0)
        proc = self.etc("run", program, "--random-inputs", "--threads", "512")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"this machine has {os.cpu_count()} cores; using {os.cpu_count()}", proc.stderr)

    def test_outputs_whose_names_sanitise_alike_keep_their_own_files(self):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
        outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("a b", "a/b")]
        nodes = [helper.make_node("Relu", ["x"], ["a b"], name="r"), helper.make_node("Neg", ["x"], ["a/b"], name="n")]
        graph = helper.make_graph(nodes, "g", [x], outs)
        program = self.path("two.etp")
        model = self.save_model("two.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
        self.assertEqual(self.etc("preprocess", model, "-o", program).returncode, 0)
        np.save(self.path("x.npy"), np.array([1, -2], dtype=np.float32))
        out = self.path("out")
        proc = self.etc("run", program, "--input", "x=" + self.path("x.npy"), "--output-dir", out, "--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        files = {o["name"]: o["file"] for o in json.loads(proc.stdout)["outputs"]}
        self.assertEqual(len(set(files.values())), 2)
        self.assertEqual(np.load(files["a b"]).tolist(), [1, 0])
        self.assertEqual(np.load(files["a/b"]).tolist(), [-1, 2])

    def test_names_that_are_not_utf8_keep_json_and_dot_valid(self):
        model = small_model()
        model.graph.node[1].name = "badXY\"Z"
        raw = model.SerializeToString().replace(b"badXY", b"bad\xff\n")  # same length: still a valid protobuf
        path = self.write("latin.onnx", raw)
        proc = self.etc("partition", path, "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = json.loads(proc.stdout)
        self.assertTrue(any(n["onnx_name"].startswith("bad") for n in report["nodes"]))
        dot = subprocess.run([ETC, "partition", path, "--format", "dot"], capture_output=True, timeout=120)
        self.assertEqual(dot.returncode, 0, dot.stderr)
        text = dot.stdout.decode("utf-8")  # raises when a byte is not UTF-8
        self.assertIn("bad\ufffd\\n\\\"Z", text)  # U+FFFD, the newline and the quote escaped
        if shutil.which("dot"):
            rendered = subprocess.run(["dot", "-Tsvg"], input=dot.stdout, capture_output=True, timeout=120)
            self.assertEqual(rendered.returncode, 0, rendered.stderr)

    def test_a_bool_input_must_hold_zeros_and_ones(self):
        x = helper.make_tensor_value_info("m", TensorProto.BOOL, [4])
        y = helper.make_tensor_value_info("y", TensorProto.BOOL, [4])
        graph = helper.make_graph([helper.make_node("Not", ["m"], ["y"], name="not0")], "g", [x], [y])
        model = self.save_model("not.onnx", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
        program = self.path("not.etp")
        self.assertEqual(self.etc("preprocess", model, "-o", program).returncode, 0)
        np.save(self.path("m.npy"), np.array([1, 0, 1, 8], dtype=np.uint8).view(np.bool_))
        self.assert_fails(["run", program, "--input", "m=" + self.path("m.npy")],
                          "input 'm' is bool, but element 3 holds the byte 8 (a bool must be 0 or 1)")

    def test_a_fifo_as_input_is_refused(self):
        program = self.path("p.etp")
        self.assertEqual(self.etc("preprocess", self.save_model("m.onnx", small_model()), "-o", program).returncode, 0)
        os.mkfifo(self.path("x.npy"))
        self.assert_fails(["run", program, "--input", "x=" + self.path("x.npy")], "x.npy", "is a FIFO")

    def test_corrupt_npy(self):
        program = self.compile_small()
        path = self.write("x.npy", b"\x93NUMPY\x01\x00garbage")
        self.assert_fails(["run", program, "--input", "x=" + path], "x.npy")


class GoodPath(CliCase):
    def test_run_writes_outputs_and_json_latency(self):
        model = self.save_model("m.onnx", small_model())
        program = self.path("m.etp")
        self.assertEqual(self.etc("preprocess", model, "-o", program).returncode, 0)
        x = np.array([[1, -5, 2], [-1, 0, 3]], np.float32)
        np.save(self.path("x.npy"), x)
        proc = self.etc("run", program, "--input", "x=" + self.path("x.npy"), "--output-dir", self.path("out"),
                        "--iterations", "5", "--json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        import json
        summary = json.loads(proc.stdout)
        self.assertEqual(summary["iterations"], 5)
        lat = summary["latency_ms"]
        self.assertLessEqual(lat["min"], lat["median"])
        self.assertLessEqual(lat["median"], lat["max"])
        # Without --warmup the first run is the first timed one.
        startup = summary["startup_ms"]
        self.assertGreater(startup["load"], 0)
        self.assertGreater(startup["init"], 0)
        self.assertGreaterEqual(startup["first_run"], lat["min"])
        self.assertLessEqual(startup["first_run"], lat["max"])
        y = np.load(self.path("out/y.npy"))
        np.testing.assert_array_equal(y, np.maximum(x + np.arange(3, dtype=np.float32), 0))

    def test_run_reports_startup_beside_latency(self):
        model = self.save_model("m.onnx", small_model())
        program = self.path("m.etp")
        self.assertEqual(self.etc("preprocess", model, "-o", program).returncode, 0)
        proc = self.etc("run", program, "--random-inputs", "--warmup", "2", "--iterations", "3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        line = [l for l in proc.stdout.splitlines() if l.startswith("startup: ")]
        self.assertEqual(len(line), 1, proc.stdout)
        self.assertRegex(line[0], r"^startup: load [0-9.e-]+ ms, init [0-9.e-]+ ms, first run [0-9.e-]+ ms$")

    def test_pb_inputs_are_accepted(self):
        model = self.save_model("m.onnx", small_model())
        program = self.path("m.etp")
        self.assertEqual(self.etc("preprocess", model, "-o", program).returncode, 0)
        x = np.full((2, 3), -7, np.float32)
        with open(self.path("x.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        proc = self.etc("run", program, "--input", "x=" + self.path("x.pb"), "--output-dir", self.path("out"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        np.testing.assert_array_equal(np.load(self.path("out/y.npy")), np.maximum(x + np.arange(3, dtype=np.float32), 0))

    def test_version_and_help(self):
        proc = self.etc("--version")
        self.assertEqual(proc.returncode, 0)
        self.assertIn("etc ", proc.stdout)
        for sub in ("preprocess", "run", "info"):
            proc = self.etc(sub, "--help")
            self.assertEqual(proc.returncode, 0, sub)
            self.assertIn("Usage", proc.stdout)

    def test_unknown_flag_is_a_usage_error(self):
        proc = self.etc("run", "--bogus")
        self.assertEqual(proc.returncode, 2)
        proc = self.etc("run", "p.etp", "--threads", "1", "--threads", "2")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--threads: At Most 1 required but received 2", proc.stderr)
        # Conflicting flags: two levels of delegate detail at once.
        proc = self.etc("run", "p.etp", "--etdump", "e.etdump", "--profile", "--debug-outputs")
        self.assertEqual(proc.returncode, 2)
        self.assertIn("excludes", proc.stderr)

    def test_bad_input_table_names_real_tests(self):
        """docs/bad-inputs.md: every test a row names exists."""
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        with open(os.path.join(root, "docs", "bad-inputs.md"), encoding="utf-8") as f:
            table = f.read()
        refs = re.findall(r"`(tests/[^`:]+)(?:::([^`]+))?`", table)
        self.assertGreater(len(refs), 30)
        for path, name in refs:
            with self.subTest(test=f"{path}::{name}"):
                full = os.path.join(root, path)
                self.assertTrue(os.path.exists(full), f"{path} does not exist")
                if name:
                    with open(full, encoding="utf-8") as f:
                        source = f.read()
                    self.assertTrue(f"def {name}(" in source or f'TEST_CASE("{name}"' in source,
                                    f"{path} has no test '{name}'")


if __name__ == "__main__":
    unittest.main()

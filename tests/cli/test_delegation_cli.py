#!/usr/bin/python3
"""`etc partition`, `etc preprocess --backend`, `etc info`, `etc backends` and
`etc run` on delegated programs, as users and CI scripts call them.

    ETC_BIN=build/tools/etc /usr/bin/python3 tests/cli/test_delegation_cli.py
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

import numpy as np

from cli_support import ETC, HERE, TempDirCase

EXAMPLES = os.path.join(HERE, "..", "models", "example")
MIXED = os.path.join(EXAMPLES, "mixed_ops.onnx")
ONNX_NODES = ["conv", "gate", "gate_square", "residual_add", "relu", "tanh", "sin", "cos", "sub", "pool",
              "flatten", "fc", "class_scale"]


class DelegationCli(TempDirCase):
    def etc(self, *args, code=0):
        proc = subprocess.run([ETC, *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, code, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc

    def partition_json(self, *extra):
        return json.loads(self.etc("partition", MIXED, "--backend", "demo", "--format", "json", *extra).stdout)

    def test_json_report_places_every_node_with_a_reason_or_a_partition(self):
        report = self.partition_json()
        self.assertEqual(report["schema_version"], 1)
        self.assertEqual(report["backends"], ["demo"])
        names = [n["onnx_name"] for n in report["nodes"]]
        for name in ["gate_square", "residual_add", "relu", "sin", "cos", "sub", "conv", "tanh", "class_scale"]:
            self.assertIn(name, names)
        by_name = {n["onnx_name"]: n for n in report["nodes"]}
        for delegated in ["gate_square", "residual_add", "relu", "sin", "cos", "sub"]:
            self.assertEqual(by_name[delegated]["backend"], "demo", delegated)
            self.assertIsNone(by_name[delegated]["reason"])
        self.assertIn("has no 'sigmoid'", by_name["gate"]["reason"])
        self.assertIn("does not broadcast", by_name["class_scale"]["reason"])
        self.assertIsNone(by_name["conv"]["backend"])
        # The tanh between relu and sin splits the demo nodes into two partitions.
        self.assertEqual(report["summary"]["partitions"], 2)
        self.assertEqual(len(report["partitions"]), 2)
        self.assertEqual(report["summary"]["delegated_nodes"], 6)
        self.assertGreater(report["summary"]["flops"], report["summary"]["delegated_flops"])
        part = report["partitions"][0]
        self.assertIn("conv", " ".join(part["inputs"]))
        ids = {n["id"] for n in report["nodes"] if n["partition"] == part["tag"]}
        self.assertEqual(set(part["nodes"]), ids)

    def test_text_report_has_reasons_partitions_and_summary(self):
        out = self.etc("partition", MIXED, "--backend", "demo").stdout
        self.assertIn("demo_0 (demo)", out)
        self.assertIn("the demo backend has no 'conv'", out)
        self.assertIn("inputs:", out)
        self.assertIn("summary: 6 of ", out)
        self.assertIn("2 partitions", out)

    def test_text_report_columns_never_touch(self):
        # A real model's long node names and partition tags: every cell ends
        # at least two spaces before the next column starts.
        out = self.etc("partition", os.path.join(EXAMPLES, "mini_cnn.onnx"), "--backend", "xnnpack").stdout
        lines = out.splitlines()
        header = next(i for i, line in enumerate(lines) if line.startswith("node"))
        starts = [lines[header].index(name) for name in ("edge op", "placement", "flops", "reason")]
        rows = lines[header + 1:lines.index("partitions:") - 1]
        self.assertTrue(rows)
        for row in rows:
            for start in starts:
                if len(row) > start:
                    self.assertEqual(row[start - 2:start], "  ", row)

    def test_partition_report_doc_agrees_with_the_tool(self):
        script = os.path.join(HERE, "..", "..", "tools", "update_partition_doc.py")
        proc = subprocess.run([sys.executable, script, "--etc", ETC, "--check"], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_global_flags_may_follow_the_subcommand(self):
        out = self.path("q.etp")
        self.etc("preprocess", "-q", MIXED, "--backend", "demo", "-o", out)
        self.assertTrue(os.path.exists(out))
        self.etc("info", out, "-v")
        # -v says which backend took each delegate and what its init cost.
        proc = self.etc("run", out, "--random-inputs", "-v")
        self.assertIn("delegate 0 (backend 'demo') initialised in", proc.stderr)
        self.assertNotIn("initialised", self.etc("run", out, "--random-inputs").stderr)
        # Logs never mix into standard output: JSON still parses at -vv.
        json.loads(self.etc("run", out, "--random-inputs", "--json", "-vv").stdout)

    def test_dot_report_renders_with_graphviz(self):
        dot_file = self.path("mixed.dot")
        self.etc("partition", MIXED, "--backend", "demo", "--format", "dot", "-o", dot_file)
        with open(dot_file) as f:
            text = f.read()
        self.assertIn("subgraph cluster_0", text)
        self.assertIn("subgraph cluster_1", text)
        self.assertIn("residual_add\\nAdd", text)
        if shutil.which("dot") is None:
            self.fail("graphviz 'dot' is not installed (tools/install_deps.sh installs it)")
        svg = subprocess.run(["dot", "-Tsvg", dot_file], capture_output=True, text=True, timeout=60)
        self.assertEqual(svg.returncode, 0, svg.stderr)
        self.assertIn("<svg", svg.stdout)
        self.assertIn("demo_1 (demo)", svg.stdout)

    def test_gates_fail_with_exit_3_and_say_why(self):
        proc = self.etc("partition", MIXED, "--backend", "demo", "--require-coverage", "90", code=3)
        self.assertIn("--require-coverage needs 90.0%", proc.stderr)
        proc = self.etc("partition", MIXED, "--backend", "demo", "--max-partitions", "1", code=3)
        self.assertIn("2 partitions, --max-partitions allows 1", proc.stderr)
        self.etc("partition", MIXED, "--backend", "demo", "--require-coverage", "10", "--max-partitions", "2")
        out = self.path("gated.etp")
        proc = self.etc("preprocess", MIXED, "--backend", "demo", "-o", out, "--require-flops-coverage", "99",
                        code=3)
        self.assertIn("--require-flops-coverage", proc.stderr)
        self.assertFalse(os.path.exists(out), "a gated preprocess must not write its output")

    def test_unknown_backend_and_bad_spec_are_usage_errors(self):
        proc = self.etc("partition", MIXED, "--backend", "nope", code=1)
        self.assertIn("nope", proc.stderr)
        self.assertIn("demo", proc.stderr)
        proc = self.etc("partition", MIXED, "--backend", "demo", "--compile-spec", "demo-no-colon", code=1)
        self.assertIn("BACKEND:KEY=VALUE", proc.stderr)


    def test_partition_defaults_to_xnnpack(self):
        report = json.loads(self.etc("partition", MIXED, "--format", "json").stdout)
        self.assertEqual(report["backends"], ["xnnpack"])
        by_name = {n["onnx_name"]: n for n in report["nodes"]}
        self.assertEqual(by_name["conv"]["backend"], "xnnpack")
        self.assertEqual(by_name["tanh"]["backend"], "xnnpack")
        self.assertIn("xnnpack", by_name["sin"]["reason"])  # no XNNPACK node for sin

    def test_delegated_program_runs_like_the_portable_one(self):
        portable, delegated = self.path("portable.etp"), self.path("demo.etp")
        self.etc("preprocess", MIXED, "-o", portable)
        proc = self.etc("preprocess", MIXED, "--backend", "demo", "-o", delegated, "--json")
        summary = json.loads(proc.stdout)
        self.assertEqual(summary["delegates"], 2)
        self.assertEqual(summary["partitioning"]["delegated_nodes"], 6)
        image = self.path("image.npy")
        np.save(image, np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32))
        for prog, out_dir in [(portable, "out_portable"), (delegated, "out_demo")]:
            self.etc("run", prog, "--input", f"image={image}", "--output-dir", self.path(out_dir))
        want = np.load(os.path.join(self.path("out_portable"), "logits.npy"))
        got = np.load(os.path.join(self.path("out_demo"), "logits.npy"))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

        info = json.loads(self.etc("info", delegated, "--json").stdout)
        self.assertEqual([d["backend"] for d in info["delegates"]], ["demo", "demo"])
        self.assertEqual(info["instructions"]["delegate_calls"], 2)
        for d in info["delegates"]:
            self.assertGreater(d["blob_bytes"], len("etc-demo-program 1\n"))
            self.assertGreater(d["debug_map_entries"], 0)
        text = self.etc("info", delegated).stdout
        self.assertIn("demo:", text)

    def test_load_time_delegate_takes_kernels_of_a_portable_program(self):
        portable = self.path("portable.etp")
        self.etc("preprocess", MIXED, "-o", portable)
        image = self.path("image.npy")
        np.save(image, np.random.default_rng(5).standard_normal((1, 3, 16, 16)).astype(np.float32))
        self.etc("run", portable, "--input", f"image={image}", "--output-dir", self.path("plain"))
        proc = self.etc("run", portable, "--input", f"image={image}", "--output-dir", self.path("loaded"),
                        "--runtime-delegate", "xnnpack", "--json")
        report = json.loads(proc.stdout)["runtime_delegate"]
        self.assertEqual(report["name"], "xnnpack")
        self.assertTrue(report["used"])
        self.assertGreater(len(report["ranges"]), 0)
        for r in report["ranges"]:
            self.assertLess(r["kernels"][0], r["kernels"][1])
            self.assertLessEqual(r["instructions"][0], r["instructions"][1])
        want = np.load(os.path.join(self.path("plain"), "logits.npy"))
        got = np.load(os.path.join(self.path("loaded"), "logits.npy"))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        # etc info says the same without running, and the text names the ranges.
        info = json.loads(self.etc("info", portable, "--runtime-delegate", "xnnpack", "--json").stdout)
        self.assertEqual(info["runtime_delegate"]["ranges"], report["ranges"])
        self.assertIn("load-time delegate xnnpack:", self.etc("info", portable, "--runtime-delegate", "xnnpack").stdout)
        proc = self.etc("run", portable, "--random-inputs", "--runtime-delegate", "tpu", code=1)
        self.assertIn("'tpu'", proc.stderr)
        self.assertIn("known: xnnpack", proc.stderr)

    def test_portable_fallback_runs_where_the_backend_cannot(self):
        model = os.path.join(EXAMPLES, "mini_cnn.onnx")
        portable, plain, kept = self.path("p.etp"), self.path("x.etp"), self.path("f.etp")
        self.etc("preprocess", model, "-o", portable)
        self.etc("preprocess", model, "-o", plain, "--backend", "xnnpack")
        self.etc("preprocess", model, "-o", kept, "--backend", "xnnpack", "--fallback", "portable")
        info = json.loads(self.etc("info", kept, "--json").stdout)
        self.assertEqual(info["fallbacks"]["delegate_calls"], 1)
        self.assertGreater(info["fallbacks"]["instructions"], 5)
        self.assertGreater(info["fallbacks"]["constant_bytes"], 0)
        self.assertGreater(info["fallback_arena_bytes"], 0)
        self.assertIn("with a portable fallback", self.etc("info", kept).stdout)
        self.assertEqual(json.loads(self.etc("info", plain, "--json").stdout)["fallbacks"]["delegate_calls"], 0)
        image = self.path("image.npy")
        np.save(image, np.random.default_rng(7).standard_normal((1, 3, 64, 64)).astype(np.float32))
        self.etc("run", portable, "--input", f"image={image}", "--output-dir", self.path("o_p"))
        proc = self.etc("run", kept, "--input", f"image={image}", "--output-dir", self.path("o_f"),
                        "--disable-backend", "xnnpack")
        self.assertIn("backend 'xnnpack', which is disabled", proc.stderr)
        self.assertIn("portable fallback runs instead", proc.stderr)
        out = os.listdir(self.path("o_p"))[0]
        np.testing.assert_array_equal(np.load(os.path.join(self.path("o_f"), out)),
                                      np.load(os.path.join(self.path("o_p"), out)))
        # With the backend, the delegate runs and nothing is said.
        proc = self.etc("run", kept, "--input", f"image={image}")
        self.assertNotIn("fallback", proc.stderr)
        # Without a fallback the program cannot run there, and says how to make one that can.
        proc = self.etc("run", plain, "--input", f"image={image}", "--disable-backend", "xnnpack", code=1)
        self.assertIn("--fallback portable", proc.stderr)
        proc = self.etc("preprocess", model, "-o", self.path("n.etp"), "--fallback", "portable", code=1)
        self.assertIn("needs --backend", proc.stderr)
        self.assertFalse(os.path.exists(self.path("n.etp")))

    def test_onednn_programs_plain_and_prepacked_run_like_the_portable_one(self):
        listing = json.loads(self.etc("backends", "--json").stdout)["backends"]
        if not any(b["name"] == "onednn" and b["runtime"] and b["available"] for b in listing):
            self.skipTest("this build cannot run the oneDNN backend")
        model = os.path.join(EXAMPLES, "mini_cnn.onnx")
        image = self.path("image.npy")
        np.save(image, np.random.default_rng(3).standard_normal((1, 3, 64, 64)).astype(np.float32))
        self.etc("preprocess", model, "-o", self.path("p.etp"))
        self.etc("run", self.path("p.etp"), "--input", f"image={image}", "--output-dir", self.path("o_p"))
        out = os.listdir(self.path("o_p"))[0]
        reference = np.load(os.path.join(self.path("o_p"), out))
        for name, specs in (("plain", []), ("packed", ["--compile-spec", "onednn:prepack=on"])):
            prog = self.path(name + ".etp")
            self.etc("preprocess", model, "-o", prog, "--backend", "onednn", *specs)
            for threads in ("1", "2"):
                proc = self.etc("-v", "run", prog, "--input", f"image={image}", "--output-dir", self.path(name + threads),
                                "--threads", threads)
                self.assertIn("backend 'onednn') initialised", proc.stderr)
                got = np.load(os.path.join(self.path(name + threads), out))
                np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-5 * np.abs(reference).max())
        self.assertGreater(os.path.getsize(self.path("packed.etp")), 0)
        proc = self.etc("preprocess", model, "-o", self.path("bad.etp"), "--backend", "onednn",
                        "--compile-spec", "onednn:prepack=maybe", code=1)
        self.assertIn("prepack='maybe' (expected on, off)", proc.stderr)
        self.assertFalse(os.path.exists(self.path("bad.etp")))

    def test_several_backends_are_planned_by_cost_unless_priority_is_asked(self):
        def partitions(*extra):
            report = json.loads(self.etc("partition", MIXED, "--backend", "demo", "--backend", "xnnpack",
                                         "--format", "json", *extra).stdout)
            return len(report["partitions"])
        cost, priority = partitions(), partitions("--assign", "priority")
        self.assertLess(cost, priority)
        self.etc("partition", MIXED, "--backend", "demo", "--assign", "first", code=2)

    def test_compile_specs_reach_the_program_and_the_runtime(self):
        prog = self.path("limited.etp")
        self.etc("preprocess", MIXED, "--backend", "demo", "--compile-spec", "demo:max_input_elements=100",
                 "-o", prog)
        info = json.loads(self.etc("info", prog, "--json").stdout)
        self.assertEqual(info["delegates"][0]["compile_specs"], {"max_input_elements": "100"})
        image = self.path("image.npy")
        np.save(image, np.zeros((1, 3, 16, 16), np.float32))
        proc = self.etc("run", prog, "--input", f"image={image}", "--output-dir", self.path("o"), code=1)
        self.assertIn("100", proc.stderr)
        self.assertIn("demo", proc.stderr)

    def two_convolutions(self, rng):
        """convs.onnx: a 3x3 convolution 64 -> 64 at 28x28, then a 1x1 one, weights from rng."""
        from onnx import TensorProto, helper, numpy_helper
        w3 = numpy_helper.from_array(rng.standard_normal((64, 64, 3, 3)).astype(np.float32), "w3")
        w1 = numpy_helper.from_array(rng.standard_normal((64, 64, 1, 1)).astype(np.float32), "w1")
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w3"], ["h"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["h", "w1"], ["y"])],
            "convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 28, 28])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 28, 28])], [w3, w1])
        model = self.path("convs.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
        return model

    def test_preprocess_says_what_the_delegate_weights_are(self):
        # A 3x3 convolution Winograd pays for (64 -> 64 at 28x28), then a
        # 1x1 one the native kernel takes: one filter of each layout.
        rng = np.random.default_rng(5)
        model = self.two_convolutions(rng)
        # Plain: both convolutions' zero biases; the 1x1 filter in two
        # 32-channel panels (32 biases, then 64 x 32 weights each: 16.6 kB),
        # and the 3x3 one too (576 rows a panel: 147.7 kB), for the direct
        # kernel where Winograd does not pay; the 3x3 one transformed as
        # well: 36 points of such panels. Under prepack=panels the 3x3
        # filter stays plain (init transforms it).
        plain, panels = (64 * 64 * 9 + 2 * 64) * 4, 2 * (32 + 64 * 32) * 4
        out = self.etc("preprocess", model, "--backend", "xnnpack", "-o", self.path("a.etp")).stdout
        self.assertIn("delegate 0 (xnnpack) weights: 0.5 kB plain (2), 164.4 kB packed for the native kernel (2), "
                      "599.0 kB transformed for Winograd (1)", out)
        summary = json.loads(self.etc("preprocess", model, "--backend", "xnnpack", "--compile-spec",
                                      "xnnpack:prepack=panels", "-o", self.path("b.etp"), "--json").stdout)
        layouts = {w["layout"]: (w["tensors"], w["bytes"]) for w in summary["delegate_weights"]}
        self.assertEqual(layouts, {"plain": (3, plain), "packed for the native kernel": (1, panels)})
        self.assertGreaterEqual(os.path.getsize(self.path("a.etp")) - os.path.getsize(self.path("b.etp")),
                                36 * panels)
        # Both run alike (the transform ahead of time gives the runtime's bits).
        x = self.path("x.npy")
        np.save(x, rng.standard_normal((1, 64, 28, 28)).astype(np.float32))
        for name in ("a", "b"):
            self.etc("run", self.path(name + ".etp"), "--input", f"x={x}", "--output-dir", self.path(name))
        np.testing.assert_array_equal(np.load(self.path("a/y.npy")), np.load(self.path("b/y.npy")))

    def test_run_reports_the_delegates_activations_beside_the_arena(self):
        model = self.two_convolutions(np.random.default_rng(6))
        tensor = 64 * 28 * 28 * 4

        def run(prog, *extra):
            return json.loads(self.etc("run", prog, "--random-inputs", "--json", *extra).stdout)

        # XNNPACK without Winograd: x turned to NHWC, h between the
        # convolutions and y before it is turned back, beside the program's
        # arena of x and y.
        self.etc("preprocess", model, "--backend", "xnnpack", "--compile-spec", "xnnpack:winograd=off",
                 "-o", self.path("x.etp"))
        for threads in ("1", "2"):
            j = run(self.path("x.etp"), "--threads", threads)
            self.assertEqual(j["arena_bytes"], 2 * tensor)
            self.assertEqual(j["delegate_activations"], [{"backend": "xnnpack", "activation_bytes": 3 * tensor}])
            self.assertEqual(j["delegate_activation_bytes"], 3 * tensor)
        self.assertIn(f"memory: arena {2 * tensor} bytes, delegates' activations {3 * tensor} bytes\n",
                      self.etc("run", self.path("x.etp"), "--random-inputs").stdout)
        # With Winograd on the 3x3 layer, its scratch too.
        self.etc("preprocess", model, "--backend", "xnnpack", "-o", self.path("w.etp"))
        self.assertGreater(run(self.path("w.etp"), "--threads", "1")["delegate_activation_bytes"], 3 * tensor)
        # Portable kernels hold none of their own; a load-time delegate says what it holds.
        self.etc("preprocess", model, "-o", self.path("p.etp"))
        j = run(self.path("p.etp"))
        self.assertEqual((j["delegate_activations"], j["delegate_activation_bytes"]), ([], 0))
        self.assertIn(f"memory: arena {j['arena_bytes']} bytes\n", self.etc("run", self.path("p.etp"),
                                                                         "--random-inputs").stdout)
        j = run(self.path("p.etp"), "--runtime-delegate", "xnnpack", "--threads", "1")
        self.assertEqual([d["backend"] for d in j["delegate_activations"]], ["xnnpack"])
        self.assertGreater(j["delegate_activation_bytes"], 3 * tensor)
        # The demo backend does not say: the total is unknown, not 0.
        self.etc("preprocess", MIXED, "--backend", "demo", "-o", self.path("d.etp"))
        j = run(self.path("d.etp"))
        self.assertEqual([d["activation_bytes"] for d in j["delegate_activations"]], [None, None])
        self.assertIsNone(j["delegate_activation_bytes"])
        self.assertIn("delegates' activations unknown", self.etc("run", self.path("d.etp"), "--random-inputs").stdout)
        listing = json.loads(self.etc("backends", "--json").stdout)["backends"]
        if any(b["name"] == "onednn" and b["runtime"] and b["available"] for b in listing):
            # oneDNN's arena: the activations and its primitives' scratchpads.
            self.etc("preprocess", model, "--backend", "onednn", "-o", self.path("o.etp"))
            j = run(self.path("o.etp"))
            self.assertGreaterEqual(j["delegate_activation_bytes"], tensor)
            self.assertEqual(j["delegate_activations"][0]["activation_bytes"], j["delegate_activation_bytes"])

    def test_preprocess_packs_recurrent_weights_ahead_of_time_unless_told_not_to(self):
        # A bidirectional LSTM, input 16, hidden 40: W [2, 160, 16], R [2, 160, 40];
        # packed, each direction's 160 rows take 160 columns (a multiple of 16).
        from onnx import TensorProto, helper, numpy_helper
        rng = np.random.default_rng(3)
        w = numpy_helper.from_array(rng.standard_normal((2, 160, 16)).astype(np.float32) * 0.2, "w")
        r = numpy_helper.from_array(rng.standard_normal((2, 160, 40)).astype(np.float32) * 0.2, "r")
        graph = helper.make_graph(
            [helper.make_node("LSTM", ["x", "w", "r"], ["y"], hidden_size=40, direction="bidirectional")],
            "lstm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [12, 1, 16])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [12, 2, 1, 40])], [w, r])
        model = self.path("lstm.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]).SerializeToString())
        packed_bytes = (2 * 160 * 16 + 2 * 160 * 40) * 4
        out = self.etc("preprocess", model, "-o", self.path("a.etp")).stdout
        self.assertIn("LSTM/GRU weights packed ahead of time: 71.7 kB (2; --prepack none leaves them out)", out)
        summary = json.loads(self.etc("preprocess", model, "--prepack", "none", "-o", self.path("b.etp"),
                                      "--json").stdout)
        self.assertEqual(summary["prepacked_rnn_weights"], {"tensors": 0, "bytes": 0})
        self.assertGreaterEqual(os.path.getsize(self.path("a.etp")) - os.path.getsize(self.path("b.etp")),
                                packed_bytes)
        self.etc("preprocess", model, "--prepack", "all", "-o", self.path("c.etp"), code=2)
        self.assertFalse(os.path.exists(self.path("c.etp")))
        x = self.path("x.npy")
        np.save(x, rng.standard_normal((12, 1, 16)).astype(np.float32))
        for name in ("a", "b"):
            self.etc("run", self.path(name + ".etp"), "--input", f"x={x}", "--output-dir", self.path(name))
        np.testing.assert_array_equal(np.load(self.path("a/y.npy")), np.load(self.path("b/y.npy")))

    def test_a_qdq_model_runs_its_convolution_on_the_backend_with_float_weights(self):
        # QuantizeLinear / DequantizeLinear as quantisation tools write them:
        # int8 weights per output channel, uint8 activations per tensor.
        from onnx import TensorProto, helper, numpy_helper
        rng = np.random.default_rng(11)
        w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
        w_scale = (np.abs(w).reshape(8, -1).max(axis=1) / 127).astype(np.float32)
        w_q = np.clip(np.rint(w / w_scale[:, None, None, None]), -127, 127).astype(np.int8)
        consts = [numpy_helper.from_array(w_q, "w_q"), numpy_helper.from_array(w_scale, "w_scale"),
                  numpy_helper.from_array(np.zeros(8, np.int8), "w_zp"),
                  numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
                  numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
                  numpy_helper.from_array(np.array(0.05, np.float32), "y_scale"),
                  numpy_helper.from_array(np.array(0, np.uint8), "y_zp")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="q_x"),
                 helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"], name="dq_x"),
                 helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["wd"], name="dq_w", axis=0),
                 helper.make_node("Conv", ["xd", "wd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c"], ["r"], name="relu"),
                 helper.make_node("QuantizeLinear", ["r", "y_scale", "y_zp"], ["yq"], name="q_y"),
                 helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"], name="dq_y")]
        graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 10, 10])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])], consts)
        model = self.path("qdq.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
        report = json.loads(self.etc("partition", model, "--backend", "xnnpack", "--format", "json").stdout)
        by_name = {n["onnx_name"]: n for n in report["nodes"]}
        self.assertEqual(by_name["conv"]["backend"], "xnnpack")  # its weight's DequantizeLinear folded
        self.assertNotIn("dq_w", by_name)
        # A quantise-dequantise pair stays in float32: no cast to uint8 and back.
        pairs = [n for n in report["nodes"] if n["onnx_name"] in ("q_x", "dq_x", "q_y", "dq_y")]
        self.assertNotIn("cast", [n["edge_op"] for n in pairs])
        self.assertEqual({n["backend"] for n in pairs}, {"xnnpack"})
        self.assertEqual(report["summary"]["partitions"], 1)
        x = rng.uniform(-2.5, 2.5, (1, 16, 10, 10)).astype(np.float32)
        np.save(self.path("x.npy"), x)
        self.etc("preprocess", model, "--backend", "xnnpack", "-o", self.path("qdq.etp"))
        self.etc("run", self.path("qdq.etp"), "--input", f"x={self.path('x.npy')}", "--output-dir", self.path("out"))
        got = np.load(self.path("out/y.npy"))
        # The ONNX reference, in float64 where it does not round.
        xd = (np.clip(np.rint(x / np.float32(0.02)) + 128, 0, 255) - 128) * 0.02
        wd = w_q.astype(np.float64) * w_scale[:, None, None, None]
        padded = np.pad(xd.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        conv = np.zeros((1, 8, 10, 10))
        for i in range(3):
            for j in range(3):
                conv += np.einsum("oc,nchw->nohw", wd[:, :, i, j], padded[:, :, i:i + 10, j:j + 10])
        want = np.clip(np.rint(np.maximum(conv, 0) / 0.05), 0, 255) * 0.05
        # Only values a rounding step apart may land on the other level.
        self.assertLessEqual(np.abs(got - want).max(), 0.05 + 1e-6)
        self.assertGreater(np.mean(np.abs(got - want) < 1e-6), 0.99)
        self.assertEqual(len(np.unique(np.rint(got / 0.05))), len(np.unique(got)))

    def test_quantized_operators_run_on_float_kernels_with_their_weights_folded(self):
        # A QOperator model (QLinearConv with int8 weights per output channel
        # and an int32 bias) and a dynamically quantized MatMul
        # (DynamicQuantizeLinear, MatMulInteger, Cast, Mul), as quantisation
        # tools write them.
        from onnx import TensorProto, helper, numpy_helper
        rng = np.random.default_rng(12)
        w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
        w_scale = (np.abs(w).reshape(8, -1).max(axis=1) / 127).astype(np.float32)
        w_q = np.clip(np.rint(w / w_scale[:, None, None, None]), -127, 127).astype(np.int8)
        bias = rng.integers(-2000, 2000, 8).astype(np.int32)
        m_q = rng.integers(-127, 128, (40, 12)).astype(np.int8)
        consts = [numpy_helper.from_array(w_q, "w_q"), numpy_helper.from_array(w_scale, "w_scale"),
                  numpy_helper.from_array(np.zeros(8, np.int8), "w_zp"), numpy_helper.from_array(bias, "bias"),
                  numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
                  numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
                  numpy_helper.from_array(np.array(0.05, np.float32), "y_scale"),
                  numpy_helper.from_array(np.array(3, np.uint8), "y_zp"),
                  numpy_helper.from_array(m_q, "m_q"), numpy_helper.from_array(np.array(0.01, np.float32), "m_scale")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="q_x"),
                 helper.make_node("QLinearConv", ["xq", "x_scale", "x_zp", "w_q", "w_scale", "w_zp", "y_scale", "y_zp",
                                                  "bias"], ["yq"], name="qconv", pads=[1, 1, 1, 1]),
                 helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"], name="dq_y"),
                 helper.make_node("DynamicQuantizeLinear", ["v"], ["vq", "v_scale", "v_zp"], name="dq_v"),
                 helper.make_node("MatMulInteger", ["vq", "m_q", "v_zp"], ["acc"], name="mmi"),
                 helper.make_node("Cast", ["acc"], ["acc_f"], name="cast", to=TensorProto.FLOAT),
                 helper.make_node("Mul", ["v_scale", "m_scale"], ["s"], name="scales"),
                 helper.make_node("Mul", ["acc_f", "s"], ["z"], name="rescale")]
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 10, 10]),
                  helper.make_tensor_value_info("v", TensorProto.FLOAT, [6, 40])]
        outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10]),
                   helper.make_tensor_value_info("z", TensorProto.FLOAT, [6, 12])]
        model = self.path("qop.onnx")
        with open(model, "wb") as f:
            f.write(helper.make_model(helper.make_graph(nodes, "qop", inputs, outputs, consts),
                                      opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
        report = json.loads(self.etc("partition", model, "--backend", "xnnpack", "--format", "json").stdout)
        edge = {(n["onnx_name"], n["edge_op"]): n["backend"] for n in report["nodes"]}
        self.assertEqual(edge[("qconv", "conv")], "xnnpack")  # its weight dequantized and folded
        self.assertEqual(edge[("mmi", "matmul")], "xnnpack")
        x = rng.uniform(-2.5, 2.5, (1, 16, 10, 10)).astype(np.float32)
        v = rng.standard_normal((6, 40)).astype(np.float32)
        np.save(self.path("x.npy"), x)
        np.save(self.path("v.npy"), v)
        self.etc("preprocess", model, "--backend", "xnnpack", "-o", self.path("qop.etp"))
        self.etc("run", self.path("qop.etp"), "--input", f"x={self.path('x.npy')}", "--input",
                 f"v={self.path('v.npy')}", "--output-dir", self.path("out"))
        # The ONNX reference: integer accumulation, then requantisation.
        xq = np.clip(np.rint(x / np.float32(0.02)) + 128, 0, 255).astype(np.int64) - 128
        padded = np.pad(xq, ((0, 0), (0, 0), (1, 1), (1, 1)))
        acc = np.zeros((1, 8, 10, 10), np.int64) + bias[None, :, None, None]
        for i in range(3):
            for j in range(3):
                acc += np.einsum("oc,nchw->nohw", w_q[:, :, i, j].astype(np.int64), padded[:, :, i:i + 10, j:j + 10])
        yq = np.clip(np.rint(acc * (0.02 * w_scale.astype(np.float64))[None, :, None, None] / 0.05) + 3, 0, 255)
        want = (yq - 3) * np.float32(0.05)
        got = np.load(self.path("out/y.npy"))
        self.assertLessEqual(np.abs(got - want).max(), 0.05 + 1e-6)
        self.assertGreater(np.mean(np.abs(got - want) < 1e-6), 0.99)
        lo, hi = min(v.min(), 0), max(v.max(), 0)
        v_scale = np.float32((hi - lo) / np.float32(255))
        v_zp = np.clip(np.rint(-lo / v_scale), 0, 255)
        vq = np.clip(np.rint(v / v_scale) + v_zp, 0, 255)
        want_z = ((vq - v_zp).astype(np.int64) @ m_q.astype(np.int64)) * (np.float64(v_scale) * 0.01)
        got_z = np.load(self.path("out/z.npy"))
        self.assertLess(np.abs(got_z - want_z).max(), 1e-5 * np.abs(want_z).max())

    def test_backends_lists_the_demo_backend(self):
        listing = json.loads(self.etc("backends", "--json").stdout)["backends"]
        demo = [b for b in listing if b["name"] == "demo"]
        self.assertEqual(len(demo), 1)
        self.assertTrue(demo[0]["partitioner"] and demo[0]["preprocess"] and demo[0]["runtime"])
        self.assertTrue(demo[0]["available"])
        self.assertIn("demo", self.etc("backends").stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)

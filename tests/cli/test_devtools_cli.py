#!/usr/bin/python3
"""`etc run --etdump/--profile/--debug-outputs` and `etc debug`, as users and CI
scripts call them.

    ETC_BIN=build/tools/etc /usr/bin/python3 tests/cli/test_devtools_cli.py
"""
import json
import os
import subprocess
import unittest

import numpy as np

from cli_support import ETC, HERE, TempDirCase

EXAMPLES = os.path.join(HERE, "..", "models", "example")
MIXED = os.path.join(EXAMPLES, "mixed_ops.onnx")
CNN = os.path.join(EXAMPLES, "mini_cnn.onnx")


class DevtoolsCli(TempDirCase):
    def etc(self, *args, code=0):
        proc = subprocess.run([ETC, *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, code, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc

    def compile(self, model, *backends):
        out = self.path(os.path.basename(model).replace(".onnx", ".etp"))
        flags = [f for b in backends for f in ("--backend", b)]
        self.etc("preprocess", model, *flags, "-o", out)
        return out

    def test_run_records_every_timed_run_into_an_etdump(self):
        program = self.compile(MIXED, "demo")
        etdump = self.path("mixed.etdump")
        summary = json.loads(self.etc("run", program, "--random-inputs", "--iterations", "3", "--warmup", "2",
                                      "--etdump", etdump, "--json").stdout)
        self.assertEqual(summary["etdump"]["file"], etdump)
        self.assertEqual(summary["etdump"]["runs"], 3)  # warm-up runs are not recorded
        self.assertEqual(summary["etdump"]["dropped_events"], 0)
        self.assertEqual(summary["etdump"]["rejected_events"], 0)
        with open(etdump, "rb") as f:
            self.assertEqual(f.read(12)[8:12], b"ETD1")

    def test_profile_and_debug_outputs_need_an_etdump(self):
        program = self.compile(MIXED, "demo")
        for flag in ("--profile", "--debug-outputs"):
            proc = self.etc("run", program, "--random-inputs", flag, code=2)
            self.assertIn("--etdump", proc.stderr)

    def test_a_small_event_buffer_drops_and_says_so(self):
        program = self.compile(MIXED, "demo")
        proc = self.etc("run", program, "--random-inputs", "--iterations", "4", "--etdump", self.path("x.etdump"),
                        "--etdump-events", "5")
        self.assertIn("dropped", proc.stdout)
        self.assertIn("--etdump-events", proc.stdout)

    def test_unwritable_etdump_is_an_error_and_leaves_nothing(self):
        program = self.compile(MIXED, "demo")
        missing_dir = self.path("no/such/dir/x.etdump")
        proc = self.etc("run", program, "--random-inputs", "--etdump", missing_dir, code=1)
        self.assertIn("x.etdump", proc.stderr)
        self.assertFalse(os.path.exists(missing_dir))

    def test_debug_compares_every_node_of_a_demo_model(self):
        report = json.loads(self.etc("debug", MIXED, "--backend", "demo", "--json").stdout)
        self.assertIsNone(report["first_over_tolerance"])
        self.assertEqual(report["silent_delegates"], [])
        by_name = {n["onnx_node"]: n for n in report["nodes"]}
        for name in ("residual_add", "relu", "sin", "cos", "sub"):
            self.assertEqual(by_name[name]["placement"], "demo", name)
            self.assertTrue(by_name[name]["compared"], name)
            self.assertLessEqual(by_name[name]["relative_error"], 1e-5, name)
        # The demo backend fuses the multiply into the add: one output for both.
        self.assertEqual(by_name["residual_add"]["covers"], ["gate_square", "residual_add"])
        self.assertEqual(by_name["conv"]["placement"], "portable")

    def test_debug_reads_given_inputs_and_prints_a_table(self):
        x = np.random.default_rng(0).random((1, 3, 64, 64), dtype=np.float32)
        np.save(self.path("image.npy"), x)
        proc = self.etc("debug", CNN, "--backend", "xnnpack", "--input", "image=" + self.path("image.npy"))
        self.assertIn("every compared node is within the tolerance", proc.stdout)
        self.assertIn("pw_conv", proc.stdout)
        self.assertNotIn("warning", proc.stdout)

    def test_debug_with_a_zero_tolerance_fails_like_a_gate_where_results_differ(self):
        # XNNPACK sums in another order than the portable kernels: some node
        # differs in the last bits, and a zero tolerance must catch it.
        proc = self.etc("debug", CNN, "--backend", "xnnpack", "--tolerance", "0", "--json", code=3)
        report = json.loads(proc.stdout)
        self.assertIsNotNone(report["first_over_tolerance"])

    def test_debug_refuses_bad_input_files(self):
        with open(self.path("bad.npy"), "wb") as f:
            f.write(b"not a tensor")
        proc = self.etc("debug", MIXED, "--backend", "demo", "--input", "image=" + self.path("bad.npy"), code=1)
        self.assertIn("bad.npy", proc.stderr)
        proc = self.etc("debug", MIXED, "--backend", "nosuch", code=1)
        self.assertIn("nosuch", proc.stderr)


if __name__ == "__main__":
    unittest.main()

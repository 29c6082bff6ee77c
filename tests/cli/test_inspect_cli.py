#!/usr/bin/python3
"""`etc inspect`: an ETDump recorded by `etc run --etdump` joined with its
program, in each format, and every way the pair can be wrong.

    ETC_BIN=build/tools/etc /usr/bin/python3 tests/cli/test_inspect_cli.py
"""
import json
import os
import subprocess
import unittest

from cli_support import ETC, HERE, TempDirCase

EXAMPLES = os.path.join(HERE, "..", "models", "example")
MIXED = os.path.join(EXAMPLES, "mixed_ops.onnx")
CNN = os.path.join(EXAMPLES, "mini_cnn.onnx")


class InspectCli(TempDirCase):
    def etc(self, *args, code=0):
        proc = subprocess.run([ETC, *args], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, code, f"exit {proc.returncode}\nstdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc

    def record(self, model, backend, *flags, iterations=3):
        program = self.path(os.path.basename(model).replace(".onnx", f".{backend}.etp"))
        self.etc("preprocess", model, "--backend", backend, "-o", program)
        etdump = program.replace(".etp", ".etdump")
        self.etc("run", program, "--random-inputs", "--iterations", str(iterations), "--etdump", etdump, *flags)
        return program, etdump

    def test_xnnpack_profile_attributes_the_delegate_to_onnx_nodes(self):
        program, etdump = self.record(CNN, "xnnpack", "--profile")
        report = json.loads(self.etc("inspect", program, "--etdump", etdump, "--format", "json").stdout)
        self.assertEqual(report["runs"], 3)
        names = {row["name"] for row in report["rows"]}
        self.assertIn("pw_conv", names)
        self.assertIn("delegate 0 (xnnpack) overhead", names)
        pw = next(row for row in report["rows"] if row["name"] == "pw_conv")
        self.assertEqual(pw["placement"], "xnnpack")
        self.assertEqual(pw["calls"], 3)
        self.assertEqual(pw["metadata"]["xnn_node"], "Convolution2d")
        self.assertLessEqual(pw["min_us"], pw["p50_us"])
        self.assertLessEqual(pw["p50_us"], pw["max_us"])
        summary = report["summary"]
        self.assertGreater(summary["attributed_share"], 0.5)
        self.assertLessEqual(summary["attributed_delegate_us"], summary["delegate_us"])
        # Rows (node time plus overhead) add up to the whole run.
        total = sum(row["total_us"] for row in report["rows"])
        self.assertAlmostEqual(total, summary["total_us"], delta=summary["total_us"] * 1e-6 + 1e-3)

    def test_load_time_delegate_events_name_their_onnx_nodes(self):
        # A portable program, XNNPACK taken at load time: the events of its
        # backend resolve through the map the ETDump keeps for it.
        program = self.path("cnn.portable.etp")
        self.etc("preprocess", CNN, "-o", program)
        etdump = self.path("cnn.loaded.etdump")
        self.etc("run", program, "--random-inputs", "--iterations", "2", "--etdump", etdump, "--profile",
                 "--runtime-delegate", "xnnpack")
        report = json.loads(self.etc("inspect", program, "--etdump", etdump, "--format", "json").stdout)
        pw = next(row for row in report["rows"] if row["name"] == "pw_conv")
        self.assertEqual(pw["placement"], "xnnpack")
        self.assertEqual(pw["calls"], 2)
        self.assertEqual(pw["metadata"]["xnn_node"], "Convolution2d")
        self.assertIn("delegate 0 (xnnpack) overhead", {row["name"] for row in report["rows"]})
        self.assertGreater(report["summary"]["attributed_share"], 0.5)
        # Without the delegate the same program's ETDump has no such delegate.
        plain = self.path("cnn.plain.etdump")
        self.etc("run", program, "--random-inputs", "--etdump", plain, "--profile")
        report = json.loads(self.etc("inspect", program, "--etdump", plain, "--format", "json").stdout)
        self.assertEqual(next(row for row in report["rows"] if row["name"] == "pw_conv")["placement"], "portable")

    def test_demo_string_identifiers_and_portable_nodes(self):
        program, etdump = self.record(MIXED, "demo")
        report = json.loads(self.etc("inspect", program, "--etdump", etdump, "--format", "json",
                                     "--sort", "order").stdout)
        placements = {row["placement"] for row in report["rows"]}
        self.assertIn("demo", placements)
        self.assertIn("portable", placements)
        demo_rows = [row for row in report["rows"] if row["placement"] == "demo" and row["kind"] == "node"]
        self.assertTrue(demo_rows)
        self.assertTrue(all("elements" in row["metadata"] for row in demo_rows))
        self.assertFalse([row for row in report["rows"] if row["kind"] == "unknown identifier"])

    def test_table_tsv_and_chrome_trace(self):
        program, etdump = self.record(CNN, "xnnpack", "--profile", iterations=2)
        table = self.etc("inspect", program, "--etdump", etdump).stdout
        self.assertIn("ONNX node(s)", table)
        self.assertIn("delegate time attributed to ONNX nodes:", table)
        tsv = self.etc("inspect", program, "--etdump", etdump, "--format", "tsv").stdout.splitlines()
        self.assertTrue(tsv[0].startswith("name\top_type\tplacement"))
        self.assertTrue(all(len(line.split("\t")) == 12 for line in tsv))
        out = self.path("trace.json")
        self.etc("inspect", program, "--etdump", etdump, "--format", "chrome-trace", "-o", out)
        with open(out) as f:
            trace = json.load(f)
        complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
        calls = [e for e in complete if e["cat"] == "delegate call"]
        inside = [e for e in complete if e["cat"] == "xnnpack"]
        self.assertEqual(len(calls), 2)
        self.assertTrue(inside)
        for e in inside:
            self.assertTrue(any(c["ts"] <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + 1e-6 for c in calls),
                            e)

    def test_an_etdump_of_another_program_is_refused(self):
        program, _ = self.record(CNN, "xnnpack")
        _, other = self.record(MIXED, "demo")
        proc = self.etc("inspect", program, "--etdump", other, code=1)
        self.assertIn(os.path.basename(other), proc.stderr)
        self.assertIn("recorded from program", proc.stderr)

    def test_bad_files_are_clear_errors_and_leave_no_output(self):
        program, etdump = self.record(CNN, "xnnpack")
        with open(etdump, "rb") as f:
            data = f.read()
        truncated = self.path("truncated.etdump")
        with open(truncated, "wb") as f:
            f.write(data[: len(data) // 2])
        out = self.path("never.txt")
        for bad in (truncated, self.path("missing.etdump"), program):
            proc = self.etc("inspect", program, "--etdump", bad, "-o", out, code=1)
            self.assertIn(os.path.basename(bad), proc.stderr)
            self.assertNotIn("Traceback", proc.stderr)
            self.assertFalse(os.path.exists(out))
        proc = self.etc("inspect", etdump, "--etdump", etdump, code=1)
        self.assertIn(os.path.basename(etdump), proc.stderr)
        self.etc("inspect", program, "--etdump", etdump, "--format", "xml", code=2)


if __name__ == "__main__":
    unittest.main()

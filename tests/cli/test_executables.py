#!/usr/bin/python3
"""etc and etc-compiler: `etc` runs and describes programs without loading
ONNX or protobuf and hands every other command line to `etc-compiler` beside
it (tools/etc/cli_setup.h).

    ETC_BIN=build/tools/etc /usr/bin/python3 tests/cli/test_executables.py
"""
import json
import os
import shutil
import subprocess
import unittest

import numpy as np
from onnx import numpy_helper

from cli_support import ETC, HERE, TempDirCase

EXAMPLES = os.path.join(HERE, "..", "models", "example")
MINI_CNN = os.path.join(EXAMPLES, "mini_cnn.onnx")
COMPILER = os.path.join(os.path.dirname(ETC), "etc-compiler")


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


class Executables(TempDirCase):
    def setUp(self):
        super().setUp()
        self.program = self.path("mini.etp")
        proc = run([ETC, "preprocess", MINI_CNN, "--backend", "xnnpack", "-o", self.program])
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_etc_does_not_link_onnx_or_protobuf_and_etc_compiler_does(self):
        def libraries(binary):
            proc = run(["ldd", binary])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return proc.stdout
        self.assertNotIn("libonnx", libraries(ETC))
        self.assertNotIn("libprotobuf", libraries(ETC))
        self.assertIn("libonnx", libraries(COMPILER))
        # oneDNN is loaded with its backend, when a program needs it; a
        # sanitizer build loads libdnnl at start (runtime/CMakeLists.txt: its
        # leak checker cannot read a dlopen'd libdnnl's thread-local storage).
        if "libasan" in libraries(ETC):
            self.assertIn("libdnnl", libraries(ETC))
        else:
            self.assertNotIn("libdnnl", libraries(ETC))

    def test_preprocess_compiles_the_same_with_its_own_allocator_settings_or_the_callers(self):
        # Without GLIBC_TUNABLES the compiling commands run again with glibc's
        # malloc tuned for large copies (cli_setup.h); a caller's own
        # setting (here: none at all) is kept. The program is the same.
        programs = []
        for tunables in (None, ""):
            env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
            if tunables is not None:
                env["GLIBC_TUNABLES"] = tunables
            for binary in (ETC, COMPILER):
                program = self.path(f"tuned-{len(programs)}.etp")
                proc = subprocess.run([binary, "preprocess", MINI_CNN, "--backend", "xnnpack", "-o", program],
                                      capture_output=True, text=True, timeout=300, env=env)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                with open(program, "rb") as f:
                    programs.append(f.read())
        self.assertTrue(all(p == programs[0] for p in programs))

    def onednn_program(self, *extra):
        program = self.path("mini-onednn.etp")
        proc = run([ETC, "preprocess", MINI_CNN, "--backend", "onednn", "-o", program, *extra])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return program

    def test_the_onednn_backend_is_loaded_from_its_library_where_etc_backend_dir_says(self):
        program = self.onednn_program()
        backends = os.path.join(os.path.dirname(os.path.dirname(ETC)), "backends")
        self.assertTrue(os.path.exists(os.path.join(backends, "libetc_onednn.so")))
        env = dict(os.environ, ETC_BACKEND_DIR=backends)
        proc = subprocess.run([ETC, "run", program, "--random-inputs"], capture_output=True, text=True,
                              timeout=300, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        empty = self.path("no-backends")
        os.mkdir(empty)
        env = dict(os.environ, ETC_BACKEND_DIR=empty)
        proc = subprocess.run([ETC, "run", program, "--random-inputs"], capture_output=True, text=True,
                              timeout=300, env=env)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("needs backend 'onednn'", proc.stderr)
        self.assertIn(os.path.join(empty, "libetc_onednn.so"), proc.stderr)
        # With a portable fallback the program runs anyway, and says so.
        fallback = self.onednn_program("--fallback", "portable")
        proc = subprocess.run([ETC, "run", fallback, "--random-inputs", "--json"], capture_output=True,
                              text=True, timeout=300, env=env)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("cannot load libetc_onednn.so", proc.stderr)
        self.assertIn("fallback", proc.stderr)

    def test_etc_alone_runs_programs_and_names_the_missing_compiler(self):
        alone = self.path("bin")
        os.mkdir(alone)
        shutil.copy(ETC, alone)
        etc = os.path.join(alone, os.path.basename(ETC))
        proc = run([etc, "run", self.program, "--random-inputs", "--json"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('"outputs"', proc.stdout)
        self.assertEqual(run([etc, "info", self.program]).returncode, 0)
        for args in (["preprocess", MINI_CNN, "-o", self.path("x.etp")], ["--help"], []):
            proc = run([etc, *args])
            self.assertEqual(proc.returncode, 1, args)
            self.assertIn(os.path.join(alone, "etc-compiler"), proc.stderr)
            self.assertIn("No such file", proc.stderr)
        self.assertFalse(os.path.exists(self.path("x.etp")))

    def input_name_and_shape(self):
        info = run([ETC, "info", self.program, "--json"])
        self.assertEqual(info.returncode, 0, info.stderr)
        first = json.loads(info.stdout)["inputs"][0]
        return first["name"], first["shape"]

    def test_global_options_before_run_are_skipped_with_their_values(self):
        name, shape = self.input_name_and_shape()
        np.save(self.path("x.npy"), np.zeros(shape, np.float32))  # more than 1 KiB
        flag = f"{name}={self.path('x.npy')}"
        # --max-file-bytes takes the next word: "run" is the subcommand, not "1k".
        proc = run([ETC, "-q", "--max-file-bytes", "1k", "run", self.program, "--input", flag])
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("x.npy", proc.stderr)
        self.assertIn("--max-file-bytes (1 KiB)", proc.stderr)
        proc = run([ETC, "-q", "--max-file-bytes=64M", "run", self.program, "--input", flag])
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_a_run_with_tensor_proto_inputs_gives_the_same_outputs_as_with_npy(self):
        name, shape = self.input_name_and_shape()
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        np.save(self.path("x.npy"), x)
        with open(self.path("x.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, name).SerializeToString())
        outputs = []
        for file in ("x.npy", "x.pb"):
            out = self.path("out-" + file)
            proc = run([ETC, "run", self.program, "--input", f"{name}={self.path(file)}", "--output-dir", out])
            self.assertEqual(proc.returncode, 0, proc.stderr)
            outputs.append([np.load(os.path.join(out, f)) for f in sorted(os.listdir(out))])
        self.assertEqual(len(outputs[0]), len(outputs[1]))
        for a, b in zip(*outputs):
            np.testing.assert_array_equal(a, b)

    def test_help_lists_every_command(self):
        proc = run([ETC, "--help"])
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for sub in ("partition", "preprocess", "run", "info", "backends", "inspect", "debug"):
            self.assertIn(sub, proc.stdout)


if __name__ == "__main__":
    unittest.main()

"""Programs are deterministic and carry their own integrity checks: the same
model and options give byte-identical programs whatever the folder, file
name, thread count of the machine or run; `etc info` prints a content hash
that follows the bytes; and a corrupted constant or delegate blob is caught
by `etc info --verify` and `etc run --verify`."""
import glob
import json
import os
import shutil
import subprocess
import unittest

from cli_support import ETC, HERE, TempDirCase

ROOT = os.path.join(HERE, "..", "..")
MODELS = sorted(glob.glob(os.path.join(ROOT, "tests", "models", "example", "*.onnx"))) + [
    m for m in (os.path.join(ROOT, "tests", "models", "fetched", f) for f in
                ("mobilenet_v2_op13.onnx", "transformer_encoder.onnx", "resnet18_op13.onnx", "lstm.onnx",
                 "gru.onnx"))
    if os.path.exists(m)]


class ProgramIdentity(TempDirCase):
    def etc(self, *args, one_cpu=False):
        prefix = ["taskset", "-c", "0"] if one_cpu and shutil.which("taskset") else []
        return subprocess.run([*prefix, ETC, *args], capture_output=True, text=True, timeout=300)

    def compile(self, model, out, *flags, one_cpu=False):
        proc = self.etc("preprocess", model, "-o", out, *flags, one_cpu=one_cpu)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(out, "rb") as f:
            return f.read()

    def info(self, program, *flags):
        proc = self.etc("info", program, "--json", *flags)
        return proc.returncode, (json.loads(proc.stdout) if proc.returncode == 0 else proc.stderr)

    def test_same_model_same_bytes_and_hash(self):
        self.assertGreaterEqual(len(MODELS), 2)
        for model in MODELS:
            for flags in ([], ["--backend", "xnnpack"], ["--backend", "demo", "--backend", "xnnpack"]):
                with self.subTest(model=os.path.basename(model), flags=flags):
                    # Another folder and file name, or one CPU instead of all, must not matter.
                    os.makedirs(self.path("elsewhere"), exist_ok=True)
                    copy = self.path("elsewhere/renamed.onnx")
                    shutil.copy(model, copy)
                    for data in glob.glob(os.path.join(os.path.dirname(model), "*.data")):
                        shutil.copy(data, self.path("elsewhere"))
                    first = self.compile(model, self.path("a.etp"), *flags)
                    second = self.compile(model, self.path("b.etp"), *flags, one_cpu=True)
                    self.assertEqual(first, second, "two compiles differ")
                    _, a = self.info(self.path("a.etp"))
                    _, b = self.info(self.path("b.etp"))
                    self.assertEqual(a["content_hash"], b["content_hash"])
                    self.assertRegex(a["content_hash"], "^[0-9a-f]{16}$")
                    self.compile(copy, self.path("c.etp"), *flags)
                    # Only the recorded source file name (and so the hash and size) may differ.
                    _, c = self.info(self.path("c.etp"))
                    self.assertEqual(c["source_model"], "renamed.onnx")
                    ignored = ("file", "file_bytes", "source_model", "content_hash")
                    self.assertEqual({k: v for k, v in c.items() if k not in ignored},
                                     {k: v for k, v in a.items() if k not in ignored})

    def test_content_hash_follows_the_bytes(self):
        model = MODELS[0]
        self.compile(model, self.path("a.etp"))
        _, a = self.info(self.path("a.etp"))
        data = bytearray(open(self.path("a.etp"), "rb").read())
        data[-1] ^= 0x01
        with open(self.path("b.etp"), "wb") as f:
            f.write(data)
        _, b = self.info(self.path("b.etp"))
        self.assertNotEqual(a["content_hash"], b["content_hash"])

    def flipped_copy(self, program, offset_from_end):
        data = bytearray(open(program, "rb").read())
        data[-offset_from_end] ^= 0x10
        bad = program.replace(".etp", "-flipped.etp")
        with open(bad, "wb") as f:
            f.write(data)
        return bad

    def test_a_corrupted_segment_is_caught_by_verify(self):
        model = os.path.join(ROOT, "tests", "models", "example", "mixed_ops.onnx")
        for flags, what in (([], "(constants)"), (["--backend", "xnnpack"], "xnnpack)")):
            with self.subTest(flags=flags):
                good = self.path("good.etp")
                self.compile(model, good, *flags)
                code, info = self.info(good, "--verify")
                self.assertEqual(code, 0, info)
                self.assertTrue(info["verified"])
                bad = self.flipped_copy(good, 8)  # inside the last segment
                code, message = self.info(bad, "--verify")
                self.assertEqual(code, 1)
                self.assertIn(bad, message)
                self.assertIn(what, message)
                self.assertIn("does not match its checksum", message)
                proc = self.etc("run", bad, "--random-inputs", "--verify")
                self.assertEqual(proc.returncode, 1)
                self.assertIn("does not match its checksum", proc.stderr)
                self.assertEqual(proc.stdout, "")
                # Without --verify the load does not read every byte: the flip goes unseen.
                self.assertEqual(self.etc("run", bad, "--random-inputs").returncode, 0)


if __name__ == "__main__":
    unittest.main()

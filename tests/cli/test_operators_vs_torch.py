#!/usr/bin/python3
"""Operators whose ONNX definitions follow PyTorch's, exported from PyTorch
and run by etc against PyTorch's own output: GridSample in every mode,
padding mode and corner alignment, with grid points outside [-1, 1]; the
trigonometric functions over their domains."""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

ETC = os.environ.get("ETC_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "tools", "etc"))


class OperatorsVsTorch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def etc(self, *args):
        proc = subprocess.run([ETC, *args], capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc

    def run_model(self, module, inputs, opset, backend=None):
        """Exports `module`, compiles it (with `backend` if given), runs it on
        `inputs`; returns etc's output and PyTorch's."""
        names = [f"in{i}" for i in range(len(inputs))]
        model = self.path("m.onnx")
        torch.onnx.export(module, tuple(torch.from_numpy(x) for x in inputs), model, input_names=names,
                          output_names=["out"], opset_version=opset)
        program = self.path("m.etp")
        self.etc("preprocess", model, "-o", program, *(["--backend", backend] if backend else []))
        flags = []
        for name, x in zip(names, inputs):
            np.save(self.path(name + ".npy"), x)
            flags += ["--input", f"{name}={self.path(name + '.npy')}"]
        self.etc("run", program, *flags, "--output-dir", self.path("out"))
        with torch.no_grad():
            want = module(*(torch.from_numpy(x) for x in inputs)).numpy()
        return np.load(self.path("out/out.npy")), want

    def test_grid_sample_in_every_mode_padding_and_alignment(self):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((2, 3, 5, 7)).astype(np.float32)
        # Points past the border on every side, some on pixel centres and edges.
        grid = rng.uniform(-1.4, 1.4, (2, 4, 6, 2)).astype(np.float32)
        grid[0, 0, :3] = [[-1, -1], [1, 1], [0, 0]]
        for mode in ("bilinear", "nearest", "bicubic"):
            for padding in ("zeros", "border", "reflection"):
                for align in (False, True):
                    with self.subTest(mode=mode, padding=padding, align_corners=align):
                        module = GridSample(mode, padding, align)
                        got, want = self.run_model(module, [x, grid], 16)
                        self.assertEqual(got.shape, (2, 3, 4, 6))
                        # Nearest may pick the other pixel at an exact tie.
                        close = np.abs(got - want) <= 1e-5 + 1e-5 * np.abs(want)
                        self.assertGreaterEqual(close.mean(), 0.99 if mode == "nearest" else 1.0,
                                                f"max diff {np.abs(got - want).max()}")

    def test_trigonometric_and_hyperbolic_functions(self):
        rng = np.random.default_rng(6)
        unit = rng.uniform(-0.99, 0.99, (4, 32)).astype(np.float32)
        wide = rng.uniform(-3, 3, (4, 32)).astype(np.float32)
        for backend in (None, "xnnpack"):
            with self.subTest(backend=backend):
                got, want = self.run_model(Trig(), [unit, wide], 13, backend)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


class GridSample(torch.nn.Module):
    def __init__(self, mode, padding, align):
        super().__init__()
        self.mode, self.padding, self.align = mode, padding, align

    def forward(self, x, grid):
        return torch.nn.functional.grid_sample(x, grid, mode=self.mode, padding_mode=self.padding,
                                               align_corners=self.align)


class Trig(torch.nn.Module):
    # The functions PyTorch exports as single ONNX ops at opset 13 (it
    # writes no Sinh, Cosh, Asinh, Acosh or Atanh; the conformance suite
    # checks those).
    def forward(self, unit, wide):
        return torch.stack([torch.sin(wide), torch.cos(wide), torch.tan(unit), torch.asin(unit),
                            torch.acos(unit), torch.atan(wide)])


if __name__ == "__main__":
    unittest.main(verbosity=2)

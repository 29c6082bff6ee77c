#!/usr/bin/python3
"""Exports the segmentation model class of the benchmark and end-to-end tests
with torch: torchvision's LR-ASPP on a MobileNetV3-Large backbone (21
classes, seeded weights with realistic BatchNorm statistics, opset 13) at
320x320, with a seeded input and PyTorch's output as reference. Its head
gates features by a global-average-pooled sigmoid and upsamples bilinearly
(half-pixel) twice: to the 1/8 feature map, then to the input size.

    /usr/bin/python3 tests/models/export_segmentation.py OUT_DIR

Writes OUT_DIR/lraspp.onnx, lraspp.input.npy, lraspp.reference.npy; existing
files are kept.
"""
import os
import sys

import numpy as np
import torch
import torchvision


class Logits(torch.nn.Module):
    """The model's 'out' entry alone (torchvision returns a dict)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)["out"]


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, "lraspp")
    if os.path.exists(base + ".onnx") and os.path.exists(base + ".reference.npy"):
        return
    torch.manual_seed(0)
    model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    model = Logits(model).eval()
    x = np.random.default_rng(4).standard_normal((1, 3, 320, 320)).astype(np.float32)
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
        torch.onnx.export(model, torch.from_numpy(x), base + ".onnx", opset_version=13, input_names=["input"],
                          output_names=["out"], do_constant_folding=True)
    np.save(base + ".input.npy", x)
    np.save(base + ".reference.npy", ref)
    print(f"wrote {base}.onnx")


if __name__ == "__main__":
    main()

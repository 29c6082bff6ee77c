#!/usr/bin/python3
"""Exports torchvision models to ONNX with seeded random weights, plus a seeded
input and PyTorch's output as reference data.

    /usr/bin/python3 tests/models/export_torchvision.py OUT_DIR [MODEL[@OPSET]]...

Writes OUT_DIR/<model>_op<opset>.onnx, OUT_DIR/<model>_op<opset>.input.npy and
OUT_DIR/<model>_op<opset>.reference.npy. Existing files are kept.
"""
import os
import sys

import numpy as np
import torch
import torchvision

DEFAULT = ["resnet18@13", "resnet18@17", "mobilenet_v2@13", "mobilenet_v2@17", "mobilenet_v3_small@13",
           "squeezenet1_1@13", "shufflenet_v2_x1_0@13", "efficientnet_b0@13", "googlenet@13"]


def export(out_dir, name, opset):
    base = os.path.join(out_dir, f"{name}_op{opset}")
    if os.path.exists(base + ".onnx") and os.path.exists(base + ".reference.npy"):
        return
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(weights=None).eval()
    # Random init leaves BatchNorm statistics at identity; give them realistic values.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
    torch.onnx.export(model, torch.from_numpy(x), base + ".onnx", opset_version=opset,
                      input_names=["input"], output_names=["logits"], do_constant_folding=True)
    np.save(base + ".input.npy", x)
    np.save(base + ".reference.npy", ref)
    print(f"wrote {base}.onnx")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for spec in sys.argv[2:] or DEFAULT:
        name, _, opset = spec.partition("@")
        export(out_dir, name, int(opset or 13))


if __name__ == "__main__":
    main()

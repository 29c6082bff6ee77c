#!/usr/bin/python3
"""Exports a torch nn.TransformerEncoder (seeded random weights) to ONNX, with a
seeded input and PyTorch's output as reference data: the transformer model
class of the developer-tool and benchmark runs.

    /usr/bin/python3 tests/models/export_transformer.py OUT_DIR [--layers 4] [--d-model 256] [--seq 128]

Writes OUT_DIR/transformer_encoder.onnx (opset 17), .input.npy and
.reference.npy. Existing files are kept.
"""
import argparse
import os

import numpy as np
import torch


class Encoder(torch.nn.Module):
    def __init__(self, layers, d_model, heads):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=0.0,
                                                 batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d_model, d_model)

    def forward(self, x):
        return self.head(self.encoder(x))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--seq", type=int, default=128)
    args = parser.parse_args()
    base = os.path.join(args.out_dir, "transformer_encoder")
    if os.path.exists(base + ".onnx") and os.path.exists(base + ".reference.npy"):
        return
    os.makedirs(args.out_dir, exist_ok=True)
    torch.manual_seed(0)
    model = Encoder(args.layers, args.d_model, args.heads).eval()
    # TransformerEncoder deep-copies one layer; give every layer weights of its own.
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() > 1:
                torch.nn.init.xavier_uniform_(p)
    x = np.random.default_rng(1).standard_normal((1, args.seq, args.d_model)).astype(np.float32)
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
    # The exporter traces with gradients on, so PyTorch takes its composite
    # (exportable) attention path rather than the fused inference kernel.
    torch.onnx.export(model, torch.from_numpy(x), base + ".onnx", opset_version=17, input_names=["x"],
                      output_names=["y"], do_constant_folding=True)
    np.save(base + ".input.npy", x)
    np.save(base + ".reference.npy", ref)
    print(f"wrote {base}.onnx")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Exports the recurrent model class of the benchmark and end-to-end tests
with torch (seeded weights, opset 17), with a seeded input and PyTorch's
output as reference:
  lstm.onnx  a 2-layer LSTM (input 64, hidden 128, batch_first, 64 steps,
             batch 1) and a Linear head
  gru.onnx   a 2-layer bidirectional GRU (input 64, hidden 128, 64 steps,
             batch 1) and a Linear head
  lstm_speech.onnx  a speech-size 2-layer LSTM (80 filterbank features,
             hidden 512, 100 steps, batch 1; 13 MB of weights) and a Linear
             head to 40 classes: a recurrent product of 4 MB a step

    /usr/bin/python3 tests/models/export_recurrent.py OUT_DIR

Writes OUT_DIR/NAME.onnx, NAME.input.npy, NAME.reference.npy; existing
files are kept.
"""
import os
import sys

import numpy as np
import torch


class Recurrent(torch.nn.Module):
    def __init__(self, cell, features, hidden, classes, bidirectional):
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=2, batch_first=True, bidirectional=bidirectional)
        self.head = torch.nn.Linear(2 * hidden if bidirectional else hidden, classes)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


def export(out_dir, name, cell, features=64, hidden=128, steps=64, classes=32, bidirectional=False):
    base = os.path.join(out_dir, name)
    if os.path.exists(base + ".onnx") and os.path.exists(base + ".reference.npy"):
        return
    torch.manual_seed(0)
    model = Recurrent(cell, features, hidden, classes, bidirectional).eval()
    x = np.random.default_rng(2).standard_normal((1, steps, features)).astype(np.float32)
    with torch.no_grad():
        ref = model(torch.from_numpy(x)).numpy()
        torch.onnx.export(model, torch.from_numpy(x), base + ".onnx", opset_version=17, input_names=["x"],
                          output_names=["y"])
    np.save(base + ".input.npy", x)
    np.save(base + ".reference.npy", ref)
    print(f"wrote {base}.onnx")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    export(out_dir, "lstm", torch.nn.LSTM)
    export(out_dir, "gru", torch.nn.GRU, bidirectional=True)
    export(out_dir, "lstm_speech", torch.nn.LSTM, features=80, hidden=512, steps=100, classes=40)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Writes an ONNX model that is a chain of convolutions, each followed by a
Relu (or x * sigmoid(x) with --act swish, as efficientnet's): a benchmark of
the convolution kernels on one layer shape at a time, without the rest of a
network (the 1x1 layers of resnet50, say), to run with `etc run` beside ONNX
Runtime (tests/models/ort_bench.js). Weights are He initialised from a fixed
seed, biases zero; "same" padding.

    tools/conv_chain_model.py OUT.onnx CHANNELS SIZE OUT_CHANNELS... [--kernel K] [--act relu|swish]

The input is x: [1, CHANNELS, SIZE, SIZE]; the layers go CHANNELS ->
OUT_CHANNELS[0] -> OUT_CHANNELS[1] -> ... at SIZE x SIZE. resnet50's 56x56
1x1 layers four times over: `tools/conv_chain_model.py pw56.onnx 64 56
256 64 256 64 256 64 256 64`.
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("channels", type=int)
    parser.add_argument("size", type=int)
    parser.add_argument("out_channels", type=int, nargs="+")
    parser.add_argument("--kernel", type=int, default=1, help="odd window size (default 1)")
    parser.add_argument("--act", choices=("relu", "swish"), default="relu", help="after each convolution")
    args = parser.parse_args()
    if args.kernel < 1 or args.kernel % 2 == 0:
        parser.error("--kernel must be odd and positive")
    if min([args.channels, args.size] + args.out_channels) < 1:
        parser.error("channels and size must be positive")
    rng = np.random.default_rng(0)
    k = args.kernel
    nodes, inits = [], []
    prev, cin = "x", args.channels
    for i, cout in enumerate(args.out_channels):
        w = rng.standard_normal((cout, cin, k, k)) * np.sqrt(2.0 / (cin * k * k))
        inits += [numpy_helper.from_array(w.astype(np.float32), f"w{i}"),
                  numpy_helper.from_array(np.zeros(cout, np.float32), f"b{i}")]
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"conv{i}"], pads=[k // 2] * 4))
        if args.act == "relu":
            nodes.append(helper.make_node("Relu", [f"conv{i}"], [f"act{i}"]))
        else:
            nodes.append(helper.make_node("Sigmoid", [f"conv{i}"], [f"sigmoid{i}"]))
            nodes.append(helper.make_node("Mul", [f"conv{i}", f"sigmoid{i}"], [f"act{i}"]))
        prev, cin = f"act{i}", cout
    graph = helper.make_graph(
        nodes, "conv_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, args.channels, args.size, args.size])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, cin, args.size, args.size])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

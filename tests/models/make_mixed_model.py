#!/usr/bin/python3
"""Writes a small model whose ops the demo backend supports only in part, to show
partitioning: two demo partitions split by a Tanh, a mul+add pair the demo
backend fuses, a broadcasting Mul it refuses, and ops it does not have.

    /usr/bin/python3 tests/models/make_mixed_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out_path):
    rng = np.random.default_rng(11)

    def init(name, shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [init("conv_w", [8, 3, 3, 3]), init("conv_b", [8], 0.1), init("fc_w", [4, 8]), init("fc_b", [4], 0.1),
             init("class_scale", [4], 1.0)]
    nodes = [
        helper.make_node("Conv", ["image", "conv_w", "conv_b"], ["conv"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["conv"], ["gate"], name="gate"),
        helper.make_node("Mul", ["gate", "gate"], ["gate_sq"], name="gate_square"),
        helper.make_node("Add", ["gate_sq", "conv"], ["mixed"], name="residual_add"),
        helper.make_node("Relu", ["mixed"], ["act"], name="relu"),
        helper.make_node("Tanh", ["act"], ["squashed"], name="tanh"),
        helper.make_node("Sin", ["squashed"], ["wave"], name="sin"),
        helper.make_node("Cos", ["act"], ["cos"], name="cos"),
        helper.make_node("Sub", ["wave", "cos"], ["diff"], name="sub"),
        helper.make_node("GlobalAveragePool", ["diff"], ["pooled"], name="pool"),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["fc"], name="fc", transB=1),
        helper.make_node("Mul", ["fc", "class_scale"], ["logits"], name="class_scale"),
    ]
    graph = helper.make_graph(
        nodes, "mixed_ops",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="etc-tests")
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/python3
"""Writes the bundled example model: a small image classifier (MobileNet-like block
with a residual add), opset 13, with seeded random weights.

    /usr/bin/python3 tests/models/make_example_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out_path):
    rng = np.random.default_rng(7)
    inits = []

    def weight(name, shape, scale=0.2):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def bn(prefix, c):
        weight(prefix + "_scale", [c], 0.1)
        inits[-1] = numpy_helper.from_array((1.0 + rng.standard_normal(c) * 0.1).astype(np.float32), prefix + "_scale")
        weight(prefix + "_bias", [c], 0.1)
        weight(prefix + "_mean", [c], 0.1)
        inits.append(numpy_helper.from_array((0.5 + rng.random(c)).astype(np.float32), prefix + "_var"))
        return [prefix + "_scale", prefix + "_bias", prefix + "_mean", prefix + "_var"]

    nodes = [
        helper.make_node("Conv", ["image", weight("stem_w", [16, 3, 3, 3])], ["stem"], name="stem_conv",
                         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["stem"] + bn("stem_bn", 16), ["stem_bn"], name="stem_bn"),
        helper.make_node("Relu", ["stem_bn"], ["stem_relu"], name="stem_relu"),
        helper.make_node("Conv", ["stem_relu", weight("dw_w", [16, 1, 3, 3]), weight("dw_b", [16], 0.05)], ["dw"],
                         name="dw_conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=16),
        helper.make_node("Clip", ["dw", "zero", "six"], ["dw_relu6"], name="dw_relu6"),
        helper.make_node("Conv", ["dw_relu6", weight("pw_w", [16, 16, 1, 1]), weight("pw_b", [16], 0.05)], ["pw"],
                         name="pw_conv", kernel_shape=[1, 1]),
        helper.make_node("Add", ["pw", "stem_relu"], ["residual"], name="residual_add"),
        helper.make_node("MaxPool", ["residual"], ["pooled"], name="max_pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["pooled"], ["gap"], name="global_pool"),
        helper.make_node("Flatten", ["gap"], ["features"], name="flatten"),
        helper.make_node("Gemm", ["features", weight("fc_w", [10, 16]), weight("fc_b", [10], 0.05)], ["logits"],
                         name="classifier", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1),
    ]
    inits.append(numpy_helper.from_array(np.array(0.0, np.float32), "zero"))
    inits.append(numpy_helper.from_array(np.array(6.0, np.float32), "six"))
    graph = helper.make_graph(
        nodes, "mini_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 64, 64])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])],
        inits)
    model = helper.make_model(graph, producer_name="etc-example", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/python3
"""Writes a small model with run-time control flow, for the examples, the
program-identity tests and the fuzzers' seeds: an If on a bool input picks a
1-D convolution with a ReLU or a negation; a Loop whose trip count is an
input carries a running mean of tanh(conv(...)); a Scan sums the sequence.

    /usr/bin/python3 tests/models/make_control_flow_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out_path):
    rng = np.random.default_rng(5)
    w = numpy_helper.from_array((rng.standard_normal([4, 4, 3]) * 0.3).astype(np.float32), "w")
    half = numpy_helper.from_array(np.array([0.5], np.float32), "half")
    zeros = numpy_helper.from_array(np.zeros([1, 4], np.float32), "zeros")

    then_branch = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], name="branch_conv", pads=[1, 1]),
         helper.make_node("Relu", ["c"], ["t"], name="branch_relu")],
        "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1, 4, 8])])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"], name="branch_neg")],
        "else", [], [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 4, 8])])

    loop_body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
         helper.make_node("Conv", ["acc_in", "w"], ["conv"], name="body_conv", pads=[1, 1]),
         helper.make_node("Tanh", ["conv"], ["squashed"], name="body_tanh"),
         helper.make_node("Add", ["acc_in", "squashed"], ["sum"], name="body_add"),
         helper.make_node("Mul", ["sum", "half"], ["acc_out"], name="body_mean")],
        "loop_body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [1, 4, 8])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [1, 4, 8])])

    scan_body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "step"], ["sum_out"], name="scan_add"),
         helper.make_node("Identity", ["sum_out"], ["row"], name="scan_row")],
        "scan_body",
        [helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("step", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("row", TensorProto.FLOAT, [1, 4])])

    nodes = [
        helper.make_node("If", ["flag"], ["picked"], name="pick_branch", then_branch=then_branch,
                         else_branch=else_branch),
        helper.make_node("Loop", ["steps", "", "picked"], ["refined"], name="refine", body=loop_body),
        helper.make_node("Scan", ["zeros", "refined"], ["total", "running"], name="running_sum", body=scan_body,
                         num_scan_inputs=1, scan_input_axes=[2], scan_output_axes=[2]),
    ]
    graph = helper.make_graph(
        nodes, "control_flow",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8]),
         helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
         helper.make_tensor_value_info("steps", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("running", TensorProto.FLOAT, [1, 4, 8])],
        [w, half, zeros])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, out_path)


if __name__ == "__main__":
    main(sys.argv[1])

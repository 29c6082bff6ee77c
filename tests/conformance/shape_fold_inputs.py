#!/usr/bin/python3
"""Rewrites ONNX node tests whose shape-like arguments (Reshape's shape, Slice's
starts/ends, Pad's pads, ...) are graph inputs into tests where those inputs are
initializers, so etc (static shapes) can compile them. The rewritten suite is
written under OUT/node/<test> and can be run with
  etc_conformance --data OUT
It checks the lowering semantics (0/-1 in shapes, slice clamping, pad modes)
that the original tests exercise only through runtime inputs."""
import os
import shutil
import sys

import onnx
from onnx import numpy_helper

DATA = "/usr/share/libonnx-testdata/data/node"
PREFIXES = ("test_reshape", "test_slice", "test_split", "test_squeeze", "test_unsqueeze", "test_tile",
            "test_expand", "test_constantofshape", "test_range_", "test_constant_pad", "test_edge_pad",
            "test_reflect_pad", "test_training_dropout", "test_onehot")
# Ops whose every input is an argument rather than data.
ALL_ARGS = {"ConstantOfShape", "Range"}


def rewrite(test, out_root):
    src = os.path.join(DATA, test)
    model = onnx.load(os.path.join(src, "model.onnx"))
    g = model.graph
    if len(g.node) != 1:
        return False
    node = g.node[0]
    first = 0 if node.op_type in ALL_ARGS else 1
    fold = set(node.input[first:]) - {""}
    inputs = [i.name for i in g.input]
    dst = os.path.join(out_root, "node", test)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    sets = sorted(d for d in os.listdir(src) if d.startswith("test_data_set"))
    for k, s in enumerate(sets):
        os.makedirs(os.path.join(dst, s))
        n_out = 0
        for idx, name in enumerate(inputs):
            t = onnx.TensorProto()
            with open(os.path.join(src, s, f"input_{idx}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            if name in fold:
                if k == 0:
                    t.name = name
                    g.initializer.append(t)
            else:
                with open(os.path.join(dst, s, f"input_{n_out}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
                n_out += 1
        for f in os.listdir(os.path.join(src, s)):
            if f.startswith("output_"):
                shutil.copy(os.path.join(src, s, f), os.path.join(dst, s, f))
    kept = [i for i in g.input if i.name not in fold]
    del g.input[:]
    g.input.extend(kept)
    onnx.save(model, os.path.join(dst, "model.onnx"))
    return True


def main():
    out_root = sys.argv[1] if len(sys.argv) > 1 else "/tmp/etc_shape_folded"
    n = sum(rewrite(t, out_root) for t in sorted(os.listdir(DATA)) if t.startswith(PREFIXES))
    print(f"wrote {n} tests under {out_root}/node")


if __name__ == "__main__":
    main()

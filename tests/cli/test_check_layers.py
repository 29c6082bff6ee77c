#!/usr/bin/python3
"""tools/check_layers.py: the tree passes, and each kind of forbidden include
in a small made-up tree is reported with its file and line."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SCRIPT = os.path.join(ROOT, "tools", "check_layers.py")


def check(root):
    return subprocess.run([sys.executable, SCRIPT, root], capture_output=True, text=True)


class CheckLayers(unittest.TestCase):
    def test_the_tree_keeps_its_layers(self):
        proc = check(ROOT)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_forbidden_includes_are_named(self):
        files = {
            "runtime/executor/a.cpp": '#include "compiler/ir/graph.h"\n',
            "runtime/core/b.h": "#include <string>\n#include <onnx/onnx_pb.h>\n",
            "runtime/kernels/c.cpp": "#include <xnnpack.h>\n",
            "compiler/ir/d.h": '#include "compiler/backend/partitioner.h"\n',
            "compiler/passes/e.cpp": '#include "partitioners/xnnpack/xnnpack_rules.h"\n',
            "preprocessors/demo/f.cpp": '#include "partitioners/xnnpack/xnnpack_rules.h"\n',
            # Allowed: a preprocessor and its own partitioner, XNNPACK in its backend.
            "preprocessors/xnnpack/g.cpp": '#include "partitioners/xnnpack/xnnpack_rules.h"\n',
            "runtime/backends/xnnpack/h.cpp": "#include <xnnpack.h>\n#include \"runtime/core/result.h\"\n",
            "runtime/backends/onednn/i.cpp": "#include <dnnl.hpp>\n",
            "runtime/backends/xnnpack/j.cpp": "#include <dnnl.hpp>\n",
            "compiler/passes/k.cpp": "#include <onnx/onnx_pb.h>\n",
            "tools/etc/cmd_run.cpp": '#include "compiler/driver.h"\n',
            # Allowed: ONNX in the front end, the driver in etc-compiler's commands.
            "compiler/import/onnx/l.cpp": "#include <onnx/onnx_pb.h>\n",
            "tools/etc/cmd_preprocess.cpp": '#include "compiler/driver.h"\n',
        }
        with tempfile.TemporaryDirectory() as root:
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w") as f:
                    f.write(text)
            proc = check(root)
        self.assertEqual(proc.returncode, 1)
        lines = proc.stdout.splitlines()
        # runtime/core/b.h breaks two rules with one include.
        self.assertEqual(len(lines), 10, proc.stdout)
        for expected in ("runtime/executor/a.cpp:1:", "runtime/core/b.h:2: the runtime includes onnx/onnx_pb.h",
                         "runtime/kernels/c.cpp:1: <xnnpack.h>", "compiler/ir/d.h:1:", "compiler/passes/e.cpp:1:",
                         "preprocessors/demo/f.cpp:1:",
                         "runtime/backends/xnnpack/j.cpp:1: <dnnl.hpp> outside runtime/backends/onednn",
                         "runtime/core/b.h:2: onnx/onnx_pb.h outside the ONNX front end",
                         "compiler/passes/k.cpp:1: onnx/onnx_pb.h outside the ONNX front end",
                         "tools/etc/cmd_run.cpp:1: compiler/driver.h from outside"):
            self.assertTrue(any(line.startswith(expected) for line in lines), expected)


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/python3
"""Two backends node by node: each model compiled with each backend alone,
run with per-node profiling (`etc run --etdump --profile`), and the nodes
both delegated matched by their ONNX node names; per kind of node, the
time on the second backend over the first, summed over the models. The
oneDNN partitioner's relative costs (partitioners/onednn/onednn_partitioner.cpp)
are these ratios, oneDNN over XNNPACK.

    tools/compare_backends.py [--etc build/tools/etc] [--backends xnnpack,onednn]
                              [--threads 1] [--iterations 10] [--models all] [--per-model]

Kinds: convolutions by shape (conv1x1, conv1x1_strided, conv3x3s1 (the
Winograd candidates), conv_other, depthwise, grouped), else the ONNX op
type of the node that heads a fused group (Conv + Relu counts as its
Conv). Models as in tools/bench_xnnpack.py (`all`: its benchmark set), or
paths to .onnx files, each optionally followed by :NAME=DIMS input shapes.
A node one backend leaves to portable kernels is not compared.
"""
import argparse
import collections
import csv
import os
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_xnnpack  # noqa: E402  (the model set and its shapes)


def node_kinds(path):
    """ONNX node name -> kind."""
    model = onnx.load(path, load_external_data=False)
    dims = {i.name: list(i.dims) for i in model.graph.initializer}
    kinds = {}
    for node in model.graph.node:
        kind = node.op_type
        if kind == "Conv":
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            w = dims.get(node.input[1], [])
            spatial = w[2:]
            unit = all(s == 1 for s in attrs.get("strides", [1] * len(spatial)))
            undilated = all(d == 1 for d in attrs.get("dilations", [1] * len(spatial)))
            group = attrs.get("group", 1)
            if group > 1:
                kind = "depthwise" if w and group == w[0] else "grouped"
            elif spatial and all(k == 1 for k in spatial):
                kind = "conv1x1" if unit else "conv1x1_strided"
            elif spatial == [3, 3] and unit and undilated:
                kind = "conv3x3s1"
            else:
                kind = "conv_other"
        kinds[node.name] = kind
    return kinds


def node_times(etc, model, shapes, backend, threads, iterations, tmp):
    """ONNX node name (the head of each fused group) -> p50 us, for the
    nodes `backend` ran."""
    base = os.path.join(tmp, f"{os.path.basename(model)}.{backend}")
    flags = [f for s in shapes for f in ("--input-shape", s)]
    for cmd in ([etc, "preprocess", model, "--backend", backend, "-o", base + ".etp", *flags],
                [etc, "run", base + ".etp", "--random-inputs", "--threads", str(threads), "--warmup", "3",
                 "--iterations", str(iterations), "--etdump", base + ".etdump", "--profile"]):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    report = subprocess.run([etc, "inspect", base + ".etp", "--etdump", base + ".etdump", "--format", "tsv"],
                            capture_output=True, text=True, check=True).stdout
    times = {}
    for row in csv.DictReader(report.splitlines(), delimiter="\t"):
        if row["kind"] == "node" and backend in row["placement"]:
            times[row["name"].split(" + ")[0]] = float(row["p50_us"])
    return times


def resolve(spec):
    """(onnx path, input shapes, label) of a --models entry."""
    name, *shapes = spec.split(":")
    if name.endswith(".onnx"):
        return name, shapes, os.path.basename(name)
    file, fixed = bench_xnnpack.OTHER_MODELS.get(name, (f"{name}_op13.onnx", []))
    return os.path.join(bench_xnnpack.FETCHED, file), shapes or fixed, name


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--etc", default=os.path.join(bench_xnnpack.ROOT, "build", "tools", "etc"))
    ap.add_argument("--backends", default="xnnpack,onednn", help="FIRST,SECOND: ratios are SECOND/FIRST")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--models", default="all")
    ap.add_argument("--per-model", action="store_true", help="also each model's kinds")
    args = ap.parse_args()
    first, second = args.backends.split(",")
    specs = bench_xnnpack.BENCHMARK_SET if args.models == "all" else args.models.split(",")
    bench_xnnpack.prepare([s.split(":")[0] for s in specs if not s.split(":")[0].endswith(".onnx")])

    total = collections.defaultdict(lambda: [0.0, 0.0, 0])
    per_model = collections.defaultdict(lambda: [0.0, 0.0, 0])
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            path, shapes, label = resolve(spec)
            kinds = node_kinds(path)
            a = node_times(args.etc, path, shapes, first, args.threads, args.iterations, tmp)
            b = node_times(args.etc, path, shapes, second, args.threads, args.iterations, tmp)
            for name in a.keys() & b.keys():
                kind = kinds.get(name, "?")
                for row in (total[kind], per_model[(label, kind)]):
                    row[0] += a[name]
                    row[1] += b[name]
                    row[2] += 1
    print(f"{args.threads} thread(s); {second}/{first}: time on {second} over time on {first}")
    print(f"{'kind':28s} {'nodes':>5s} {first + ' us':>12s} {second + ' us':>12s} {'ratio':>6s}")
    rows = sorted(total.items())
    if args.per_model:
        rows += sorted((f"{m}/{k}", v) for (m, k), v in per_model.items())
    for kind, (ta, tb, n) in rows:
        print(f"{kind:28s} {n:5d} {ta:12.0f} {tb:12.0f} {tb / ta if ta > 0 else float('nan'):6.2f}")


if __name__ == "__main__":
    main()

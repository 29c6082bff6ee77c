#!/usr/bin/python3
"""Regenerates the example in docs/partition-report.md from what
`etc partition tests/models/example/mixed_ops.onnx --backend demo --format json`
prints, one node or partition per line, between the partition-example markers.

    tools/update_partition_doc.py [--etc build/tools/etc] [--check]

--check changes nothing and exits 1 when the document is out of date (the CLI
tests run it so).
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "partition-report.md")
MODEL = "tests/models/example/mixed_ops.onnx"
BEGIN, END = "<!-- partition-example:begin -->", "<!-- partition-example:end -->"


def compact(value):
    return json.dumps(value, separators=(", ", ": "))


def example(etc):
    proc = subprocess.run([etc, "partition", MODEL, "--backend", "demo", "--format", "json"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    report = json.loads(proc.stdout)
    order = ["schema_version", "model", "backends", "nodes", "partitions", "summary"]
    assert sorted(report) == sorted(order), sorted(report)
    lines = ["```json", "{"]
    for i, key in enumerate(order):
        comma = "," if i + 1 < len(order) else ""
        value = report[key]
        if key in ("nodes", "partitions"):
            lines.append(f'  "{key}": [')
            lines += [f"    {compact(item)}{',' if j + 1 < len(value) else ''}" for j, item in enumerate(value)]
            lines.append(f"  ]{comma}")
        else:
            lines.append(f'  "{key}": {compact(value)}{comma}')
    lines += ["}", "```"]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--etc", default=os.path.join(ROOT, "build", "tools", "etc"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    with open(DOC) as f:
        doc = f.read()
    if BEGIN not in doc or END not in doc:
        sys.exit(f"{DOC}: no {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    updated = f"{head}{BEGIN}\n{example(args.etc)}\n{END}{tail}"
    if args.check:
        if updated != doc:
            sys.exit(f"{DOC} is out of date: run tools/update_partition_doc.py")
        return
    with open(DOC, "w") as f:
        f.write(updated)


if __name__ == "__main__":
    main()

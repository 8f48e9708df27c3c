#!/usr/bin/env python3
"""Checks the include graph of the sources (not tests/ or bench/).

1. Layers: a file includes only files of its own folder or of a folder
   below it in LAYERS (docs/architecture.md, "Layout").
2. No loop between units: a unit is a .h with its .cc; unit A including B
   while B includes A (directly or through others) is a loop.

Prints each violation and exits 1 if there is any; exit 0 otherwise.
Usage: check-layering.py [SOURCE_DIR]
"""

import os
import re
import sys

# Lowest first. A folder may include itself and anything before it.
LAYERS = [
    "common",
    "model",
    "config",
    "kube",
    "metrics",
    "scoring",
    "scheduler/telemetry",
    "scheduler/ha",
    "scheduler/cycle",
    "scheduler/serve",
    "scheduler/cmd",
]

INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def layer_of(path):
    """The index in LAYERS of the deepest folder holding `path`, or None."""
    best = None
    for i, folder in enumerate(LAYERS):
        if path.startswith(folder + "/"):
            if best is None or len(folder) > len(LAYERS[best]):
                best = i
    return best


def unit_of(path):
    return os.path.splitext(path)[0]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = []
    for top in sorted({layer.split("/")[0] for layer in LAYERS}):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".h", ".cc")):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root))
    errors = []
    edges = {}  # unit -> units it includes
    for path in sorted(files):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        mine = layer_of(path)
        for included in INCLUDE.findall(text):
            theirs = layer_of(included)
            if theirs is None:
                continue  # a library's header
            if theirs > mine:
                errors.append(f"{path}: includes {included}, a layer above "
                              f"({LAYERS[theirs]} > {LAYERS[mine]})")
            if unit_of(included) != unit_of(path):
                edges.setdefault(unit_of(path), set()).add(unit_of(included))

    # Loops: Tarjan's strongly connected components over the units.
    index, low, on_stack, stack, loops = {}, {}, set(), [], []

    def visit(u):
        index[u] = low[u] = len(index)
        stack.append(u)
        on_stack.add(u)
        for v in sorted(edges.get(u, ())):
            if v not in index:
                visit(v)
                low[u] = min(low[u], low[v])
            elif v in on_stack:
                low[u] = min(low[u], index[v])
        if low[u] == index[u]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == u:
                    break
            if len(component) > 1:
                loops.append(sorted(component))

    sys.setrecursionlimit(10000)
    for u in sorted(edges):
        if u not in index:
            visit(u)
    for component in loops:
        errors.append("loop between units: " + ", ".join(component))

    for e in errors:
        print(e)
    if errors:
        return 1
    print(f"{len(files)} files: every include runs down a layer or stays in "
          "its own; no loop between units")
    return 0


if __name__ == "__main__":
    sys.exit(main())

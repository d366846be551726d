#!/usr/bin/env python3
"""The layers of the tree, checked from its #include lines (TAP).

server/ -> api/ -> lib/: a file may include its own layer's headers and
those of the layers below it, never above (a layer is a top folder with
its subfolders: api/text, api/core, ...). Within a layer, modules (a .c
and its .h) must not include each other in a cycle. A module's edges are
the project headers that its .c or .h includes with "..."; <cblas.h> may
only appear in lib/.

usage: python3 tests/layers/check.py [ROOT]
"""
import os
import re
import sys

LAYERS = ["lib", "api", "server"]  # lowest first
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def files(root, layer):
    """(path relative to root, file name) of the layer's C files, its
    subfolders included."""
    for top, dirs, names in sorted(os.walk(os.path.join(root, layer))):
        dirs.sort()
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(top, name), root), name


def headers(root):
    """{name.h: layer} for every project header (names are unique: the
    build finds each by its name alone)."""
    found = {}
    for layer in LAYERS:
        for _, name in files(root, layer):
            if name.endswith(".h"):
                if name in found:
                    sys.exit(f"two headers named {name}")
                found[name] = layer
    return found


def sources(root):
    for layer in LAYERS:
        for path, name in files(root, layer):
            yield layer, path, name


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    where = headers(root)
    failures = []
    edges = {}  # (layer, module) -> {module}
    for layer, path, name in sources(root):
        text = open(os.path.join(root, path), encoding="utf-8").read()
        module = name[:-2]
        for kind, inc in INCLUDE.findall(text):
            if kind == "<":
                if inc == "cblas.h" and layer != "lib":
                    failures.append(f"{path} includes <cblas.h>: "
                                    "BLAS is lib/'s alone")
                continue
            target = where.get(inc)
            if target is None:
                continue  # a generated or test header
            if LAYERS.index(target) > LAYERS.index(layer):
                failures.append(f"{path} includes {target}/{inc}: "
                                f"{layer}/ may not see {target}/")
            elif target == layer and inc[:-2] != module:
                edges.setdefault((layer, module), set()).add(inc[:-2])
    # cycles between modules of one folder (depth-first search)
    state = {}
    cycles = []

    def visit(node, path):
        state[node] = 1
        for succ in sorted(edges.get(node, ())):
            nxt = (node[0], succ)
            if state.get(nxt) == 1:
                cyc = path[path.index(nxt):] + [nxt]
                cycles.append(" -> ".join(f"{l}/{m}" for l, m in cyc))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    failures += [f"include cycle: {c}" for c in cycles]
    n = 0
    checks = [("every include points down the layers (server -> api -> lib)",
               [f for f in failures if "may not see" in f]),
              ("no include cycle between modules of a layer",
               [f for f in failures if f.startswith("include cycle")]),
              ("<cblas.h> only in lib/",
               [f for f in failures if "cblas" in f])]
    for title, bad in checks:
        n += 1
        print(("not ok" if bad else "ok") + f" {n} - {title}")
        for b in bad:
            print(f"#   {b}")
    print(f"1..{n}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

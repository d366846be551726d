#!/usr/bin/env python3
"""The layers of the tree, checked from its #include lines (TAP).

server/ -> api/ -> lib/: a file may include its own layer's headers and
those of the layers below it, never above (a layer is a top folder with
its subfolders: api/text, api/core, ...). api/'s folders are floors of
their own, lowest first: text, core, routes, grading, fronts; a file sees
its floor, the floors below and api/api.h. Within a layer, modules (a .c
and its .h) must not include each other in a cycle. A module's edges are
the project headers that its .c or .h includes with "...". System
headers stay with the layer that owns the library: <cblas.h> in lib/,
<microhttpd.h> in server/, and <jansson.h> never in lib/. server/ sees
api/ only through api/'s public headers, those at its top (api/api.h,
api/question.h for the offline grader, api/version.h): a floor's headers
are the api's own. A project header is included by its name alone: a
path ("core/fields.h", "../core/fields.h") would reach past the folders
the build lets a file see, and past this check.

usage: python3 tests/layers/check.py [ROOT]
"""
import os
import re
import sys

LAYERS = ["lib", "api", "server"]  # lowest first
FLOORS = ["text", "core", "routes", "grading", "fronts"]  # api/'s, lowest first
# system header: the layers it may appear in
SYSTEM = {"cblas.h": ["lib"], "microhttpd.h": ["server"],
          "jansson.h": ["api", "server"]}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def files(root, layer):
    """(path relative to root, file name) of the layer's C files, its
    subfolders included."""
    for top, dirs, names in sorted(os.walk(os.path.join(root, layer))):
        dirs.sort()
        for name in sorted(names):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(top, name), root), name


def floor(path):
    """api/'s floor of path (its folder under api/), or None."""
    parts = path.split(os.sep)
    return parts[1] if parts[0] == "api" and len(parts) > 2 else None


def headers(root):
    """{name.h: (layer, floor)} for every project header (names are
    unique: the build finds each by its name alone)."""
    found = {}
    for layer in LAYERS:
        for path, name in files(root, layer):
            if name.endswith(".h"):
                if name in found:
                    sys.exit(f"two headers named {name}")
                found[name] = (layer, floor(path))
    return found


def public(where):
    """api/'s public headers: those at its top, in no floor."""
    return sorted(name for name, (layer, fl) in where.items()
                  if layer == "api" and fl is None)


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
                if inc in SYSTEM and layer not in SYSTEM[inc]:
                    failures.append(f"{path} includes <{inc}>: only "
                                    f"{' and '.join(l + '/' for l in SYSTEM[inc])} may")
                continue
            if "/" in inc:
                # a path would reach past what the build lets the folder
                # see (-iquote), and past this check, which goes by name
                failures.append(f"{path} includes \"{inc}\": project "
                                "headers are included by name, and the "
                                "build decides which folders are seen")
                continue
            if inc not in where:
                continue  # a generated or test header
            target, target_floor = where[inc]
            if LAYERS.index(target) > LAYERS.index(layer):
                failures.append(f"{path} includes {target}/{inc}: "
                                f"{layer}/ may not see {target}/")
            elif layer == "server" and target == "api" and target_floor:
                failures.append(f"{path} includes api/{target_floor}/{inc}: "
                                "server/ sees api/ through its public "
                                "headers only (" + ", ".join(
                                    f"api/{h}" for h in public(where)) + ")")
            elif (floor(path) and target_floor and
                  FLOORS.index(target_floor) > FLOORS.index(floor(path))):
                failures.append(f"{path} includes api/{target_floor}/{inc}: "
                                f"api/{floor(path)}/ sees no floor "
                                "above it")
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
              ("api/'s floors point down (text -> core -> routes -> "
               "grading -> fronts)",
               [f for f in failures if "sees no floor" in f]),
              ("system headers stay with their layer: <cblas.h> in lib/, "
               "<microhttpd.h> in server/, <jansson.h> not in lib/",
               [f for f in failures if "only" in f and "may" in f]),
              ("server/ sees api/ through its public headers only "
               "(those at api/'s top)",
               [f for f in failures if "public headers only" in f]),
              ("project headers are included by name, never by a path "
               "past what the build lets a folder see",
               [f for f in failures if "included by name" in f])]
    for title, bad in checks:
        n += 1
        print(("not ok" if bad else "ok") + f" {n} - {title}")
        for b in bad:
            print(f"#   {b}")
    print(f"1..{n}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

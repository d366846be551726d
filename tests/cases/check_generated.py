#!/usr/bin/python3
"""check_generated.py — the committed data cases are what their
generators write: gen_cases.py, gen_grade_kserve.py and
gen_transformer_cases.py are run into a temporary folder, and every case
there is compared with tests/cases. Requests, meta.json and route files
must be the same bytes; an expected.json the same JSON, its numbers
within a relative 1e-12 (PyTorch's reference numbers may differ in their
last bits from one BLAS to another). A case added or edited by hand, or
a generator changed without its cases, fails here.

    usage: /usr/bin/python3 tests/cases/check_generated.py
Prints TAP; exits 1 when a test fails.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GENERATORS = ("gen_cases.py", "gen_grade_kserve.py",
              "gen_transformer_cases.py")
N = FAILED = 0


def tap(ok, name, why=()):
    global N, FAILED
    N += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", N, name))
    if not ok:
        FAILED += 1
        for line in list(why)[:12]:
            print("#   " + line)


def same(a, b, at, out):
    """The differences between JSON values a and b, into out."""
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        if a is not b and a != b:
            out.append("%s: %r vs %r" % (at, a, b))
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if abs(a - b) > 1e-12 * max(abs(a), abs(b)):
            out.append("%s: %r vs %r" % (at, a, b))
    elif isinstance(a, dict) and isinstance(b, dict):
        if sorted(a) != sorted(b):
            out.append("%s: keys %s vs %s" % (at, sorted(a), sorted(b)))
        else:
            for k in a:
                same(a[k], b[k], "%s/%s" % (at, k), out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append("%s: length %d vs %d" % (at, len(a), len(b)))
        else:
            for i, (x, y) in enumerate(zip(a, b)):
                same(x, y, "%s/%d" % (at, i), out)
    elif a != b:
        out.append("%s: %r vs %r" % (at, a, b))


def files(root):
    """The case files under root's endpoint folders: {path: bytes}."""
    found = {}
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in names:
            path = os.path.join(top, name)
            rel = os.path.relpath(path, root)
            if os.sep in rel:
                with open(path, "rb") as f:
                    found[rel] = f.read()
    return found


with tempfile.TemporaryDirectory() as out:
    for gen in GENERATORS:
        run = subprocess.run([sys.executable, os.path.join(HERE, gen), out],
                             cwd=HERE, capture_output=True, text=True)
        tap(run.returncode == 0, "%s writes its cases into a given folder"
            % gen, run.stderr.splitlines()[-6:])
    made, kept = files(out), files(HERE)

only_kept = sorted(set(kept) - set(made))
only_made = sorted(set(made) - set(kept))
tap(made and not only_kept, "no committed case file that no generator "
    "writes (%d files generated)" % len(made), only_kept)
tap(not only_made, "no generated case file left uncommitted", only_made)
by_endpoint = {}
for rel in sorted(set(made) & set(kept)):
    diffs = by_endpoint.setdefault(rel.split(os.sep)[0], [])
    if made[rel] == kept[rel]:
        continue
    if rel.endswith("expected.json"):
        same(json.loads(kept[rel]), json.loads(made[rel]), rel, diffs)
    else:
        diffs.append("%s: the bytes differ" % rel)
for endpoint, diffs in by_endpoint.items():
    tap(not diffs, "%s: the committed cases are the generated ones"
        % endpoint, diffs)
print("1..%d" % N)
sys.exit(1 if FAILED else 0)

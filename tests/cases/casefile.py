"""The case directory format of tests/cases/README.md, shared by gen_cases.py and
gen_grade_kserve.py: cases are collected per endpoint, then written as
<endpoint>/route and <endpoint>/<name>/{request.json, meta.json,
expected.json}; plus the small tensor helpers both generators use.
Standard library only."""

import json
import os
import shutil


class CaseSet:
    """The cases of some endpoints; routes maps each endpoint directory to
    its "METHOD /path" line."""

    def __init__(self, routes):
        self.routes = routes
        self.cases = {e: {} for e in routes}

    def add(self, endpoint, name, expected, body=None, raw=None, meta=None):
        """One case: the request is body as JSON (UTF-8, non-ASCII kept),
        or the exact bytes raw, or none; meta the overrides of meta.json;
        expected the {"status", "body", ...} of expected.json."""
        assert name not in self.cases[endpoint], name
        if body is not None:
            raw = json.dumps(body, ensure_ascii=False).encode()
        self.cases[endpoint][name] = (raw, meta, expected)

    def count(self):
        return sum(len(c) for c in self.cases.values())

    def write(self, here):
        """Replace each endpoint's directory under here with its cases."""
        for endpoint, cases in self.cases.items():
            edir = os.path.join(here, endpoint)
            if os.path.isdir(edir):
                shutil.rmtree(edir)
            os.makedirs(edir)
            with open(os.path.join(edir, "route"), "w") as f:
                f.write(self.routes[endpoint] + "\n")
            for name, (raw, meta, expected) in sorted(cases.items()):
                cdir = os.path.join(edir, name)
                os.makedirs(cdir)
                if raw is not None:
                    with open(os.path.join(cdir, "request.json"), "wb") as f:
                        f.write(raw)
                if meta is not None:
                    with open(os.path.join(cdir, "meta.json"), "w") as f:
                        json.dump(meta, f)
                        f.write("\n")
                with open(os.path.join(cdir, "expected.json"), "w") as f:
                    json.dump(expected, f, allow_nan=False)
                    f.write("\n")


def ok(body, status=200):
    return {"status": status, "body": body}


def flat(t):
    """{"shape", "data"} form of a nested list."""
    shape, x = [], t
    while isinstance(x, list):
        shape.append(len(x))
        x = x[0]
    data = []

    def walk(y):
        if isinstance(y, list):
            for z in y:
                walk(z)
        else:
            data.append(y)
    walk(t)
    return {"shape": shape, "data": data}


def rand_tensor(rng, *shape, lo=-1.0, hi=1.0):
    """A nested list of the given shape, entries uniform in [lo, hi] from
    the random.Random rng, rounded to 4 decimals."""
    if not shape:
        return round(rng.uniform(lo, hi), 4)
    return [rand_tensor(rng, *shape[1:], lo=lo, hi=hi) for _ in range(shape[0])]

"""binary_rows.py — the rows of `make bench` for the large dot request
over the Open Inference Protocol's binary tensor data extension
(api/fronts/kserve_binary.h), measured by run.py in the same run as the
others.

Requests (tests/bench/gen_payloads.py; the tensors of "large dot",
B=4 Nq=Nk=512 d=dv=64, the same doubles):
  v2 JSON      POST /v2/models/attention_dot/infer, inputs as JSON data,
               outputs as JSON (the baseline of both ratios);
  v2 JSON FP32 the same with "output_datatype": "FP32" (outputs printed
               as float32 numbers; for context);
  plain JSON   POST /attention/dot, the large dot body (for context);
  binary FP64  the same infer with a JSON header and the inputs' FP64
               bytes, every output as FP64 bytes;
  binary FP32  the same, outputs as FP32 bytes (output_datatype).
Before they are timed, each binary answer is checked against the JSON
ones: FP64 bytes equal to the JSON doubles bit for bit, FP32 bytes equal
to the JSON doubles rounded to float32 and to the v2 JSON FP32 answer's
numbers (and the plain route's JSON answer equal to the v2 one); a
difference fails the row and run.py's exit status.

The floor of a binary request is its compute phase (Server-Timing) plus
the time nginx takes to move the same bytes over loopback: its request
body POSTed to a static file of 2 bytes (nginx reads and discards it;
curl ends when the last byte is sent), then a static file of its
answer's length fetched. attnd cannot start computing before the last
request byte arrives nor send before it has computed, so both directions
count, one after the other. The download alone is shown too.

Every function takes run.py's module as `run` (its helpers: Service,
free_port, log, div).
"""
import json
import os
import re
import shutil
import statistics
import struct
import subprocess

FORMS = ("v2_json", "v2_json32", "plain_json", "bin64", "bin32")
PAYLOAD = {"v2_json": "large_dot_v2", "v2_json32": "large_dot_v2_fp32",
           "plain_json": "large_dot", "bin64": "large_dot_bin64",
           "bin32": "large_dot_bin32"}
NEEDED = ("large_dot_v2", "large_dot_v2_fp32", "large_dot_bin64",
          "large_dot_bin32")
REPS = 21


def present(pay):
    """1 when the payload directory's index.json lists the binary payloads
    (run.py writes an older directory again)."""
    try:
        with open(os.path.join(pay, "index.json")) as f:
            names = {p["name"] for p in json.load(f)}
    except OSError:
        return 0
    return all(n in names for n in NEEDED)


def payload_file(pay, entry):
    return os.path.join(pay, entry.get("file", entry["name"] + ".json"))


def headers_of(entry):
    if "header_bytes" in entry:
        return ["Content-Type: application/octet-stream",
                "Inference-Header-Content-Length: %d" % entry["header_bytes"]]
    return ["Content-Type: application/json"]


def post_as(url, body, headers, out="/dev/null"):
    """One request by curl (POST of the file body, or GET when body is
    None): (seconds, status, bytes down, compute ms,
    {header name (lower case): value})."""
    argv = ["curl", "-s", "-o", out, "-D", "-", "-w",
            "\n%{http_code} %{time_total} %{size_download}"]
    for h in headers:
        argv += ["-H", h]
    if body is not None:  # else GET
        argv += ["--data-binary", "@" + body]
    r = subprocess.run(argv + [url], capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    status, total, size = lines[-1].split()
    head = {}
    for line in lines[:-1]:
        if ":" in line:
            k, v = line.split(":", 1)
            head[k.strip().lower()] = v.strip()
    m = re.search(r"compute;dur=([\d.]+)", head.get("server-timing", ""))
    return (float(total), int(status), int(size),
            float(m.group(1)) if m else float("nan"), head)


def proc_cpu(pid):
    """User + system CPU seconds of one process (all its threads, those
    already ended included), from /proc/<pid>/stat (clock ticks)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start_floor_nginx(run, tmp):
    """nginx for the floor: static files under tmp/floor/www, bodies up to
    64 MiB read and discarded (a POST to a static file is answered with
    the file)."""
    t = os.path.join(tmp, "floor")
    www = os.path.join(t, "www")
    os.makedirs(www)
    with open(os.path.join(www, "up.json"), "w") as f:
        f.write("{}")
    os.chmod(tmp, 0o755)  # workers run as nobody
    return run.nginx_service(
        "nginx-floor", t, "client_max_body_size 64m;",
        "default_type application/octet-stream; error_page 405 =200 $uri;",
        "/up.json"), www


# ------------------------------------------------------------ the answers

def flat(a):
    if not isinstance(a, list):
        return [a]
    if a and not isinstance(a[0], list):
        return a
    return [x for row in a for x in flat(row)]


def json_answers(a, index, pay, tmp):
    """The large dot's outputs from the plain route, and from the v2 front
    over JSON with FP64 and FP32 outputs: {form: {name: [doubles]}}, or
    raises; an FP32 request refused (an older binary) is left out."""
    out = {}
    for form in ("plain_json", "v2_json", "v2_json32"):
        e = index[PAYLOAD[form]]
        f = os.path.join(tmp, "binary-%s.json" % form)
        r = post_as(a.url(e["route"]), payload_file(pay, e), headers_of(e), f)
        if r[1] != 200 and form == "v2_json32":
            os.unlink(f)
            continue
        if r[1] != 200:
            raise RuntimeError("%s answered %d" % (e["route"], r[1]))
        with open(f) as fh:
            answer = json.load(fh)
        os.unlink(f)
        if form == "plain_json":
            out[form] = {k: flat(answer[k])
                         for k in ("output", "weights", "scale")}
        else:
            out[form] = {o["name"]: flat(o["data"])
                         for o in answer["outputs"]}
    return out


def first_difference(got, want):
    for i, (x, y) in enumerate(zip(got, want)):
        if x != y and not (x != x and y != y):
            return i, x, y
    return len(want), None, None


def check_binary(a, entry, pay, tmp, expected, also=None):
    """One binary answer against the JSON doubles (expected), and for FP32
    also against the FP32 JSON answer's numbers rounded to float32 (also):
    {'status', 'ok', 'detail', 'bytes'}."""
    f = os.path.join(tmp, "binary-answer.bin")
    r = post_as(a.url(entry["route"]), payload_file(pay, entry),
                headers_of(entry), f)
    res = {"status": r[1], "bytes": r[2], "ok": False}
    if r[1] != 200:
        res["detail"] = "answered %d" % r[1]
        return res
    with open(f, "rb") as fh:
        body = fh.read()
    os.unlink(f)
    n = int(r[4].get("inference-header-content-length", "0"))
    header = json.loads(body[:n])
    dt = entry["output_datatype"]
    fmt = "<%dd" if dt == "FP64" else "<%df"
    at, problems = n, []
    for o in header["outputs"]:
        size = o["parameters"]["binary_data_size"]
        raw = body[at:at + size]
        at += size
        want = expected.get(o["name"])
        if want is None:
            problems.append("%s is not in the JSON answer" % o["name"])
            continue
        if o["datatype"] != dt:
            problems.append("%s came as %s" % (o["name"], o["datatype"]))
            continue
        # the JSON doubles as dt's bytes: FP64 exactly, FP32 rounded to
        # nearest (struct packs through a C double-to-float conversion)
        if struct.pack(fmt % len(want), *want) != raw:
            got = list(struct.unpack(fmt % (len(raw) // (8 if dt == "FP64"
                                                          else 4)), raw))
            ref = list(struct.unpack(fmt % len(want),
                                     struct.pack(fmt % len(want), *want)))
            i, x, y = first_difference(got, ref)
            problems.append("%s entry %d is %r, the JSON answer's %s %r" %
                            (o["name"], i, x, "double" if dt == "FP64"
                             else "double rounded to float32", y))
        elif also is not None and \
                struct.pack(fmt % len(want), *also[o["name"]]) != raw:
            problems.append("%s differs from the FP32 JSON answer" %
                            o["name"])
    if at != len(body):
        problems.append("%d bytes after the outputs" % (len(body) - at))
    missing = sorted(set(expected) - {o["name"] for o in header["outputs"]})
    if missing:
        problems.append("missing outputs " + ", ".join(missing))
    res["ok"] = not problems
    res["detail"] = "; ".join(problems) if problems else \
        "%s bytes equal to the JSON answer's doubles%s" % (
            dt, "" if dt == "FP64" else " rounded to float32, and to the "
            "FP32 JSON answer's numbers")
    return res


def check_answers(run, attnds, index, pay, tmp):
    """Each attnd's binary answers against its JSON answers. Returns
    {label: {form: check}}, with 'json' comparing the two JSON answers."""
    checks = {}
    for label, a in attnds:
        run.log("binary answers %s" % label)
        answers = json_answers(a, index, pay, tmp)
        plain, v2 = answers["plain_json"], answers["v2_json"]
        c = {}
        diff = [k for k in plain if plain[k] != v2.get(k)]
        c["json"] = {"ok": not diff,
                     "detail": "the v2 JSON answer differs from the plain "
                               "route's in " + ", ".join(diff) if diff
                     else "the two JSON answers are equal"}
        for form in ("bin64", "bin32"):
            c[form] = check_binary(a, index[PAYLOAD[form]], pay, tmp, v2,
                                   answers.get("v2_json32")
                                   if form == "bin32" else None)
            if c[form]["status"] == 200 and not c[form]["ok"]:
                run.log("ANSWER DIFFERS: %s %s: %s" %
                        (label, form, c[form]["detail"]))
        c["v2_json32"] = {"status": 200 if "v2_json32" in answers else 400}
        if not c["json"]["ok"]:
            run.log("ANSWER DIFFERS: %s: %s" % (label, c["json"]["detail"]))
        checks[label] = c
    return checks


# ----------------------------------------------------------------- timing

def in_turns(jobs, reps):
    """Sequential requests, one at a time, taking turns between the jobs
    (key, service, path, body, headers, pid or None), after one warm-up
    each: {key: best and median ms, best and median compute ms, server
    CPU ms per request (pid given; /proc ticks, summed over the
    requests), bytes down}."""
    for _, s, path, body, headers, _ in jobs:
        post_as(s.url(path), body, headers)
    runs = {j[0]: [] for j in jobs}
    cpu = {j[0]: 0.0 for j in jobs}
    for _ in range(reps):
        for key, s, path, body, headers, pid in jobs:
            c0 = proc_cpu(pid) if pid else 0
            runs[key].append(post_as(s.url(path), body, headers))
            if pid:
                cpu[key] += proc_cpu(pid) - c0
    out = {}
    for key, s, path, _, _, pid in jobs:
        rs = runs[key]
        bad = [r[1] for r in rs if r[1] != 200]
        if bad:
            raise RuntimeError("%s answered %s" % (s.url(path), bad[0]))
        ms = [r[0] * 1e3 for r in rs]
        compute = [r[3] for r in rs]
        out[key] = {"best_ms": min(ms), "median_ms": statistics.median(ms),
                    "compute_best_ms": min(compute),
                    "compute_ms": statistics.median(compute),
                    "cpu_ms": cpu[key] / reps * 1e3 if pid
                    else float("nan"),
                    "bytes": rs[0][2]}
    return out


def measure(run, attnds, index, pay, tmp, services, reps=REPS):
    """The latency rows: answers checked, then every attnd's four forms
    and nginx's floor requests in turns. Returns results entries:
    (label, 'binary') -> {'check', form: figures}, ('nginx', 'binary') ->
    {'up_FORM', 'down_FORM': figures}."""
    results = {}
    checks = check_answers(run, attnds, index, pay, tmp)
    run.log("start nginx for the floor")
    ng, www = start_floor_nginx(run, tmp)
    services.append(ng)
    try:
        jobs = []
        for label, a in attnds:
            for form in FORMS:
                if form in checks[label] and \
                        checks[label][form]["status"] != 200:
                    continue
                e = index[PAYLOAD[form]]
                jobs.append(((label, form), a, e["route"],
                             payload_file(pay, e), headers_of(e), a.proc.pid))
        for form in ("bin64", "bin32"):
            e = index[PAYLOAD[form]]
            size = checks[attnds[0][0]][form]["bytes"]
            name = "%s-%d.bin" % (form, size)
            with open(os.path.join(www, name), "wb") as f:
                f.write(os.urandom(size))
            jobs.append((("nginx", "up_" + form), ng, "/up.json",
                         payload_file(pay, e), headers_of(e), None))
            jobs.append((("nginx", "down_" + form), ng, "/" + name, None,
                         [], None))
        run.log("latency binary: %d kinds of request in turns, %d each" %
                (len(jobs), reps))
        figs = in_turns(jobs, reps)
    finally:
        ng.stop()
        services.remove(ng)
    for label, _ in attnds:
        results[(label, "binary")] = dict(
            {form: figs.get((label, form)) for form in FORMS},
            check=checks[label])
    results[("nginx", "binary")] = {k[1]: v for k, v in figs.items()
                                    if k[0] == "nginx"}
    return results


def measure_memory(run, binaries, index, pay, services):
    """A fresh daemon, one binary FP64 request: (label, 'binary_memory') ->
    (VmRSS before kB, VmHWM after kB, status)."""
    results = {}
    e = index["large_dot_bin64"]
    for label, binary in binaries:
        run.log("memory binary %s" % label)
        a = run.start_attnd(binary)
        services.append(a)
        idle = a.status("VmRSS")
        status = post_as(a.url(e["route"]), payload_file(pay, e),
                         headers_of(e))[1]
        results[(label, "binary_memory")] = (idle, a.status("VmHWM"), status)
        a.stop()
        services.remove(a)
    return results


def measure_alone(run, args, binaries, index):
    """--only binary: just these rows (start the daemons, measure, stop)."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="attnd-bench-")
    results, services, attnds = {}, [], []
    try:
        for label, binary in binaries:
            run.log("start %s: %s" % (label, binary))
            a = run.start_attnd(binary)
            services.append(a)
            attnds.append((label, a))
            ver = json.loads(subprocess.run(["curl", "-s", a.url("/version")],
                                            capture_output=True,
                                            text=True).stdout)
            results[(label, "threads")] = (ver.get("threads"),
                                           ver.get("blas", {}).get("threads"))
        results.update(measure(run, attnds, index, args.payloads, tmp,
                               services))
        for s in list(services):
            s.stop()
            services.remove(s)
        results.update(measure_memory(run, binaries, index, args.payloads,
                                      services))
    finally:
        for s in services:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


# ------------------------------------------------------------------ table

def failed(r):
    """1 when some binary answer differed from the JSON answer."""
    for k, v in r.items():
        if isinstance(k, tuple) and k[1] == "binary":
            c = v.get("check") if isinstance(v, dict) else None
            if c and (not c["json"]["ok"] or any(
                    c[f]["status"] == 200 and not c[f]["ok"]
                    for f in ("bin64", "bin32"))):
                return 1
    return 0


def tensor_mib(p):
    """The large dot's tensors in FP64: queries, keys, values, output and
    weights (B·Nq·d + B·Nk·d + B·Nk·dv + B·Nq·dv + B·Nq·Nk doubles)."""
    return 8 * (p["B"] * p["Nq"] * (p["d"] + p["dv"] + p["Nk"]) +
                p["B"] * p["Nk"] * (p["d"] + p["dv"])) / 2**20


def rows(run, r, index, labels, row):
    """The binary rows, through make_table's row(target, fig, anchor,
    ratio, met)."""
    div = run.div
    b = {l: r.get((l, "binary")) for l in labels}
    ng = r[("nginx", "binary")]

    def lat(x):
        return "%.1f ms (median %.1f; %.0f ms CPU)" % (
            x["best_ms"], x["median_ms"], x["cpu_ms"])

    def form_fig(l, form):
        x = b[l] and b[l].get(form)
        if not x:
            c = b[l] and b[l]["check"][form]
            return "— (%s)" % (c["detail"] if c else "not measured")
        c = b[l]["check"]
        if not c[form]["ok"] or not c["json"]["ok"]:
            return "**ANSWER DIFFERS**: " + (c[form]["detail"]
                                             if not c[form]["ok"]
                                             else c["json"]["detail"])
        return lat(x)

    def floor(l, form):
        x = b[l][form]
        return (x["compute_best_ms"] + ng["up_" + form]["best_ms"] +
                ng["down_" + form]["best_ms"])

    a = b["attnd"]
    ok = lambda form: a[form] is not None and a["check"][form]["ok"] and \
        a["check"]["json"]["ok"]
    for form, what, times in (("bin64", "FP64 in and out", 5),
                              ("bin32", "FP64 in, FP32 out", 7)):
        context = ("/attention/dot %.1f ms (median %.1f)" % (
            a["plain_json"]["best_ms"], a["plain_json"]["median_ms"])
            if form == "bin64" else "v2 JSON with FP32 out %.1f ms "
            "(median %.1f)" % (a["v2_json32"]["best_ms"],
                               a["v2_json32"]["median_ms"]))
        row("large dot over binary, %s: ≥ %d× faster than the same "
            "request over JSON (v2)" % (what, times),
            lambda l: form_fig(l, form),
            "v2 JSON %s; %s" % (lat(a["v2_json"]), context),
            "%.1f× (CPU %.1f×; %.1f× at its floor)" % (
                div(a["v2_json"]["best_ms"], a[form]["best_ms"]),
                div(a["v2_json"]["cpu_ms"], a[form]["cpu_ms"]),
                div(a["v2_json"]["best_ms"], floor("attnd", form)))
            if a[form] else "—",
            ok(form) and a["v2_json"]["best_ms"] >= times *
            a[form]["best_ms"])
    for form, what, mb in (("bin64", "FP64 out", "bytes"),
                           ("bin32", "FP32 out", "bytes")):
        up, down = ng["up_" + form], ng["down_" + form]
        row("large dot over binary, %s: ≤ 1.5× its floor (compute + nginx "
            "moving the same bytes)" % what,
            lambda l: "%.1f ms; floor %.1f" % (b[l][form]["best_ms"],
                                                floor(l, form))
            if b[l] and b[l][form] else form_fig(l, form),
            "floor %.1f ms = compute %.1f + nginx up %.1f (%.1f MB) + down "
            "%.1f (%.1f MB)" % (floor("attnd", form),
                                a[form]["compute_best_ms"], up["best_ms"],
                                index[PAYLOAD[form]]["bytes"] / 1e6,
                                down["best_ms"], down["bytes"] / 1e6)
            if a[form] else "—",
            "%.2f× (download only %.2f×)" % (
                div(a[form]["best_ms"], floor("attnd", form)),
                div(a[form]["best_ms"], floor("attnd", form) -
                    up["best_ms"])) if a[form] else "—",
            ok(form) and a[form]["best_ms"] <= 1.5 * floor("attnd", form))
    tensors = tensor_mib(index["large_dot"])
    mem = {l: r.get((l, "binary_memory")) for l in labels}

    def mem_fig(l):
        m = mem[l]
        if not m:
            return "— (not measured)"
        if m[2] != 200:
            return "— (answered %d)" % m[2]
        return "%.1f MiB (idle %.1f; +%.1f)" % (m[1] / 1024, m[0] / 1024,
                                                 (m[1] - m[0]) / 1024)
    m = mem["attnd"]
    row("large dot over binary FP64: peak RSS ≤ 1.3 × tensor bytes + idle "
        "RSS", mem_fig,
        "1.3 × %.1f MiB + %.1f MiB = %.1f MiB" % (
            tensors, m[0] / 1024, 1.3 * tensors + m[0] / 1024),
        "%.2f× tensors" % ((m[1] - m[0]) / 1024 / tensors),
        m[2] == 200 and (m[1] - m[0]) / 1024 <= 1.3 * tensors)


def table(run, r, index, labels):
    """--only binary: the binary rows alone, as make_table prints them."""
    cols = ["target"] + ["attnd" if l == "attnd" else "attnd (%s)" % l
                         for l in labels] + ["anchor", "ratio", "met"]
    lines = []

    def row(target, fig, anchor, ratio, met):
        lines.append([target] + [fig(l) for l in labels] +
                     [anchor, ratio, "yes" if met else "**no**"])
    rows(run, r, index, labels, row)
    widths = [max(len(str(x[i])) for x in lines + [cols])
              for i in range(len(cols))]
    fmt = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in
                                          zip(cells, widths)) + " |"
    return "\n".join([fmt(cols), "|" + "|".join("-" * (w + 2)
                                                for w in widths) + "|"] +
                     [fmt(x) for x in lines])

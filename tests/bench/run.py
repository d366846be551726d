#!/usr/bin/env python3
"""run.py — attnd's performance benchmark: attnd side by side with its
anchors, all measured in one run, printed as one table.

    usage: python3 tests/bench/run.py [--attnd build/attnd]
               [--before OTHER_ATTND] [--duration 10] [--out FILE]
               [--only binary]
    (make bench builds everything and runs this)

Anchors, started here on loopback ports and stopped at the end:
  nginx       the HTTP ceiling: Debian's nginx serving a small static JSON
              file (generated config in a temporary directory);
  Flask       tests/bench/flask_ref/app.py (Flask + numpy) under gunicorn
              with 2 workers: what a user would otherwise write;
  dgemm       tests/bench/dgemm_bench.c: OpenBLAS dgemm GFLOP/s at the
              products the large dot request makes, same BLAS threads;
  numpy       tests/bench/numpy_attn.py: numpy's in-process time for the
              same attention (no JSON, no HTTP), same BLAS threads;
  numbers     tests/bench/numbers_bench.c: ns per JSON number, attnd's
              parser against fast_float and its printer against Dragonbox
              (fmt) and Ryu (std::to_chars), in process, taking turns, over
              the medium and large dot bodies and attnd's answers to them.
Load: wrk -t2 -c32 -d<duration>s for throughput (with the server's CPU
time per request from /proc); sequential curl requests for latency, the
servers of one row taking turns, best and median of N; /proc/<pid>/status
for memory.
--before runs the attnd rows a second time with another binary (e.g. one
built before a change), in the same run.
The large dot over binary tensor data (tests/bench/binary_rows.py) comes
last; --only binary measures those rows alone.
Prints the table to stdout (and to --out as Markdown when given).
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
import binary_rows  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# numpy comes from Debian (python3-numpy), as for the Flask service
DEBIAN_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") \
    else sys.executable


def log(msg):
    print("# " + msg, file=sys.stderr, flush=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_ready(url, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w",
                            "%{http_code}", url], capture_output=True,
                           text=True)
        if r.stdout.strip() in ("200", "404", "405"):
            return
        time.sleep(0.1)
    raise RuntimeError("no answer from " + url)


class Service:
    """A child process serving HTTP on 127.0.0.1:port."""

    def __init__(self, name, argv, port, ready_path, env=None, cwd=None):
        self.name, self.port = name, port
        self.log = tempfile.NamedTemporaryFile(prefix=name + "-", mode="w+",
                                               delete=False)
        self.proc = subprocess.Popen(argv, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env,
                                     cwd=cwd)
        try:
            wait_ready(self.url(ready_path))
        except RuntimeError:
            self.stop()
            self.log.seek(0)
            raise RuntimeError(name + " did not start:\n" + self.log.read())

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def status(self, field):
        """A /proc/<pid>/status field in kB (VmRSS, VmHWM)."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def cpu_seconds(self):
        """User + system CPU time of the process and its children (nginx
        and gunicorn workers), from /proc."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % pid) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # fields[1] is the parent pid; [11], [12] utime, stime
            if int(pid) == self.proc.pid or int(fields[1]) == self.proc.pid:
                total += int(fields[11]) + int(fields[12])
        return total / tick

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        os.unlink(self.log.name)


def start_attnd(binary, extra=()):
    port = free_port()
    return Service("attnd", [binary, "--port", str(port)] + list(extra), port,
                   "/healthz")


def nginx_service(name, t, http_lines, location, probe):
    """nginx serving t/www on a free loopback port: its config in t,
    http_lines added to the http block, location the body of location /,
    probe the path the Service waits for."""
    port = free_port()
    os.chmod(t, 0o755)  # workers run as nobody
    conf = os.path.join(t, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""worker_processes 2;
daemon off;
pid %(t)s/nginx.pid;
error_log %(t)s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    %(extra)s
    client_body_temp_path %(t)s/body;
    proxy_temp_path %(t)s/proxy;
    fastcgi_temp_path %(t)s/fastcgi;
    uwsgi_temp_path %(t)s/uwsgi;
    scgi_temp_path %(t)s/scgi;
    server {
        listen 127.0.0.1:%(p)d;
        location / { root %(t)s/www; %(location)s }
    }
}
""" % {"t": t, "p": port, "extra": http_lines, "location": location})
    return Service(name, ["nginx", "-c", conf, "-e",
                          os.path.join(t, "error.log")], port, probe)


def start_nginx(tmp):
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    shutil.copy(os.path.join(tmp, "small_answer.json"),
                os.path.join(www, "small.json"))
    return nginx_service("nginx", tmp, "keepalive_requests 1000000;",
                         "default_type application/json;", "/small.json")


def start_flask():
    port = free_port()
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    return Service("gunicorn", ["gunicorn", "-w", "2", "-b",
                                "127.0.0.1:%d" % port, "--log-level",
                                "warning", "app:app"], port,
                   "/regression/nw", env=env,
                   cwd=os.path.join(HERE, "flask_ref"))


def to_ms(value, unit):
    return float(value) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[unit]


def wrk(service, path, duration, body=None, settle=None):
    """Throughput: {'rps', 'p99_ms', 'errors', 'cpu_us'} (the server's CPU
    time per answered request). settle: a path that answers once the
    server has worked off what wrk left queued (gunicorn's sync workers
    keep serving abandoned requests), checked after the run."""
    url = service.url(path)
    cpu0 = service.cpu_seconds()
    argv = ["wrk", "-t2", "-c32", "-d%ds" % duration, "--latency"]
    if body:
        argv += ["-s", os.path.join(HERE, "post.lua"), url, "--", body]
    else:
        argv += [url]
    out = subprocess.run(argv, capture_output=True, text=True).stdout
    cpu = service.cpu_seconds() - cpu0
    done = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    errors = re.search(r"non2xx=(\d+)", out)
    sock = re.search(r"Socket errors: (.*)", out)
    if settle:
        wait_ready(service.url(settle), timeout=120)
    return {"rps": rps, "p99_ms": to_ms(*m.groups()) if m else float("nan"),
            "errors": int(errors.group(1)) if errors else 0,
            "socket": sock.group(1) if sock else "",
            "cpu_us": cpu / done * 1e6 if done else float("nan")}


def post(url, body):
    """One request by curl: (seconds, status, bytes down, compute ms)."""
    r = subprocess.run(["curl", "-s", "-o", "/dev/null", "-D", "-", "-w",
                        "\n%{http_code} %{time_total} %{size_download}",
                        "-H", "Content-Type: application/json",
                        "--data-binary", "@" + body, url],
                       capture_output=True, text=True)
    status, total, size = r.stdout.strip().splitlines()[-1].split()
    m = re.search(r"Server-Timing: compute;dur=([\d.]+)", r.stdout, re.I)
    return (float(total), int(status), int(size),
            float(m.group(1)) if m else float("nan"))


def latencies(services, path, body, reps):
    """Sequential requests, one at a time, taking turns between services
    (so that a change in the machine's load hits them alike), after one
    warm-up request each. Returns one dict per service: median and best
    milliseconds, median and best compute milliseconds (Server-Timing),
    bytes of the answer, server CPU milliseconds per request."""
    urls = [s.url(path) for s in services]
    for url in urls:
        post(url, body)
    cpu0 = [s.cpu_seconds() for s in services]
    runs = [[] for _ in services]
    for _ in range(reps):
        for i, url in enumerate(urls):
            runs[i].append(post(url, body))
    out = []
    for i, service in enumerate(services):
        bad = [r[1] for r in runs[i] if r[1] != 200]
        if bad:
            raise RuntimeError("%s answered %s" % (urls[i], bad[0]))
        ms = [r[0] * 1e3 for r in runs[i]]
        compute = [r[3] for r in runs[i]]
        out.append({"median_ms": statistics.median(ms), "best_ms": min(ms),
                    "compute_ms": statistics.median(compute),
                    "compute_best_ms": min(compute),
                    "bytes": runs[i][0][2],
                    "cpu_ms": (service.cpu_seconds() - cpu0[i]) / reps * 1e3})
    return out


def fit_exponent(xs, ys):
    """Least-squares slope of log y on log x, and R²."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.mean(lx), statistics.mean(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    sxy = sum((a - mx) * (b - my) for a, b in zip(lx, ly))
    k = sxy / sxx
    ss_res = sum((b - my - k * (a - mx)) ** 2 for a, b in zip(lx, ly))
    ss_tot = sum((b - my) ** 2 for b in ly)
    return k, 1 - ss_res / ss_tot


def run_tool(argv, env=None):
    return subprocess.run(argv, capture_output=True, text=True, env=env,
                          check=True).stdout


def front_bodies(service, body, tmp):
    """The large dot request as the other fronts take it: POST /grade of
    its output (as the plain route answers it), and the Open Inference
    Protocol's /v2/models/attention_dot/infer. Returns {path: file}."""
    with open(body) as f:
        request = json.load(f)
    answer = os.path.join(tmp, "large_dot_answer.json")
    subprocess.run(["curl", "-s", "-o", answer, "-H",
                    "Content-Type: application/json", "--data-binary",
                    "@" + body, service.url("/attention/dot")], check=True)
    with open(answer) as f:
        output = json.load(f)["output"]
    grade = os.path.join(tmp, "large_dot_grade.json")
    with open(grade, "w") as f:
        json.dump({"endpoint": "/attention/dot", "request": request,
                   "answer": {"output": output}}, f)

    def flat(a):
        return [x for row in a for x in flat(row)] if isinstance(a, list) \
            else [a]

    def shape(a):
        return [len(a)] + shape(a[0]) if isinstance(a, list) else []

    v2 = os.path.join(tmp, "large_dot_v2.json")
    with open(v2, "w") as f:
        json.dump({"inputs": [{"name": k, "datatype": "FP64",
                               "shape": shape(request[k]),
                               "data": flat(request[k])}
                              for k in ("queries", "keys", "values")]}, f)
    return {"/grade": grade, "/v2/models/attention_dot/infer": v2}


def latencies_of_paths(service, requests, reps):
    """Sequential requests to one service, taking turns between the
    (path, body) pairs, after one warm-up each: the best and median
    milliseconds per pair, as latencies() gives them."""
    for path, body in requests:
        post(service.url(path), body)
    runs = [[] for _ in requests]
    for _ in range(reps):
        for i, (path, body) in enumerate(requests):
            runs[i].append(post(service.url(path), body))
    out = []
    for (path, _), rs in zip(requests, runs):
        bad = [r[1] for r in rs if r[1] != 200]
        if bad:
            raise RuntimeError("%s answered %s" % (path, bad[0]))
        ms = [r[0] * 1e3 for r in rs]
        out.append({"median_ms": statistics.median(ms), "best_ms": min(ms),
                    "cpu_ms": float("nan")})
    return out


def main():
    # a TERM (e.g. from a CI timeout) still stops the servers started here
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    ap = argparse.ArgumentParser()
    ap.add_argument("--attnd", default=os.path.join(ROOT, "build/attnd"))
    ap.add_argument("--before", help="another attnd binary, measured too")
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--payloads", default=os.path.join(ROOT,
                                                       "build/bench/payloads"))
    ap.add_argument("--tools", default=os.path.join(ROOT, "build/bench"))
    ap.add_argument("--out", help="also write the table here (Markdown)")
    ap.add_argument("--raw", help="also write every figure here (JSON)")
    ap.add_argument("--from-raw", help="print the table of a --raw file")
    ap.add_argument("--only", choices=["binary"],
                    help="measure only these rows (binary: the large dot "
                    "over binary tensor data, tests/bench/binary_rows.py)")
    args = ap.parse_args()

    pay = args.payloads
    if not binary_rows.present(pay):  # nor index.json
        run_tool([sys.executable, os.path.join(HERE, "gen_payloads.py"), pay])
    index = {p["name"]: p for p in json.load(open(os.path.join(pay,
                                                               "index.json")))}

    def body(name):
        return os.path.join(pay, name + ".json")

    binaries = [("attnd", args.attnd)]
    if args.before:
        binaries.append(("before", args.before))
    if args.from_raw:
        with open(args.from_raw) as f:
            raw = json.load(f)
        results = {tuple(k.split("/", 1)) if "/" in k else k: v
                   for k, v in raw["results"].items()}
        labels, meta = raw["labels"], raw["meta"]
    else:
        labels = [b[0] for b in binaries]
        meta = {"date": time.strftime("%Y-%m-%d %H:%M"),
                "cpus": os.cpu_count(), "load_start": os.getloadavg()[0],
                "only": args.only}
        if args.only == "binary":
            results = binary_rows.measure_alone(sys.modules[__name__], args,
                                                binaries, index)
        else:
            results = measure(args, binaries, index, body)
        meta["load_end"] = os.getloadavg()[0]
        if args.raw:
            with open(args.raw, "w") as f:
                json.dump({"labels": labels, "meta": meta,
                           "results": {"/".join(k) if isinstance(k, tuple)
                                       else k: v
                                       for k, v in results.items()}}, f,
                          indent=1)
    if meta.get("only") == "binary":
        table = binary_rows.table(sys.modules[__name__], results, index,
                                  labels)
    else:
        table = make_table(results, index, labels)
    header = ("attnd benchmark, %s; %d CPUs; attnd %s HTTP threads, %s BLAS "
              "threads; load average %.2f at start, %.2f at end\n" %
              (meta["date"], meta["cpus"], results[("attnd", "threads")][0],
               results[("attnd", "threads")][1], meta["load_start"],
               meta["load_end"]))
    notes = "\n".join("    " + results[k].strip()
                      for k in ("dgemm", "compute", "numpy") if k in results)
    if "numbers" in results:
        table_part = [l for l in results["numbers"].splitlines()
                      if not l.startswith("row ")]
        notes += "\n\nJSON numbers (in-process):\n" + "\n".join(
            "    " + l for l in table_part if l.strip())
    print(header)
    print(table)
    print("\nanchors and breakdown (ms, in-process):\n" + notes)
    if args.out:
        with open(args.out, "w") as f:
            f.write(header + "\n" + table + "\n\n" + notes + "\n")
    if binary_rows.failed(results):
        sys.exit("a binary answer differs from the JSON answer (see the "
                 "table)")


def measure(args, binaries, index, body):
    """Runs every measurement; returns {(label, key) or key: figures}.
    The servers compared in one row are measured back to back (wrk) or
    taking turns (latency)."""
    tmp = tempfile.mkdtemp(prefix="attnd-bench-")
    results = {}  # (label, key) -> figures
    services = []
    try:
        attnds = []
        for label, binary in binaries:
            log("start %s: %s" % (label, binary))
            a = start_attnd(binary)
            services.append(a)
            attnds.append((label, a))
            ver = json.loads(subprocess.run(["curl", "-s", a.url("/version")],
                                            capture_output=True,
                                            text=True).stdout)
            results[(label, "threads")] = (ver.get("threads"),
                                           ver.get("blas", {}).get("threads"))
        a = attnds[0][1]
        subprocess.run(["curl", "-s", "-o", os.path.join(tmp,
                                                         "small_answer.json"),
                        "-H", "Content-Type: application/json",
                        "--data-binary", "@" + body("small_nw"),
                        a.url("/regression/nw")], check=True)
        log("start nginx, gunicorn")
        ng = start_nginx(tmp)
        services.append(ng)
        fl = start_flask()
        services.append(fl)

        # small: each attnd, then nginx's static file
        for name in ("small_nw", "small_dot"):
            for label, a in attnds:
                log("wrk %s %s" % (label, name))
                results[(label, name)] = wrk(a, index[name]["route"],
                                             args.duration, body(name),
                                             "/healthz")
            log("wrk nginx")
            results[("nginx", name)] = wrk(ng, "/small.json", args.duration)
        # medium: each attnd, then Flask
        for name in ("medium_dot", "medium_add", "medium_nw"):
            route = index[name]["route"]
            for label, a in attnds:
                results[(label, name + "_answer")] = post(a.url(route),
                                                          body(name))[2]
                log("wrk %s %s" % (label, name))
                results[(label, name)] = wrk(a, route, args.duration,
                                             body(name), "/healthz")
            log("wrk flask %s" % name)
            results[("flask", name)] = wrk(fl, route, args.duration,
                                           body(name), "/regression/nw")
        # large: one request at a time, taking turns
        for name in ("large_dot", "large_add"):
            log("latency %s" % name)
            figs = latencies([a for _, a in attnds] + [fl],
                             index[name]["route"], body(name), 5)
            for (label, _), f in zip(attnds, figs):
                results[(label, name)] = f
            results[("flask", name)] = figs[-1]
        # the same large dot through /grade and the v2 front
        fronts = front_bodies(attnds[0][1], body("large_dot"), tmp)
        for label, a in attnds:
            log("latency %s large_dot fronts" % label)
            plain, grade, v2 = latencies_of_paths(
                a, [("/attention/dot", body("large_dot"))] +
                sorted(fronts.items()), 5)
            results[(label, "large_dot_fronts")] = {
                "plain": plain, "grade": grade, "v2": v2}
        log("latency large_dot_nw")
        figs = latencies([a for _, a in attnds], "/attention/dot",
                         body("large_dot_nw"), 7)
        for (label, _), f in zip(attnds, figs):
            results[(label, "large_dot_nw")] = f
        # scaling
        sweep = sorted((n for n in index if n.startswith("sweep_")),
                       key=lambda n: index[n]["bytes"])
        for label, _ in attnds:
            results[(label, "sweep")] = []
        for name in sweep:
            log("latency %s" % name)
            p = index[name]
            work = p["B"] * p["Nq"] * p["Nk"] * (p["d"] + p["dv"])
            figs = latencies([a for _, a in attnds], p["route"], body(name), 3)
            for (label, _), f in zip(attnds, figs):
                results[(label, "sweep")].append((work, f["best_ms"]))
        # the large dot over binary tensor data (binary_rows.py)
        results.update(binary_rows.measure(sys.modules[__name__], attnds,
                                           index, args.payloads, tmp,
                                           services))
        for s in services:
            s.stop()
        services = []

        # memory: a fresh daemon, one large request
        for label, binary in binaries:
            log("memory %s" % label)
            a = start_attnd(binary)
            services.append(a)
            idle = a.status("VmRSS")
            post(a.url("/attention/dot"), body("large_dot"))
            results[(label, "memory")] = (idle, a.status("VmHWM"))
            a.stop()
            services.remove(a)
        results.update(binary_rows.measure_memory(sys.modules[__name__],
                                                  binaries, index,
                                                  args.payloads, services))

        blas = results[(binaries[0][0], "threads")][1] or 1
        p = index["large_dot"]
        shape = [str(p[k]) for k in ("B", "Nq", "Nk", "d", "dv")]
        log("dgemm, compute breakdown, numpy")
        results["dgemm"] = run_tool([os.path.join(args.tools, "dgemm_bench")] +
                                    shape + [str(blas)])
        compute = os.path.join(args.tools, "compute_bench")
        if os.path.exists(compute):
            results["compute"] = run_tool([compute] + shape + [str(blas)])
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas))
        results["numpy"] = run_tool([DEBIAN_PYTHON,
                                     os.path.join(HERE, "numpy_attn.py"),
                                     body("large_dot")], env=env)
        numbers = os.path.join(args.tools, "numbers_bench")
        if os.path.exists(numbers):
            log("JSON numbers: parse and print per number")
            # exit 1 (a number read or printed differently from the
            # reference) is reported in the rows, not a failed run
            results["numbers"] = subprocess.run(
                [numbers] + [x for name in ("medium_dot", "large_dot")
                             for x in (name, index[name]["route"],
                                       body(name))],
                capture_output=True, text=True).stdout
        batch = os.path.join(args.tools, "grade_batch_bench")
        if os.path.exists(batch):
            log("grade batch: 1000 medium dot submissions, in-process")
            # exit 1 (a wrong batch answer) is reported in the row
            results["grade_batch"] = subprocess.run(
                [batch, body("medium_dot"), "1000", "5"],
                capture_output=True, text=True).stdout
        variants = os.path.join(args.tools, "variant_class_bench")
        if os.path.exists(variants):
            log("variant class: 1000 variants of the medium dot, copies "
                "checked, in-process")
            cls = os.path.join(args.tools, "variant_class")
            run_tool([DEBIAN_PYTHON, os.path.join(HERE, "variant_class.py"),
                      cls, args.attnd])
            # exit 1 (a copy missed or a mistake unnamed) is in the row
            results["variant_class"] = subprocess.run(
                [variants, cls, "3"], capture_output=True, text=True).stdout
    finally:
        for s in services:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def div(a, b):
    return a / b if b else float("nan")


def parse_numbers(text):
    """numbers_bench's "row" lines: {(op, set): {method: (best, median)}}
    in their order."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("row "):
            continue
        kv = dict(f.split("=", 1) for f in line.split()[1:])
        figs = {}
        for key, value in kv.items():
            if key.endswith("_best"):
                name = key[:-len("_best")]
                figs[name] = (float(value), float(kv[name + "_median"]))
        out[(kv["op"], kv["set"])] = figs
    return out


def number_rows(text, labels, rows):
    """The JSON number rows: attnd's ns per number against the anchor over
    every set of the op (the worst ratio decides), best of N samples taken
    in turns in one process (in-process: no "before" figure)."""
    figs = parse_numbers(text)
    checked = "CHECK FAILED" not in text
    targets = (
        ("parse", "fast_float", ("strtod",),
         "JSON parse per number ≤ 1.5× fast_float"),
        ("print", "fmt", ("to_chars",),
         "JSON print per number ≤ 1.5× Dragonbox (fmt::format_to)"),
        ("digits", "dragonbox", (),
         "JSON print, digit search alone ≤ 1.5× Dragonbox's (fmt to_decimal)"),
    )
    for op, anchor, context, target in targets:
        sets = [(k[1], v) for k, v in figs.items() if k[0] == op]
        if not sets:
            continue
        ns = lambda name: ", ".join("%s %.1f" % (st.replace("_dot/", " "),
                                                 f[name][0])
                                    for st, f in sets)
        ratios = [f["attnd"][0] / f[anchor][0] for _, f in sets]
        extra = "".join("; %s %s" % (c, ns(c)) for c in context)
        cells = [target]
        for l in labels:
            cells.append("%s ns" % ns("attnd") if l == "attnd" else "—")
        cells += ["%s %s ns%s" % (anchor, ns(anchor), extra),
                  "%.2f× (worst)%s" % (max(ratios), "" if checked else
                                       "; numbers differ from strtod's"),
                  "yes" if checked and max(ratios) <= 1.5 else "**no**"]
        rows.append(cells)


def batch_row(text, labels, rows):
    """POST /grade/batch of 1000 medium dot submissions against computing
    the reference once plus parsing the 1000 answers, in-process
    (grade_batch_bench's "row" line; no "before" figure)."""
    line = next((l for l in text.splitlines() if l.startswith("row ")), None)
    target = ("grade batch: 1000 medium dot submissions ≤ 3× (reference "
              "once + parsing the answers)")
    if line is None:
        rows.append([target] + ["—" for _ in labels] +
                    ["—", "no figure (grade_batch_bench failed)", "**no**"])
        return
    kv = dict(f.split("=", 1) for f in line.split()[1:])
    ratio, ok = float(kv["ratio"]), kv["ok"] == "1"
    cells = [target]
    for l in labels:
        cells.append("%.0f ms in-process" % float(kv["batch_ms"])
                     if l == "attnd" else "—")
    cells += ["reference %.1f ms + answers %.0f ms" %
              (float(kv["reference_ms"]), float(kv["answers_ms"])),
              "%.2f×%s" % (ratio, "" if ok else "; wrong batch answer"),
              "yes" if ok and ratio <= 3 else "**no**"]
    rows.append(cells)


def variant_class_row(text, labels, rows):
    """POST /grade/batch of a class of 1000 students, each answering their
    own variant of the medium dot, copies checked, in-process
    (variant_class_bench's "row" line; no "before" figure)."""
    line = next((l for l in text.splitlines() if l.startswith("row ")), None)
    target = "variant class of 1,000 (copies checked) ≤ 1.0 s"
    if line is None:
        rows.append([target] + ["—" for _ in labels] +
                    ["—", "no figure (variant_class_bench failed)", "**no**"])
        return
    kv = dict(f.split("=", 1) for f in line.split()[1:])
    ms, ok = float(kv["batch_ms"]), kv["ok"] == "1"
    cells = [target]
    for l in labels:
        cells.append("%.0f ms in-process, %.0f MiB peak" %
                     (ms, float(kv["rss_mib"])) if l == "attnd" else "—")
    cells += ["shared reference %.0f ms" % float(kv["shared_ms"]),
              "%.2f×; copies precision %.3f, recall %.3f; mistakes named "
              "%s/%s" % (float(kv["ratio"]), float(kv["precision"]),
                         float(kv["recall"]), kv["named"], kv["mistakes"]),
              "yes" if ok and ms <= 1000 else "**no**"]
    rows.append(cells)


def make_table(r, index, labels):
    """Markdown table: target, attnd figure(s), anchor, ratio, met.
    Latency rows compare the best of N requests taken in turns (the least
    disturbed by other load), and show the median too. Ratios also give
    the same comparison in server CPU time per request ("CPU"), which
    other load on the machine disturbs much less; "met" follows the
    target's own measure."""
    cols = ["target"] + ["attnd" if l == "attnd" else "attnd (%s)" % l
                         for l in labels] + ["anchor", "ratio", "met"]
    rows = []

    def row(target, fig, anchor, ratio, met):
        rows.append([target] + [fig(l) for l in labels] +
                    [anchor, ratio, "yes" if met else "**no**"])

    def rate(x):
        return "%.0f req/s, %.0f µs CPU/req" % (x["rps"], x["cpu_us"])

    def lat(x):
        return "%.1f ms (median %.1f; %.0f ms CPU)" % (
            x["best_ms"], x["median_ms"], x["cpu_ms"])

    # small: attnd against nginx's static file
    for name, what in (("small_nw", "NW worked example"),
                       ("small_dot", "dot B=1 Nq=1 Nk=3 d=2")):
        a, ng = r[("attnd", name)], r[("nginx", name)]
        row("small %s: req/s ≥ 80%% of nginx" % what,
            lambda l: rate(r[(l, name)]), "nginx " + rate(ng),
            "%.2f (CPU %.2f)" % (div(a["rps"], ng["rps"]),
                                 div(ng["cpu_us"], a["cpu_us"])),
            a["rps"] >= 0.8 * ng["rps"])
        row("small %s: p99 ≤ 1.5× nginx's" % what,
            lambda l: "%.2f ms" % r[(l, name)]["p99_ms"],
            "nginx %.2f ms" % ng["p99_ms"],
            "%.2f×" % div(a["p99_ms"], ng["p99_ms"]),
            a["p99_ms"] <= 1.5 * ng["p99_ms"])
    # medium: attnd against Flask + numpy
    for name, what, times in (("medium_dot", "dot", 12),
                              ("medium_add", "additive", 10),
                              ("medium_nw", "NW", 10)):
        a, f = r[("attnd", name)], r[("flask", name)]
        size = (index[name]["bytes"] + r[("attnd", name + "_answer")]) / 1e6
        row("medium %s: req/s ≥ %d× Flask+numpy" % (what, times),
            lambda l: "%s; %.0f MB/s in+out" %
            (rate(r[(l, name)]), r[(l, name)]["rps"] * size),
            "Flask " + rate(f), "%.1f× (CPU %.1f×)" %
            (div(a["rps"], f["rps"]), div(f["cpu_us"], a["cpu_us"])),
            a["rps"] >= times * f["rps"])
    # large: one request at a time
    for name, what in (("large_dot", "dot"), ("large_add", "additive")):
        a, f = r[("attnd", name)], r[("flask", name)]
        row("large %s: latency ≥ 10× lower than Flask+numpy" % what,
            lambda l: lat(r[(l, name)]), "Flask " + lat(f),
            "%.1f× (CPU %.1f×)" % (div(f["best_ms"], a["best_ms"]),
                                   div(f["cpu_ms"], a["cpu_ms"])),
            f["best_ms"] >= 10 * a["best_ms"])
    if ("attnd", "large_dot_fronts") in r:
        for front, what in (("grade", "/grade of its output"),
                            ("v2", "/v2/models/attention_dot/infer")):
            fr = lambda l: r[(l, "large_dot_fronts")]
            a = fr("attnd")
            row("large dot via %s: latency ≤ the plain route's" % what,
                lambda l: "%.1f ms (median %.1f)" %
                (fr(l)[front]["best_ms"], fr(l)[front]["median_ms"]),
                "plain %.1f ms (median %.1f)" % (a["plain"]["best_ms"],
                                                 a["plain"]["median_ms"]),
                "%.2f×" % div(a[front]["best_ms"], a["plain"]["best_ms"]),
                a[front]["best_ms"] <= a["plain"]["best_ms"] * 1.05)
    size = (index["large_dot"]["bytes"] + r[("attnd", "large_dot")]["bytes"]) / 1e6
    mbs = lambda l: size / (r[(l, "large_dot")]["best_ms"] / 1e3)
    row("large dot: JSON in + out ≥ 400 MB/s", lambda l: "%.0f MB/s" % mbs(l),
        "Flask %.0f MB/s" % mbs("flask"),
        "%.1f×" % div(mbs("attnd"), mbs("flask")), mbs("attnd") >= 400)
    p = index["large_dot"]
    flop = 2.0 * p["B"] * p["Nq"] * p["Nk"] * (p["d"] + p["dv"])
    dg = flop / float(re.search(r"best_ms=([\d.]+)", r["dgemm"]).group(1)) / 1e6
    threads = re.search(r"threads=(\d+)", r["dgemm"]).group(1)
    gf = lambda l: flop / r[(l, "large_dot")]["compute_best_ms"] / 1e6
    row("large dot: compute (Server-Timing) ≥ 70% of dgemm FLOP/s",
        lambda l: "%.1f GFLOP/s (%.1f ms)" %
        (gf(l), r[(l, "large_dot")]["compute_best_ms"]),
        "dgemm %.1f GFLOP/s, %s thread%s" % (dg, threads,
                                             "" if threads == "1" else "s"),
        "%.0f%%" % (100 * gf("attnd") / dg), gf("attnd") >= 0.7 * dg)
    npy = float(re.search(r"best_ms=([\d.]+)", r["numpy"]).group(1))
    a = r[("attnd", "large_dot_nw")]["best_ms"]
    row("large dot, return_weights:false: latency ≤ 3× numpy compute",
        lambda l: lat(r[(l, "large_dot_nw")]),
        "numpy %.1f ms in-process" % npy, "%.1f×" % (a / npy), a <= 3 * npy)
    tensors = 8 * (p["B"] * p["Nq"] * (p["d"] + p["dv"] + p["Nk"]) +
                   p["B"] * p["Nk"] * (p["d"] + p["dv"])) / 2**20
    idle, peak = r[("attnd", "memory")]
    row("large dot: peak RSS ≤ 2 × tensor bytes + idle RSS",
        lambda l: "%.1f MiB (idle %.1f)" % (r[(l, "memory")][1] / 1024,
                                            r[(l, "memory")][0] / 1024),
        "2 × %.1f MiB + %.1f MiB = %.1f MiB" % (tensors, idle / 1024,
                                                2 * tensors + idle / 1024),
        "%.1f× tensors" % ((peak - idle) / 1024 / tensors),
        (peak - idle) / 1024 <= 2 * tensors)
    fits = {l: fit_exponent(*zip(*r[(l, "sweep")])) for l in labels}
    row("latency ∝ (B·Nq·Nk·(d+dv))^k over %d dot sizes: k ≤ 1" %
        len(r[("attnd", "sweep")]),
        lambda l: "k = %.2f (R² %.2f)" % fits[l], "linear: k = 1",
        "%.2f" % fits["attnd"][0], fits["attnd"][0] <= 1.05)

    if "numbers" in r:
        number_rows(r["numbers"], labels, rows)
    if "grade_batch" in r:
        batch_row(r["grade_batch"], labels, rows)
    if "variant_class" in r:
        variant_class_row(r["variant_class"], labels, rows)
    if ("attnd", "binary") in r:
        binary_rows.rows(sys.modules[__name__], r, index, labels, row)

    widths = [max(len(str(x[i])) for x in rows + [cols])
              for i in range(len(cols))]
    fmt = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in
                                          zip(cells, widths)) + " |"
    lines = [fmt(cols), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt(x) for x in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""run.py — attnd's performance benchmark: attnd side by side with its
anchors, all measured in one run, printed as one table.

    usage: python3 tests/bench/run.py [--attnd build/attnd]
               [--before OTHER_ATTND] [--duration 10] [--out FILE]
    (make bench builds everything and runs this)

Anchors, started here on loopback ports and stopped at the end:
  nginx       the HTTP ceiling: Debian's nginx serving a small static JSON
              file (generated config in a temporary directory);
  Flask       tests/bench/flask_ref/app.py (Flask + numpy) under gunicorn
              with 2 workers: what a user would otherwise write;
  dgemm       tests/bench/dgemm_bench.c: OpenBLAS dgemm GFLOP/s at the
              products the large dot request makes, same BLAS threads;
  numpy       tests/bench/numpy_attn.py: numpy's in-process time for the
              same attention (no JSON, no HTTP), same BLAS threads.
Load: wrk -t2 -c32 -d<duration>s for throughput; sequential curl requests
(one at a time, medians) for latency; /proc/<pid>/status for memory.
--before runs the attnd rows a second time with another binary (e.g. one
built before a change), in the same run.
Prints the table to stdout (and to --out as Markdown when given).
"""
import argparse
import json
import math
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

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


def start_nginx(tmp):
    port = free_port()
    www = os.path.join(tmp, "www")
    os.makedirs(www)
    shutil.copy(os.path.join(tmp, "small_answer.json"),
                os.path.join(www, "small.json"))
    os.chmod(tmp, 0o755)  # workers run as nobody
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""worker_processes 2;
daemon off;
pid %(t)s/nginx.pid;
error_log %(t)s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path %(t)s/body;
    proxy_temp_path %(t)s/proxy;
    fastcgi_temp_path %(t)s/fastcgi;
    uwsgi_temp_path %(t)s/uwsgi;
    scgi_temp_path %(t)s/scgi;
    server {
        listen 127.0.0.1:%(p)d;
        location / { root %(t)s/www; default_type application/json; }
    }
}
""" % {"t": tmp, "p": port})
    return Service("nginx", ["nginx", "-c", conf, "-e",
                             os.path.join(tmp, "error.log")], port,
                   "/small.json")


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


def latency(service, path, body, reps, warmup=1):
    """Median of reps sequential requests: (ms, compute ms, bytes down,
    server CPU ms per request)."""
    url = service.url(path)
    for _ in range(warmup):
        post(url, body)
    cpu0 = service.cpu_seconds()
    runs = [post(url, body) for _ in range(reps)]
    cpu = service.cpu_seconds() - cpu0
    bad = [r[1] for r in runs if r[1] != 200]
    if bad:
        raise RuntimeError("%s answered %s" % (url, bad[0]))
    return (statistics.median(r[0] for r in runs) * 1e3,
            statistics.median(r[3] for r in runs), runs[0][2],
            cpu / reps * 1e3)


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


def main():
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
    args = ap.parse_args()

    pay = args.payloads
    if not os.path.exists(os.path.join(pay, "index.json")):
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
                "cpus": os.cpu_count(), "load_start": os.getloadavg()[0]}
        results = measure(args, binaries, index, body)
        meta["load_end"] = os.getloadavg()[0]
        if args.raw:
            with open(args.raw, "w") as f:
                json.dump({"labels": labels, "meta": meta,
                           "results": {"/".join(k) if isinstance(k, tuple)
                                       else k: v
                                       for k, v in results.items()}}, f,
                          indent=1)
    table = make_table(results, index, labels)
    header = ("attnd benchmark, %s; %d CPUs; attnd %s HTTP threads, %s BLAS "
              "threads; load average %.2f at start, %.2f at end\n" %
              (meta["date"], meta["cpus"], results[("attnd", "threads")][0],
               results[("attnd", "threads")][1], meta["load_start"],
               meta["load_end"]))
    notes = "\n".join("    " + results[k].strip()
                      for k in ("dgemm", "compute", "numpy") if k in results)
    print(header)
    print(table)
    print("\nanchors and breakdown (ms, in-process):\n" + notes)
    if args.out:
        with open(args.out, "w") as f:
            f.write(header + "\n" + table + "\n\n" + notes + "\n")


def measure(args, binaries, index, body):
    """Runs every measurement; returns {(label, key) or key: figures}."""
    tmp = tempfile.mkdtemp(prefix="attnd-bench-")
    results = {}  # (label, key) -> figure
    services = []
    try:
        # --- per binary: throughput, latency, scaling, memory ----------
        for label, binary in binaries:
            log("%s: %s" % (label, binary))
            a = start_attnd(binary)
            services.append(a)
            ver = json.loads(subprocess.run(["curl", "-s", a.url("/version")],
                                            capture_output=True,
                                            text=True).stdout)
            results[(label, "threads")] = (ver.get("threads"),
                                           ver.get("blas", {}).get("threads"))
            small_answer = os.path.join(tmp, "small_answer.json")
            subprocess.run(["curl", "-s", "-o", small_answer, "-H",
                            "Content-Type: application/json",
                            "--data-binary", "@" + body("small_nw"),
                            a.url("/regression/nw")], check=True)
            for name in ("medium_dot", "medium_add", "medium_nw"):
                results[(label, name + "_answer")] = post(
                    a.url(index[name]["route"]), body(name))[2]
            for name in ("small_nw", "small_dot", "medium_dot", "medium_add",
                         "medium_nw"):
                log("%s wrk %s" % (label, name))
                results[(label, name)] = wrk(a, index[name]["route"],
                                             args.duration, body(name),
                                             "/healthz")
            for name in ("large_dot", "large_dot_nw", "large_add"):
                log("%s latency %s" % (label, name))
                results[(label, name)] = latency(a, index[name]["route"],
                                                 body(name), 7)
            sweep = sorted((n for n in index if n.startswith("sweep_")),
                           key=lambda n: index[n]["bytes"])
            points = []
            for name in sweep:
                p = index[name]
                ms = latency(a, p["route"], body(name), 3)[0]
                work = p["B"] * p["Nq"] * p["Nk"] * (p["d"] + p["dv"])
                points.append((work, ms))
            results[(label, "sweep")] = points
            a.stop()
            services.remove(a)
            # memory: a fresh daemon, one large request
            a = start_attnd(binary)
            services.append(a)
            idle = a.status("VmRSS")
            post(a.url("/attention/dot"), body("large_dot"))
            results[(label, "memory")] = (idle, a.status("VmHWM"))
            a.stop()
            services.remove(a)

        # --- anchors ------------------------------------------------------
        log("nginx")
        ng = start_nginx(tmp)
        services.append(ng)
        results[("nginx", "small")] = wrk(ng, "/small.json", args.duration)
        ng.stop()
        services.remove(ng)

        log("flask")
        fl = start_flask()
        services.append(fl)
        for name in ("small_nw", "medium_dot", "medium_add", "medium_nw"):
            log("flask wrk %s" % name)
            results[("flask", name)] = wrk(fl, index[name]["route"],
                                           args.duration, body(name),
                                           "/regression/nw")
        for name in ("large_dot", "large_add"):
            log("flask latency %s" % name)
            results[("flask", name)] = latency(fl, index[name]["route"],
                                               body(name), 3)
        fl.stop()
        services.remove(fl)

        blas = results[("attnd", "threads")][1] or 1
        p = index["large_dot"]
        log("dgemm, numpy")
        results["dgemm"] = run_tool([os.path.join(args.tools, "dgemm_bench"),
                                     str(p["B"]), str(p["Nq"]), str(p["Nk"]),
                                     str(p["d"]), str(p["dv"]), str(blas)])
        compute = os.path.join(args.tools, "compute_bench")
        if os.path.exists(compute):
            results["compute"] = run_tool([compute, str(p["B"]), str(p["Nq"]),
                                           str(p["Nk"]), str(p["d"]),
                                           str(p["dv"]), str(blas)])
        env = dict(os.environ, OPENBLAS_NUM_THREADS=str(blas))
        results["numpy"] = run_tool([DEBIAN_PYTHON,
                                     os.path.join(HERE, "numpy_attn.py"),
                                     body("large_dot")], env=env)
    finally:
        for s in services:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    return results


def div(a, b):
    return a / b if b else float("nan")


def make_table(r, index, labels):
    """Markdown table: target, attnd figure(s), anchor, ratio, met."""
    cols = ["target"] + ["attnd" if l == "attnd" else "attnd (%s)" % l
                         for l in labels] + ["anchor", "ratio", "met"]
    rows = []

    def row(target, fig, anchor, ratio, met):
        rows.append([target] + [fig(l) for l in labels] +
                    [anchor, ratio, "yes" if met else "**no**"])

    def rate(x):
        return "%.0f req/s, %.0f µs CPU/req" % (x["rps"], x["cpu_us"])

    # small: attnd against nginx's static file
    ng = r[("nginx", "small")]
    for name, what in (("small_nw", "NW worked example"),
                       ("small_dot", "dot B=1 Nq=1 Nk=3 d=2")):
        a = r[("attnd", name)]
        row("small %s: req/s ≥ 50%% of nginx" % what,
            lambda l: rate(r[(l, name)]), "nginx " + rate(ng),
            "%.2f" % div(a["rps"], ng["rps"]), a["rps"] >= 0.5 * ng["rps"])
        row("small %s: p99 < 5 ms" % what,
            lambda l: "%.2f ms" % r[(l, name)]["p99_ms"],
            "nginx %.2f ms" % ng["p99_ms"], "—", a["p99_ms"] < 5)
    # medium: attnd against Flask + numpy
    for name, what in (("medium_dot", "dot"), ("medium_add", "additive"),
                       ("medium_nw", "NW")):
        a, f = r[("attnd", name)], r[("flask", name)]
        size = (index[name]["bytes"] + r[("attnd", name + "_answer")]) / 1e6
        row("medium %s: req/s ≥ 10× Flask+numpy" % what,
            lambda l: "%s; %.0f MB/s in+out" %
            (rate(r[(l, name)]), r[(l, name)]["rps"] * size),
            "Flask " + rate(f), "%.1f×" % div(a["rps"], f["rps"]),
            a["rps"] >= 10 * f["rps"])
    # large: one request at a time
    for name, what in (("large_dot", "dot"), ("large_add", "additive")):
        a, f = r[("attnd", name)], r[("flask", name)]
        row("large %s: latency ≥ 10× lower than Flask+numpy" % what,
            lambda l: "%.1f ms (%.0f ms CPU)" % (r[(l, name)][0],
                                                  r[(l, name)][3]),
            "Flask %.0f ms (%.0f ms CPU)" % (f[0], f[3]),
            "%.1f×" % div(f[0], a[0]), f[0] >= 10 * a[0])
    size = lambda l: (index["large_dot"]["bytes"] + r[(l, "large_dot")][2]) / 1e6
    mbs = lambda l: size(l) / (r[(l, "large_dot")][0] / 1e3)
    row("large dot: JSON in + out ≥ 400 MB/s", lambda l: "%.0f MB/s" % mbs(l),
        "Flask %.0f MB/s" % mbs("flask"),
        "%.1f×" % div(mbs("attnd"), mbs("flask")), mbs("attnd") >= 400)
    p = index["large_dot"]
    flop = 2.0 * p["B"] * p["Nq"] * p["Nk"] * (p["d"] + p["dv"])
    dg = float(re.search(r"gflops=([\d.]+)", r["dgemm"]).group(1))
    threads = re.search(r"threads=(\d+)", r["dgemm"]).group(1)
    gf = lambda l: flop / r[(l, "large_dot")][1] / 1e6
    row("large dot: compute (Server-Timing) ≥ 70% of dgemm FLOP/s",
        lambda l: "%.1f GFLOP/s (%.1f ms)" % (gf(l), r[(l, "large_dot")][1]),
        "dgemm %.1f GFLOP/s, %s thread%s" % (dg, threads,
                                             "" if threads == "1" else "s"),
        "%.0f%%" % (100 * gf("attnd") / dg), gf("attnd") >= 0.7 * dg)
    npy = float(re.search(r"median_ms=([\d.]+)", r["numpy"]).group(1))
    a = r[("attnd", "large_dot_nw")][0]
    row("large dot, return_weights:false: latency ≤ 3× numpy compute",
        lambda l: "%.1f ms" % r[(l, "large_dot_nw")][0],
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

    widths = [max(len(str(x[i])) for x in rows + [cols])
              for i in range(len(cols))]
    fmt = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in
                                          zip(cells, widths)) + " |"
    lines = [fmt(cols), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += [fmt(x) for x in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

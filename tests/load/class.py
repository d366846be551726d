#!/usr/bin/env python3
"""class.py — a class under attack: honest students, a teacher and a health
probe share one attnd with an attacker, phase after phase. Prints TAP with
the measured figures, a Markdown table, and ends with
"class: N passed, N failed".

    usage: python3 tests/load/class.py [--short | --full] [--only NAME,...]
                                       [--json FILE] [--flags "..."]
                                       [--report-only] PATH/TO/attnd

One daemon, started on a free loopback port (--port 0) with DAEMON_FLAGS
(docs/class.md's configuration without TLS and tokens; --flags replaces
it). A flag the binary refuses is dropped, reported ("not ok") and the
run goes on without it.

Everyone has an address of their own in 127/8 (Linux routes all of it to
lo; each client socket is bound to its source address before connect):

  * students (short 60, full 300) at 127.0.1-2.x, each a keep-alive
    browser with 2 persistent connections, clicking every ~2 s (jittered)
    a small request, in turn a dot (2x3x4 tensors), the README's
    Nadaraya-Watson example and a masked softmax; a click waits for a free
    connection of its own, and its latency runs from the click;
  * a teacher at 127.0.9.1 grading a batch of 50 small dot submissions
    (POST /grade/batch) after another, at most one a second;
  * a /healthz probe at 127.0.9.2 on the probe port (--probe-port, else
    the main port), a new connection every 100 ms; a probe
    that is refused or times out (HEALTH_TIMEOUT) fails, its latency taken
    as the timeout;
  * /metrics polled at 127.0.9.3 every 250 ms for the memory budget's
    use (attnd_memory_reserved_bytes, attnd_memory_reserved_peak_bytes).

Phases of a fixed length (short 10 s, full 30 s), first without an
attacker (the baseline), then one per attack, from addresses of its own
(127.0.2P.x for phase P), each between pauses in which the daemon settles
(its CPU use falls back; at most 30 s, full 45 s):

  half_heads           ~70 connections sending "GET /healthz HTTP/1.1\\r\\n"
                       and no more, renewed every 9 s;
  big_declared_bodies  4 addresses x 128 connections: POST /attention/dot
                       (a quarter GET /healthz) declaring 16,000,000 bytes
                       and sending "[1", holding;
  gzip_answers         120 connections from one address asking, with
                       Accept-Encoding: gzip, for a dot answer that
                       compresses well (Nq = Nk = 1500, d = dv = 1, equal
                       keys: 2.25 M equal weights), half reading at 1 KB/s,
                       half not at all;
  abandoned_jobs       8 additive requests near --max-work from 4 addresses,
                       each closed right after it is sent; half-way, 8 more
                       followed by 256 KB of extra bytes before the close;
                       the daemon's CPU-seconds after the clients left
                       (/proc/PID/stat) and the access log's statuses;
  slow_bodies          9 addresses x 114 (short x 100) connections sending
                       a declared 1 MB body at 8.5 KiB/s, just above the
                       default --min-body-rate;
  slow_readers         16 addresses x 2 connections asking for
                       /encoding/positional?num_steps=4096&d=512 (~40 MB)
                       and reading at 2 KB/s;
  svg                  16 addresses each asking in a loop for a small
                       /transformer/encoder answer as image/svg+xml.

An attacker whose connection is refused or answered tries again a second
later, as a script would. A phase passes when the students got at least
99 % 200s with a p99 latency within 3x the baseline's (at least
P99_FLOOR_MS), /healthz answered every probe with p99 <= 50 ms, and the
daemon's peak VmRSS stayed <= 1.3x the memory budget. --report-only marks
every phase "ok ... # report" (and says which would fail) and exits 0, for
binaries that are not expected to pass yet.

The daemon is killed if its VmRSS passes --rss-cap-mb (3072), and restarted
for the next phase; the whole run is bounded by --time-limit; the daemon,
the worker processes and their sockets are gone when the script exits.
"""
import argparse
import asyncio
import collections
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attacks  # noqa: E402

# docs/class.md's configuration; PROBE is replaced by a free port, where
# the /healthz probe asks (the main port when the binary has no
# --probe-port)
DAEMON_FLAGS = ("--probe-port PROBE --rate-limit 2 --burst 10 "
                "--max-concurrent-per-client 4 --max-connections 64 "
                "--memory-budget 1G")

HOST = "127.0.0.1"
TEACHER_ADDR = "127.0.9.1"
HEALTH_ADDR = "127.0.9.2"
METRICS_ADDR = "127.0.9.3"
CLICK_PERIOD = 2.0        # s between a student's clicks (jittered +-25 %)
REQUEST_TIMEOUT = 10.0    # s a student waits for an answer
TEACHER_PERIOD = 1.0      # s at least between two batches
TEACHER_TIMEOUT = 30.0
HEALTH_PERIOD = 0.1
HEALTH_TIMEOUT = 2.0
METRICS_PERIOD = 0.25
QUIET_CPU = 0.3           # daemon CPU-s per s below which it has settled

SUCCESS_MIN = 0.99
P99_FACTOR = 3.0
P99_FLOOR_MS = 50.0
HEALTH_P99_MS = 50.0
RSS_BUDGET_FACTOR = 1.3

MODES = {
    "short": dict(students=60, phase=10, settle_max=30, warmup=3,
                  time_limit=300, slow_body_addrs=9, slow_body_per_addr=100),
    "full": dict(students=300, phase=30, settle_max=45, warmup=4,
                 time_limit=600, slow_body_addrs=9, slow_body_per_addr=114),
}
ATTACKS = ["half_heads", "big_declared_bodies", "gzip_answers",
           "abandoned_jobs", "slow_bodies", "slow_readers", "svg"]


# --- requests ----------------------------------------------------------------
def http_request(method, path, body=b"", headers=(), close=False,
                 ctype="application/json"):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1"]
    if body or method == "POST":
        lines += ["Content-Type: " + ctype, "Content-Length: %d" % len(body)]
    if close:
        lines.append("Connection: close")
    lines += list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def student_requests():
    """(kind, bytes) of the three lab-sized requests a student sends."""
    dumps = attacks.dumps
    t = [attacks.mat(3, 4, 0.3), attacks.mat(3, 4, 0.7)]
    dot = dumps({"queries": t, "keys": [attacks.mat(3, 4, 0.5),
                                        attacks.mat(3, 4, 0.9)],
                 "values": t})
    nw = dumps({"x_train": [1, 2, 4], "y_train": [0, 3, 1],
                "x_query": [2.5], "w": 0.5})
    sm = dumps({"scores": [[[0.5, 1.5, -1, 2], [3, 0, 0, 1]]],
                "valid_lens": [2]})
    return [("dot", http_request("POST", "/attention/dot", dot)),
            ("nw", http_request("POST", "/regression/nw", nw)),
            ("softmax", http_request("POST", "/softmax/masked", sm))]


def batch_request(n=50):
    req = {"queries": [[1, 2]], "keys": [[1, 0], [0, 1]],
           "values": [[1], [2]]}
    lines = []
    for i in range(n):
        out = 1.66976 if i % 3 else 1.73106   # every third one wrong
        lines.append(attacks.dumps({"id": "s%03d" % i,
                                    "endpoint": "/attention/dot",
                                    "request": req,
                                    "answer": {"output": [[out]]}}))
    return http_request("POST", "/grade/batch", b"\n".join(lines) + b"\n",
                        ctype="application/x-ndjson")


def read_port(port_file):
    with open(port_file) as f:
        return int(f.read().strip() or 0)


async def read_answer(reader):
    """Reads one answer from a StreamReader: (status, headers); for a
    problem+json answer, headers["problem"] is its code and detail."""
    head = await reader.readuntil(b"\r\n\r\n")
    status, hdrs = attacks.parse_head(head[:-4])
    body = b""
    if "chunked" in hdrs.get("transfer-encoding", ""):
        while True:
            line = await reader.readuntil(b"\r\n")
            size = int(line.split(b";")[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass
                break
            body = (await reader.readexactly(size + 2))[:-2]
    elif "content-length" in hdrs:
        body = await reader.readexactly(int(hdrs["content-length"]))
    else:
        body = await reader.read()
        hdrs["connection"] = "close"
    if "problem" in hdrs.get("content-type", ""):
        try:
            doc = json.loads(body)
            hdrs["problem"] = (str(doc.get("code", "")),
                               str(doc.get("detail", ""))[:200])
        except ValueError:
            pass
    return status, hdrs


def error_name(e):
    if isinstance(e, (asyncio.TimeoutError, socket.timeout)):
        return "timeout"
    if isinstance(e, ConnectionRefusedError):
        return "refused"
    if isinstance(e, ConnectionResetError):
        return "reset"
    if isinstance(e, asyncio.IncompleteReadError):
        return "closed"
    return "error"


# --- the class (worker process) ------------------------------------------------
class KeepAlive:
    """One persistent connection of a browser."""

    def __init__(self, src, port_file):
        self.src, self.port_file = src, port_file
        self.r = self.w = None

    def close(self):
        if self.w is not None:
            self.w.close()
        self.r = self.w = None

    async def exchange(self, req):
        """Sends req and reads its answer: (status, headers). A reused
        connection that the server closed before answering is opened again
        once, as browsers do."""
        for attempt in (0, 1):
            reused = self.w is not None
            if not reused:
                self.r, self.w = await asyncio.open_connection(
                    HOST, read_port(self.port_file),
                    local_addr=(self.src, 0))
            try:
                self.w.write(req)
                await self.w.drain()
                status, hdrs = await read_answer(self.r)
            except (ConnectionError, asyncio.IncompleteReadError) as e:
                self.close()
                nothing = (not isinstance(e, asyncio.IncompleteReadError)
                           or not e.partial)
                if reused and attempt == 0 and nothing:
                    continue
                raise
            if hdrs.get("connection", "").lower() == "close":
                self.close()
            return status, hdrs
        raise ConnectionError("unreachable")


def problem_status(status, hdrs, details):
    """"503 overloaded" for a problem answer (its detail kept once per
    status and code in `details`), else the status."""
    if "problem" not in hdrs:
        return status
    code, detail = hdrs["problem"]
    key = "%s %s" % (status, code)
    details.setdefault(key, detail)
    return key


async def student(i, src, port_file, reqs, records, details, rng,
                  poll=None, poll_period=10.0):
    """A browser with the lab open: a click every CLICK_PERIOD s, in turn
    one of reqs ((kind, bytes)), and when poll is given, that request
    every poll_period s too (recorded as kind "poll"), all on the same
    two keep-alive connections."""
    free = asyncio.Queue()
    conns = [KeepAlive(src, port_file), KeepAlive(src, port_file)]
    for c in conns:
        free.put_nowait(c)
    pending = set()

    async def attempt(req):
        c = await free.get()
        try:
            status, hdrs = await c.exchange(req)
            return problem_status(status, hdrs, details)
        except BaseException:
            c.close()
            raise
        finally:
            free.put_nowait(c)

    async def click(kind, req):
        t0 = time.monotonic()
        try:
            status = await asyncio.wait_for(attempt(req), REQUEST_TIMEOUT)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a failed click is a record too
            status = error_name(e)
        records.append((t0, time.monotonic() - t0, status, kind))

    n = i  # students start at different requests
    await asyncio.sleep(rng.uniform(0, CLICK_PERIOD))
    next_poll = time.monotonic() + rng.uniform(0, poll_period)
    try:
        while True:
            kind, req = reqs[n % len(reqs)]
            n += 1
            if poll is not None and time.monotonic() >= next_poll:
                kind, req, n = "poll", poll, n - 1
                next_poll += poll_period
            t = asyncio.create_task(click(kind, req))
            pending.add(t)
            t.add_done_callback(pending.discard)
            await asyncio.sleep(CLICK_PERIOD * rng.uniform(0.75, 1.25))
    finally:
        for t in list(pending):
            t.cancel()
        for c in conns:
            c.close()


async def teacher(port_file, records, details):
    req = batch_request()
    c = KeepAlive(TEACHER_ADDR, port_file)
    try:
        while True:
            t0 = time.monotonic()
            wait = TEACHER_PERIOD
            try:
                status, hdrs = await asyncio.wait_for(c.exchange(req),
                                                      TEACHER_TIMEOUT)
                if status != 200:
                    wait = max(wait, float(hdrs.get("retry-after", 1) or 1))
                status = problem_status(status, hdrs, details)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                c.close()
                status = error_name(e)
            dt = time.monotonic() - t0
            records.append((t0, dt, status, "batch"))
            await asyncio.sleep(max(0.0, wait - dt))
    finally:
        c.close()


async def until_stopped(tasks, out, records, details):
    """Runs tasks until SIGTERM or SIGINT, then writes what the students
    recorded to the file out."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    loop.add_signal_handler(signal.SIGINT, stop.set)
    await stop.wait()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    with open(out, "w") as f:
        json.dump({"records": records, "details": details}, f)


async def class_main(a):
    records, details = [], {}
    reqs = student_requests()
    rng = random.Random(a["seed"])
    tasks = []
    for i in range(a["students"]):
        src = "127.0.%d.%d" % (1 + i // 200, 1 + i % 200)
        tasks.append(asyncio.create_task(
            student(i, src, a["port_file"], reqs, records, details,
                    random.Random(rng.random()))))
    tasks.append(asyncio.create_task(teacher(a["port_file"], records,
                                             details)))
    await until_stopped(tasks, a["out"], records, details)


def worker_health(a):
    """GET /healthz on a new connection every HEALTH_PERIOD."""
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    records = []
    req = http_request("GET", "/healthz", close=True)
    nxt = time.monotonic()
    while not stopping:
        t0 = time.monotonic()
        status = None
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind((HEALTH_ADDR, 0))
            s.settimeout(HEALTH_TIMEOUT)
            s.connect((HOST, read_port(a["port_file"])))
            s.sendall(req)
            data = b""
            while time.monotonic() - t0 < HEALTH_TIMEOUT:
                s.settimeout(max(0.01, HEALTH_TIMEOUT -
                                 (time.monotonic() - t0)))
                piece = s.recv(4096)
                if not piece:
                    break
                data += piece
            m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
            status = int(m.group(1)) if m else "closed"
            if time.monotonic() - t0 >= HEALTH_TIMEOUT:
                status = "timeout"
        except (OSError, ValueError) as e:
            status = error_name(e)
        finally:
            s.close()
        dt = time.monotonic() - t0
        if not isinstance(status, int):
            dt = HEALTH_TIMEOUT
        records.append((t0, dt, status, "healthz"))
        nxt += HEALTH_PERIOD
        time.sleep(max(0.0, nxt - time.monotonic()))
        nxt = max(nxt, time.monotonic() - HEALTH_PERIOD)
    with open(a["out"], "w") as f:
        json.dump(records, f)


# --- attacks (worker process) --------------------------------------------------
def cpu_seconds(pid):
    """utime + stime of a process, in seconds (0 when it is gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class Ctx:
    def __init__(self, a):
        self.port, self.pid, self.net = a["port"], a["pid"], a["net"]
        self.mode = a["mode"]
        self.m = MODES[self.mode]
        self.end = time.monotonic() + a["seconds"]
        self.counts = collections.Counter()   # answers' statuses
        self.ends = collections.Counter()     # how connections ended
        self.notes = {}
        self.open = self.peak_open = 0

    def addr(self, j):
        return "127.0.%d.%d" % (self.net, 1 + j)

    def left(self):
        return self.end - time.monotonic()

    def count(self, what):
        self.counts[str(what)] += 1

    def ended(self, how):
        self.ends[str(how)] += 1


async def conversation(ctx, s, first, body, body_rate, read_rate):
    """Sends `first`, then `body` at body_rate bytes/s, while reading the
    answer at read_rate bytes/s (None: at once; 0: the head, then no
    more). Returns how it ended: "done" (answer read to the server's
    close), "cut" (closed in the middle of a 200), "refused" (another
    status), "closed" (no answer), or it is still held when cancelled."""
    loop = asyncio.get_running_loop()
    await loop.sock_sendall(s, first)
    tick = 0.25

    async def trickle():
        pos = 0
        while pos < len(body):
            await asyncio.sleep(tick)
            step = max(1, int(body_rate * tick))
            await loop.sock_sendall(s, body[pos:pos + step])
            pos += step

    sender = asyncio.create_task(trickle()) if body else None
    try:
        head, status, got, clen, dechunk = b"", None, 0, None, None
        while True:
            if status is not None and read_rate == 0:
                await asyncio.sleep(3600)   # held until cancelled
            size = 65536
            if status is not None and read_rate:
                size = max(1, int(read_rate * tick))
            data = await loop.sock_recv(s, size)
            if not data:
                if status is None:
                    return "closed"
                if status != 200:
                    return "refused"
                done = (dechunk.done if dechunk else
                        clen is None or got >= clen)
                return "done" if done else "cut"
            if status is None:
                head += data
                if b"\r\n\r\n" not in head:
                    continue
                h, data = head.split(b"\r\n\r\n", 1)
                status, hdrs = attacks.parse_head(h)
                ctx.count(status)
                if status != 200:
                    return "refused"
                if "chunked" in hdrs.get("transfer-encoding", ""):
                    dechunk = attacks.Dechunk()
                elif "content-length" in hdrs:
                    clen = int(hdrs["content-length"])
            got += len(data)
            if dechunk:
                dechunk.feed(data)
            if status is not None and read_rate:
                await asyncio.sleep(tick)
    finally:
        if sender:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)


async def hold(ctx, src, first, body=b"", body_rate=0, read_rate=None,
               renew=None, repeat=False, rcvbuf=None, ramp=0.5, retry=1.0):
    """A connection from src held until the phase ends: opened again after
    `renew` seconds, after the server's answer or close (a second later,
    or at once when `repeat` and the answer was read whole)."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(random.uniform(0, ramp))
    while ctx.left() > 0.2:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        try:
            s.bind((src, 0))
            await asyncio.wait_for(loop.sock_connect(s, (HOST, ctx.port)),
                                   max(0.1, min(3.0, ctx.left())))
        except (OSError, asyncio.TimeoutError) as e:
            s.close()
            ctx.ended("connect " + error_name(e))
            await asyncio.sleep(retry * random.uniform(0.8, 1.2))
            continue
        ctx.open += 1
        ctx.peak_open = max(ctx.peak_open, ctx.open)
        span = ctx.left() if renew is None else min(renew, ctx.left())
        try:
            how = await asyncio.wait_for(
                conversation(ctx, s, first, body, body_rate, read_rate),
                max(0.1, span))
        except asyncio.TimeoutError:
            how = "held"
        except OSError as e:
            how = error_name(e)
        finally:
            s.close()
            ctx.open -= 1
        ctx.ended(how)
        if how not in ("held",) and not (repeat and how == "done"):
            await asyncio.sleep(retry * random.uniform(0.8, 1.2))


async def run_all(ctx, coros):
    tasks = [asyncio.create_task(c) for c in coros]
    try:
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True),
                               max(0.1, ctx.left() + 5))
    except asyncio.TimeoutError:
        pass
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def a_half_heads(ctx):
    n = 70
    ctx.notes["what"] = ("%d connections from %s sending 'GET /healthz "
                         "HTTP/1.1\\r\\n' only, renewed every 9 s"
                         % (n, ctx.addr(0)))
    await run_all(ctx, [hold(ctx, ctx.addr(0), b"GET /healthz HTTP/1.1\r\n",
                             renew=9.0) for _ in range(n)])


async def a_big_declared_bodies(ctx):
    post = (b"POST /attention/dot HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 16000000"
            b"\r\n\r\n[1")
    get = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           b"Content-Type: application/json\r\nContent-Length: 16000000"
           b"\r\n\r\n[1")
    ctx.notes["what"] = ("4 addresses x 128 connections declaring a "
                         "16,000,000-byte body and sending '[1' (a quarter "
                         "of them GET /healthz), holding")
    coros = [hold(ctx, ctx.addr(a), get if j % 4 == 3 else post, ramp=1.0)
             for a in range(4) for j in range(128)]
    await run_all(ctx, coros)


def gzip_body():
    n = 1500
    return attacks.dumps({"queries": [[[0.5]] * n], "keys": [[[1]] * n],
                          "values": [[[0.25]] * n]})


async def a_gzip_answers(ctx):
    req = http_request("POST", "/attention/dot", gzip_body(),
                       ["Accept-Encoding: gzip"], close=True)
    ctx.notes["what"] = ("120 connections from %s: dot Nq=Nk=1500, d=dv=1, "
                         "equal keys (%d-byte request), Accept-Encoding: "
                         "gzip; 60 read at 1 KB/s, 60 not at all"
                         % (ctx.addr(0), len(req)))
    coros = [hold(ctx, ctx.addr(0), req, read_rate=0 if j % 2 else 1024,
                  rcvbuf=4096, ramp=1.0) for j in range(120)]
    await run_all(ctx, coros)


async def a_abandoned_jobs(ctx):
    loop = asyncio.get_running_loop()
    hidden, scaled = 2000, ""
    # the largest num_hiddens the daemon admits: its 413 names the estimate
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((ctx.addr(7), 0))
    s.settimeout(5)
    s.connect((HOST, ctx.port))
    s.sendall(http_request("POST", "/attention/additive",
                           attacks.heavy_additive_body(hidden), close=True))
    data, t_end = b"", time.monotonic() + 1.0
    try:
        while time.monotonic() < t_end:
            s.settimeout(max(0.01, t_end - time.monotonic()))
            piece = s.recv(65536)
            if not piece:
                break
            data += piece
    except socket.timeout:
        pass
    s.close()
    over = attacks.work_over(413, data) if data.startswith(
        b"HTTP/1.1 413") else None
    if over:
        need, limit = over
        hidden = max(1, int(hidden * limit * 0.95 / need))
        scaled = " (scaled from 2000: %d estimated over %d)" % over
    elif not data:
        scaled = " (the 2000-unit probe was admitted, and abandoned too)"
    req = http_request("POST", "/attention/additive",
                       attacks.heavy_additive_body(hidden))

    async def abandon(extra):
        for j in range(8):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.bind((ctx.addr(j % 4), 0))
                await loop.sock_connect(s, (HOST, ctx.port))
                await asyncio.wait_for(loop.sock_sendall(s, req + extra), 5)
                ctx.ended("sent and closed")
            except (OSError, asyncio.TimeoutError) as e:
                ctx.ended("send " + error_name(e))
            finally:
                s.close()

    cpu0 = cpu_seconds(ctx.pid)
    await abandon(b"")
    t_closed = time.monotonic()
    cpu1 = cpu_seconds(ctx.pid)
    await asyncio.sleep(max(0.0, ctx.left() / 2))
    cpu2 = cpu_seconds(ctx.pid)
    half = time.monotonic() - t_closed
    await abandon(b"x" * (256 * 1024))
    t_closed2 = time.monotonic()
    cpu3 = cpu_seconds(ctx.pid)
    await asyncio.sleep(max(0.0, ctx.left()))
    cpu4 = cpu_seconds(ctx.pid)
    ctx.notes["what"] = ("8 additive requests (Nq=Nk=2048, num_hiddens %d%s, "
                         "%d bytes) from 4 addresses closed right after "
                         "sending; %.0f s later 8 more with 256 KB of extra "
                         "bytes" % (hidden, scaled, len(req), half))
    ctx.notes["cpu_sending"] = round(cpu1 - cpu0, 2)
    ctx.notes["cpu_after_first"] = round(cpu2 - cpu1, 2)
    ctx.notes["cpu_after_first_s"] = round(half, 1)
    ctx.notes["cpu_after_second"] = round(cpu4 - cpu3, 2)
    ctx.notes["cpu_after_second_s"] = round(time.monotonic() - t_closed2, 1)


async def a_slow_bodies(ctx):
    addrs, per = ctx.m["slow_body_addrs"], ctx.m["slow_body_per_addr"]
    size = 1000 * 1000
    first = (b"POST /attention/dot HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
             b'{"queries": [' % size)
    body = b" " * (size - 13)
    rate = 8704   # 8.5 KiB/s, above the default --min-body-rate 8K
    ctx.notes["what"] = ("%d addresses x %d connections sending a declared "
                         "1 MB body at %d B/s" % (addrs, per, rate))
    coros = [hold(ctx, ctx.addr(a), first, body=body, body_rate=rate,
                  ramp=2.0) for a in range(addrs) for _ in range(per)]
    await run_all(ctx, coros)


async def a_slow_readers(ctx):
    path = "/encoding/positional?num_steps=4096&d=512"
    req = http_request("GET", path, close=True)
    ctx.notes["what"] = ("16 addresses x 2 connections: GET %s read at "
                         "2 KB/s" % path)
    coros = [hold(ctx, ctx.addr(a), req, read_rate=2048, rcvbuf=4096)
             for a in range(16) for _ in range(2)]
    await run_all(ctx, coros)


def svg_body():
    return attacks.dumps({"src": [[1, 0, 2, -1], [0, 1, 1, 0], [2, 2, 0, 1]],
                          "num_heads": 2, "num_layers": 1,
                          "dim_feedforward": 8, "seed": 0})


async def a_svg(ctx):
    req = http_request("POST", "/transformer/encoder", svg_body(),
                       ["Accept: image/svg+xml"], close=True)
    ctx.notes["what"] = ("16 addresses each asking in a loop for a small "
                         "/transformer/encoder answer as image/svg+xml")
    coros = [hold(ctx, ctx.addr(a), req, repeat=True) for a in range(16)]
    await run_all(ctx, coros)


ATTACK_FNS = {"half_heads": a_half_heads,
              "big_declared_bodies": a_big_declared_bodies,
              "gzip_answers": a_gzip_answers,
              "abandoned_jobs": a_abandoned_jobs,
              "slow_bodies": a_slow_bodies,
              "slow_readers": a_slow_readers,
              "svg": a_svg}


async def attack_main(a):
    ctx = Ctx(a)
    try:
        await ATTACK_FNS[a["name"]](ctx)
    except Exception as e:  # the attack's own failure is reported
        ctx.notes["error"] = "%s: %s" % (type(e).__name__, e)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    ctx.notes["own_cpu_s"] = round(ru.ru_utime + ru.ru_stime, 2)
    with open(a["out"], "w") as f:
        json.dump({"counts": dict(ctx.counts), "ends": dict(ctx.ends),
                   "notes": ctx.notes,
                   "peak_open": ctx.peak_open}, f)


def worker(kind, a):
    if kind == "class":
        asyncio.run(class_main(a))
    elif kind == "health":
        worker_health(a)
    elif kind == "attack":
        asyncio.run(attack_main(a))


# --- the run (main process) ------------------------------------------------------
CHILDREN = []   # worker processes not yet reaped


def spawn(kind, args):
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__),
                          "--worker", kind, json.dumps(args)],
                         stdin=subprocess.DEVNULL)
    CHILDREN.append(p)
    return p


def finish(p, grace):
    """SIGTERM (when still running after `grace` s for attackers, at once
    otherwise), then SIGKILL."""
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        p.terminate()
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    if p in CHILDREN:
        CHILDREN.remove(p)


def cleanup():
    for p in list(CHILDREN):
        if p.poll() is None:
            p.kill()
        p.wait()
        CHILDREN.remove(p)
    attacks.stop_all()


class TimeLimit(Exception):
    pass


def free_port():
    """A loopback port that nothing listens on now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def flag_value(flags, flag):
    """The value given to `flag` in flags, or None."""
    for i, tok in enumerate(flags):
        if tok == flag and i + 1 < len(flags):
            return flags[i + 1]
        if tok.startswith(flag + "="):
            return tok.split("=", 1)[1]
    return None


def drop_flag(flags, flag):
    """flags without `flag` and its value."""
    out, skip = [], False
    for i, tok in enumerate(flags):
        if skip:
            skip = False
            continue
        if tok == flag:
            skip = i + 1 < len(flags) and not flags[i + 1].startswith("--")
            continue
        if tok.startswith(flag + "="):
            continue
        out.append(tok)
    return out


def start_daemon(binary, flags, refused):
    """A Daemon with as many of `flags` as the binary accepts; each refused
    flag is dropped and noted in `refused` as (flag, message)."""
    flags = list(flags)
    for _ in range(len(flags) + 1):
        try:
            return attacks.Daemon(binary, flags), flags
        except attacks.Unsupported as e:
            flag, msg = str(e), "unknown option"
        except attacks.DaemonFailed as e:
            m = re.search(r"attnd: (--[a-z0-9-]+)", str(e))
            if not m or m.group(1) not in " ".join(flags):
                raise
            flag, msg = m.group(1), str(e).strip().splitlines()[-1]
        refused.append((flag, msg))
        flags = drop_flag(flags, flag)
    raise attacks.DaemonFailed("no flag set started")


class Metrics:
    """Polls /metrics from METRICS_ADDR: the memory budget's gauges."""

    def __init__(self):
        self.samples = []   # (t, {name: value}) or (t, None) on a failure
        self.port = None
        self._halt = False
        import threading
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        names = ("attnd_memory_budget_bytes", "attnd_memory_reserved_bytes",
                 "attnd_memory_reserved_peak_bytes",
                 "attnd_in_flight_requests", "attnd_memory_refusals_total")
        while not self._halt:
            t0 = time.monotonic()
            vals = None
            if self.port:
                st, _, data, _ = attacks.request(self.port, "GET",
                                                 "/metrics",
                                                 source=METRICS_ADDR,
                                                 timeout=2.0)
                if st == 200:
                    vals = {}
                    for line in data.decode(errors="replace").splitlines():
                        parts = line.split()
                        if len(parts) == 2 and parts[0] in names:
                            vals[parts[0]] = float(parts[1])
                self.samples.append((t0, vals))
            time.sleep(max(0.0, METRICS_PERIOD - (time.monotonic() - t0)))

    def window(self, t0, t1):
        return [v for t, v in self.samples if t0 <= t < t1]

    def stop(self):
        self._halt = True
        self.thread.join(timeout=3)


def pct(values, q):
    return attacks.pct(values, q) if values else float("nan")


def in_window(records, t0, t1):
    return [r for r in records if t0 <= r[0] < t1]


def status_counts(statuses):
    c = collections.Counter(str(s) for s in statuses)
    return dict(sorted(c.items()))


def counts_text(d):
    return ",".join("%s:%d" % kv for kv in sorted(d.items())) or "-"


LOG_LINE = re.compile(r" ([A-Z]+) (\S+) (\d{3}) ")


def log_counts(path, off0, off1, route=None):
    with open(path, "rb") as f:
        f.seek(off0)
        text = f.read(max(0, off1 - off0)).decode(errors="replace")
    c = collections.Counter()
    for line in text.splitlines():
        m = LOG_LINE.search(line)
        if m and (route is None or m.group(2).split("?")[0] == route):
            c[m.group(3)] += 1
    return dict(sorted(c.items()))


def log_size(d):
    try:
        return os.path.getsize(d.log.name)
    except OSError:
        return 0


class Run:
    def __init__(self, args):
        self.args = args
        self.mode = "full" if args.full else "short"
        self.m = MODES[self.mode]
        self.binary = args.attnd
        self.flags = [str(free_port()) if f == "PROBE" else f
                      for f in shlex.split(args.flags)]
        self.refused = []
        self.tmp = tempfile.mkdtemp(prefix="attnd-class-")
        self.port_file = os.path.join(self.tmp, "port")
        self.probe_file = os.path.join(self.tmp, "probe_port")
        self.d = self.mon = None
        self.phases = []
        self.n = self.failed = 0
        self.would_fail = []
        self.restarts = 0
        self.budget = None
        self.daemons = []   # every daemon started, their logs removed at exit

    def remove_files(self):
        for d in self.daemons:
            d.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def tap(self, ok, what, notes=()):
        self.n += 1
        if self.args.report_only:
            if not ok:
                self.would_fail.append(self.n)
            print("ok %d - %s # report%s" % (
                self.n, what, "" if ok else ": outside the thresholds"))
        else:
            self.failed += not ok
            print("%s %d - %s" % ("ok" if ok else "not ok", self.n, what))
        for line in notes:
            print("#   " + line)
        sys.stdout.flush()

    def start(self):
        self.d, self.flags = start_daemon(self.binary, self.flags,
                                          self.refused)
        self.daemons.append(self.d)
        with open(self.port_file + ".new", "w") as f:
            f.write("%d\n" % self.d.port)
        os.replace(self.port_file + ".new", self.port_file)
        probe = flag_value(self.flags, "--probe-port")
        with open(self.probe_file + ".new", "w") as f:
            f.write("%s\n" % (probe or self.d.port))
        os.replace(self.probe_file + ".new", self.probe_file)
        self.mon = attacks.RssMonitor(self.d, self.args.rss_cap_mb * 1024)
        self.metrics.port = self.d.port

    def ensure_daemon(self):
        if self.d.alive():
            return ""
        how = attacks.Run.mem_note(self, self.mon).strip()
        self.mon.finish()
        self.d.stop()
        self.restarts += 1
        self.start()
        return "restarted on port %d after %s" % (self.d.port, how)

    @property
    def cap_kb(self):
        return self.args.rss_cap_mb * 1024

    def settle(self):
        """Waits at least 1 s, then until the daemon's CPU use is below
        QUIET_CPU, at most settle_max s: the seconds waited."""
        t0 = time.monotonic()
        time.sleep(1.0)
        prev, tp = cpu_seconds(self.d.pid), time.monotonic()
        while time.monotonic() - t0 < self.m["settle_max"]:
            time.sleep(0.5)
            c, t = cpu_seconds(self.d.pid), time.monotonic()
            if (c - prev) / (t - tp) < QUIET_CPU or not self.d.alive():
                break
            prev, tp = c, t
        return time.monotonic() - t0

    def phase(self, name, index):
        note = self.ensure_daemon()
        d, mon = self.d, self.mon
        p = {"phase": name, "restart": note, "t0": time.monotonic()}
        p["cpu0"] = cpu_seconds(d.pid)
        p["log0"] = log_size(d)
        p["daemon"] = d
        mon.reset_peak()
        proc = None
        if name != "baseline":
            p["attack_out"] = os.path.join(self.tmp, "attack-%s.json" % name)
            proc = spawn("attack", {"name": name, "port": d.port,
                                    "pid": d.pid, "net": 20 + index,
                                    "mode": self.mode,
                                    "seconds": self.m["phase"],
                                    "out": p["attack_out"]})
        end = p["t0"] + self.m["phase"]
        while time.monotonic() < end:
            time.sleep(0.1)
        p["t1"] = time.monotonic()
        p["cpu1"] = cpu_seconds(d.pid)
        p["rss_peak_kb"] = mon.peak
        p["capped"] = mon.capped
        p["died"] = not d.alive()
        p["mem_note"] = attacks.Run.mem_note(self, mon).strip()
        if proc:
            finish(proc, 10)
        p["settle_s"] = self.settle() if d.alive() else 0.0
        p["t2"] = time.monotonic()
        p["cpu2"] = cpu_seconds(d.pid)
        p["log2"] = log_size(d)
        self.phases.append(p)

    def run(self):
        self.metrics = Metrics()
        try:
            self.start()
        except attacks.DaemonFailed as e:
            self.tap(False, "attnd starts with %s" % " ".join(self.flags),
                     [str(e)])
            self.metrics.stop()
            return
        refused = "; ".join("%s (%s)" % r for r in self.refused)
        if self.refused:
            self.tap(False, "attnd refused %s; the run goes on with: %s" % (
                refused, " ".join(self.flags)))
        print("# class: %s mode, %s %s, port %d, %d students, phases of "
              "%d s" % (self.mode, self.binary, " ".join(self.flags),
                        self.d.port, self.m["students"], self.m["phase"]))
        sys.stdout.flush()
        cls = spawn("class", {"students": self.m["students"],
                              "port_file": self.port_file,
                              "seed": 1, "out": os.path.join(self.tmp,
                                                             "class.json")})
        health = spawn("health", {"port_file": self.probe_file,
                                  "out": os.path.join(self.tmp,
                                                      "health.json")})
        time.sleep(self.m["warmup"])
        names = ["baseline"] + [a for a in ATTACKS
                                if not self.only or a in self.only]
        for i, name in enumerate(names):
            self.phase(name, i)
        for p in (cls, health):
            p.terminate()
            finish(p, 10)
        self.metrics.stop()
        cls_out = self.load("class.json") or {}
        self.records = cls_out.get("records", [])
        self.details = cls_out.get("details", {})
        self.health = self.load("health.json")

    def load(self, name):
        try:
            with open(os.path.join(self.tmp, name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return []

    # --- figures ---------------------------------------------------------------
    def figures(self, p):
        t0, t1 = p["t0"], p["t1"]
        recs = in_window(self.records, t0, t1)
        stud = [r for r in recs if r[3] != "batch"]
        batch = [r for r in recs if r[3] == "batch"]
        lat = [r[1] * 1000 for r in stud]
        ok = sum(1 for r in stud if r[2] == 200)
        refusals = {str(r[2]) for r in recs if r[2] != 200}
        hp = in_window(self.health, t0, t1)
        hlat = [r[1] * 1000 for r in hp]
        mets = [v for v in self.metrics.window(t0, t1 + 0.3)]
        good = [v for v in mets if v]
        budget = max((v.get("attnd_memory_budget_bytes", 0) for v in good),
                     default=0) or self.budget_from_flags()
        reserved = max((v.get("attnd_memory_reserved_bytes", 0)
                        for v in good), default=None)
        peaks = [v["attnd_memory_reserved_peak_bytes"] for v in good
                 if "attnd_memory_reserved_peak_bytes" in v]
        if len(peaks) >= 2 and peaks[-1] > peaks[0]:
            reserved = max(reserved or 0, peaks[-1])
        attack = {}
        if "attack_out" in p:
            try:
                with open(p["attack_out"]) as f:
                    attack = json.load(f)
            except (OSError, ValueError):
                attack = {"counts": {}, "notes": {"error": "no result"}}
        d = p["daemon"]
        f = {
            "phase": p["phase"],
            "seconds": round(t1 - t0, 1),
            "students_sent": len(stud),
            "students_200": ok,
            "students_success": ok / len(stud) if stud else 0.0,
            "students_statuses": status_counts(r[2] for r in stud),
            "students_p50_ms": round(pct(lat, 0.5), 1),
            "students_p99_ms": round(pct(lat, 0.99), 1),
            "students_max_ms": round(max(lat), 1) if lat else None,
            "refusal_details": {k: v for k, v in self.details.items()
                                if k in refusals},
            "failures_by_route": dict(collections.Counter(
                r[3] for r in stud if r[2] != 200)),
            "teacher_statuses": status_counts(r[2] for r in batch),
            "teacher_p50_ms": round(pct([r[1] * 1000 for r in batch], 0.5),
                                    1),
            "healthz_probes": len(hp),
            "healthz_p50_ms": round(pct(hlat, 0.5), 1),
            "healthz_p99_ms": round(pct(hlat, 0.99), 1),
            "healthz_max_ms": round(max(hlat), 1) if hlat else None,
            "healthz_failed": sum(1 for r in hp if r[2] != 200),
            "healthz_statuses": status_counts(r[2] for r in hp),
            "rss_peak_mib": round(p["rss_peak_kb"] / 1024.0, 1),
            "budget_mib": round(budget / 1048576.0, 1) if budget else None,
            "reserved_peak_mib": (round(reserved / 1048576.0, 1)
                                  if reserved is not None else None),
            "metrics_failed": sum(1 for v in mets if not v),
            "cpu_s": round(p["cpu1"] - p["cpu0"], 2),
            "settle_s": round(p["settle_s"], 1),
            "cpu_settle_s": round(p["cpu2"] - p["cpu1"], 2),
            "attacker": attack.get("counts", {}),
            "attacker_ends": attack.get("ends", {}),
            "attacker_peak_open": attack.get("peak_open"),
            "attack_notes": attack.get("notes", {}),
            "log_statuses": log_counts(d.log.name, p["log0"], p["log2"])
            if os.path.exists(d.log.name) else {},
            "daemon": p["mem_note"] or "alive",
            "restart": p["restart"],
        }
        if p["phase"] == "abandoned_jobs" and os.path.exists(d.log.name):
            f["log_additive"] = log_counts(d.log.name, p["log0"], p["log2"],
                                           "/attention/additive")
        return f

    def budget_from_flags(self):
        for i, tok in enumerate(self.flags):
            val = None
            if tok == "--memory-budget" and i + 1 < len(self.flags):
                val = self.flags[i + 1]
            elif tok.startswith("--memory-budget="):
                val = tok.split("=", 1)[1]
            if val:
                m = re.match(r"^(\d+(?:\.\d+)?)([KMGT]?)", val.upper())
                if m:
                    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30,
                            "T": 1 << 40}[m.group(2)]
                    return float(m.group(1)) * mult
        return 0

    def judge(self, f, base_p99):
        reasons = []
        limit = max(P99_FACTOR * base_p99, P99_FLOOR_MS)
        f["p99_limit_ms"] = round(limit, 1)
        if f["students_sent"] == 0 or f["students_success"] < SUCCESS_MIN:
            reasons.append("students %.1f %% < %.0f %%" % (
                100 * f["students_success"], 100 * SUCCESS_MIN))
        if not f["students_p99_ms"] <= limit:
            reasons.append("students p99 %.1f ms > %.1f ms" % (
                f["students_p99_ms"], limit))
        if not f["healthz_p99_ms"] <= HEALTH_P99_MS:
            reasons.append("/healthz p99 %.1f ms > %.0f ms" % (
                f["healthz_p99_ms"], HEALTH_P99_MS))
        if f["healthz_failed"] or not f["healthz_probes"]:
            reasons.append("%d failed probes" % f["healthz_failed"])
        if f["budget_mib"]:
            rlim = RSS_BUDGET_FACTOR * f["budget_mib"]
            f["rss_limit_mib"] = round(rlim, 1)
            if f["rss_peak_mib"] > rlim:
                reasons.append("VmRSS %.0f MiB > %.0f MiB" % (
                    f["rss_peak_mib"], rlim))
        if f["daemon"] != "alive":
            reasons.append("the daemon %s" % f["daemon"])
        f["reasons"] = reasons
        f["ok"] = not reasons
        return f["ok"]

    def text(self, f):
        extra = ""
        n = f["attack_notes"]
        if "cpu_after_first" in n:
            extra = ("; daemon CPU after the clients left: %.2f s in %.0f s "
                     "(first 8), %.2f s in %.0f s (8 with extra bytes), "
                     "%.2f s while settling; access log /attention/additive "
                     "{%s}" % (n["cpu_after_first"], n["cpu_after_first_s"],
                               n["cpu_after_second"],
                               n["cpu_after_second_s"], f["cpu_settle_s"],
                               counts_text(f.get("log_additive", {}))))
        reserved = ("reserved peak %s MiB of %s MiB" % (
            f["reserved_peak_mib"], f["budget_mib"])
            if f["reserved_peak_mib"] is not None else "no budget gauge")
        return (
            "%s: students %d/%d 200 (%.1f %%) {%s}, p50 %.1f ms, p99 %.1f ms "
            "(limit %.1f ms); teacher {%s}; /healthz %d probes, p99 %.1f ms, "
            "max %.1f ms, %d failed; VmRSS peak %.1f MiB%s, %s; daemon CPU "
            "%.2f s, settled in %.1f s; attacker answers {%s}, connections "
            "ended {%s}%s%s" % (
                f["phase"], f["students_200"], f["students_sent"],
                100 * f["students_success"],
                counts_text(f["students_statuses"]), f["students_p50_ms"],
                f["students_p99_ms"], f["p99_limit_ms"],
                counts_text(f["teacher_statuses"]), f["healthz_probes"],
                f["healthz_p99_ms"], f["healthz_max_ms"] or 0,
                f["healthz_failed"], f["rss_peak_mib"],
                " (limit %.0f MiB)" % f["rss_limit_mib"]
                if "rss_limit_mib" in f else "", reserved, f["cpu_s"],
                f["settle_s"], counts_text(f["attacker"]),
                counts_text(f["attacker_ends"]), extra,
                "" if f["ok"] else " -- " + "; ".join(f["reasons"])))

    def report(self):
        out = []
        base_p99 = None
        for p in self.phases:
            f = self.figures(p)
            if base_p99 is None:
                base_p99 = f["students_p99_ms"]
            self.judge(f, base_p99)
            notes = []
            if f["attack_notes"].get("what"):
                notes.append("attack: " + f["attack_notes"]["what"])
            if f["attack_notes"].get("error"):
                notes.append("attack error: " + f["attack_notes"]["error"])
            if f["restart"]:
                notes.append("daemon " + f["restart"])
            for k, v in sorted(f["refusal_details"].items()):
                notes.append("%s: %s" % (k, v))
            notes.append("access log {%s}; /metrics failed %d; attacker: "
                         "peak open connections %s, its own CPU %s s" % (
                             counts_text(f["log_statuses"]),
                             f["metrics_failed"], f["attacker_peak_open"],
                             f["attack_notes"].get("own_cpu_s", "-")))
            self.tap(f["ok"], self.text(f), notes)
            out.append(f)
        return out


def attacker_text(f):
    if f["phase"] == "baseline":
        return "-"
    return "%s; ended %s" % (counts_text(f["attacker"]),
                             counts_text(f["attacker_ends"]))


def table(figs):
    rows = ["| phase | students 200 / sent | p50 / p99 ms | teacher | "
            "/healthz p99 / max ms, failed | peak VmRSS MiB | peak reserved "
            "MiB | daemon CPU s | attacker got | result |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for f in figs:
        rows.append("| %s | %d / %d (%.1f %%) | %.1f / %.1f | %s | %.1f / "
                    "%.1f, %d | %.0f | %s | %.1f | %s | %s |" % (
                        f["phase"], f["students_200"], f["students_sent"],
                        100 * f["students_success"], f["students_p50_ms"],
                        f["students_p99_ms"],
                        counts_text(f["teacher_statuses"]),
                        f["healthz_p99_ms"], f["healthz_max_ms"] or 0,
                        f["healthz_failed"], f["rss_peak_mib"],
                        "-" if f["reserved_peak_mib"] is None
                        else "%.0f" % f["reserved_peak_mib"], f["cpu_s"],
                        attacker_text(f),
                        "passes" if f["ok"] else "fails: " +
                        "; ".join(f["reasons"])))
    return "\n".join(rows)


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = hard if hard != resource.RLIM_INFINITY else 65536
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        except (ValueError, OSError):
            pass
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], json.loads(sys.argv[3]))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--short", action="store_true",
                   help="60 students, 10 s phases (the default)")
    g.add_argument("--full", action="store_true",
                   help="300 students, 30 s phases")
    ap.add_argument("--only", default="",
                    help="comma-separated attacks (%s); the baseline always "
                    "runs" % ",".join(ATTACKS))
    ap.add_argument("--json", metavar="FILE", help="write the figures here")
    ap.add_argument("--flags", default=DAEMON_FLAGS,
                    help="the daemon's flags (default: %(default)s)")
    ap.add_argument("--report-only", action="store_true",
                    help="print the figures, mark every phase ok, exit 0")
    ap.add_argument("--rss-cap-mb", type=int, default=3072,
                    help="kill the daemon past this VmRSS (3072)")
    ap.add_argument("--time-limit", type=float, default=0,
                    help="seconds for the whole run (short 300, full 600)")
    ap.add_argument("attnd")
    args = ap.parse_args()
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    bad = [x for x in only if x not in ATTACKS]
    if bad:
        ap.error("unknown attack %s (known: %s)" % (",".join(bad),
                                                     ",".join(ATTACKS)))
    nofile = raise_nofile()
    run = Run(args)
    run.only = only
    limit = args.time_limit or run.m["time_limit"]

    def on_alarm(*_):
        raise TimeLimit()
    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.alarm(int(limit))
    t0 = time.monotonic()
    figs, timed_out = [], False
    print("# class: descriptors %d; time limit %d s" % (nofile, limit))
    try:
        try:
            run.run()
        except TimeLimit:
            timed_out = True
        finally:
            cleanup()
        signal.alarm(0)
        if timed_out:
            run.tap(False, "the run ended within its %d s time limit" % limit)
        elif run.phases:
            figs = run.report()
    finally:
        cleanup()
        signal.alarm(0)
        run.remove_files()
    if figs:
        print("#")
        for line in table(figs).splitlines():
            print("# " + line)
    if run.would_fail:
        print("# report only: %d of %d outside the thresholds (%s)" % (
            len(run.would_fail), run.n,
            ", ".join(str(i) for i in run.would_fail)))
    print("# class: %.1f s in all, %d daemon restarts" % (
        time.monotonic() - t0, run.restarts))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"binary": args.attnd, "mode": run.mode,
                       "flags": run.flags, "refused_flags": run.refused,
                       "report_only": args.report_only, "phases": figs,
                       "timed_out": timed_out,
                       "thresholds": {
                           "success_min": SUCCESS_MIN,
                           "p99_factor": P99_FACTOR,
                           "p99_floor_ms": P99_FLOOR_MS,
                           "healthz_p99_ms": HEALTH_P99_MS,
                           "rss_budget_factor": RSS_BUDGET_FACTOR}},
                      f, indent=1, default=str)
    print("class: %d passed, %d failed" % (run.n - run.failed, run.failed))
    sys.exit(1 if run.failed and not args.report_only else 0)


if __name__ == "__main__":
    main()

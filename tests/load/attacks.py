#!/usr/bin/env python3
"""attacks.py — resource attacks against attnd daemons of its own, on
loopback, each bounded in time and count. Prints TAP with the measured
figures and ends with "attacks: N passed, N failed".

    usage: python3 tests/load/attacks.py [--short | --long] [--baseline]
                                         [--only 1,3,...] [--rss-cap-mb MB]
                                         PATH/TO/attnd

--short (the default, for CI: about 70 s) and --long (for `make soak`:
about 4 minutes) differ in counts and durations only. Every attack starts
its own daemon on a free port with the flags it needs; an attack whose
flag the binary refuses ("unknown option") is reported as
"not ok N - ... (option not supported by this binary)" and the run goes
on. --baseline runs every attack without the flags that bound it
(--memory-budget, --compute-timeout, --header-timeout, --min-body-rate),
with the same thresholds: the figures of a binary without those defences
(a binary that has them applies their defaults).

Resident memory is VmRSS from /proc/PID/status, polled every 20 ms: "idle"
before the attack, "peak" during it, "after" once its clients are gone. A
daemon whose VmRSS passes --rss-cap-mb (default 3072) is killed at once
and its attack fails, so that no run takes the machine's memory.

  1. non-reading clients of a huge answer: 16 connections (long
     64) each send a 255 KB dot request (Nq = Nk = 4000, d = dv = 1,
     an answer of 361 MB) and never read, held 5 s (long 10 s), with
     --memory-budget 1G: peak VmRSS < 1.5 GiB; meanwhile a client from
     127.0.0.3 sends small dot requests on new connections: each answered
     200, or 503 with Retry-After, none other and none slower than 5 s;
  2. slow reader: one client reads that answer at about 100 KB/s for a
     while (short 10 s, long 60 s), --memory-budget 1G: how long the server
     keeps the connection and the memory it holds for it; peak < 1.5 GiB;
  3. tree bomb: a 16 MiB body of empty objects, {"queries": [{},{},...]}
     and a top-level [{},{},...], each to a fresh default daemon: peak
     VmRSS above idle < 100 MiB, and a 400, 413 or 422 problem+json;
  4. health under compute: two additive requests at the work limit
     (Nq = Nk = 2048, d = 2, num_hiddens 2000, seeded; fewer hidden units
     when the daemon estimates that over --max-work) while GET /healthz is
     probed every 10 ms (health_probe.py) from 127.0.0.3 for 5 s (long
     20 s), with --compute-timeout 2 s beyond the probe: both admitted,
     p99 < 50 ms, no failed probe;
  5. slow headers: 200 connections from 127.0.0.2 send their headers one
     byte a second, with --header-timeout 5; meanwhile a client from
     127.0.0.3 makes 200 requests, a new connection each: all 200;
  6. slow uploads: --max-connections 64 --min-body-rate 4096
     --header-timeout 5; 64 connections from 127.0.0.2 send a 1 MB body at
     about 1 KB/s; once the server has dropped them (waiting at most until
     5 s before the end of the 14 s hold, long 30 s), a client from
     127.0.0.3 makes 200 requests: all 200;
  7. gzip answer: 8 connections send a dot request with a 22 MB answer and
     Accept-Encoding: gzip and never read, --memory-budget 1G: peak < 1.5 GiB;
  8. HEAD /encoding/positional?num_steps=4096&d=4096 with
     --memory-budget 256M: a 200 whose headers match the GET's, or a 413 or
     503 (with Retry-After) problem+json; VmRSS above idle never over
     400 MiB;
  9. a 352-byte multihead request (num_heads = num_hiddens = 4096, seeded,
     Nq = Nk = 4) with Accept-Encoding: gzip, --memory-budget 1G: status,
     answer size, peak VmRSS < 1.5 GiB.
Source addresses 127.0.0.2 and 127.0.0.3 are loopback (Linux routes all of
127/8 to lo), so per-address limits apply to them as to separate clients.
"""
import argparse
import http.client
import json
import math
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import health_probe  # noqa: E402

MiB_KB = 1024                 # kB in a MiB
RSS_LIMIT_KB = 1536 * MiB_KB  # 1.5 GiB
TREE_DELTA_KB = 100 * MiB_KB
HEAD_DELTA_KB = 400 * MiB_KB
HEALTH_P99_MS = 50.0
SMALL_HANG_S = 5.0

MODES = {
    "short": dict(conns1=16, hold1=5, slow_read=10, health=5,
                  slow_hdr_hold=10, upload_hold=14, gzip_hold=5),
    "long": dict(conns1=64, hold1=10, slow_read=60, health=20,
                 slow_hdr_hold=60, upload_hold=30, gzip_hold=15),
}


LIVE = set()  # daemons not yet stopped


def stop_all():
    for d in list(LIVE):
        d.kill()


class Unsupported(Exception):
    pass


class DaemonFailed(Exception):
    pass


# --- daemons -----------------------------------------------------------------
class Daemon:
    """attnd on a free loopback port, its log in a temporary file, no ATTND_*
    variable inherited (the flags alone decide)."""

    def __init__(self, binary, flags):
        self.flags = list(flags)
        self.log = tempfile.NamedTemporaryFile(prefix="attnd-attack-",
                                               suffix=".log", delete=False)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("ATTND_")}
        self.proc = subprocess.Popen([binary, "--port", "0"] + self.flags,
                                     stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=self.log, env=env)
        self.pid = self.proc.pid
        LIVE.add(self)
        self.port = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text = self.log_text()
            m = re.search(r"listening on http://[^ ]*:(\d+)", text)
            if m:
                self.port = int(m.group(1))
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.kill()
        text = self.log_text().strip()
        m = re.search(r"unknown option '?(--[a-z-]+)", text)
        if m:
            raise Unsupported(m.group(1))
        raise DaemonFailed(text[:300] or "no 'listening on' line")

    def log_text(self):
        with open(self.log.name, errors="replace") as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None

    def rss_kb(self):
        try:
            with open("/proc/%d/status" % self.pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def fds(self):
        try:
            return len(os.listdir("/proc/%d/fd" % self.pid))
        except OSError:
            return 0

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        LIVE.discard(self)

    def stop(self):
        """SIGTERM, then SIGKILL after 2 s (a daemon still computing an
        attack's request would otherwise wait out its grace period)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        self.log.close()
        try:
            os.unlink(self.log.name)
        except OSError:
            pass


class RssMonitor(threading.Thread):
    """Polls VmRSS every 20 ms; kills the daemon past cap_kb."""

    def __init__(self, daemon, cap_kb):
        super().__init__(daemon=True)
        self.d = daemon
        self.cap_kb = cap_kb
        self.cur = self.peak = self.idle = daemon.rss_kb()
        self.capped = False
        self.died = False
        self._halt = threading.Event()
        self.lock = threading.Lock()
        self.start()

    def run(self):
        while not self._halt.is_set():
            if not self.d.alive():
                self.died = not self.capped
                break
            kb = self.d.rss_kb()
            with self.lock:
                self.cur = kb
                if kb > self.peak:
                    self.peak = kb
            if kb > self.cap_kb:
                self.capped = True
                self.d.kill()
                break
            self._halt.wait(0.02)

    def mark_idle(self):
        """Idle = now; the peak restarts from it."""
        kb = self.d.rss_kb()
        with self.lock:
            self.cur = self.peak = self.idle = kb

    def reset_peak(self):
        with self.lock:
            self.peak = self.cur

    def now(self):
        return self.d.rss_kb() if self.d.alive() else self.cur

    def finish(self):
        self._halt.set()
        self.join(timeout=1)


def mib(kb):
    return "%.1f MiB" % (kb / 1024.0)


# --- bodies ------------------------------------------------------------------
def col(n, s):
    """(1, n, 1) with full-precision entries."""
    return [[[math.sin(i * s + 0.1)] for i in range(n)]]


def mat(n, m, s):
    return [[math.sin((i * m + j) * s) for j in range(m)] for i in range(n)]


def dumps(obj):
    return json.dumps(obj, separators=(",", ":")).encode()


def huge_dot_body():
    """255 KB: Nq = Nk = 4000, d = dv = 1; the answer holds 16 M weights."""
    return dumps({"queries": col(4000, 0.37), "keys": col(4000, 0.53),
                  "values": col(4000, 0.71)})


def small_dot_body():
    return dumps({"queries": [mat(2, 4, 0.3)], "keys": [mat(3, 4, 0.5)],
                  "values": [mat(3, 2, 0.2)]})


def gzip_dot_body():
    """Nq = Nk = 1000, d = dv = 1: an answer of about 21 MB."""
    return dumps({"queries": col(1000, 0.37), "keys": col(1000, 0.53),
                  "values": col(1000, 0.71)})


def heavy_additive_body(num_hiddens=2000):
    """Nq = Nk = 2048, d = 2: with num_hiddens 2000, about 8.5e9 operations
    of the default --max-work 2^33 when tanh counts as one; minutes of
    compute."""
    t = [mat(2048, 2, 0.3)]
    return dumps({"queries": t, "keys": t, "values": [mat(2048, 1, 0.7)],
                  "num_hiddens": num_hiddens, "seed": 1,
                  "return_weights": False})


def work_over(st, data):
    """(needed, limit) when a 413 names --max-work, else None."""
    if st != 413:
        return None
    m = re.search(rb"needs about (\d+) .*limit is (\d+) \(--max-work\)", data)
    return (int(m.group(1)), int(m.group(2))) if m else None


def multihead_body(target=352):
    """num_heads = num_hiddens = 4096 (W_o alone is 16 Mi doubles): queries
    (1, 4, dq), self-attention, the dq and digits that come closest to
    `target` bytes, whitespace-padded to it."""
    best = b""
    for dq in range(1, 9):
        for digits in range(1, 18):
            q = [[[round(math.sin(i * dq + j + 1), digits) for j in range(dq)]
                  for i in range(4)]]
            cand = dumps({"queries": q, "num_heads": 4096,
                          "num_hiddens": 4096, "seed": 7})
            if len(best) < len(cand) <= target:
                best = cand
    return best + b" " * (target - len(best))


def tree_bomb(size, wrapped):
    """Exactly `size` bytes of empty objects, whitespace-padded."""
    head, tail = (b'{"queries":[', b"]}") if wrapped else (b"[", b"]")
    n = (size - len(head) - len(tail) + 1) // 3
    body = head + b"{}," * (n - 1) + b"{}" + tail
    return body[:-len(tail)] + b" " * (size - len(body)) + tail


def raw_request(method, path, body=b"", headers=()):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1"]
    if body or method == "POST":
        lines += ["Content-Type: application/json",
                  "Content-Length: %d" % len(body)]
    lines += list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


# --- clients -----------------------------------------------------------------
def connect(port, source="127.0.0.1", rcvbuf=None, timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def request(port, method, path, body=None, headers=None, source=None,
            timeout=SMALL_HANG_S):
    """One request on a new connection: (status, headers, body, seconds);
    status None on a socket error or timeout."""
    t0 = time.monotonic()
    hdrs = {"Connection": "close"}
    if body is not None:
        hdrs["Content-Type"] = "application/json"
    hdrs.update(headers or {})
    c = http.client.HTTPConnection(
        "127.0.0.1", port, timeout=timeout,
        source_address=(source, 0) if source else None)
    try:
        c.request(method, path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        return r.status, r, data, time.monotonic() - t0
    except (OSError, http.client.HTTPException) as e:
        return None, None, str(e).encode(), time.monotonic() - t0
    finally:
        c.close()


class Dechunk:
    """Counts the content bytes of a chunked body fed in pieces."""

    def __init__(self):
        self.buf, self.left, self.content, self.done = b"", 0, 0, False
        self.bad = False

    def feed(self, data):
        self.buf += data
        while not self.done and not self.bad:
            if self.left > 0:
                take = min(self.left, len(self.buf))
                self.content += take
                self.left -= take
                self.buf = self.buf[take:]
                if self.left > 0:
                    return
                self.left = -2              # then its CRLF
            if self.left < 0:
                if len(self.buf) < 2:
                    return
                self.bad = self.buf[:2] != b"\r\n"
                self.buf, self.left = self.buf[2:], 0
                continue
            if b"\r\n" not in self.buf:
                return
            line, self.buf = self.buf.split(b"\r\n", 1)
            try:
                size = int(line.split(b";")[0], 16)
            except ValueError:
                self.bad = True
                return
            if size == 0:
                self.done = True
            self.left = size


def read_response(s, deadline, chunk=1 << 20):
    """Reads until EOF or deadline, keeping only the head: (status,
    headers dict lower-case, body bytes received, eof, first byte time);
    headers["content-bytes"] counts a chunked body's content."""
    head, body_bytes, eof, first = b"", 0, False, None
    status, hdrs, dechunk = None, {}, None
    while time.monotonic() < deadline:
        s.settimeout(max(0.05, min(1.0, deadline - time.monotonic())))
        try:
            data = s.recv(chunk)
        except socket.timeout:
            continue
        except OSError:
            eof = True
            break
        if not data:
            eof = True
            break
        if first is None:
            first = time.monotonic()
        if status is None:
            head += data
            if b"\r\n\r\n" not in head:
                continue
            h, data = head.split(b"\r\n\r\n", 1)
            status, hdrs = parse_head(h)
            if "chunked" in hdrs.get("transfer-encoding", ""):
                dechunk = Dechunk()
        body_bytes += len(data)
        if dechunk:
            dechunk.feed(data)
    if dechunk:
        hdrs["content-bytes"] = ("%d" % dechunk.content if dechunk.done
                                 else "incomplete")
    return status, hdrs, body_bytes, eof, first


def parse_head(h):
    lines = h.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] (\d{3})", lines[0])
    hdrs = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    return (int(m.group(1)) if m else None), hdrs


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * q))] if v else float("nan")


class SmallClient(threading.Thread):
    """Small dot requests on new connections from `source` every `period`
    seconds until stopped, or `count` of them spread over `span` seconds."""

    def __init__(self, port, source, period, count=None):
        super().__init__(daemon=True)
        self.port, self.source, self.period, self.count = (
            port, source, period, count)
        self.body = small_dot_body()
        self.ok = self.busy = self.busy_no_ra = self.hangs = 0
        self.other = {}
        self.lat = []
        self._halt = threading.Event()
        self.start()

    def run(self):
        n = 0
        while not self._halt.is_set() and (self.count is None
                                           or n < self.count):
            t0 = time.monotonic()
            st, r, _, dt = request(self.port, "POST", "/attention/dot",
                                   self.body, source=self.source)
            n += 1
            self.lat.append(dt * 1000)
            if st is None or dt > SMALL_HANG_S:
                self.hangs += 1
            elif st == 200:
                self.ok += 1
            elif st == 503 and r.getheader("Retry-After"):
                self.busy += 1
            elif st == 503:
                self.busy_no_ra += 1
            else:
                self.other[st] = self.other.get(st, 0) + 1
            self._halt.wait(max(0.0, self.period - (time.monotonic() - t0)))

    def halt(self):
        self._halt.set()
        self.join(timeout=SMALL_HANG_S + 2)

    def total(self):
        return len(self.lat)

    def summary(self):
        other = ",".join("%s:%d" % kv for kv in sorted(self.other.items()))
        return ("%d requests: %d x 200, %d x 503+Retry-After, %d x 503 "
                "without it, other {%s}, %d errors/hangs; p50 %.1f ms, "
                "p99 %.1f ms, max %.1f ms" % (
                    self.total(), self.ok, self.busy, self.busy_no_ra, other,
                    self.hangs, pct(self.lat, 0.5), pct(self.lat, 0.99),
                    max(self.lat) if self.lat else float("nan")))


class Trickle(threading.Thread):
    """Connections from `source` that each send `first` at once and then
    `rest` `step` bytes every `tick` seconds; notes when the server closes
    one (EOF, reset, or an answer such as 408)."""

    def __init__(self, port, source, count, first, rest, step, tick):
        super().__init__(daemon=True)
        self.socks, self.pos, self.t0 = [], {}, time.monotonic()
        self.refused = 0
        self.closed = {}    # socket -> seconds after start
        self.answers = {}   # status -> count
        self.rest, self.step, self.tick = rest, step, tick
        open_end = self.t0 + 10
        for _ in range(count):
            left = open_end - time.monotonic()
            if left <= 0:
                self.refused += 1
                continue
            try:
                s = connect(port, source, timeout=min(3, left))
                s.sendall(first)
                s.setblocking(False)
                self.socks.append(s)
                self.pos[s] = 0
            except OSError:
                self.refused += 1
        self.opened = len(self.socks)
        self._halt = threading.Event()
        self.start()

    def open_now(self):
        return self.opened - len(self.closed)

    def _close(self, s):
        if s not in self.closed:
            self.closed[s] = time.monotonic() - self.t0

    def run(self):
        next_send = time.monotonic() + self.tick
        while not self._halt.is_set():
            live = [s for s in self.socks if s not in self.closed]
            if not live:
                break
            r, _, _ = select.select(live, [], [], 0.05)
            for s in r:
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    self._close(s)
                    continue
                if not data:
                    self._close(s)
                    continue
                m = re.match(rb"HTTP/1\.[01] (\d{3})", data)
                if m:
                    st = int(m.group(1))
                    self.answers[st] = self.answers.get(st, 0) + 1
            if time.monotonic() >= next_send:
                next_send += self.tick
                for s in live:
                    if s in self.closed:
                        continue
                    p = self.pos[s]
                    piece = self.rest[p:p + self.step]
                    if not piece:
                        continue
                    try:
                        self.pos[s] = p + s.send(piece)
                    except BlockingIOError:
                        pass
                    except OSError:
                        self._close(s)

    def halt(self):
        self._halt.set()
        self.join(timeout=3)
        for s in self.socks:
            s.close()

    def summary(self):
        times = sorted(self.closed.values())
        answers = ",".join("%d:%d" % kv for kv in sorted(self.answers.items()))
        return ("%d opened (%d refused), %d closed by the server%s, "
                "answers {%s}, %d still open" % (
                    self.opened, self.refused, len(times),
                    (" (first at %.1f s, median %.1f s, last %.1f s)" % (
                        times[0], pct(times, 0.5), times[-1]))
                    if times else "",
                    answers, self.open_now()))


def probes(port, source, count, span, body):
    """`count` small requests on new connections spread over `span` s."""
    period = span / float(count)
    statuses, lat = {}, []
    for _ in range(count):
        t0 = time.monotonic()
        st, _, _, dt = request(port, "POST", "/attention/dot", body,
                               source=source)
        statuses[st] = statuses.get(st, 0) + 1
        lat.append(dt * 1000)
        time.sleep(max(0.0, period - (time.monotonic() - t0)))
    return statuses, lat


def status_text(statuses):
    return ",".join("%s:%d" % (k if k is not None else "error", v)
                    for k, v in sorted(statuses.items(),
                                       key=lambda kv: (kv[0] is None,
                                                       kv[0] or 0)))


# --- the run -----------------------------------------------------------------
class Run:
    def __init__(self, args):
        self.binary = args.attnd
        self.baseline = args.baseline
        self.cap_kb = args.rss_cap_mb * 1024
        self.m = MODES["long" if args.long else "short"]
        self.n = self.failed = 0

    def tap(self, ok, what, notes=()):
        self.n += 1
        self.failed += not ok
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, what))
        for line in notes:
            print("#   " + line)
        sys.stdout.flush()

    def daemon(self, base, new):
        """base: flags the binary has; new: the defences under test, left
        out with --baseline."""
        return Daemon(self.binary, list(base) + ([] if self.baseline
                                                 else list(new)))

    def label(self, name, new):
        if not new:
            return name
        shown = " ".join(new)
        return ("%s [without %s]" % (name, shown) if self.baseline
                else "%s [%s]" % (name, shown))

    def attack(self, name, new, fn, base=()):
        label = self.label(name, new)
        t0 = time.monotonic()
        try:
            d = self.daemon(base, new)
        except Unsupported as e:
            self.tap(False, "%s (option not supported by this binary: %s)"
                     % (label, e))
            return
        except DaemonFailed as e:
            self.tap(False, "%s: attnd did not start" % label, [str(e)])
            return
        mon = RssMonitor(d, self.cap_kb)
        try:
            fn(d, mon, label)
        except Exception as e:  # an attack's own failure is a result too
            self.tap(False, "%s: %s: %s" % (label, type(e).__name__, e))
        finally:
            mon.finish()
            d.stop()
        print("# %s: %.1f s" % (name, time.monotonic() - t0))

    def mem_note(self, mon):
        if mon.capped:
            return " (killed at the %d MiB cap)" % (self.cap_kb // 1024)
        if mon.died or not mon.d.alive():
            rc = mon.d.proc.poll()
            return " (the daemon died: %s)" % (
                "signal %d" % -rc if rc is not None and rc < 0
                else "exit status %s" % rc)
        return ""

    # 1 -----------------------------------------------------------------------
    def non_readers(self, d, mon, label):
        conns, hold = self.m["conns1"], self.m["hold1"]
        req = raw_request("POST", "/attention/dot", huge_dot_body())
        socks, send_fail = [], 0
        small = SmallClient(d.port, "127.0.0.3", 0.05)
        send_end = time.monotonic() + 15
        for _ in range(conns):
            left = send_end - time.monotonic()
            if left <= 0.5 or not d.alive():
                send_fail += 1
                continue
            try:
                s = connect(d.port, rcvbuf=65536, timeout=left)
                socks.append(s)
                s.sendall(req)
            except OSError:
                send_fail += 1
        end = time.monotonic() + hold
        while time.monotonic() < end and d.alive():
            time.sleep(0.05)
        held = mon.now()
        small.halt()
        for s in socks:
            s.close()
        time.sleep(1.0)
        after = mon.now()
        ok_mem = mon.peak < RSS_LIMIT_KB and not mon.capped and not mon.died
        ok_small = (small.total() > 0 and small.hangs == 0 and
                    small.busy_no_ra == 0 and not small.other)
        self.tap(ok_mem and ok_small,
                 "%s: %d non-reading clients of a 361 MB answer (%d-byte "
                 "request, %d sends failed) for %d s: VmRSS idle %s, peak "
                 "%s%s (limit %s), at the end of the hold %s, 1 s after "
                 "they left %s; small client from 127.0.0.3: %s" % (
                     label, len(socks), len(req), send_fail, hold,
                     mib(mon.idle), mib(mon.peak), self.mem_note(mon),
                     mib(RSS_LIMIT_KB), mib(held), mib(after),
                     small.summary()))

    # 2 -----------------------------------------------------------------------
    def slow_reader(self, d, mon, label):
        window = self.m["slow_read"]
        req = raw_request("POST", "/attention/dot", huge_dot_body())
        s = connect(d.port, rcvbuf=65536, timeout=10)
        t0 = time.monotonic()
        s.sendall(req)
        s.settimeout(0.2)
        head, got, first, closed_at = b"", 0, None, None
        status, hdrs = None, {}
        end = t0 + window
        while time.monotonic() < end:
            tick = time.monotonic()
            try:
                data = s.recv(10240)     # 10 KB every 100 ms: ~100 KB/s
            except socket.timeout:
                data = None
            except OSError:
                closed_at = time.monotonic() - t0
                break
            if data == b"":
                closed_at = time.monotonic() - t0
                break
            if data:
                if first is None:
                    first = time.monotonic() - t0
                got += len(data)
                if status is None:
                    head += data
                    if b"\r\n\r\n" in head:
                        status, hdrs = parse_head(head.split(b"\r\n\r\n")[0])
            if not d.alive():
                break
            time.sleep(max(0.0, 0.1 - (time.monotonic() - tick)))
        held = mon.now()
        read_s = time.monotonic() - t0
        s.close()
        time.sleep(1.0)
        after = mon.now()
        size = hdrs.get("content-length", "chunked")
        kept = ("the server closed it after %.1f s" % closed_at
                if closed_at is not None else
                "the server still held it after %.1f s" % read_s)
        rate = got / max(0.001, read_s - (first or 0)) / 1000
        ok = mon.peak < RSS_LIMIT_KB and not mon.capped and not mon.died
        self.tap(ok, "%s: slow reader of a dot answer (Nq=Nk=4000, length: "
                 "%s; status %s, first byte after %s s): read %d bytes at "
                 "%.0f KB/s; %s; VmRSS idle %s, peak %s%s (limit %s), held "
                 "while reading %s, 1 s after it left %s" % (
                     label, size, status,
                     "%.1f" % first if first is not None else "-", got, rate,
                     kept, mib(mon.idle), mib(mon.peak), self.mem_note(mon),
                     mib(RSS_LIMIT_KB), mib(held), mib(after)))

    # 3 -----------------------------------------------------------------------
    def tree_bombs(self):
        for wrapped in (True, False):
            shape = '{"queries": [{},{},...]}' if wrapped else "[{},{},...]"
            body = tree_bomb(16 * 1024 * 1024, wrapped)

            def fn(d, mon, label, body=body, shape=shape):
                time.sleep(0.2)
                mon.mark_idle()
                st, r, data, dt = request(d.port, "POST", "/attention/dot",
                                          body, timeout=60)
                time.sleep(0.2)
                ctype = r.getheader("Content-Type", "") if r else ""
                code = ""
                try:
                    code = json.loads(data).get("code", "")
                except (ValueError, AttributeError):
                    pass
                delta = mon.peak - mon.idle
                if st is None:
                    st, code = "no answer", "(%s)" % data.decode(
                        errors="replace")
                ok = (st in (400, 413, 422) and
                      ctype.startswith("application/problem+json") and
                      delta < TREE_DELTA_KB and not mon.capped and
                      not mon.died)
                self.tap(ok, "%s: %d-byte body %s: %s %s (%s) in %.2f s; "
                         "VmRSS idle %s, peak %s: +%s%s (limit +%s)" % (
                             label, len(body), shape, st, code or "-",
                             ctype or "-", dt, mib(mon.idle), mib(mon.peak),
                             mib(delta), self.mem_note(mon),
                             mib(TREE_DELTA_KB)))
            self.attack("3 tree bomb", [], fn)

    # 4 -----------------------------------------------------------------------
    def health_under_compute(self, d, mon, label):
        """Two clients keep one additive request each computing for the
        whole probe (a new one when theirs is answered). The requests are
        the largest the daemon admits: num_hiddens 2000, or, when the
        daemon's work estimate puts that over --max-work, scaled down to
        95 % of the limit."""
        hidden, scaled = 2000, ""
        probing = threading.Event()
        for _ in range(3):
            body = heavy_additive_body(hidden)
            answers = [[], []]      # per client: (status, code, seconds)
            busy = [None, None]     # the start of a request in flight

            def heavy(i, body=body, answers=answers, busy=busy):
                while True:
                    busy[i] = time.monotonic()
                    st, _, data, dt = request(d.port, "POST",
                                              "/attention/additive", body,
                                              timeout=600)
                    busy[i] = None
                    code = ""
                    try:
                        code = json.loads(data).get("code", "")
                    except (ValueError, AttributeError):
                        pass
                    answers[i].append((st, code, dt, data))
                    if st != 200 or not probing.is_set() or not d.alive():
                        return
            threads = [threading.Thread(target=heavy, args=(i,), daemon=True)
                       for i in range(2)]
            probing.set()
            for t in threads:
                t.start()
            time.sleep(0.3)
            over = [work_over(a[0][0], a[0][3]) for a in answers if a]
            if len(over) < 2 or None in over:
                break
            probing.clear()
            need, limit = over[0]
            scaled = " (scaled from 2000: %d operations estimated over %d)" % (
                need, limit)
            hidden = max(1, int(hidden * limit * 0.95 / need))
        t0 = time.monotonic()
        pr = health_probe.probe(d.port, self.m["health"], interval=0.01,
                                source="127.0.0.3")
        probing.clear()
        # with a compute time limit the last two end soon; without, they
        # would compute for minutes: give them 5 s, then stop the daemon
        for t in threads:
            t.join(timeout=max(0.0, t0 + self.m["health"] + 5
                               - time.monotonic()))
        heavy_txt = []
        for i in range(2):
            done = ", ".join("%s%s after %.1f s" % (
                st if st is not None else "no answer",
                " " + code if code else "", dt)
                for st, code, dt, _ in answers[i]) or "none answered"
            if busy[i] is not None:
                done += ", one still computing after %.0f s" % (
                    time.monotonic() - busy[i])
            heavy_txt.append(done)
        computed = all(st != 413 for a in answers for st, _, _, _ in a)
        ok = (computed and pr["p99_ms"] < HEALTH_P99_MS and
              pr["failed"] == 0 and not mon.capped and not mon.died)
        self.tap(ok, "%s: /healthz every 10 ms for %d s beside two clients "
                 "computing additive requests (%d bytes, Nq=Nk=2048, "
                 "num_hiddens %d%s): %s (p99 limit %.0f ms); their answers: "
                 "[%s]; VmRSS peak %s%s" % (
                     label, self.m["health"], len(body), hidden, scaled,
                     health_probe.summary(pr), HEALTH_P99_MS,
                     "] [".join(heavy_txt), mib(mon.peak),
                     self.mem_note(mon)))

    # 5 -----------------------------------------------------------------------
    def slow_headers(self, d, mon, label):
        hold = self.m["slow_hdr_hold"]
        line = (b"POST /attention/dot HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nX-Slow: " + b"a" * 400)
        tr = Trickle(d.port, "127.0.0.2", 200, line[:1], line[1:], 1, 1.0)
        time.sleep(1.0)
        held_1s = tr.open_now()
        fds = d.fds()
        statuses, lat = probes(d.port, "127.0.0.3", 200, hold - 1.5,
                               small_dot_body())
        left = max(0.0, tr.t0 + hold - time.monotonic())
        time.sleep(left)
        tr.halt()
        good = statuses.get(200, 0)
        ok = good == 200 and not mon.capped and not mon.died
        self.tap(ok, "%s: 200 connections from 127.0.0.2 sending headers at "
                 "1 byte/s for %d s (%d open after 1 s, %d daemon "
                 "descriptors): %s; a client from 127.0.0.3: 200 requests, "
                 "%d x 200 {%s}, p50 %.1f ms, p99 %.1f ms, max %.1f ms; "
                 "VmRSS peak %s%s" % (
                     label, hold, held_1s, fds, tr.summary(), good,
                     status_text(statuses), pct(lat, 0.5), pct(lat, 0.99),
                     max(lat), mib(mon.peak), self.mem_note(mon)))

    # 6 -----------------------------------------------------------------------
    def slow_uploads(self, d, mon, label):
        hold = self.m["upload_hold"]
        size = 1000 * 1000
        head = ("POST /attention/dot HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % size).encode()
        body = b'{"queries": [' + b" " * (size - 13)
        tr = Trickle(d.port, "127.0.0.2", 64, head + body[:100], body[100:],
                     100, 0.1)
        time.sleep(1.0)
        open_1s = tr.open_now()
        # wait, at most until 5 s before the end of the hold, for the
        # server to drop them
        settle_end = tr.t0 + hold - 5.0
        while time.monotonic() < settle_end and tr.open_now() > 0:
            time.sleep(0.1)
        settle = time.monotonic() - tr.t0
        span = max(1.0, tr.t0 + hold - time.monotonic())
        statuses, lat = probes(d.port, "127.0.0.3", 200, span,
                               small_dot_body())
        tr.halt()
        good = statuses.get(200, 0)
        ok = good == 200 and not mon.capped and not mon.died
        self.tap(ok, "%s: 64 connections from 127.0.0.2 uploading 1 MB at "
                 "1 KB/s (%d open after 1 s): %s; a client from 127.0.0.3, "
                 "from %.1f s on: 200 requests, %d x 200 {%s}, p50 %.1f ms, "
                 "p99 %.1f ms; VmRSS peak %s%s" % (
                     label, open_1s, tr.summary(), settle, good,
                     status_text(statuses), pct(lat, 0.5), pct(lat, 0.99),
                     mib(mon.peak), self.mem_note(mon)))

    # 7 -----------------------------------------------------------------------
    def gzip_non_readers(self, d, mon, label):
        hold = self.m["gzip_hold"]
        req = raw_request("POST", "/attention/dot", gzip_dot_body(),
                          ["Accept-Encoding: gzip", "Connection: close"])
        socks, send_fail = [], 0
        send_end = time.monotonic() + 15
        for _ in range(8):
            left = send_end - time.monotonic()
            if left <= 0.5 or not d.alive():
                send_fail += 1
                continue
            try:
                s = connect(d.port, rcvbuf=65536, timeout=left)
                socks.append(s)
                s.sendall(req)
            except OSError:
                send_fail += 1
        end = time.monotonic() + hold
        while time.monotonic() < end and d.alive():
            time.sleep(0.05)
        held = mon.now()
        # then read one of them to the end, for its status and size
        st, hdrs, got, eof = None, {}, 0, False
        if socks:
            st, hdrs, got, eof, _ = read_response(socks[0],
                                                  time.monotonic() + 20)
        for s in socks:
            s.close()
        time.sleep(0.5)
        after = mon.now()
        ok = mon.peak < RSS_LIMIT_KB and not mon.capped and not mon.died
        self.tap(ok, "%s: 8 non-reading clients of a gzip dot answer "
                 "(Nq=Nk=1000, 22 MB as JSON; %d sends failed) for %d s: "
                 "one read afterwards: %s, Content-Encoding %s, %d bytes on "
                 "the wire%s; VmRSS idle %s, peak %s%s (limit %s), at the "
                 "end of the hold %s, after %s" % (
                     label, send_fail, hold, st,
                     hdrs.get("content-encoding", "-"), got,
                     "" if eof else " (cut at the deadline)", mib(mon.idle),
                     mib(mon.peak), self.mem_note(mon), mib(RSS_LIMIT_KB),
                     mib(held), mib(after)))

    # 8 -----------------------------------------------------------------------
    def head_positional(self, d, mon, label):
        path = "/encoding/positional?num_steps=4096&d=4096"
        time.sleep(0.2)
        mon.mark_idle()
        s = connect(d.port, timeout=10)
        t0 = time.monotonic()
        s.sendall(raw_request("HEAD", path, headers=["Connection: close"]))
        st, hdrs, extra, eof, _ = read_response(s, t0 + 60)
        dt = time.monotonic() - t0
        s.close()
        head_peak = mon.peak
        delta = head_peak - mon.idle
        notes, good = [], False
        ctype = hdrs.get("content-type", "")
        if st == 200:
            good = ctype.startswith("application/json") and extra == 0
            get_txt = ""
            if good and d.alive():
                # the GET's own length, streamed and counted, not kept
                mon.reset_peak()
                g = connect(d.port, timeout=10)
                g.sendall(raw_request("GET", path,
                                      headers=["Connection: close"]))
                gst, ghdrs, gbytes, geof, _ = read_response(
                    g, time.monotonic() + 60)
                g.close()
                glen = ghdrs.get("content-length",
                                 ghdrs.get("content-bytes"))
                if gst == 503:
                    # busy now: nothing to compare with
                    get_txt = "; GET: 503, not compared"
                else:
                    same = (gst == 200 and
                            glen == hdrs.get("content-length") and
                            ghdrs.get("content-type") ==
                            hdrs.get("content-type"))
                    good = good and same
                    get_txt = ("; GET: %s, %s %s, %d bytes on the wire: %s"
                               % (gst, "Content-Length"
                                  if "content-length" in ghdrs
                                  else "chunked, content", glen, gbytes,
                                  "the same length and type" if same
                                  else "they differ"))
                get_txt += ", VmRSS peak of the GET +%s" % mib(
                    mon.peak - mon.idle)
            notes.append("HEAD 200: Content-Type %s, Content-Length %s, %d "
                         "body bytes after the head%s" % (
                             ctype, hdrs.get("content-length"), extra,
                             get_txt))
        elif st in (413, 503):
            good = (ctype.startswith("application/problem+json") and
                    (st == 413 or "retry-after" in hdrs))
        ok = (good and delta <= HEAD_DELTA_KB and not mon.capped and
              not mon.died)
        self.tap(ok, "%s: HEAD %s: %s (%s, Content-Length %s) in %.2f s; "
                 "VmRSS idle %s, peak %s: +%s%s (limit +%s)" % (
                     label, path, st, ctype or "-",
                     hdrs.get("content-length", "-"), dt, mib(mon.idle),
                     mib(head_peak), mib(delta), self.mem_note(mon),
                     mib(HEAD_DELTA_KB)), notes)

    # 9 -----------------------------------------------------------------------
    def multihead(self, d, mon, label):
        body = multihead_body()
        time.sleep(0.2)
        mon.mark_idle()
        s = connect(d.port, timeout=10)
        t0 = time.monotonic()
        s.sendall(raw_request("POST", "/attention/multihead", body,
                              ["Accept-Encoding: gzip",
                               "Connection: close"]))
        st, hdrs, got, eof, first = read_response(s, t0 + 90)
        dt = time.monotonic() - t0
        s.close()
        ok = (st is not None and mon.peak < RSS_LIMIT_KB and
              not mon.capped and not mon.died)
        self.tap(ok, "%s: %d-byte multihead request (num_heads = num_hiddens "
                 "= 4096, seeded) with Accept-Encoding: gzip: %s, "
                 "Content-Encoding %s, %d bytes on the wire%s, first byte "
                 "after %s s, all in %.1f s; VmRSS idle %s, peak %s%s "
                 "(limit %s)" % (
                     label, len(body), st, hdrs.get("content-encoding", "-"),
                     got, "" if eof else " (cut at the deadline)",
                     "%.1f" % (first - t0) if first else "-", dt,
                     mib(mon.idle), mib(mon.peak), self.mem_note(mon),
                     mib(RSS_LIMIT_KB)))

    # 10 ----------------------------------------------------------------------
    def abandoned_queue(self, d, mon, label):
        """One address queues 12 requests that each compute to the
        2 s limit, and closes every connection at once: a queued request
        whose client left is not computed, so another client's small
        request waits at most for the two already running (about 2 s),
        not for all twelve (12 s)."""
        req = raw_request("POST", "/attention/additive",
                          heavy_additive_body(500))
        socks = []
        for _ in range(12):
            s = connect(d.port, source="127.0.0.2", timeout=10)
            s.sendall(req)
            socks.append(s)
        time.sleep(0.5)
        for s in socks:
            s.close()
        # padded past the 2 KiB a request may be computed inline with
        small = small_dot_body() + b" " * 3000
        st, _, _, dt = request(d.port, "POST", "/attention/dot", small,
                               source="127.0.0.3", timeout=60)
        self.tap(st == 200 and dt < 5.0,
                 "%s: a small request after 12 abandoned 2 s computations "
                 "from one address: %s in %.1f s (at most the 2 s of the "
                 "running two, with slack; 12 s if the abandoned ran)%s"
                 % (label, st, dt, self.mem_note(mon)))

    def all(self, only):
        budget1g = ["--memory-budget", "1G"]
        plan = [
            (1, lambda: self.attack("1 non-reading clients", budget1g,
                                    self.non_readers)),
            (2, lambda: self.attack("2 slow reader", budget1g,
                                    self.slow_reader)),
            (3, self.tree_bombs),
            (4, lambda: self.attack("4 health under compute",
                                    ["--compute-timeout",
                                     "%d" % (self.m["health"] + 2)],
                                    self.health_under_compute)),
            (5, lambda: self.attack("5 slow headers",
                                    ["--header-timeout", "5"],
                                    self.slow_headers)),
            (6, lambda: self.attack("6 slow uploads",
                                    ["--min-body-rate", "4096",
                                     "--header-timeout", "5"],
                                    self.slow_uploads,
                                    base=["--max-connections", "64"])),
            (7, lambda: self.attack("7 gzip non-readers", budget1g,
                                    self.gzip_non_readers)),
            (8, lambda: self.attack("8 HEAD positional",
                                    ["--memory-budget", "256M"],
                                    self.head_positional)),
            (9, lambda: self.attack("9 multihead", budget1g,
                                    self.multihead)),
            (10, lambda: self.attack("10 abandoned queue", [],
                                     self.abandoned_queue,
                                     base=["--compute-timeout", "2"])),
        ]
        for i, fn in plan:
            if not only or i in only:
                fn()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--short", action="store_true",
                   help="CI counts and durations (the default)")
    g.add_argument("--long", action="store_true",
                   help="longer holds and more connections, for make soak")
    ap.add_argument("--baseline", action="store_true",
                    help="leave out the defences' flags (before figures)")
    ap.add_argument("--only", default="",
                    help="comma-separated attack numbers, e.g. 1,3")
    ap.add_argument("--rss-cap-mb", type=int, default=3072,
                    help="kill a daemon whose VmRSS passes this (3072)")
    ap.add_argument("attnd")
    args = ap.parse_args()
    # a stopped run stops its daemons too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    only = {int(x) for x in args.only.split(",") if x.strip()}
    run = Run(args)
    t0 = time.monotonic()
    print("# attacks: %s mode%s, %s" % (
        "long" if args.long else "short",
        ", baseline (no defence flags)" if args.baseline else "",
        args.attnd))
    try:
        run.all(only)
    finally:
        stop_all()
    print("# attacks: %.1f s in all" % (time.monotonic() - t0))
    print("attacks: %d passed, %d failed" % (run.n - run.failed, run.failed))
    sys.exit(1 if run.failed else 0)


if __name__ == "__main__":
    main()

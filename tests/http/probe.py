#!/usr/bin/env python3
"""probe.py — the probe listener (--probe-port; docs/operations.md, "The
probe port"), over sockets against daemons of its own:

  * GET of /healthz, /v2/health/live, /v2/health/ready and /metrics answer
    on the probe port with the main port's bodies (/metrics: the same
    series), nosniff and no-store; HEAD gives GET's length and no body;
    probes are counted in attnd_requests_total like the main port's;
  * another path is 404 problem+json naming the four; POST is 405 with
    Allow: GET, HEAD; a body is refused (413) before it is sent;
  * /metrics keeps the main port's token rule (401 without one, 200 with
    one or with --metrics-public), health stays open;
  * --healthcheck asks the probe port when one is set;
  * after SIGTERM, while the main port drains, the probe port answers
    readiness 503 {"ready":false} and /healthz 200;
  * with every connection of the main port taken (1100 idle connections
    from 127.0.0.2-5 with --max-connections-per-address 0, where
    libmicrohttpd takes 1024), 200 probes on the probe port all answer
    200 with p99 under 50 ms while the main port holds its limit;
  * --probe-port equal to --port: one line on stderr, exit status 2.

    usage: python3 tests/http/probe.py BUILD/attnd
Prints TAP. Loopback only.
"""
import json
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time

from daemon import start

PROBE_PATHS = ["/healthz", "/v2/health/live", "/v2/health/ready", "/metrics"]
FULL_CONNECTIONS = 1100
PROBES = 200


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_response(s, timeout=10, head_only=False):
    """(status line, {header: value}, body) of one answer on s, read by
    its Content-Length (none after HEAD); None when nothing complete
    arrives in time."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        if head_only:
            length = 0
        while len(body) < length:
            chunk = s.recv(65536)
            if not chunk:
                return None
            body += chunk
        return lines[0], headers, body
    except (socket.timeout, ConnectionError):
        return None


def request(port, method, path, headers=(), body=b"", timeout=10,
            send_body=True, source="127.0.0.1"):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                 source_address=(source, 0))
    head = "%s %s HTTP/1.1\r\nHost: x\r\n" % (method, path)
    for h in headers:
        head += h + "\r\n"
    if body:
        head += "Content-Length: %d\r\n" % len(body)
    s.sendall(head.encode() + b"\r\n" + (body if send_body else b""))
    got = read_response(s, timeout, head_only=method == "HEAD")
    s.close()
    if got is None:
        return None, {}, b""
    status, headers_in, body_in = got
    return int(status.split(" ")[1]), headers_in, body_in


def series(metrics_text):
    """The metric names of a Prometheus text, in order (values vary)."""
    return [line.split(" ")[2] for line in metrics_text.decode().splitlines()
            if line.startswith("# TYPE ")]


def counter(metrics_text, route, method, status):
    m = re.search(r'attnd_requests_total\{route="%s",method="%s",'
                  r'status="%d"\} (\d+)' % (re.escape(route), method, status),
                  metrics_text.decode())
    return int(m.group(1)) if m else 0


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def sockets_of(pid):
    """The sockets a process holds (/proc/PID/fd; one that closes while
    they are counted is left out)."""
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")
        except OSError:
            pass
    return n


def main():
    binary = sys.argv[1]
    n = 0
    failed = 0

    def report(ok, name, extra=""):
        nonlocal n, failed
        n += 1
        failed += not ok
        print("%s %d - %s%s" % ("ok" if ok else "not ok", n, name,
                                (" # " + extra) if extra and not ok else ""))
        if ok and extra:
            print("# " + extra)
        sys.stdout.flush()

    # room for the idle connections of the full-port test
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = FULL_CONNECTIONS + 256
    if soft < want and (hard == resource.RLIM_INFINITY or hard >= want):
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    # --probe-port equal to --port: refused at start
    r = subprocess.run([binary, "--port", "18080", "--probe-port", "18080"],
                       capture_output=True, text=True, timeout=10)
    lines = r.stderr.strip().splitlines()
    report(r.returncode == 2 and len(lines) == 1 and
           "--probe-port" in lines[0] and "--port" in lines[0],
           "--probe-port equal to --port: exit 2 with one line",
           "rc %d, stderr %r" % (r.returncode, r.stderr))
    env = dict(os.environ, ATTND_PORT="18090", ATTND_PROBE_PORT="18090")
    r = subprocess.run([binary], capture_output=True, text=True, timeout=10,
                       env=env)
    report(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
           "ATTND_PROBE_PORT equal to ATTND_PORT: exit 2 with one line",
           "rc %d, stderr %r" % (r.returncode, r.stderr))

    probe = free_port()
    proc, port, log = start(binary, "--probe-port", str(probe), "--threads",
                            "2", "--max-connections-per-address", "0",
                            "--header-timeout", "120", "--timeout", "120",
                            "--shutdown-grace", "4")
    try:
        # start() returns at the first line; the probe port's is the next
        text = ""
        for _ in range(100):
            with open(log) as f:
                text = f.read()
            if "probes on" in text:
                break
            time.sleep(0.05)
        report("probes on http://127.0.0.1:%d" % probe in text,
               "the start line names the probe port", text)

        # the same bodies on both ports
        for path in PROBE_PATHS:
            s1, h1, b1 = request(port, "GET", path)
            s2, h2, b2 = request(probe, "GET", path)
            if path == "/metrics":
                same = series(b1) == series(b2) and len(series(b2)) > 3
            else:
                same = b1 == b2
            report(s1 == s2 == 200 and same and
                   h1.get("content-type") == h2.get("content-type") and
                   h2.get("x-content-type-options") == "nosniff" and
                   h2.get("cache-control") == "no-store",
                   "GET %s: 200 on the probe port with the main port's body"
                   % path, "%r %r / %r %r" % (s1, b1[:80], s2, b2[:80]))
        status, h, body = request(probe, "HEAD", "/healthz")
        report(status == 200 and body == b"" and
               h.get("content-length") == str(len(b'{"status":"ok"}')),
               "HEAD /healthz: 200, GET's Content-Length, no body",
               "%r %r %r" % (status, h, body))

        # probes are counted like the main port's requests
        _, _, before = request(port, "GET", "/metrics")
        for _ in range(5):
            request(probe, "GET", "/v2/health/live")
        # a request is counted once its connection reports it complete,
        # which may come just after its client has read the answer
        deadline = time.monotonic() + 3
        while True:
            _, _, after = request(port, "GET", "/metrics")
            grown = (counter(after, "/v2/health/live", "GET", 200) -
                     counter(before, "/v2/health/live", "GET", 200))
            if grown >= 5 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        report(grown == 5, "5 probes count 5 in attnd_requests_total",
               "grew by %d" % grown)

        # what the probe port refuses
        status, h, body = request(probe, "GET", "/version")
        try:
            problem = json.loads(body)
        except ValueError:
            problem = {}
        report(status == 404 and
               h.get("content-type") == "application/problem+json" and
               problem.get("code") == "not_found" and
               all(p in problem.get("detail", "") for p in PROBE_PATHS),
               "GET /version: 404 problem+json naming the probe paths",
               "%r %r" % (status, body))
        status, h, body = request(probe, "POST", "/attention/dot",
                                  body=b'{"queries": []}')
        report(status == 404 and h.get("connection") == "close",
               "POST /attention/dot: 404, the body unread (close)",
               "%r %r" % (status, h))
        status, h, body = request(probe, "POST", "/healthz")
        report(status == 405 and h.get("allow") == "GET, HEAD" and
               h.get("content-type") == "application/problem+json",
               "POST /healthz: 405 with Allow: GET, HEAD",
               "%r %r %r" % (status, h, body))
        status, h, body = request(probe, "OPTIONS", "/metrics")
        report(status == 405 and h.get("allow") == "GET, HEAD",
               "OPTIONS /metrics: 405", "%r %r" % (status, h))
        # the body is announced, never sent: the answer cannot wait for it
        status, h, body = request(probe, "GET", "/healthz", body=b"x" * 1000,
                                  send_body=False, timeout=5)
        report(status == 413 and h.get("connection") == "close" and
               b"payload_too_large" in body,
               "GET /healthz announcing a body: 413 before it is sent",
               "%r %r %r" % (status, h, body))
        status, h, body = request(probe, "GET", "/healthz",
                                  headers=["Transfer-Encoding: chunked"],
                                  timeout=5)
        report(status == 413, "GET /healthz with a chunked body: 413",
               "%r %r" % (status, body))

        # --healthcheck goes to the probe port when one is set
        env = dict(os.environ, ATTND_PORT=str(free_port()),
                   ATTND_PROBE_PORT=str(probe))
        rc_probe = subprocess.run([binary, "--healthcheck"], env=env,
                                  timeout=10).returncode
        env = dict(os.environ, ATTND_PORT=str(port),
                   ATTND_PROBE_PORT=str(free_port()))
        rc_dead = subprocess.run([binary, "--healthcheck"], env=env,
                                 timeout=10).returncode
        report(rc_probe == 0 and rc_dead == 1,
               "--healthcheck asks the probe port when one is set",
               "probe port %d, a dead probe port %d" % (rc_probe, rc_dead))

        # the main port full: every connection libmicrohttpd takes is held
        conns = []
        t0 = time.monotonic()
        try:
            for i in range(FULL_CONNECTIONS):
                c = socket.socket()
                c.bind(("127.0.0.%d" % (2 + i % 4), 0))
                c.setblocking(False)
                try:
                    c.connect(("127.0.0.1", port))
                except BlockingIOError:
                    pass
                conns.append(c)
        except OSError as e:
            report(False, "open %d connections to the main port"
                   % FULL_CONNECTIONS, str(e))
        time.sleep(1.0)  # let the main port accept what it takes
        # the daemon's sockets: about its connection limit (the watcher
        # then lets idle ones go, down to three quarters, so that others
        # can connect: tests/http/admission.py)
        held = sockets_of(proc.pid)
        report(held >= 768,
               "with %d idle connections the main port holds %d sockets "
               "(at least three quarters of its 1024: the watcher lets the "
               "rest go)" % (len(conns), held))
        latencies = []
        statuses = []
        for i in range(PROBES):
            path = "/healthz" if i % 2 == 0 else "/v2/health/ready"
            t = time.monotonic()
            # from 20 addresses: one answers 10 probes a second (a kubelet
            # sends about one)
            status, _, _ = request(probe, "GET", path, timeout=5,
                                   source="127.0.3.%d" % (1 + i % 20))
            latencies.append((time.monotonic() - t) * 1000)
            statuses.append(status)
        p50 = percentile(latencies, 50)
        p99 = percentile(latencies, 99)
        worst = max(latencies)
        report(statuses.count(200) == PROBES and p99 < 50,
               "%d probes with the main port full: all 200, p99 under 50 ms"
               % PROBES,
               "p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d of %d were 200; "
               "%d connections held, opened in %.1f s"
               % (p50, p99, worst, statuses.count(200), PROBES, len(conns),
                  time.monotonic() - t0))
        for c in conns:
            c.close()
        conns = []
        time.sleep(0.5)
        status, _, _ = request(port, "GET", "/healthz", timeout=10)
        report(status == 200, "the main port answers again once they close",
               "%r" % status)

        # the drain: a request held open on the main port keeps it draining
        held = socket.create_connection(("127.0.0.1", port))
        held.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{")
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        status, _, body = request(probe, "GET", "/v2/health/ready")
        report(status == 503 and body == b'{"ready":false}',
               "draining: readiness 503 {\"ready\":false} on the probe port",
               "%r %r" % (status, body))
        status, _, body = request(probe, "GET", "/healthz")
        report(status == 200, "draining: /healthz 200 on the probe port",
               "%r %r" % (status, body))
        report(proc.poll() is None, "still draining while probed")
        held.close()
        rc = proc.wait(timeout=15)
        report(rc == 0, "exits 0 after the drain", "rc %r" % rc)
        try:
            socket.create_connection(("127.0.0.1", probe), timeout=1).close()
            closed = False
        except OSError:
            closed = True
        report(closed, "the probe port is closed once attnd has stopped")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    # /metrics keeps the main port's token rule
    tokens = tempfile.NamedTemporaryFile("w", prefix="attnd-tokens-",
                                         delete=False)
    tokens.write("probe-test-token-0123456789abcdef\n")
    tokens.close()
    probe = free_port()
    proc, port, log = start(binary, "--probe-port", str(probe),
                            "--auth-token-file", tokens.name)
    try:
        s1, h1, b1 = request(port, "GET", "/metrics")
        s2, h2, b2 = request(probe, "GET", "/metrics")
        report(s1 == s2 == 401 and b1 == b2 and
               h2.get("www-authenticate") == "Bearer",
               "a token required: /metrics without one is 401 on both ports",
               "%r %r / %r %r" % (s1, b1, s2, b2))
        s2, _, b2 = request(probe, "GET", "/metrics", headers=[
            "Authorization: Bearer probe-test-token-0123456789abcdef"])
        report(s2 == 200 and b"attnd_requests_total" in b2,
               "a token required: /metrics with one is 200 on the probe port",
               "%r" % s2)
        s2, _, b2 = request(probe, "GET", "/healthz")
        report(s2 == 200, "a token required: /healthz stays open", "%r" % s2)
    finally:
        proc.kill()
        proc.wait()
    probe = free_port()
    proc, port, log = start(binary, "--probe-port", str(probe),
                            "--auth-token-file", tokens.name,
                            "--metrics-public")
    try:
        s2, _, _ = request(probe, "GET", "/metrics")
        report(s2 == 200, "--metrics-public: /metrics without a token is 200",
               "%r" % s2)
    finally:
        proc.kill()
        proc.wait()
        os.unlink(tokens.name)

    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""sharing.py — the rules that keep one server shared (docs/contract.md,
"Sharing one server"), over sockets against daemons of its own:

  * a head not complete within --header-timeout gets a 408 problem+json
    with Connection: close, and the connection closes; so does a body
    sent below --min-body-rate, and a kept-alive connection that trickles
    its next head past the idle timeout and the header timeout;
  * a request that does not fit the memory budget now gets 503
    overloaded with Retry-After, naming --memory-budget; one larger than
    the whole budget gets 413; a body larger than the budget gets 413
    before it is read;
  * a client whose connections hold a quarter of the budget in answers
    it does not read, or in bodies it does not finish, while more than
    half of the budget is taken, gets 503 for its next computing request
    (or more of its body), and another client's large request is
    computed meanwhile;
  * a 16 MiB body of [{},{},...] is refused (413) without the process
    growing by its tree;
  * a computation that runs past --compute-timeout is stopped: 503
    naming the limit, in about that time;
  * one client flooding the compute queue with slow requests delays
    another client's request by a few jobs, not by the whole flood;
  * what a request derives from a few bytes is counted before it is made:
    additive attention's projections are bounded by --max-elements, its
    scratch is reserved from the budget, an answer of drawn parameters
    beyond twice --max-elements numbers is 413, and a body repeating one
    member a million times does not hold its arrays;
  * gzip answers of a streamed size are compressed as they are sent.

    usage: python3 tests/http/sharing.py BUILD/attnd
Prints TAP. Loopback only.
"""
import gzip
import json
import re
import socket
import sys
import threading
import time

from daemon import start


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def read_all(s, limit=30):
    """Everything until the peer closes, or limit seconds pass."""
    s.settimeout(limit)
    data = bytearray()  # appended in place: answers run to 50 MB
    try:
        while True:
            chunk = s.recv(1 << 20)
            if not chunk:
                return bytes(data), True
            data += chunk
    except socket.timeout:
        return bytes(data), False


def split(response):
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers, body


def request(port, method, path, body=b"", headers=(), timeout=30):
    s = socket.create_connection(("127.0.0.1", port))
    head = "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" % (method, path)
    if body:
        head += "Content-Type: application/json\r\n"
        head += "Content-Length: %d\r\n" % len(body)
    for h in headers:
        head += h + "\r\n"
    s.sendall(head.encode() + b"\r\n" + body)
    data, _ = read_all(s, timeout)
    s.close()
    return split(data)


def dechunk(body):
    out = b""
    while body:
        size, _, rest = body.partition(b"\r\n")
        n = int(size.split(b";")[0], 16)
        if n == 0:
            break
        out += rest[:n]
        body = rest[n + 2:]
    return out


def dot_body(n, d=1):
    rows = [[0.001 * ((i * 7) % 13) for _ in range(d)] for i in range(n)]
    return json.dumps({"queries": [rows], "keys": [rows],
                       "values": [rows]}).encode()


def additive_body(n, h):
    rows = [[0.01 * ((i * 7) % 13), 0.02] for i in range(n)]
    return json.dumps({"queries": [rows], "keys": [rows], "values": [rows],
                       "num_hiddens": h, "seed": 1}).encode()


def refusal_seen(report, port, log, what, reason, client):
    """The refusal is logged (a line holding `what`, the client and
    refused=reason; written once the answer is sent, so looked for up to
    2 s) and counted in attnd_refused_total{reason}."""
    lines = []
    for _ in range(40):
        with open(log, errors="replace") as f:
            lines = [l for l in f if what in l and " refused=%s" % reason in l
                     and (" %s" % client) in l]
        if lines:
            break
        time.sleep(0.05)
    _, _, metrics = request(port, "GET", "/metrics")
    m = re.search(rb'attnd_refused_total\{reason="%s"\} (\d+)' %
                  reason.encode(), metrics)
    report(lines and m and int(m.group(1)) >= 1,
           "  logged with its client and refused=%s, and counted (%s)" %
           (reason, m.group(1).decode() if m else "no counter"),
           lines[-1:] if lines else "no line")


def main():
    binary = sys.argv[1]
    n = 0

    def report(ok, name, extra=""):
        nonlocal n
        n += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
        if not ok and extra:
            print("#   " + str(extra)[:300])

    # --- deadlines ---------------------------------------------------------
    proc, port, _ = start(binary, "--header-timeout", "1", "--min-body-rate",
                       "4K", "--timeout", "2")
    try:
        s = socket.create_connection(("127.0.0.1", port))
        t0 = time.time()
        s.sendall(b"GET /healthz HTTP/1.1\r\nHo")
        data, closed = read_all(s, 10)
        took = time.time() - t0
        line, headers, body = split(data)
        report(line == "HTTP/1.1 408 Request Timeout" and closed,
               "a head not complete within --header-timeout 1: 408 and a "
               "close (after %.1f s)" % took, data[:200])
        report(headers.get("content-type") == "application/problem+json"
               and headers.get("connection") == "close"
               and json.loads(body).get("status") == 408
               and json.loads(body).get("code") == "request_timeout"
               and "--header-timeout" in json.loads(body).get("detail", ""),
               "  problem+json with Connection: close, naming the option",
               data[:300])
        report(0.9 <= took < 3, "  within a second of the deadline")

        # a trickled head: a byte every 0.3 s keeps it from being idle
        s = socket.create_connection(("127.0.0.1", port))
        t0 = time.time()
        s.settimeout(0.3)
        answer = b""
        for ch in b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: aaaaaaaaaaaa":
            try:
                s.sendall(bytes([ch]))
                answer += s.recv(4096)
                break
            except socket.timeout:
                continue
            except OSError:
                break
        if not answer:
            answer, _ = read_all(s, 5)
        report(answer.startswith(b"HTTP/1.1 408 ") and time.time() - t0 < 4,
               "a head trickled a byte at a time is cut at the deadline",
               answer[:100])

        # a body below the minimum rate
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Content-Length: 100000\r\n\r\n{\"queries\":")
        t0 = time.time()
        cut = False
        s.settimeout(0.5)
        data = b""
        while time.time() - t0 < 8:
            try:
                s.sendall(b"[" * 100)  # 200 B/s, far below 4 KiB/s
                chunk = s.recv(4096)
                data += chunk
                if not chunk or data:
                    cut = True
                    break
            except socket.timeout:
                continue
            except OSError:
                cut = True
                break
        took = time.time() - t0
        report(cut and data.startswith(b"HTTP/1.1 408 ") and took < 4,
               "a body at 200 B/s under --min-body-rate 4K: 408 and a close "
               "(after %.1f s)" % took, data[:120])

        # a kept-alive connection: the next head within idle + header
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        s.settimeout(2)
        first = s.recv(4096)
        time.sleep(1.5)  # idle, within --timeout 2 and past --header-timeout
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        second = s.recv(4096)
        report(first.startswith(b"HTTP/1.1 200 ")
               and second.startswith(b"HTTP/1.1 200 "),
               "a kept-alive connection idle 1.5 s is still served",
               second[:80])
        s.close()

        # the fast clients were never disturbed
        line, _, _ = request(port, "GET", "/healthz")
        report(line.startswith("HTTP/1.1 200"), "and a normal request is "
               "answered 200")

        # each 408 counts once in /metrics: two heads, one body
        time.sleep(0.3)
        _, _, text = request(port, "GET", "/metrics")
        counts = {}
        for m in re.finditer(r'attnd_requests_total\{route="([^"]*)",'
                             r'method="([^"]*)",status="408"\} (\d+)',
                             text.decode()):
            counts[(m.group(1), m.group(2))] = int(m.group(3))
        report(sum(counts.values()) == 3 and
               counts.get(("/attention/dot", "POST")) == 1,
               "the three 408s count in attnd_requests_total (%s)" % counts,
               text[:300])
    finally:
        proc.terminate()
        proc.wait(10)

    # --- the memory budget -------------------------------------------------
    proc, port, log = start(binary, "--memory-budget", "64M",
                            "--compute-timeout", "1")
    try:
        # Nq = Nk = 3000: 9 M weights, 72 MB: never fits a 64 MiB budget
        line, headers, body = request(port, "POST", "/attention/dot",
                                      dot_body(3000))
        p = json.loads(body or b"{}")
        report(line.startswith("HTTP/1.1 413") and
               p.get("code") == "payload_too_large" and
               "--memory-budget" in p.get("detail", ""),
               "a request larger than the whole budget: 413 naming "
               "--memory-budget", body[:300])
        line, headers, body = request(port, "POST", "/attention/dot",
                                      dot_body(100))
        report(line.startswith("HTTP/1.1 200"), "a small one: 200")
        # /grade compares its reference and never prints it: a traced
        # reference whose answer text alone (~80 MB) would not fit
        rows = json.loads(dot_body(900))["queries"]
        graded = json.dumps({
            "endpoint": "/attention/dot",
            "request": {"queries": rows, "keys": rows, "values": rows,
                        "trace": True},
            "answer": {"output": rows}}).encode()
        line, headers, body = request(port, "POST", "/grade", graded)
        report(line.startswith("HTTP/1.1 200") and
               "pass" in json.loads(body or b"{}"),
               "/grade of a traced request holds the reference's tensors, "
               "not its answer text: 200", line + " " +
               body[:200].decode("latin-1"))

        # three readers that do not read hold answers of ~20 MB each, one
        # each from its own address (each within its share, a quarter)
        holders = []
        big = dot_body(1500)  # 2.25 M weights: 18 MB held while streamed
        for i in range(3):
            s = socket.socket()
            s.bind(("127.0.0.%d" % (11 + i), 0))
            s.connect(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(big) + big)
            holders.append(s)
            time.sleep(0.3)
        time.sleep(0.5)
        line, headers, body = request(port, "POST", "/attention/dot", big,
                                      timeout=10)
        p = json.loads(body or b"{}") if line.startswith("HTTP/1.1 503") \
            else {}
        report(line.startswith("HTTP/1.1 503") and
               p.get("code") == "overloaded" and
               headers.get("retry-after") == "1" and
               "--memory-budget" in p.get("detail", ""),
               "while non-readers hold the budget: 503 overloaded, "
               "Retry-After: 1, naming --memory-budget", line + " " +
               body[:200].decode("latin-1"))
        refusal_seen(report, port, log, "POST /attention/dot 503 ",
                     "memory", "127.0.0.1")
        line, _, _ = request(port, "GET", "/healthz")
        report(line.startswith("HTTP/1.1 200"), "  /healthz still answers")
        for s in holders:
            s.close()
        time.sleep(0.5)
        line, _, _ = request(port, "POST", "/attention/dot", big)
        report(line.startswith("HTTP/1.1 200"),
               "once they close, the same request is answered", line)

        # heads that announce large bodies and send nothing hold nothing
        idle = []
        for _ in range(8):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/json\r\n"
                      b"Content-Length: 16000000\r\n\r\n")
            idle.append(s)
        time.sleep(0.3)
        line, _, _ = request(port, "POST", "/attention/dot", big)
        report(line.startswith("HTTP/1.1 200"),
               "8 heads announcing 16 MB bodies and sending none take no "
               "room: a 20 MB answer is still served", line)
        for s in idle:
            s.close()

        # a picture is reserved before it is drawn, and has at most 1024
        # panels
        scores = json.dumps({"scores": {"shape": [2000, 1, 1],
                                        "data": [0] * 2000}}).encode()
        line, _, body = request(port, "POST", "/softmax/masked", scores,
                                headers=["Accept: image/svg+xml"])
        report(line.startswith("HTTP/1.1 413") and b"panels" in body,
               "an SVG of 2000 panels: 413 before it is drawn", line)

        # a body larger than the whole budget: 413 before it is read
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Content-Length: 100000000\r\n\r\n")
        data, closed = read_all(s, 5)
        report(data.startswith(b"HTTP/1.1 413 ") and closed,
               "a 100 MB Content-Length over a 64 MiB budget: 413 at once, "
               "closed", data[:100])

        # the tree bomb
        before = rss_kb(proc.pid)
        peak = [before]
        done = threading.Event()

        def watch():
            while not done.is_set():
                peak[0] = max(peak[0], rss_kb(proc.pid))
                time.sleep(0.005)
        watcher = threading.Thread(target=watch)
        watcher.start()
        objects = b"[" + b"{}," * ((16 << 20) // 3 - 8) + b"{}]"
        line, _, body = request(port, "POST", "/attention/dot",
                                b'{"queries":' + objects + b"}")
        done.set()
        watcher.join()
        grown = (peak[0] - before) / 1024
        report(line.startswith("HTTP/1.1 413") and b"as a tree" in body,
               "a 16 MiB body of [{},...]: 413 before a tree is built",
               line + " " + body[:200].decode("latin-1"))
        report(grown < 100, "  its peak was %.0f MB above idle (under 100)"
               % grown)

    finally:
        proc.terminate()
        proc.wait(10)

    # --- one address's unread answers --------------------------------------
    def unread_answers(port, n=12):
        """The first bytes of each answer to n connections from 127.0.0.1
        that ask for ~20 MB answers (8 MiB of tensor each, held while
        sent) and read no further; and the connections, still open."""
        hog = []
        for _ in range(n):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /encoding/positional?num_steps=256&d=4096 "
                      b"HTTP/1.1\r\nHost: x\r\n\r\n")
            hog.append(s)
        time.sleep(2)
        firsts = []
        for s in hog:
            s.settimeout(5)
            try:
                firsts.append(s.recv(2048))
            except OSError:
                firsts.append(b"")
        return firsts, hog

    def reserved(port):
        """attnd_memory_reserved_bytes, asked from 127.0.0.9."""
        s = socket.socket()
        s.bind(("127.0.0.9", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n"
                  b"Connection: close\r\n\r\n")
        data, _ = read_all(s, 10)
        s.close()
        m = re.search(rb"^attnd_memory_reserved_bytes (\d+)", data, re.M)
        return int(m.group(1)) if m else -1

    def big_answer_elsewhere(port):
        """The start and length of the answer to a request for a 40 MB
        answer (16 MiB of tensor) from 127.0.0.2."""
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /encoding/positional?num_steps=512&d=4096 "
                  b"HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data, _ = read_all(s, 30)
        s.close()
        return data[:300], len(data)

    # a quarter of 256 MiB is 64 MiB; it binds once half the budget is taken
    proc, port, log = start(binary, "--memory-budget", "256M")
    try:
        firsts, hog = unread_answers(port, 24)
        ok = shared_ok = sum(f.startswith(b"HTTP/1.1 200") for f in firsts)
        refused = [f for f in firsts if f.startswith(b"HTTP/1.1 503")]
        report(8 <= ok <= 18 and len(refused) == 24 - ok,
               "a client reading none of its answers: %d of 24 computed, "
               "the rest 503 past a quarter of the budget" % ok,
               [f[:12] for f in firsts])
        report(refused and b"beyond one client's share of 64.0 MiB while "
               b"more than half of the budget is taken" in refused[0] and
               b"retry-after: 1" in refused[0].lower(),
               "  naming the share, with Retry-After: 1",
               refused[0][:700] if refused else "")
        refusal_seen(report, port, log, " 503 ", "address_share", "127.0.0.")
        line, _, _ = request(port, "GET", "/healthz")
        report(line.startswith("HTTP/1.1 200"),
               "  its /healthz is answered whatever it holds", line)
        start_of, length = big_answer_elsewhere(port)
        report(start_of.startswith(b"HTTP/1.1 200") and length > 40e6,
               "another client's 40 MB answer is computed meanwhile (200)",
               start_of)
        for s in hog:
            s.close()
        time.sleep(0.5)
        report(reserved(port) < 1 << 20,
               "once they close, what they held is given back: %d bytes "
               "reserved" % reserved(port))

        # bodies sent slowly: 16 bodies of 15 of their 16 MB, then silence
        bodies = []
        for _ in range(16):
            s = socket.socket()
            s.connect(("127.0.0.1", port))
            s.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/json\r\n"
                      b"Content-Length: 16000000\r\n\r\n"
                      b"{\"queries\": [[[1]]], \"pad\": \"" +
                      b"a" * 15000000)
            bodies.append(s)
        time.sleep(1)
        held = reserved(port)
        report(0 < held < 150 << 20, "16 bodies held unfinished from one "
               "address reserve %.0f MiB, not the whole 256 MiB" %
               (held / 2 ** 20), held)
        start_of, length = big_answer_elsewhere(port)
        report(start_of.startswith(b"HTTP/1.1 200") and length > 40e6,
               "  and another client's 40 MB answer is computed (200)",
               start_of)
        for s in bodies:
            s.close()
    finally:
        proc.terminate()
        proc.wait(10)
    # addresses said to be shared (behind a proxy or a NAT): no share
    proc, port, _ = start(binary, "--memory-budget", "256M",
                          "--max-connections-per-address", "0")
    try:
        firsts, hog = unread_answers(port, 24)
        ok = sum(f.startswith(b"HTTP/1.1 200") for f in firsts)
        report(ok >= shared_ok + 4, "with --max-connections-per-address 0 "
               "only the whole budget bounds them: %d of 24 computed, "
               "against %d" % (ok, shared_ok), [f[:12] for f in firsts])
        for s in hog:
            s.close()
    finally:
        proc.terminate()
        proc.wait(10)

    # --- what a small request derives --------------------------------------
    proc, port, _ = start(binary, "--memory-budget", "512M",
                          "--compute-timeout", "1")
    try:
        def drawn(rows, h, **extra):
            t = [[0.1 * i] for i in range(rows)]
            body = {"queries": t, "keys": t, "values": t, "num_hiddens": h}
            body.update(extra)
            return json.dumps(body).encode()

        def refused(body, path="/attention/additive"):
            base = hwm_kb(proc.pid)
            t0 = time.time()
            line, _, answer = request(port, "POST", path, body)
            took = time.time() - t0
            p = json.loads(answer) if answer.startswith(b"{") else {}
            return (line, p.get("detail", ""), took,
                    (hwm_kb(proc.pid) - base) / 1024)

        line, detail, took, grown = refused(
            drawn(8, 16000000, seed=1, return_weights=False))
        report(line.startswith("HTTP/1.1 413") and
               "projected queries" in detail and "--max-elements" in detail
               and took < 1 and grown < 50,
               "additive, 8 rows and num_hiddens 16e6 (260 B): 413, the "
               "projections (8, 16e6) over --max-elements (%.2f s, +%.0f MB)"
               % (took, grown), line + " " + detail)
        line, detail, took, grown = refused(
            drawn(4, 4000000, seed=1, return_weights=False))
        report(line.startswith("HTTP/1.1 413") and
               "--memory-budget" in detail and took < 1 and grown < 50,
               "additive, 4 rows and num_hiddens 4e6: its 0.9 GB of "
               "parameters and scratch are over --memory-budget 512M: 413 "
               "(%.2f s, +%.0f MB)" % (took, grown), line + " " + detail)
        line, detail, took, grown = refused(drawn(1, 16000000))
        report(line.startswith("HTTP/1.1 413") and
               "--max-elements" in detail and "answer" in detail and
               took < 1 and grown < 50,
               "additive, one query and num_hiddens 16e6 (83 B): a 1.2 GB "
               "answer of drawn parameters is 413 naming --max-elements "
               "(%.2f s, +%.0f MB)" % (took, grown), line + " " + detail)
        line, _, _ = request(port, "POST", "/attention/additive",
                             drawn(4, 1000, seed=1))
        report(line.startswith("HTTP/1.1 200"),
               "  num_hiddens 1000 on 4 rows is still answered", line)
        repeated = (b"{" + b'"queries":[[1]],' * 1000000 +
                    b'"keys":[[1]],"values":[[1]]}')
        line, detail, took, grown = refused(repeated, "/attention/dot")
        report(line.startswith("HTTP/1.1 413") and grown < 80,
               "a 16 MB body repeating \"queries\":[[1]] 1e6 times: 413, "
               "+%.0f MB at its peak (under 80)" % grown, line + " " + detail)

        # the time limit: (1400, 1400) pairs of 1000 features, 7.8e9 counted
        # operations; its 118 MiB (lib's scratch, 3·(Nq+Nk)·h doubles,
        # included) need more than a 64 MiB budget
        t0 = time.time()
        line, headers, body = request(port, "POST", "/attention/additive",
                                      additive_body(1400, 1000))
        took = time.time() - t0
        p = json.loads(body or b"{}")
        report(line.startswith("HTTP/1.1 503") and
               p.get("code") == "overloaded" and
               "--compute-timeout" in p.get("detail", ""),
               "an additive request past --compute-timeout 1: 503 naming the "
               "limit", line + " " + body[:200].decode("latin-1"))
        report(took < 5, "  stopped after %.1f s" % took)
    finally:
        proc.terminate()
        proc.wait(10)

    # --- a fair compute queue ----------------------------------------------
    proc, port, _ = start(binary)
    try:
        # one client (127.0.0.3) queues FLOOD slow NW requests (w "cv" over
        # 400 points: about 0.5 s each on two cores); another (127.0.0.2)
        # then sends one medium dot. First come first served, it would wait
        # for the whole flood (FLOOD * 0.5 s / workers, about 10 s); served
        # in turn, for the jobs already running and about one more per
        # worker: the bound is 4 s.
        FLOOD = 40
        n_nw = 400
        slow = json.dumps({"x_train": [i * 0.001 for i in range(n_nw)],
                           "y_train": [(i * 7 % 13) * 0.1
                                       for i in range(n_nw)],
                           "x_query": [i * 0.002 for i in range(n_nw)],
                           "w": "cv"}).encode()

        def post_from(source, body):
            s = socket.create_connection(("127.0.0.1", port),
                                         source_address=(source, 0))
            s.sendall(b"POST /regression/nw HTTP/1.1\r\nHost: x\r\n"
                      b"Connection: close\r\nContent-Type: application/json"
                      b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            return s
        flood = [post_from("127.0.0.3", slow) for _ in range(FLOOD)]
        time.sleep(0.5)
        s = socket.create_connection(("127.0.0.1", port),
                                     source_address=("127.0.0.2", 0))
        medium = dot_body(64, 32)
        t0 = time.time()
        s.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                  b"Connection: close\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(medium) + medium)
        data, _ = read_all(s, 30)
        took = time.time() - t0
        s.close()
        report(data.startswith(b"HTTP/1.1 200 ") and took < 4,
               "a medium dot from one client behind %d slow NW requests "
               "from another: served in %.1f s (bound 4 s)" % (FLOOD, took),
               data[:100])
        first, _ = read_all(flood[0], 30)
        report(first.startswith(b"HTTP/1.1 200 ") and
               b'"predictions"' in first,
               "  and the flood's own first request is answered 200",
               first[:100])
        for f in flood:
            f.close()
    finally:
        proc.terminate()
        proc.wait(10)

    # --- gzip as it is sent ------------------------------------------------
    proc, port, _ = start(binary)
    try:
        path = "/encoding/positional?num_steps=256&d=512"
        _, _, plain = request(port, "GET", path, headers=["Connection: close"])
        line, headers, body = request(port, "GET", path,
                                      headers=["Accept-Encoding: gzip"])
        report(headers.get("content-encoding") == "gzip" and
               headers.get("transfer-encoding") == "chunked" and
               "content-length" not in headers,
               "a 2.5 MB answer to gzip: compressed as it is sent (chunked)",
               headers)
        report(gzip.decompress(dechunk(body)) == dechunk(plain),
               "  and decompresses to the plain answer")
    finally:
        proc.terminate()
        proc.wait(10)
    print("1..%d" % n)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""refusals.py — every refusal is answered where the protocol allows, logged
with the client and its reason, and counted in attnd_refused_total{reason}
(docs/contract.md sections 1 and 14; server/refusals.h). Each path is
driven on a daemon of its own, and three things are read for it: what
the client got, the access line (client address, token label, reason),
and the counter's line on GET /metrics.

    usage: python3 tests/http/refusals.py BUILD/attnd
Prints TAP. Starts its own daemons on free loopback ports.
"""
import json
import os
import re
import socket
import sys
import tempfile
import threading
import time

from daemon import start

SMALL = b'{"queries": [[1, 0]], "keys": [[1, 0]], "values": [[1]]}'


def request(port, method, path, body=b"", headers=(), source="127.0.0.1",
            timeout=10):
    """(status, headers text, body) of one request on its own connection;
    (0, "", b"") when the connection ends without an answer."""
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    head = "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" % (method, path)
    for h in headers:
        head += h + "\r\n"
    if body:
        head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(
            body)
    s.sendall(head.encode() + b"\r\n" + body)
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    s.close()
    if not data.startswith(b"HTTP/1.1 "):
        return 0, "", b""
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(data[9:12]), head.decode(errors="replace"), rest


def refused_count(port, reason, headers=()):
    status, _, body = request(port, "GET", "/metrics", headers=headers)
    m = re.search(rb'attnd_refused_total\{reason="%s"\} (\d+)' %
                  reason.encode(), body)
    return int(m.group(1)) if status == 200 and m else -1


def log_lines(log, reason):
    """The access lines that carry refused=reason."""
    with open(log, errors="replace") as f:
        return [line for line in f if (" refused=%s" % reason) in line]


class Suite:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def report(self, ok, name, extra=""):
        self.n += 1
        self.failed += not ok
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, name))
        if not ok and extra:
            print("#   " + str(extra)[:400])


def logged(log, reason, text):
    """The lines of reason, once one holds text (an access line is written
    once its answer is sent, so it may follow the answer by a moment:
    looked for up to 2 s)."""
    for _ in range(40):
        lines = log_lines(log, reason)
        if any(text in line for line in lines):
            break
        time.sleep(0.05)
    return lines


def check_logged(t, log, reason, client, what):
    lines = logged(log, reason, " %s " % client)
    t.report(any((" %s " % client) in line for line in lines),
             "  %s: logged with the client %s and refused=%s" %
             (what, client, reason), lines[-3:] if lines else "no line")


def connections(t, binary):
    proc, port, log = start(binary, "--max-connections-per-address", "2",
                            "--timeout", "20")
    try:
        held = []
        for _ in range(2):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /heal")  # half a head: holds its slot
            held.append(s)
        time.sleep(0.2)
        third = socket.create_connection(("127.0.0.1", port))
        third.settimeout(5)
        data = third.recv(4096)
        third.close()
        t.report(data.startswith(b"HTTP/1.1 503 ") and b"Retry-After: " in data,
                 "a connection past its address's share is answered 503 "
                 "with Retry-After", data[:200])
        check_logged(t, log, "connections_per_address", "127.0.0.1",
                     "the 503 connection")
        for s in held:
            s.close()
        time.sleep(0.3)
        n_503 = refused_count(port, "connections_per_address")
        t.report(n_503 >= 1, "  counted as connections_per_address (%d)" % n_503)
    finally:
        proc.terminate()
        proc.wait()


def rate_limited(t, binary):
    tokens = tempfile.NamedTemporaryFile("w", prefix="attnd-tokens-",
                                         delete=False)
    tokens.write("ta-alice s3cret-alice\n")
    tokens.close()
    proc, port, log = start(binary, "--rate-limit", "2/m", "--burst", "2",
                            "--auth-token-file", tokens.name)
    try:
        auth = ("Authorization: Bearer s3cret-alice",)
        statuses = [request(port, "POST", "/attention/dot", SMALL, auth)[0]
                    for _ in range(3)]
        status, head, body = request(port, "POST", "/attention/dot", SMALL,
                                     auth)
        t.report(statuses[:2] == [200, 200] and status == 429 and
                 "Retry-After: " in head and
                 json.loads(body).get("code") == "rate_limited",
                 "over --rate-limit: 429 rate_limited with Retry-After",
                 (statuses, status, body[:200]))
        lines = logged(log, "rate_limited",
                       " 127.0.0.1 ta-alice refused=rate_limited")
        t.report(any(" 127.0.0.1 ta-alice refused=rate_limited" in line
                     for line in lines),
                 "  logged with the client and the token's label, "
                 "refused=rate_limited", lines[-2:])
        with open(log, errors="replace") as f:
            text = f.read()
        t.report("s3cret-alice" not in text, "  the token itself is in no "
                 "log line")
        t.report(refused_count(port, "rate_limited", auth) >= 1,
                 "  counted as rate_limited")
    finally:
        proc.terminate()
        proc.wait()
        os.unlink(tokens.name)


def in_flight(t, binary, flag, reason, code, status_want, source):
    """flag 1: a slow request holds the one place; another from source is
    refused."""
    proc, port, log = start(binary, flag, "1", "--threads", "2")
    try:
        # one request that takes a while holds the one place
        big = json.dumps({"x_train": [i / 97 for i in range(200)],
                          "y_train": [((i * 7) % 13) / 13 for i in range(200)],
                          "x_query": [i / 150 for i in range(200)],
                          "fit": {"epochs": 2000}}).encode()
        slow = threading.Thread(target=request,
                                args=(port, "POST", "/regression/nw", big))
        slow.start()
        time.sleep(0.3)  # admitted before the others come
        got = []
        deadline = time.time() + 5
        while time.time() < deadline and not got:
            status, head, body = request(port, "POST", "/attention/dot", SMALL,
                                         source=source)
            if status == status_want:
                got.append((status, head, body))
            time.sleep(0.01)
        slow.join()
        ok = bool(got) and "Retry-After: " in got[0][1] and \
            json.loads(got[0][2]).get("code") == code
        t.report(ok, "%s 1 and a second request at once: %d %s with "
                 "Retry-After" % (flag, status_want, code),
                 got[0][:2] if got else "never refused")
        check_logged(t, log, reason, source, "the %d" % status_want)
        t.report(refused_count(port, reason) >= 1, "  counted as %s" % reason)
    finally:
        proc.terminate()
        proc.wait()


def queue_full(t, binary):
    """More jobs waiting for a compute thread than the queue holds (128):
    the next is answered 503 queue_full with Retry-After."""
    proc, port, log = start(binary, "--threads", "2", "--timeout", "30")
    try:
        results = []

        def slow_one(i):
            # each its own numbers (identical ones would share one job)
            body = json.dumps({
                "x_train": [(i + k) / 97 for k in range(200)],
                "y_train": [((k * 7) % 13) / 13 for k in range(200)],
                "x_query": [k / 150 for k in range(200)],
                "fit": {"epochs": 300}}).encode()
            results.append(request(port, "POST", "/regression/nw", body,
                                   source="127.0.0.%d" % (2 + i % 3),
                                   timeout=60))
        threads = [threading.Thread(target=slow_one, args=(i,))
                   for i in range(200)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        full = [r for r in results if r[0] == 503]
        ok = bool(full) and "Retry-After: 1" in full[0][1] and \
            json.loads(full[0][2]).get("code") == "overloaded" and \
            "waiting to be computed" in json.loads(full[0][2]).get("detail")
        t.report(ok, "200 slow requests at once: %d computed, %d answered "
                 "503 with Retry-After (the queue was full)" % (
                     sum(r[0] == 200 for r in results), len(full)),
                 full[0][:2] if full else [r[0] for r in results][:20])
        lines = logged(log, "queue_full", " 127.0.0.")
        t.report(any(re.search(r" 127\.0\.0\.[234] ", line)
                     for line in lines),
                 "  logged with its client and refused=queue_full",
                 lines[-3:] or "no line")
        n = refused_count(port, "queue_full")
        t.report(n == len(full), "  counted as queue_full (%d)" % n)
    finally:
        proc.terminate()
        proc.wait()


def memory(t, binary):
    """No room in the memory budget: for a body as it arrives (the HTTP
    thread's check), and for the JSON tree of a body that fitted (the
    api's): each 503 overloaded naming --memory-budget, logged and
    counted as memory."""
    proc, port, log = start(binary, "--memory-budget", "64M",
                            "--max-connections-per-address", "0")
    holders = []

    def hold(n):
        """n bodies of 15 of their 16 MB, unfinished: 16 MiB each held."""
        for _ in range(n):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/json\r\n"
                      b"Content-Length: 16000000\r\n\r\n"
                      b'{"queries": [[[1]]], "pad": "' + b"a" * 15000000)
            holders.append(s)
        time.sleep(1)

    def padded(mb):
        return (b'{"queries": [[[1]]], "keys": [[[1]]], "values": [[[1]]], '
                b'"pad": "' + b"a" * (mb * 1000000) + b'"}')
    try:
        for what, n, body, source in (
                ("a 14 MB body whose JSON tree finds no room", 3,
                 padded(14), "127.0.0.3"),
                ("a 1 MB body finding no room as it arrives", 1,
                 padded(1), "127.0.0.4")):
            hold(n)
            status, head, answer = request(port, "POST", "/attention/dot",
                                           body, source=source)
            doc = json.loads(answer or b"{}")
            t.report(status == 503 and "Retry-After: 1" in head and
                     doc.get("code") == "overloaded" and
                     "--memory-budget" in doc.get("detail", ""),
                     "%s: 503 overloaded with Retry-After, naming "
                     "--memory-budget" % what, (status, answer[:300]))
            check_logged(t, log, "memory", source, "  the 503")
        t.report(refused_count(port, "memory") == 2,
                 "  both counted as memory (%d)" %
                 refused_count(port, "memory"))
    finally:
        for s in holders:
            s.close()
        proc.terminate()
        proc.wait()


def main():
    binary = sys.argv[1]
    t = Suite()
    connections(t, binary)
    rate_limited(t, binary)
    queue_full(t, binary)
    memory(t, binary)
    in_flight(t, binary, "--max-concurrent-per-client", "too_concurrent",
              "rate_limited", 429, "127.0.0.1")
    # from another address, past the per-client limit this flag implies
    in_flight(t, binary, "--max-connections", "overloaded", "overloaded", 503,
              "127.0.0.2")
    print("1..%d" % t.n)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""lanes.py — a student's click never waits behind a teacher's batch
(docs/contract.md section 14; server/compute_pool.h): with every compute
thread given a /grade/batch of 10,000 submissions, a click that runs on
the compute threads (a body over the HTTP threads' 2 KiB) is answered
long before the batches, and GET /metrics shows the lanes' jobs.

    usage: python3 tests/http/lanes.py BUILD/attnd
Prints TAP. Starts its own daemon, whose bulk lane has a thread for every
core but one (at least one): on two cores, one of the two batches waits.
"""
import json
import os
import re
import socket
import sys
import threading
import time

from daemon import start

SUBMISSIONS = 10000


def request(port, method, path, body=b"", ctype="application/json",
            source="127.0.0.1", timeout=60):
    """(status, body, seconds) of one request on its own connection."""
    t0 = time.monotonic()
    s = socket.socket()
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    head = ("%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            "Content-Type: %s\r\nContent-Length: %d\r\n\r\n" %
            (method, path, ctype, len(body)))
    s.sendall(head.encode() + body)
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    s.close()
    status = int(data[9:12]) if data.startswith(b"HTTP/1.1 ") else 0
    return status, data.partition(b"\r\n\r\n")[2], time.monotonic() - t0


def batch_body(seed):
    """SUBMISSIONS submissions of small dot exercises, each request its
    own (a reference and a grade apiece)."""
    lines = []
    for i in range(SUBMISSIONS):
        q = [[(i * seed + j) % 13 / 13 for j in range(8)] for _ in range(8)]
        sub = {"id": i, "endpoint": "/attention/dot",
               "request": {"queries": q, "keys": q, "values": q},
               "answer": {"output": q}}
        lines.append(json.dumps(sub))
    return "\n".join(lines).encode()


def click_body():
    """A lab-sized dot request just over the HTTP threads' 2 KiB, so that
    it is computed by the compute threads."""
    q = [[[round((i * 7 + j) % 11 / 11, 6) for j in range(8)]
          for i in range(16)]]
    return json.dumps({"queries": q, "keys": q, "values": q}).encode()


def main():
    binary = sys.argv[1]
    n = 0
    failed = 0

    def report(ok, name, extra=""):
        nonlocal n, failed
        n += 1
        failed += not ok
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
        if not ok and extra:
            print("#   " + str(extra)[:300])

    proc, port, log = start(binary, "--max-body-bytes", "64M")
    try:
        click = click_body()
        assert len(click) > 2048
        status, _, alone = request(port, "POST", "/attention/dot", click)
        report(status == 200, "a click alone: 200 in %.1f ms" % (alone * 1e3))
        bodies = [batch_body(s) for s in (3, 5)]
        results = {}

        def run_batch(k):
            results[k] = request(port, "POST", "/grade/batch", bodies[k],
                                 ctype="application/x-ndjson",
                                 source="127.0.0.2")

        threads = [threading.Thread(target=run_batch, args=(k,))
                   for k in range(2)]
        for t in threads:
            t.start()
        # the lanes as /metrics shows them, all along
        seen = {"running": 0, "waiting": 0, "scrapes": 0}

        def watch():
            while any(t.is_alive() for t in threads):
                _, metrics, _ = request(port, "GET", "/metrics",
                                        source="127.0.0.4")
                for k, v in re.findall(rb'attnd_compute_(waiting|running)'
                                       rb'_jobs\{lane="bulk"\} (\d+)',
                                       metrics):
                    seen[k.decode()] = max(seen[k.decode()], int(v))
                seen["scrapes"] += 1
                time.sleep(0.005)

        watcher = threading.Thread(target=watch)
        watcher.start()
        # the batches are read and queued; then clicks
        time.sleep(0.3)
        clicks = []
        while any(t.is_alive() for t in threads) and len(clicks) < 20:
            status, _, took = request(port, "POST", "/attention/dot", click,
                                      source="127.0.0.3")
            if any(t.is_alive() for t in threads):
                clicks.append((status, took))
        watcher.join()
        bulk_threads = max(1, (os.cpu_count() or 1) - 1)
        report(seen["running"] == min(2, bulk_threads),
               "/metrics shows the batches in the bulk lane, never more "
               "than its %d thread(s) running (%s)" % (bulk_threads, seen))
        for t in threads:
            t.join()
        batch_s = [results[k][2] for k in range(2)]
        ok_batches = all(results[k][0] == 200 for k in range(2))
        report(ok_batches, "both batches of %d submissions: 200 in %.2f s and "
               "%.2f s" % (SUBMISSIONS, batch_s[0], batch_s[1]))
        worst = max((t for _, t in clicks), default=0)
        # behind a batch, a click would wait for it (about 250 ms here)
        bound = min(max(10 * alone, 0.05), min(batch_s) / 4)
        report(clicks and all(s == 200 for s, _ in clicks) and worst < bound,
               "%d clicks during the batches: all 200, the slowest in %.1f "
               "ms, under %.0f ms (ten clicks alone, and a quarter of a "
               "batch)" % (len(clicks), worst * 1e3, bound * 1e3),
               clicks[:5])
    finally:
        proc.terminate()
        proc.wait()
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""health_probe.py — GET /healthz on a new connection each time, for a
number of seconds; prints "n=N p50_ms=X p99_ms=Y max_ms=Z failed=F".

    usage: python3 tests/load/health_probe.py PORT SECONDS

attacks.py imports probe() to run the same probe at its own pace and from
its own source address.
"""
import http.client
import sys
import time


def probe(port, seconds, interval=0.005, source=None):
    """Probe for `seconds`, pausing `interval` seconds after each answer,
    from `source` (an address of 127/8) when given. Returns a dict: n,
    p50_ms, p99_ms, max_ms, failed (answers other than 200, and errors)."""
    latencies, failed = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            c = http.client.HTTPConnection(
                "127.0.0.1", port, timeout=30,
                source_address=(source, 0) if source else None)
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            c.close()
            failed += r.status != 200
        except (OSError, http.client.HTTPException):
            failed += 1
        latencies.append((time.monotonic() - t) * 1000)
        time.sleep(interval)
    latencies.sort()
    n = len(latencies)
    return {"n": n, "p50_ms": latencies[n // 2],
            "p99_ms": latencies[min(n - 1, int(n * 0.99))],
            "max_ms": latencies[-1], "failed": failed}


def summary(r):
    return "n=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f failed=%d" % (
        r["n"], r["p50_ms"], r["p99_ms"], r["max_ms"], r["failed"])


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    print(summary(probe(port, seconds)))


if __name__ == "__main__":
    main()

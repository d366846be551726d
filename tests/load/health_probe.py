#!/usr/bin/env python3
"""health_probe.py — GET /healthz on a new connection each time, for a
number of seconds; prints "n=N p50_ms=X p99_ms=Y max_ms=Z failed=F".

    usage: python3 tests/load/health_probe.py PORT SECONDS
"""
import http.client
import sys
import time


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    latencies, failed = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.monotonic()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", "/healthz")
            r = c.getresponse()
            r.read()
            c.close()
            failed += r.status != 200
        except OSError:
            failed += 1
        latencies.append((time.monotonic() - t) * 1000)
        time.sleep(0.005)
    latencies.sort()
    n = len(latencies)
    print("n=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f failed=%d" % (
        n, latencies[n // 2], latencies[min(n - 1, int(n * 0.99))],
        latencies[-1], failed))


if __name__ == "__main__":
    main()

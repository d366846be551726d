#!/usr/bin/env python3
"""Every case of tests/cases sent to two attnd binaries, answers compared
byte for byte: status, Content-Type, Allow and the body (gzip off, so the
bytes are attnd's own). For a change that must not alter any answer, such
as a refactoring: `make compare-cases BEFORE=path/to/old/attnd`.

usage: python3 tests/cases/compare_binaries.py OLD_ATTND NEW_ATTND
Prints TAP, one line per endpoint directory; exit 1 on any difference.
Standard library only."""

import http.client
import json
import os
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary):
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port)],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit(f"{binary} did not start")


def cases():
    for endpoint in sorted(os.listdir(HERE)):
        edir = os.path.join(HERE, endpoint)
        route = os.path.join(edir, "route")
        if not os.path.isfile(route):
            continue
        method, path = open(route).read().split()
        for name in sorted(os.listdir(edir)):
            cdir = os.path.join(edir, name)
            if not os.path.isdir(cdir):
                continue
            meta = {}
            if os.path.exists(os.path.join(cdir, "meta.json")):
                meta = json.load(open(os.path.join(cdir, "meta.json")))
            body = None
            if os.path.exists(os.path.join(cdir, "request.json")):
                body = open(os.path.join(cdir, "request.json"), "rb").read()
            yield endpoint, name, method, path, meta, body


def send(port, method, path, meta, body, host="127.0.0.1"):
    headers = {"Accept-Encoding": "identity"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    if "content_type" in meta:
        if meta["content_type"] is None:
            headers.pop("Content-Type", None)
        else:
            headers["Content-Type"] = meta["content_type"]
    if meta.get("accept"):
        headers["Accept"] = meta["accept"]
    target = meta.get("path", path)
    if meta.get("query"):
        target += "?" + meta["query"]
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.request(meta.get("method", method), target, body=body,
                 headers=headers)
    r = conn.getresponse()
    answer = (r.status, r.getheader("Content-Type"), r.getheader("Allow"),
              r.read())
    conn.close()
    return answer


def main():
    old, new = sys.argv[1], sys.argv[2]
    (p_old, port_old), (p_new, port_new) = start(old), start(new)
    try:
        by_endpoint = {}
        for endpoint, name, method, path, meta, body in cases():
            a = send(port_old, method, path, meta, body)
            b = send(port_new, method, path, meta, body)
            stats = by_endpoint.setdefault(endpoint, [0, []])
            stats[0] += 1
            if a != b:
                stats[1].append((name, a, b))
    finally:
        p_old.terminate()
        p_new.terminate()
    n, failed = 0, 0
    for endpoint, (count, diffs) in by_endpoint.items():
        n += 1
        ok = not diffs
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {n} - {endpoint}: {count} cases, "
              f"{count - len(diffs)} byte-identical")
        for name, a, b in diffs[:5]:
            print(f"#   {name}: old {a[:3]} {a[3][:200]!r}")
            print(f"#   {name}: new {b[:3]} {b[3][:200]!r}")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

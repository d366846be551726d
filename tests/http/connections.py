#!/usr/bin/env python3
"""connections.py — the connection slots of one client address, counted
from accept (server/conn_slots.h): one address that opens connections and
never finishes its headers holds at most its share, and another address
is served all the while. Loopback only: the other address is 127.0.0.2.

    usage: python3 tests/http/connections.py BUILD/attnd
Prints TAP. Starts its own daemons on free loopback ports.
"""
import socket
import sys
import time

from daemon import start


def slow_header(port, source="127.0.0.1"):
    """A connection that sends half a request line and then nothing."""
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /heal")
    return s


def served(port, source):
    """1 when a whole request from source gets its 200."""
    try:
        s = socket.socket()
        s.settimeout(2)
        s.bind((source, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                  b"Connection: close\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        s.close()
        return data.startswith(b"HTTP/1.1 200 ")
    except OSError:
        return False


def main():
    binary = sys.argv[1]
    n = 0

    def report(ok, name, extra=""):
        nonlocal n
        n += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
        if not ok and extra:
            print("#   " + extra)

    proc, port, _ = start(binary, "--max-connections-per-address", "8",
                       "--timeout", "20")
    try:
        held = [slow_header(port) for _ in range(40)]
        time.sleep(0.5)
        # the first 8 stay open; the others are told why (503) and
        # closed, up to 16 at a time, past which they are closed unanswered
        alive = answered = 0
        for s in held:
            s.settimeout(0.2)
            try:
                data = s.recv(4096)
                if data.startswith(b"HTTP/1.1 503 ") and \
                        b"Retry-After: 1" in data and \
                        b'"code":"overloaded"' in data and \
                        b"--max-connections-per-address" in data:
                    answered += 1
                elif data:
                    alive += 1  # another answer: none is expected
            except socket.timeout:
                alive += 1  # still open, waiting for its headers
            except OSError:
                pass
        report(alive == 8, "one address holds at most its 8 slots from "
               "accept, whatever its headers", "%d of 40 held" % alive)
        report(answered >= 16, "the others are answered 503 overloaded "
               "with Retry-After: 1 naming the option and closed (16 at a time "
               "at least; past that, closed at accept): %d answered"
               % answered)
        ok = sum(served(port, "127.0.0.2") for _ in range(50))
        report(ok == 50, "another address is served 100 % meanwhile",
               "%d of 50 served" % ok)
        report(not served(port, "127.0.0.1"),
               "the full address gets no new connection")
        for s in held:
            s.close()
        time.sleep(0.3)
        report(served(port, "127.0.0.1"),
               "its slots come back when its connections close")
    finally:
        proc.terminate()
        proc.wait(timeout=15)

    # --max-connections-per-address 0: no limit
    proc, port, _ = start(binary, "--max-connections-per-address", "0")
    try:
        held = [slow_header(port) for _ in range(40)]
        time.sleep(0.3)
        report(served(port, "127.0.0.1"),
               "with the limit off, one address may hold 41")
        for s in held:
            s.close()
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    print("1..%d" % n)


if __name__ == "__main__":
    main()

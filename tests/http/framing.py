#!/usr/bin/env python3
"""framing.py — RFC 9112 message framing over a raw socket, one case per
rule of docs/contract.md section 1 ("HTTP behaviour").

Each case sends bytes that curl would never send: an ambiguous head
followed by a second, smuggled request (GET /version). The rule holds when
attnd answers the first with its status, says "Connection: close", closes
the connection, and never answers the smuggled request. Cases that are
well framed must keep the connection and answer both.

    usage: python3 tests/http/framing.py BUILD/attnd
Prints TAP. Starts its own daemon on a free loopback port.
"""
import os
import re
import socket
import sys
import time

from daemon import start

BODY = b'{"queries":[[1]],"keys":[[1]],"values":[[1]]}'
LEN = str(len(BODY)).encode()
CHUNKED = b"%x\r\n%s\r\n0\r\n\r\n" % (len(BODY), BODY)
SMUGGLED = b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n"
POST = b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n" \
       b"Content-Type: application/json\r\n"


def head(*lines):
    return POST + b"".join(line + b"\r\n" for line in lines) + b"\r\n"


# (name, bytes, status of the first answer, closes: 1 refused and closed,
#  0 well framed: both answered and the connection kept, LIBRARY: refused
#  and closed by libmicrohttpd before attnd sees the head)
LIBRARY = 2
CASES = [
    ("Transfer-Encoding with Content-Length",
     head(b"Content-Length: " + LEN, b"Transfer-Encoding: chunked")
     + CHUNKED + SMUGGLED, 400, 1),
    ("Content-Length with Transfer-Encoding (the other order)",
     head(b"Transfer-Encoding: chunked", b"Content-Length: " + LEN)
     + CHUNKED + SMUGGLED, 400, 1),
    ("two Content-Length lines with different values",
     head(b"Content-Length: " + LEN, b"Content-Length: 5")
     + BODY + SMUGGLED, 400, 1),
    ("two Transfer-Encoding lines",
     head(b"Transfer-Encoding: chunked", b"Transfer-Encoding: chunked")
     + CHUNKED + SMUGGLED, 400, 1),
    ("whitespace before the colon (Transfer-Encoding : chunked)",
     head(b"Content-Length: " + LEN, b"Transfer-Encoding : chunked")
     + BODY + SMUGGLED, 400, 1),
    ("a folded Content-Length (obs-fold, empty first line)",
     head(b"Content-Length:", b" " + LEN) + BODY + SMUGGLED, 400, 1),
    ("a folded Content-Length (obs-fold, digits on both lines)",
     head(b"Content-Length: 4", b" 5") + BODY + SMUGGLED, 400, 1),
    ("a folded Transfer-Encoding",
     head(b"Content-Length: " + LEN, b"Transfer-Encoding:", b" chunked")
     + BODY + SMUGGLED, 400, 1),
    ("Content-Length as a list",
     head(b"Content-Length: " + LEN + b", " + LEN) + BODY + SMUGGLED, 400, LIBRARY),
    ("Content-Length with a sign",
     head(b"Content-Length: +" + LEN) + BODY + SMUGGLED, 400, LIBRARY),
    ("Content-Length with letters",
     head(b"Content-Length: 4a") + BODY + SMUGGLED, 400, LIBRARY),
    ("Content-Length beyond int64 with Expect: 100-continue is 413, not 100",
     head(b"Content-Length: 10000000000000000000",
          b"Expect: 100-continue"), 413, 1),
    ("HTTP/1.1 without Host",
     b"GET /healthz HTTP/1.1\r\n\r\n" + SMUGGLED, 400, 1),
    ("HTTP/1.1 with two Host lines",
     b"GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + SMUGGLED,
     400, 1),
    ("a Host value that is not a host[:port] (RFC 9112 3.2)",
     b"GET /healthz HTTP/1.1\r\nHost: bad host\r\n\r\n" + SMUGGLED, 400, 1),
    ("a Host with a path in it",
     b"GET /healthz HTTP/1.1\r\nHost: a/b\r\n\r\n" + SMUGGLED, 400, 1),
    ("a Transfer-Encoding that does not end with chunked",
     head(b"Transfer-Encoding: gzip") + BODY + SMUGGLED, 400, 1),
    ("chunked with a blank after it, which the HTTP library does not decode",
     head(b"Transfer-Encoding: chunked ") + CHUNKED + SMUGGLED, 400, 1),
    ("a GET whose Content-Length is beyond int64: 413 at once, no wait",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
     b"Content-Length: 9223372036854775808\r\n\r\n", 413, 1),
    ("a GET whose Content-Length is over --max-body-bytes, with Expect",
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 20000000\r\n"
     b"Expect: 100-continue\r\n\r\n", 413, 1),
    ("a folded Host beside a second Host",
     b"GET /healthz HTTP/1.1\r\nHost:\r\n x\r\nHost: y\r\n\r\n"
     + SMUGGLED, 400, 1),
    ("HTTP/1.0 with Transfer-Encoding: answered, then closed (RFC 9112 6.1)",
     b"POST /softmax/masked HTTP/1.0\r\nConnection: keep-alive\r\n"
     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
     b"12\r\n{\"scores\":[[1,2]]}\r\n0\r\n\r\n" + SMUGGLED, 200, 1),
    ("%00 in the path: /openapi.json%00.html is no file to serve",
     b"GET /openapi.json%00.html HTTP/1.1\r\nHost: x\r\n\r\n"
     + SMUGGLED, 400, 1),
    ("a NUL byte inside a header value, text after it (not the last line)",
     head(b"X-Token: abc\x00junk", b"Content-Length: " + LEN) + BODY
     + SMUGGLED, 400, 1),
    ("a NUL byte inside the last header value, text after it",
     head(b"Content-Length: " + LEN, b"Authorization: Bearer t\x00junk")
     + BODY + SMUGGLED, 400, 1),
    ("a NUL hiding a second length in the last line: Content-Length: 2 NUL 53",
     POST + b"Content-Length: 2\x00 53\r\n\r\n{}" + SMUGGLED, 400, 1),
    ("a NUL then blanks and text in the last header value",
     head(b"Content-Length: " + LEN, b"Authorization: Bearer t\x00\t junk")
     + BODY + SMUGGLED, 400, 1),
    ("a NUL then 9000 blanks and text in a header value",
     head(b"X-A: a\x00" + b" " * 9000 + b"junk", b"Content-Length: " + LEN)
     + BODY + SMUGGLED, 400, 1),
    ("a raw NUL in the target: GET /openapi.json NUL .html",
     b"GET /openapi.json\x00.html HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED,
     400, 1),
    ("a raw NUL at the end of the target: GET /healthz NUL HTTP/1.1",
     b"GET /healthz\x00 HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED, 400, 1),
    ("a raw NUL after the method: GET NUL /healthz",
     b"GET\x00 /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED, 400, 1),
    ("a raw NUL between the target and the version",
     b"GET /healthz \x00HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED, 400, LIBRARY),
    ("a raw NUL at the end of the version: HTTP/1.1 NUL CRLF",
     b"GET /healthz HTTP/1.1\x00\r\nHost: x\r\n\r\n" + SMUGGLED, 400, LIBRARY),
    # well framed: answered, and the next request on the connection too
    ("a folded header line that frames nothing (obs-fold) is read",
     b"GET /healthz HTTP/1.1\r\nX-A: abc\r\n def\r\nHost: x\r\n\r\n"
     + SMUGGLED, 200, 0),
    ("an escaped target, a query and many headers are read",
     b"GET /regression/nw/dataset?n_train=3&seed=%31 HTTP/1.1\r\nHost: x\r\n"
     + b"".join(b"X-H%d: v%d \t\r\n" % (i, i) for i in range(300)) + b"\r\n"
     + SMUGGLED, 200, 0),
    ("empty lines before the request line are skipped (RFC 9112 2.2)",
     b"\r\n\r\n" + head(b"Content-Length: " + LEN) + BODY + SMUGGLED, 200, 0),
    ("%00 in the query is the api's to judge (/healthz ignores it)",
     b"GET /healthz?x=%00 HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED,
     200, 0),
    ("header values with trailing blanks and bare LF line ends",
     b"POST /attention/dot HTTP/1.1\nHost: x  \nContent-Type: "
     b"application/json\t\nContent-Length: " + LEN + b"\n\n" + BODY
     + SMUGGLED, 200, 0),
    ("two equal Content-Length lines are one length",
     head(b"Content-Length: " + LEN, b"Content-Length: " + LEN)
     + BODY + SMUGGLED, 200, 0),
    ("chunked alone", head(b"Transfer-Encoding: chunked") + CHUNKED
     + SMUGGLED, 200, 0),
    ("an absolute-form target is routed by its path",
     b"POST http://x/attention/dot HTTP/1.1\r\nHost: x\r\n"
     b"Content-Type: application/json\r\nContent-Length: " + LEN
     + b"\r\n\r\n" + BODY + SMUGGLED, 200, 0),
    ("blanks after the method are read",
     b"GET   /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + SMUGGLED, 200, 0),
    ("HTTP/1.0 needs no Host",
     b"GET /healthz HTTP/1.0\r\n\r\n", 200, 1),
]


def exchange(port, data, timeout=2.0):
    """Send data, read until the server closes or goes quiet. Returns
    (text, closed)."""
    s = socket.create_connection(("127.0.0.1", port))
    s.settimeout(timeout)
    s.sendall(data)
    out, closed = b"", False
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                closed = True
                break
            out += chunk
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    s.close()
    return out.decode("latin-1"), closed


def main():
    proc, port, log = start(sys.argv[1])
    n = 0
    try:
        for name, data, status, closes in CASES:
            text, closed = exchange(port, data)
            statuses = [int(s) for s in re.findall(r"HTTP/1\.[01] (\d{3}) ",
                                                   text)]
            smuggled = '"api_version"' in text
            if closes == LIBRARY:
                # libmicrohttpd 0.9.75 parses Content-Length itself and
                # answers a malformed one with its own HTML 400 (its status
                # line and headers sent twice), then closes
                ok = (statuses and set(statuses) == {status} and closed
                      and not smuggled)
            elif closes:
                ok = (statuses[:1] == [status] and closed and not smuggled
                      and len(statuses) == 1
                      and re.search(r"(?im)^connection: *close", text))
                # attnd's own refusals carry their code (docs/errors.md)
                if ok and status == 400:
                    ok = '"code":"bad_request"' in text
            else:
                ok = statuses == [status, 200] and smuggled and not closed \
                    if data.endswith(SMUGGLED) else statuses == [status]
            n += 1
            print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
            if not ok:
                print("#   statuses %s, closed %s, smuggled answered %s"
                      % (statuses, closed, smuggled))
                print("#   " + text[:300].replace("\n", "\n#   "))
        # the server is still there for everyone
        text, _ = exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                           b"Connection: close\r\n\r\n")
        n += 1
        print("%s %d - attnd still answers /healthz" %
              ("ok" if " 200 " in text else "not ok", n))
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        os.unlink(log)
    print("1..%d" % n)


if __name__ == "__main__":
    main()

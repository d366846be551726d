#!/usr/bin/env python3
"""fuzz_heads.py — request heads and chunked framing, mutated, over a raw
socket against a live attnd (RFC 9112 sections 2.2, 3.2, 5, 6 and 7.1;
docs/contract.md, "Message framing").

Each case is one connection: a first request drawn from a grammar of
valid heads (POST /attention/dot with a Content-Length or a chunked body,
GET /healthz, an absolute-form target, HTTP/1.0), changed by zero or more
mutations (Content-Length, Transfer-Encoding and Host repeated, folded,
re-cased, re-spaced or given odd values; Content-Length with
Transfer-Encoding; chunk sizes with extensions, huge, negative or wrong;
bare CR or LF line ends; a missing last chunk; trailers), then a second,
pipelined request, GET /version with an X-Request-Id of its own (the
marker). What each mutation does to the message decides what the first
answer must be and whether the marker may be answered:

  valid      the message is well formed: the first answer is 200 and the
             marker is answered too (unless the first request said
             Connection: close, or is HTTP/1.0);
  bad-head   the head is ambiguous: 400 (413 for a length merely too
             large, 501 for a coding other than chunked) with
             Connection: close, the connection closes, and the marker is
             never answered, since nothing after such a head is a request;
  bad-body   the chunked body is broken: 400 and close (libmicrohttpd's
             own page is acceptable), the marker never answered;
  incomplete the body never ends (a chunk size beyond the bytes sent,
             beyond 64 bits, a Content-Length beyond them): the answer, if
             any, is 4xx with close; the wait is capped (--incomplete-cap);
  hidden     a framing header hidden behind a bare CR in another field:
             whatever the answer, the marker is never answered;
  misframed  the client's own Content-Length is short: the framing is
             unambiguous but the marker's line is spoilt, so it never gets
             a 2xx;
  lenient    what RFC 9112 lets a recipient accept (a bare LF ending a
             head line, section 2.2; a bare CR in a field value, replaced
             by SP or refused, section 5.5): refused or answered, either.

And for every case: each answer begins with a status line; no 5xx but 501
(for a Transfer-Encoding coding); after an answer with Connection: close,
or a 400 where the framing is in question, nothing else comes and the
connection closes; every case that is not incomplete ends, the daemon
closing, within --deadline seconds. After every batch GET /healthz must
answer 200, and at the end the daemon's log must hold no sanitizer report
and no 5xx but 501 (so --attnd build-asan/attnd is worth a run).

Inputs that once broke a rule are kept whole in REGRESSIONS and sent
before the generated cases of every run (cases -1, -2, ...). A few of
libmicrohttpd 0.9.75's own deviations from RFC 9112, which attnd cannot
see through the library's API (KNOWN_*), are counted and printed at the
end but fail only with --strict.

    usage: python3 tests/http/fuzz_heads.py [--attnd BUILD/attnd | --port N]
               [--cases N] [--seed S] [--case K] [--batch N] [--strict] [-v]
Prints TAP and the seed (random unless --seed); `--seed S --case K -v`
replays one case and prints what was sent and received. Starts its own
daemon on a free loopback port unless --port names a running one. 300
cases take a few seconds; each case of a daemon that never answers costs
--deadline (3 s).
"""
import argparse
import json
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import time

from daemon import start

BODY = b'{"queries":[[1]],"keys":[[1]],"values":[[1]]}'
# a bigger body, for splitting into several chunks
BODY2 = (b'{"queries":[[1,2],[3,4]],"keys":[[1,0],[0,1],[1,1]],'
         b'"values":[[1],[2],[3]]}')
CLASSES = ("valid", "lenient", "misframed", "hidden", "incomplete",
           "bad-body", "bad-head")
RANK = {c: i for i, c in enumerate(CLASSES)}
STATUS_LINE = re.compile(rb"HTTP/1\.[01] ([1-5][0-9][0-9])(?: [^\r\n]*)?\r\n")


def recase(rng, name):
    """The same name in another ASCII case (maybe all lower or upper)."""
    how = rng.randrange(3)
    if how == 0:
        return name.lower()
    if how == 1:
        return name.upper()
    return bytes(c ^ 0x20 if chr(c).isalpha() and rng.random() < 0.5 else c
                 for c in name)


class Line:
    """A header line: name, separator (colon and OWS), value, trailing
    OWS, line end; extra: obs-fold lines that follow it."""

    def __init__(self, name, value, sep=b": ", trail=b"", eol=b"\r\n"):
        self.name, self.value, self.sep = name, value, sep
        self.trail, self.eol, self.extra = trail, eol, b""

    def is_(self, name):
        return self.name.lower() == name.lower()

    def bytes(self):
        return self.name + self.sep + self.value + self.trail + self.eol \
            + self.extra


class Chunk:
    def __init__(self, data):
        self.size = b"%x" % len(data)
        self.ext, self.eol, self.data, self.data_eol = b"", b"\r\n", data, \
            b"\r\n"

    def bytes(self):
        return self.size + self.ext + self.eol + self.data + self.data_eol

    def pristine(self):
        return self.size == b"%x" % len(self.data) and self.eol == b"\r\n" \
            and self.data_eol == b"\r\n"


class Case:
    """One connection's bytes and what they must get."""

    def __init__(self, seed, k, port):
        self.k = k
        self.cls = "valid"
        self.notes = []
        self.marker_id = b"smug-%d-%d" % (seed, k)
        self.first_id = b"first-%d-%d" % (seed, k)
        self.may_501 = False
        self.incomplete = False
        self.close_first = False  # the first request asks to close
        self.version = b"HTTP/1.1"
        self.method, self.target = b"POST", b"/attention/dot"
        self.framing = "cl"  # cl, chunked or none
        self.body = BODY
        self.headers = []
        self.line_eol = b"\r\n"  # of the request line
        self.end_eol = b"\r\n"  # the empty line that ends the head
        self.chunks, self.last_ext, self.last_eol = [], b"", b"\r\n"
        self.last_size = b"0"
        self.trailers, self.final_eol, self.last_chunk = [], b"\r\n", True
        self.port = port
        self.pieces = 1  # sent in this many writes
        self.known = None  # a known deviation this case exercises
        self.raw = None  # bytes given whole (the regressions)
        self.rng_split = 0.0  # seeds where the pieces are cut

    def mark(self, cls, note):
        self.notes.append(note)
        if RANK[cls] > RANK[self.cls]:
            self.cls = cls

    def lines(self, name):
        return [h for h in self.headers if h.is_(name)]

    def body_bytes(self):
        if self.framing != "chunked":
            return self.body
        out = b"".join(c.bytes() for c in self.chunks)
        if self.last_chunk:
            out += self.last_size + self.last_ext + self.last_eol + \
                b"".join(self.trailers) + self.final_eol
        return out

    def marker(self):
        return (b"GET /version HTTP/1.1\r\nHost: x\r\nX-Request-Id: " +
                self.marker_id + b"\r\nConnection: close\r\n\r\n")

    def first(self):
        return (self.method + b" " + self.target + b" " + self.version +
                self.line_eol + b"".join(h.bytes() for h in self.headers) +
                self.end_eol + self.body_bytes())

    def data(self):
        return self.raw if self.raw is not None else \
            self.first() + self.marker()

    def marker_rule(self):
        """required, forbidden or either: may the marker be answered."""
        if self.cls in ("bad-head", "bad-body", "incomplete"):
            return "forbidden"
        if self.cls in ("lenient", "misframed", "hidden"):
            return "either"
        if self.close_first:
            return "forbidden"
        if self.version == b"HTTP/1.0":
            return "either"
        return "required"


# ---------------------------------------------------------------------------
# the grammar of valid first requests


def base_case(rng, seed, k, port):
    c = Case(seed, k, port)
    kind = rng.random()
    if kind < 0.58:
        c.framing = "cl" if rng.random() < 0.5 else "chunked"
    elif kind < 0.70:
        c.framing = "cl"
        c.target = rng.choice([b"http://x/attention/dot",
                               b"http://127.0.0.1:%d/attention/dot" % port,
                               b"HTTP://x/attention/dot"])
        c.notes.append("absolute-form")
    elif kind < 0.94:
        c.method, c.target, c.framing, c.body = b"GET", b"/healthz", "none", \
            b""
        if rng.random() < 0.2:
            c.framing = "cl"  # Content-Length: 0 on a GET is well framed
    else:
        c.method, c.target, c.framing, c.body = b"GET", b"/healthz", "none", \
            b""
        c.version = b"HTTP/1.0"
        c.notes.append("HTTP/1.0")
    if c.method == b"POST" and rng.random() < 0.3:
        c.body = BODY2
    hosts = [b"x", b"localhost", b"127.0.0.1:%d" % port, b"example.com:80"]
    if c.version == b"HTTP/1.1" or rng.random() < 0.5:
        c.headers.append(Line(b"Host", rng.choice(hosts)))
    if c.method == b"POST":
        c.headers.append(Line(b"Content-Type", b"application/json"))
    if c.framing == "cl":
        c.headers.append(Line(b"Content-Length", b"%d" % len(c.body)))
    elif c.framing == "chunked":
        c.headers.append(Line(b"Transfer-Encoding", b"chunked"))
        c.chunks = [Chunk(c.body)]
    c.headers.append(Line(b"X-Request-Id", c.first_id))
    for name, value in [(b"User-Agent", b"fuzz_heads/1"), (b"Accept", b"*/*"),
                        (b"Accept-Encoding", b"identity"),
                        (b"Cache-Control", b"no-cache"),
                        (b"X-Filler", b"a, b; c=\"d\"")]:
        if rng.random() < 0.3:
            c.headers.append(Line(name, value))
    if c.version == b"HTTP/1.0" and rng.random() < 0.5:
        c.headers.append(Line(b"Connection", b"keep-alive"))
    rng.shuffle(c.headers)
    return c


# ---------------------------------------------------------------------------
# libmicrohttpd 0.9.75's own deviations, which attnd cannot see through its
# API: each is reported (how often met, how often accepted) but fails only
# under --strict, where the case gets the class RFC 9112 gives it.

KNOWN_CHUNK_LF = ("libmicrohttpd 0.9.75 takes a bare LF as the end of a "
                  "chunk-size, chunk-data, last-chunk or trailer line (RFC "
                  "9112 section 7.1 asks CRLF)", "bad-body")
KNOWN_NUL = ("libmicrohttpd 0.9.75 ends a field value at a NUL, so "
             "\"Content-Length: 4\\0 5\" reaches attnd as \"4\" (RFC 9110 "
             "section 5.5: refuse it, or read the NUL as SP)", "bad-head")
KNOWN_CHUNK_BWS = ("libmicrohttpd 0.9.75 refuses whitespace before a chunk "
                   "extension's \";\" (RFC 9112 section 7.1.1: BWS, which a "
                   "recipient must accept)", "valid")
KNOWN_CHUNK_EXT = ("libmicrohttpd 0.9.75 skips a chunk extension unread, up "
                   "to the LF, a bare CR in it too (RFC 9112 section 7.1.1: "
                   "a token)", "bad-body")
KNOWN_CL_OWS = ("libmicrohttpd 0.9.75 refuses a Content-Length followed by "
                "whitespace (RFC 9112 section 5: OWS is not part of the "
                "value)", "valid")
STRICT = False  # --strict: known deviations fail like any other


def known(c, what):
    c.known = what[0]
    c.mark(what[1] if STRICT else "lenient", what[0])


# ---------------------------------------------------------------------------
# mutations: each changes the case and says what it makes of it


def pick(rng, c, name):
    """One of the lines named so, but one a NUL cuts short (which hides
    any later change behind it)."""
    lines = [h for h in c.lines(name) if b"\x00" not in h.value]
    return rng.choice(lines) if lines else None


def add_after(c, ref, line):
    i = c.headers.index(ref) if ref in c.headers else len(c.headers) - 1
    c.headers.insert(i + 1, line)


def m_host_case(rng, c):
    h = pick(rng, c, b"Host")
    if h is None:
        return False
    h.name = recase(rng, h.name)
    c.mark("valid", "Host re-cased")
    return True


def m_host_missing(rng, c):
    if c.version != b"HTTP/1.1":
        return False
    c.headers = [h for h in c.headers if not h.is_(b"Host")]
    c.mark("bad-head", "no Host")
    return True


def m_host_dup(rng, c):
    if c.version != b"HTTP/1.1":
        return False
    h = pick(rng, c, b"Host")
    value = rng.choice([b"x", b"y", h.value if h else b"x"])
    c.headers.insert(rng.randrange(len(c.headers) + 1),
                     Line(recase(rng, b"Host"), value))
    if len(c.lines(b"Host")) < 2:
        c.headers.insert(0, Line(b"Host", b"z"))
    c.mark("bad-head", "two Host lines")
    return True


def m_host_fold(rng, c):
    h = pick(rng, c, b"Host")
    if h is None or c.version != b"HTTP/1.1" or len(c.lines(b"Host")) != 1 \
            or h.extra:
        return False
    if rng.random() < 0.5:
        h.extra, h.value = b" " + (h.value or b"x") + b"\r\n", b""
    else:
        h.extra = b"\t:8080\r\n"
    c.mark("bad-head", "Host folded")
    return True


def m_host_empty(rng, c):
    h = pick(rng, c, b"Host")
    if h is None:
        return False
    h.value = b""  # RFC 9112 section 3.2: an empty Host is well formed
    c.mark("valid", "empty Host")
    return True


def m_name_space(rng, c):
    h = rng.choice(c.headers)
    h.name += rng.choice([b" ", b"\t", b"  "])
    c.mark("bad-head", "whitespace before the colon of %s" % h.name.strip()
           .decode())
    return True


def m_name_case(rng, c):
    h = rng.choice(c.headers)
    h.name = recase(rng, h.name)
    c.mark("valid", "%s re-cased" % h.name.decode())
    return True


def m_ows(rng, c):
    """OWS before and after a value (RFC 9112 section 5). After
    Transfer-Encoding's "chunked" either answer will do, so long as one
    comes: libmicrohttpd decodes only an exact "chunked"."""
    h = rng.choice(c.headers)
    if h.is_(b"Host"):
        return False
    h.sep = rng.choice([b":", b":  ", b":\t", b": \t "])
    h.trail = rng.choice([b"", b" ", b"\t", b" \t"])
    if h.is_(b"Content-Length") and h.trail:
        known(c, KNOWN_CL_OWS)
    elif h.is_(b"Transfer-Encoding") and h.trail:
        c.mark("lenient", "OWS after Transfer-Encoding %r" % h.value)
    else:
        c.mark("valid", "OWS around %s" % h.name.decode())
    return True


def m_bare_lf(rng, c):
    n = rng.randrange(1, 4)
    for _ in range(n):
        which = rng.randrange(len(c.headers) + 2)
        if which == 0:
            c.line_eol = b"\n"
        elif which == 1:
            c.end_eol = b"\n"
        else:
            c.headers[which - 2].eol = b"\n"
    c.mark("lenient", "bare LF ends head lines")
    return True


def m_bare_cr_value(rng, c):
    h = pick(rng, c, b"X-Filler") or pick(rng, c, b"User-Agent")
    if h is None:
        h = Line(b"X-Filler", b"a")
        c.headers.insert(0, h)
    h.value += b"\rb"
    c.mark("lenient", "bare CR in %s" % h.name.decode())
    return True


def m_hidden_cl(rng, c):
    """Content-Length only behind a bare CR in another field."""
    h = pick(rng, c, b"Content-Length")
    if h is None or not c.body or c.cls != "valid" or \
            len(c.lines(b"Content-Length")) > 1:
        return False
    h.name, h.value = b"X-Filler", b"a\rContent-Length: " + h.value
    c.mark("hidden", "Content-Length hidden behind a bare CR")
    return True


def m_nul(rng, c):
    """A NUL in a field: RFC 9110 section 5.5 lets a recipient refuse the
    message or read the NUL as SP, so a NUL that ends a value is harmless,
    but one inside Content-Length or Transfer-Encoding changes the
    framing for any recipient that drops it, and must be refused."""
    h = rng.choice(c.headers)
    where = rng.randrange(3)
    if where == 0:
        h.name = h.name[:2] + b"\x00" + h.name[2:]
        c.mark("bad-head", "NUL in the name %r" % h.name)
        return True
    i = len(h.value) if where == 1 or len(h.value) < 2 else \
        rng.randrange(1, len(h.value))
    h.value = h.value[:i] + b"\x00" + h.value[i:]
    framing = h.is_(b"Content-Length") or h.is_(b"Transfer-Encoding")
    if framing and i < len(h.value) - 1:
        c.notes.append("NUL inside %s %r" % (h.name.decode(), h.value))
        known(c, KNOWN_NUL)
    else:
        c.mark("lenient", "NUL in %s %r" % (h.name.decode(), h.value))
    return True


def m_host_value(rng, c):
    """A Host that is not uri-host [":" port]: attnd counts Host lines and
    does not read their values, so either answer will do."""
    h = pick(rng, c, b"Host")
    if h is None:
        return False
    h.value = rng.choice([b"a b", b"x/y", b"x:port", b"x\x01y", b"@", b"[::1",
                          b"x" * 300, b"x:99999"])
    c.mark("lenient", "Host %r" % h.value)
    return True


# Content-Length


def cl_line(rng, c):
    return pick(rng, c, b"Content-Length") if c.framing == "cl" else None


def m_cl_dup_same(rng, c):
    h = cl_line(rng, c)
    if h is None:
        return False
    value = h.value if rng.random() < 0.7 else b"00" + h.value
    c.headers.insert(rng.randrange(len(c.headers) + 1),
                     Line(recase(rng, b"Content-Length"), value))
    c.mark("valid", "Content-Length twice, same value")
    return True


def m_cl_dup_diff(rng, c):
    h = cl_line(rng, c)
    if h is None:
        return False
    n = int(h.value) if h.value.isdigit() else len(c.body)
    other = rng.choice([0, n + 1, max(n - 1, 1) if n != 1 else 2, n + 100])
    if other == n:
        other = n + 7
    c.headers.insert(rng.randrange(len(c.headers) + 1),
                     Line(b"Content-Length", b"%d" % other))
    c.mark("bad-head", "Content-Length twice, %d and %d" % (n, other))
    return True


def m_cl_value(rng, c):
    h = cl_line(rng, c)
    if h is None:
        return False
    n = h.value
    bad = rng.choice([n + b", " + n, n + b"," + n, b"+" + n, b"-" + n,
                      n + b"a", b"0x%x" % len(c.body), n + b".0", n[:1] +
                      b" " + n[1:] if len(n) > 1 else b"4 5", b"", b"-1",
                      n + b"\x0b", b"\x0c" + n, n + b";", b"1e2", b"\"" + n +
                      b"\""])
    h.value = bad
    c.mark("bad-head", "Content-Length %r" % bad)
    return True


def m_cl_huge(rng, c):
    h = cl_line(rng, c)
    if h is None:
        return False
    h.value = rng.choice([b"9223372036854775808", b"18446744073709551615",
                          b"18446744073709551616", b"9" * 30,
                          b"0" * 50 + b"9223372036854775808"])
    if rng.random() < 0.3:
        c.headers.append(Line(b"Expect", b"100-continue"))
    c.mark("bad-head", "Content-Length %s" % h.value.decode())
    return True


def m_cl_zeros(rng, c):
    h = cl_line(rng, c)
    if h is None or not h.value.isdigit():
        return False
    h.value = b"0" * rng.randrange(1, 30) + h.value
    c.mark("valid", "Content-Length with leading zeros")
    return True


def m_cl_fold(rng, c):
    h = cl_line(rng, c)
    if h is None:
        return False
    if rng.random() < 0.5:
        h.extra, h.value = b" " + h.value + b"\r\n", b""
    else:
        h.value, h.extra = h.value[:1], b" " + (h.value[1:] or b"0") + \
            b"\r\n"
    c.mark("bad-head", "Content-Length folded")
    return True


def m_cl_smaller(rng, c):
    h = cl_line(rng, c)
    if h is None or not c.body or c.cls != "valid" or \
            len(c.lines(b"Content-Length")) > 1:
        return False
    h.value = b"%d" % rng.randrange(0, len(c.body))
    c.mark("misframed", "Content-Length %s, short of the body" %
           h.value.decode())
    return True


def m_cl_larger(rng, c):
    h = cl_line(rng, c)
    if h is None or c.cls != "valid" or len(c.lines(b"Content-Length")) > 1:
        return False
    h.value = b"%d" % (len(c.body) + len(c.marker()) + rng.randrange(1, 5000))
    c.incomplete = True
    c.mark("incomplete", "Content-Length beyond the bytes sent")
    return True


# Transfer-Encoding


def te_line(rng, c):
    return pick(rng, c, b"Transfer-Encoding") if c.framing == "chunked" \
        else None


def m_cl_te(rng, c):
    if c.framing == "cl":
        c.headers.insert(rng.randrange(len(c.headers) + 1),
                         Line(recase(rng, b"Transfer-Encoding"), b"chunked"))
    elif c.framing == "chunked":
        n = rng.choice([len(c.body), 0, len(c.body_bytes()), 5])
        c.headers.insert(rng.randrange(len(c.headers) + 1),
                         Line(recase(rng, b"Content-Length"), b"%d" % n))
    else:
        return False
    c.mark("bad-head", "Content-Length with Transfer-Encoding")
    return True


def m_te_dup(rng, c):
    h = te_line(rng, c)
    if h is None:
        return False
    c.headers.insert(rng.randrange(len(c.headers) + 1),
                     Line(recase(rng, b"Transfer-Encoding"),
                          rng.choice([b"chunked", b"identity", b"gzip"])))
    c.mark("bad-head", "Transfer-Encoding twice")
    return True


def m_te_value(rng, c):
    h = te_line(rng, c)
    if h is None:
        return False
    value = rng.choice([b"gzip, chunked", b"chunked, chunked",
                        b"deflate,chunked", b"gzip", b"identity",
                        b"xchunked", b"chunked, gzip", b"chunk", b"",
                        b"chunked\x0b", b"\x0cchunked", b"\"chunked\"",
                        b"chunked;q=1"])
    h.value = value
    if value.endswith(b"chunked") and b"," in value:
        c.may_501 = True  # other codings before chunked: 501 (errors.md)
    c.mark("bad-head", "Transfer-Encoding %r" % value)
    return True


def m_te_case(rng, c):
    h = te_line(rng, c)
    if h is None:
        return False
    h.value = recase(rng, h.value)
    h.name = recase(rng, h.name)
    c.mark("valid", "Transfer-Encoding re-cased")
    return True


def m_te_fold(rng, c):
    h = te_line(rng, c)
    if h is None:
        return False
    h.extra, h.value = b" chunked\r\n", rng.choice([b"", b"chunked"])
    c.mark("bad-head", "Transfer-Encoding folded")
    return True


# chunked body


def chunked(c):
    return c.framing == "chunked" and c.chunks


def sized(rng, c):
    """A chunk whose size line is still as generated, or None."""
    fresh = [ch for ch in c.chunks if ch.pristine()]
    return rng.choice(fresh) if chunked(c) and fresh else None


def m_chunk_split(rng, c):
    if not chunked(c) or len(c.chunks) != 1 or not c.chunks[0].pristine() \
            or c.chunks[0].ext:
        return False
    data, cuts = c.chunks[0].data, []
    for _ in range(rng.randrange(1, 6)):
        cuts.append(rng.randrange(1, len(data)))
    cuts = sorted(set(cuts))
    parts = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    c.chunks = [Chunk(p) for p in parts if p]
    c.mark("valid", "body in %d chunks" % len(c.chunks))
    return True


def m_chunk_ext(rng, c):
    if not chunked(c):
        return False
    ext = rng.choice([b";a=b", b";a", b";name=\"v a;l\"", b";a=b;c=d",
                      b" ;a=b", b"; a = b", b";x=" + b"y" * 200])
    if rng.random() < 0.5:
        fresh = [ch for ch in c.chunks if ch.eol == b"\r\n" and not ch.ext]
        if not fresh:
            return False
        rng.choice(fresh).ext = ext
    elif c.last_eol == b"\r\n" and not c.last_ext:
        c.last_ext = ext
    else:
        return False
    if ext.startswith(b" "):
        known(c, KNOWN_CHUNK_BWS)
    else:
        c.mark("valid", "chunk extension %r" % ext)
    return True


def m_chunk_size_form(rng, c):
    ch = sized(rng, c)
    if ch is None:
        return False
    n = len(ch.data)
    ch.size = rng.choice([b"%X" % n, b"000%x" % n, b"0" * 20 + b"%x" % n])
    c.mark("valid", "chunk size %s" % ch.size.decode())
    return True


def m_last_zeros(rng, c):
    if not chunked(c):
        return False
    c.last_size = b"0" * rng.randrange(2, 20)
    c.mark("valid", "last chunk %s" % c.last_size.decode())
    return True


def m_trailers(rng, c):
    if not chunked(c):
        return False
    c.trailers = [rng.choice([b"X-Trailer: 1\r\n", b"X-Checksum: abc\r\n",
                              b"Content-Length: 5\r\n",
                              b"X-A: 1\r\nX-B: 2\r\n"])]
    c.mark("valid", "trailer fields")
    return True


def m_chunk_bad_size(rng, c):
    ch = sized(rng, c)
    if ch is None:
        return False
    n = len(ch.data)
    ch.size = rng.choice([b"-%x" % n, b"0x%x" % n, b"+%x" % n,
                          (b"%x" % n)[:1] + b" " + (b"%x" % n)[1:], b"%xz" % n,
                          b"", b"%x" % n + b"\x00", b"g", b"%x.0" % n])
    c.mark("bad-body", "chunk size %r" % ch.size)
    return True


def m_chunk_smaller(rng, c):
    ch = sized(rng, c)
    if ch is None or len(ch.data) < 2:
        return False
    ch.size = b"%x" % rng.randrange(1, len(ch.data))
    c.mark("bad-body", "chunk size short of its data")
    return True


def m_chunk_huge(rng, c):
    ch = sized(rng, c)
    if ch is None:
        return False
    ch.size = rng.choice([b"1" + b"0" * 16, b"f" * 17, b"1" + b"0" * 40,
                          b"ffffffffffffffff", b"7fffffffffffffff",
                          b"10000000000000000"])
    c.incomplete = True
    c.mark("incomplete", "chunk size %s" % ch.size.decode())
    return True


def m_chunk_larger(rng, c):
    ch = sized(rng, c)
    if ch is None:
        return False
    ch.size = b"%x" % (len(ch.data) + len(c.body_bytes()) + len(c.marker()) +
                       rng.randrange(1, 3000))
    c.incomplete = True
    c.mark("incomplete", "chunk size beyond the bytes sent")
    return True


def m_chunk_crlf(rng, c):
    """A chunk line or the data's end not ended by CRLF."""
    spots = line_ends(c)
    if not spots:
        return False
    obj, attr = rng.choice(spots)
    setattr(obj, attr, {
        "eol": [b"\r", b"\n\r", b"\r\r\n", b""],
        "data_eol": [b"", b"\r", b"XX", b"\r\r", b" \r\n"],
        "last_eol": [b"\r", b"", b"\r\r\n"],
        "final_eol": [b"\r", b"X\r\n"]}[attr][rng.randrange(2)])
    c.mark("bad-body", "chunked framing line not ended by CRLF")
    return True


def m_chunk_bare_lf(rng, c):
    """A chunk-size line, the last chunk or the final line ended by a bare
    LF: RFC 9112 section 7.1 asks CRLF there, and section 2.2's leave for
    a bare LF covers the start line and fields only."""
    spots = line_ends(c)
    if c.trailers and rng.random() < 0.2:
        c.trailers = [t.replace(b"\r\n", b"\n") for t in c.trailers]
    elif spots:
        obj, attr = rng.choice(spots)
        setattr(obj, attr, b"\n")
    else:
        return False
    known(c, KNOWN_CHUNK_LF)
    return True


def line_ends(c):
    """(object, attribute) of each chunked line end still CRLF; a chunk
    line with an extension is left alone (KNOWN_CHUNK_EXT)."""
    if not chunked(c):
        return []
    spots = [(ch, "eol") for ch in c.chunks if ch.eol == b"\r\n" and
             not ch.ext]
    spots += [(ch, "data_eol") for ch in c.chunks if ch.data_eol == b"\r\n"]
    if c.last_chunk and c.last_eol == b"\r\n" and not c.last_ext:
        spots.append((c, "last_eol"))
    if c.last_chunk and c.final_eol == b"\r\n":
        spots.append((c, "final_eol"))
    return spots


def m_missing_last(rng, c):
    if not chunked(c):
        return False
    c.last_chunk = False
    c.mark("bad-body", "no last chunk")
    return True


def m_first_close(rng, c):
    c.headers.append(Line(recase(rng, b"Connection"), b"close"))
    c.close_first = True
    c.mark("valid", "first request asks Connection: close")
    return True


def m_expect(rng, c):
    if c.method != b"POST" or c.lines(b"Expect"):
        return False
    c.headers.insert(rng.randrange(len(c.headers) + 1),
                     Line(b"Expect", b"100-continue"))
    c.mark("valid", "Expect: 100-continue")
    return True


def m_fragment(rng, c):
    c.pieces = rng.randrange(2, 8)
    c.notes.append("sent in %d pieces" % c.pieces)
    return True


MUTATIONS = [
    (m_host_case, 2), (m_host_missing, 3), (m_host_dup, 3), (m_host_fold, 2),
    (m_host_empty, 1), (m_name_space, 3), (m_name_case, 2), (m_ows, 3),
    (m_bare_lf, 3), (m_bare_cr_value, 2), (m_hidden_cl, 2), (m_nul, 2),
    (m_host_value, 1),
    (m_cl_dup_same, 3), (m_cl_dup_diff, 3), (m_cl_value, 5), (m_cl_huge, 2),
    (m_cl_zeros, 2), (m_cl_fold, 3), (m_cl_smaller, 2), (m_cl_larger, 1),
    (m_cl_te, 6), (m_te_dup, 3), (m_te_value, 4), (m_te_case, 2),
    (m_te_fold, 2), (m_chunk_split, 4), (m_chunk_ext, 4),
    (m_chunk_size_form, 3), (m_last_zeros, 1), (m_trailers, 3),
    (m_chunk_bad_size, 4), (m_chunk_smaller, 3), (m_chunk_huge, 1),
    (m_chunk_larger, 1), (m_chunk_crlf, 4), (m_chunk_bare_lf, 3),
    (m_missing_last, 3), (m_first_close, 2), (m_expect, 2), (m_fragment, 3),
]
WEIGHTS = [w for _, w in MUTATIONS]


# Inputs that once broke a rule, kept whole and sent first in every run
# (the generator's cases change with its grammar; these do not). Each:
# (name, class, known deviation or None, request before the marker).
POST_HEAD = (b"POST /attention/dot HTTP/1.1\r\nHost: x\r\n"
             b"Content-Type: application/json\r\n")
REGRESSIONS = [
    # attnd reads "chunked " as chunked, libmicrohttpd does not decode it:
    # no answer until --timeout, then a close without a word
    ("Transfer-Encoding: \"chunked \" (OWS after the value)", "lenient",
     None, POST_HEAD + b"Transfer-Encoding: chunked \r\n\r\n2d\r\n" + BODY +
     b"\r\n0\r\n\r\n"),
    ("Transfer-Encoding: \"chunked\\t\" on a GET", "lenient", None,
     b"GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\t\r\n"
     b"\r\n0\r\n\r\n"),
    # a route without a body takes any Content-Length: no 413, the
    # connection waits for 2^63 bytes (and is told 100 Continue)
    ("GET with Content-Length 2^63", "bad-head", None,
     b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
     b"Content-Length: 9223372036854775808\r\n\r\n"),
    ("GET with Content-Length 2^64 - 1 and Expect: 100-continue",
     "bad-head", None, b"GET /version HTTP/1.1\r\nHost: x\r\n"
     b"Content-Length: 18446744073709551615\r\nExpect: 100-continue\r\n"
     b"\r\n"),
    # libmicrohttpd joins an obs-fold to the name ("Host" + " x" is a
    # field "Hostx"), so a folded Host beside another is not counted: two
    # Host lines once the fold is read as SP (RFC 9112 sections 3.2, 5.2)
    ("a folded Host line beside a Host line", "bad-head", None,
     b"GET /healthz HTTP/1.1\r\nHost:\r\n x\r\nHost: y\r\n\r\n"),
    # libmicrohttpd's own, reported (failures under --strict)
    ("a NUL inside Content-Length", None, KNOWN_NUL,
     POST_HEAD + b"Content-Length: 4\x005\r\n\r\n" + BODY),
    ("a NUL inside Transfer-Encoding", None, KNOWN_NUL,
     POST_HEAD + b"Transfer-Encoding: chunked\x00, gzip\r\n\r\n"
     b"2d\r\n" + BODY + b"\r\n0\r\n\r\n"),
    ("a chunk-size line ended by a bare LF", None, KNOWN_CHUNK_LF,
     POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n2d\n" + BODY +
     b"\r\n0\r\n\r\n"),
    ("a chunk extension ended by a bare LF", None, KNOWN_CHUNK_LF,
     POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n2d;a\n" + BODY +
     b"\r\n0\r\n\r\n"),
    ("chunk data, the last chunk and the empty line ended by a bare LF",
     None, KNOWN_CHUNK_LF, POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
     b"2d\r\n" + BODY + b"\n0\n\n"),
    ("a bare CR in a chunk extension", None, KNOWN_CHUNK_EXT,
     POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n2d;a\r\r\n" + BODY +
     b"\r\n0\r\n\r\n"),
    ("whitespace before a chunk extension", None, KNOWN_CHUNK_BWS,
     POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n2d ;a=b\r\n" + BODY +
     b"\r\n0\r\n\r\n"),
    ("Content-Length followed by a space", None, KNOWN_CL_OWS,
     POST_HEAD + b"Content-Length: 45 \r\n\r\n" + BODY),
]


def regression_case(i, port):
    name, cls, what, first = REGRESSIONS[i]
    c = Case(0, -1 - i, port)
    c.marker_id = b"smug-regression-%d" % i
    c.raw = first + c.marker()
    c.notes = [name]
    if what is not None:
        known(c, what)
    else:
        c.cls = cls
    if b"Content-Length: 9223372036854775808" in first or \
            b"Content-Length: 18446744073709551615" in first:
        c.may_501 = False
    return c


def make_case(seed, k, port):
    rng = random.Random("%d:%d" % (seed, k))
    c = base_case(rng, seed, k, port)
    n = 0 if rng.random() < 0.25 else rng.choice([1, 1, 1, 2, 2, 3])
    tries = 0
    while n > 0 and tries < 40:
        tries += 1
        fn = rng.choices(MUTATIONS, WEIGHTS)[0][0]
        if fn(rng, c):
            n -= 1
    c.rng_split = rng.random()  # where fragments are cut
    return c


# ---------------------------------------------------------------------------
# sending and reading


def exchange(port, c, deadline, cap):
    """Send the case, read until the daemon closes or the time is up.
    Returns (bytes, closed, seconds)."""
    data = c.data()
    start = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=deadline)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    out, closed = b"", False
    try:
        if c.pieces > 1:
            rng = random.Random(c.rng_split)
            cuts = sorted(rng.sample(range(1, len(data)),
                                     min(c.pieces - 1, len(data) - 1)))
            for a, b in zip([0] + cuts, cuts + [len(data)]):
                s.sendall(data[a:b])
                time.sleep(0.002)
        else:
            s.sendall(data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # refused early: what was answered is still to be read
    limit = start + (cap if c.incomplete else deadline)
    try:
        while True:
            left = limit - time.monotonic()
            if left <= 0:
                break
            s.settimeout(left)
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
    return out, closed, time.monotonic() - start


def parse_responses(out):
    """[(status, {header: [values]}, body, library_repeat)] and a problem
    (None when every answer is whole and begins with a status line)."""
    res, pos = [], 0
    while pos < len(out):
        m = STATUS_LINE.match(out, pos)
        if not m:
            return res, "bytes at offset %d are not a status line: %r" % (
                pos, out[pos:pos + 60])
        end = out.find(b"\r\n\r\n", m.end() - 2)
        if end < 0:
            return res, "an answer's head is cut short: %r" % out[pos:pos + 80]
        head = out[pos:end + 4]
        headers = {}
        for line in out[m.end():end].split(b"\r\n") if end > m.end() else []:
            if b":" not in line:
                return res, "a header line without a colon: %r" % line
            k, v = line.split(b":", 1)
            headers.setdefault(k.strip().lower(), []).append(v.strip())
        pos = end + 4
        repeat = False
        # libmicrohttpd 0.9.75 sends the head of its own error pages twice
        # (docs/contract.md, "Message framing")
        if out.startswith(head, pos) and b"x-request-id" not in headers:
            pos += len(head)
            repeat = True
        status = int(m.group(1))
        body = b""
        if 100 <= status < 200 or status in (204, 304):
            pass
        elif b"chunked" in b",".join(headers.get(b"transfer-encoding", [])):
            while True:
                eol = out.find(b"\r\n", pos)
                if eol < 0:
                    return res, "a chunked answer is cut short"
                try:
                    size = int(out[pos:eol].split(b";")[0], 16)
                except ValueError:
                    return res, "a chunked answer with chunk size %r" % \
                        out[pos:eol]
                pos = eol + 2
                if size == 0:
                    fin = out.find(b"\r\n\r\n", pos - 2)
                    if fin < 0:
                        return res, "a chunked answer is cut short"
                    pos = fin + 4
                    break
                body += out[pos:pos + size]
                pos += size + 2
        elif b"content-length" in headers:
            n = int(headers[b"content-length"][0])
            body = out[pos:pos + n]
            if len(body) < n:
                return res, "an answer's body is cut short (%d of %d)" % (
                    len(body), n)
            pos += n
        else:
            body, pos = out[pos:], len(out)
        res.append((status, headers, body, repeat))
    return res, None


def check(c, out, closed, deadline):
    """The problems with one case's answers (empty when it holds)."""
    problems = []
    res, bad = parse_responses(out)
    if bad:
        problems.append(bad)
    final = [r for r in res if r[0] >= 200]
    statuses = [r[0] for r in res]
    for i, (status, headers, body, _) in enumerate(res):
        if status >= 500 and not (status == 501 and c.may_501):
            problems.append("answered %d" % status)
        says_close = b"close" in [v.lower() for v in
                                  headers.get(b"connection", [])]
        # a 400 to a body read whole (invalid JSON) may keep the
        # connection: only where the framing itself is in question
        framing_400 = status == 400 and c.cls not in (
            "misframed", "hidden", "lenient")
        if (says_close or framing_400) and status >= 200:
            if i != len(res) - 1:
                problems.append("%d%s, and then more answers %s" % (
                    status, " with Connection: close" if says_close else "",
                    statuses[i + 1:]))
            if not closed:
                problems.append("%d%s, and the connection stays open" % (
                    status, " with Connection: close" if says_close else ""))
    marker = [r for r in res if c.marker_id in r[1].get(b"x-request-id", [])]
    version = any(b'"api_version"' in r[2] for r in res)
    answered = bool(marker) or version
    rule = c.marker_rule()
    if rule == "forbidden" and answered:
        problems.append("the request after it was answered (%s)" %
                        ([r[0] for r in marker] or "GET /version"))
    if rule == "required" and not (marker and marker[0][0] == 200):
        problems.append("the pipelined GET /version was not answered "
                        "(statuses %s)" % statuses)
    if c.cls in ("misframed", "hidden") and (
            version or any(r[0] < 300 for r in marker)):
        problems.append("the request after it was served (%s)" %
                        [r[0] for r in marker])
    if c.cls == "valid":
        if not final or final[0][0] != 200:
            problems.append("a well-formed request got %s" %
                            (final[0][0] if final else "no answer"))
    elif c.cls in ("bad-head", "bad-body") and not (c.incomplete and
                                                    not final):
        # a broken body may be refused for its head's sake first (415)
        ok = (400, 413, 501) if c.cls == "bad-head" else range(400, 500)
        if not final or final[0][0] not in ok:
            problems.append("a %s request got %s, not %s" % (
                c.cls, final[0][0] if final else "no answer",
                "/".join(map(str, ok)) if c.cls == "bad-head" else "4xx"))
        elif b"close" not in [v.lower() for v in
                              final[0][1].get(b"connection", [])]:
            problems.append("%d without Connection: close" % final[0][0])
    elif c.cls == "incomplete":
        if final and not 400 <= final[0][0] < 500:
            problems.append("an incomplete request got %d" % final[0][0])
    if not c.incomplete and not closed:
        problems.append("not closed within %.1f s (statuses %s)" % (
            deadline, statuses))
    return problems, res


def healthz(port, timeout=3.0):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
                  b"Connection: close\r\n\r\n")
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        s.close()
        return out.startswith(b"HTTP/1.1 200 ")
    except OSError:
        return False


def log_problems(path):
    """Sanitizer reports and 5xx (but 501) in the daemon's log."""
    problems = []
    with open(path, errors="replace") as f:
        for line in f:
            if re.search(r"Sanitizer|runtime error:|SUMMARY:", line):
                problems.append(line.strip()[:200])
            elif line.startswith("{"):
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                st = rec.get("status")
                if isinstance(st, int) and st >= 500 and st != 501:
                    problems.append(line.strip()[:200])
    return problems


def show(label, data, limit=700):
    text = repr(data[:limit]) + ("..." if len(data) > limit else "")
    print("#   %s %s" % (label, text))


def main():
    global STRICT
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("attnd_path", nargs="?", help="the attnd binary")
    ap.add_argument("--attnd", help="the attnd binary (started on a free "
                    "port)")
    ap.add_argument("--port", type=int, help="use a daemon running here")
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--case", type=int, help="replay this case alone (-1, "
                    "-2, ...: the kept regressions)")
    ap.add_argument("--batch", type=int, default=50,
                    help="cases between /healthz checks")
    ap.add_argument("--deadline", type=float, default=3.0,
                    help="seconds a case may take")
    ap.add_argument("--incomplete-cap", type=float, default=0.4,
                    help="seconds to wait on a body that never ends")
    ap.add_argument("--strict", action="store_true",
                    help="libmicrohttpd's known deviations fail too")
    ap.add_argument("--max-shown", type=int, default=12,
                    help="failing cases shown in full")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    STRICT = args.strict
    binary = args.attnd or args.attnd_path
    if args.port is None and binary is None:
        ap.error("give --attnd BINARY or --port PORT")
    seed = args.seed if args.seed is not None else \
        int.from_bytes(os.urandom(4), "big")
    proc, log = None, None
    if args.port is None:
        log = tempfile.NamedTemporaryFile(prefix="attnd-fuzz-", delete=False)
        proc, port, _ = start(binary, "--log-format", "json", log=log)
    else:
        port = args.port
    if args.case is not None:
        groups = [("case %d" % args.case, [args.case])]
    else:
        groups = [("%d kept regressions" % len(REGRESSIONS),
                   [-1 - i for i in range(len(REGRESSIONS))])]
        for b in range(0, args.cases, args.batch):
            last = min(b + args.batch, args.cases) - 1
            groups.append(("cases %d-%d" % (b, last),
                           list(range(b, last + 1))))
    print("# fuzz_heads: seed %d, %d cases and %d regressions (replay: "
          "--seed %d --case K -v)" % (seed, 0 if args.case is not None
                                      else args.cases, len(REGRESSIONS),
                                      seed))
    n, failed, shown = 0, 0, 0
    counts, seen, known_seen = {}, {}, {}
    slowest = (0.0, None)
    t0 = time.monotonic()

    def tap(ok, what):
        nonlocal n, failed
        n += 1
        failed += not ok
        print("%s %d - %s" % ("ok" if ok else "not ok", n, what))

    def note(what):
        seen[what] = seen.get(what, 0) + 1

    try:
        for label, ks in groups:
            bad = []
            for k in ks:
                c = regression_case(-1 - k, port) if k < 0 else \
                    make_case(seed, k, port)
                out, closed, secs = exchange(port, c, args.deadline,
                                             args.incomplete_cap)
                problems, res = check(c, out, closed, args.deadline)
                counts[c.cls] = counts.get(c.cls, 0) + 1
                if any(r[3] for r in res):
                    note("libmicrohttpd sent its error page's head twice "
                         "(docs/contract.md)")
                if c.known:
                    took = any(r[0] == 200 for r in res)
                    met, acc = known_seen.get(c.known, (0, 0))
                    known_seen[c.known] = (met + 1, acc + took)
                if secs > slowest[0] and not c.incomplete:
                    slowest = (secs, k)
                if args.verbose or problems:
                    bad.append((c, out, closed, secs, problems, res))
            tap(not any(p[4] for p in bad), "%s: %d connections, every "
                "answer as the framing asks" % (label, len(ks)))
            for c, out, closed, secs, problems, res in bad:
                print("#   case %d [%s: %s]: %s" % (
                    c.k, c.cls, ", ".join(c.notes) or "as generated",
                    "; ".join(problems) or "holds"))
                if problems and c.k >= 0:
                    shown += 1
                    if shown > args.max_shown:
                        continue  # the first --max-shown in full
                print("#   statuses %s, closed %s, %.2f s" % (
                    [r[0] for r in res], closed, secs))
                print("#   replay: python3 tests/http/fuzz_heads.py "
                      "--attnd %s --seed %d --case %d -v" % (
                          binary or "ATTND", seed, c.k))
                show("sent:", c.data())
                show("got: ", out)
            alive = (proc is None or proc.poll() is None) and healthz(port)
            tap(alive, "GET /healthz answers 200 after %s" % label)
            if not alive:
                break
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    if proc is not None:
        problems = log_problems(log.name)
        tap(not problems and proc.returncode in (0, -15),
            "the daemon's log holds no sanitizer report and no 5xx but "
            "501, and it stopped cleanly (exit %s)" % proc.returncode)
        for p in problems[:10]:
            print("#   " + p)
        os.unlink(log.name)
    print("# classes: " + ", ".join("%s %d" % (k, counts[k])
                                    for k in CLASSES if k in counts))
    for what, times in sorted(seen.items()):
        print("# seen %d times: %s" % (times, what))
    for what, (met, took) in sorted(known_seen.items()):
        print("# known, met %d times, answered 200 %d times: %s" % (
            met, took, what))
    print("# %.1f s, slowest case that must end: %.2f s (case %s); seed %d"
          % (time.monotonic() - t0, slowest[0], slowest[1], seed))
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

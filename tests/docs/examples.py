#!/usr/bin/env python3
"""examples.py — every curl example of README.md and docs/*.md, run against
a live attnd and compared with the answer the page shows. The rules are
in docs/development.md, "Examples in the documentation"; in short:

* an example is a ```sh or ```console block that runs curl; its answer is
  the fenced block right after it, or the output lines of a "$ " session,
  or the "# ..." comments that end its command lines;
* each page's examples run in order with sh -c, in a folder of the page's
  own, against a daemon of the page's own, with 127.0.0.1:8080 and
  localhost:8080 rewritten to the daemon's address and $ATTND its URL; a
  block after "<!-- example setup -->" runs first, unchecked;
* JSON answers are compared as JSON, numbers as the doubles they parse to;
  other answers line by line ("…" stands for any text); with curl -i, the
  status line and the headers shown;
* a sentence in parentheses next to an example that mentions "the tests"
  states a tolerance ("within rtol 1e-12"), the daemon's options
  ("against `attnd --auth-token-file tokens.txt`", "against a fresh
  `attnd`"), or that the example is illustrative (not run, counted as
  SKIP); blocks that run docker or kubectl are listed, not run;
* a block right after "<!-- example -->" is an example too: a ```sh block
  that runs no curl (reading a file an earlier example wrote), or a
  ```python block, run as a script by the first Python here that has the
  modules it imports (SKIP when none has them).

    usage: python3 tests/docs/examples.py BUILD/attnd [PAGE.md ...]
Prints TAP and exits 1 when an example fails. Without pages it runs
README.md and docs/*.md, then itself on tests/docs/fixtures/*.md, whose
headings say which verdict each example must get.
"""
import glob
import json
import math
import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "http"))
from daemon import start  # noqa: E402

EXAMPLE_TIMEOUT = 60
FAILED = []
FENCE = re.compile(r"^( *)(`{3,}|~{3,})\s*([^`\s]*)")
SHELL_INFO = ("sh", "shell", "bash", "console")
PYTHON_INFO = ("python", "python3", "py")
EXAMPLE_MARK = "<!-- example -->"
# curl as a command: at the start of a line (after a "$ " prompt too) or
# after | ; & ( $( or `.
CURL_CMD = re.compile(r"(?:^(?:\$ )?|[|;&(`]|\$\()\s*curl\s", re.M)
# A block that starts a server of its own (a container, a cluster) is a
# deployment recipe, not an example: it is listed, not run.
RECIPE_CMD = re.compile(r"(?:^|[|;&(]|\$\()\s*(docker|docker-compose|podman|"
                        r"kubectl)\s", re.M)
LOCAL = re.compile(r"\b(?:127\.0\.0\.1|localhost):8080\b")
HTTPS = re.compile(r"https://([A-Za-z0-9.-]+):\d+")
NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# the modules a Python example imports at its top level
IMPORT = re.compile(r"^(?:import\s+([\w.]+(?:\s+as\s+\w+)?"
                    r"(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)"
                    r"|from\s+([\w.]+)\s+import\b)", re.M)
URL_PATH = re.compile(r"https?://[^/\s\"']+(/[^\s\"'?]*)")


# ---------------------------------------------------------------- reading


def fences(lines):
    """The fenced blocks of a page: dicts with start (0-based index of the
    opening fence), end (of the closing one), info and body (the lines
    inside, unindented by the fence's indent)."""
    out = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, mark, info = len(m.group(1)), m.group(2), m.group(3)
        j = i + 1
        while j < len(lines) and not re.match(
                r"^ *%s%s*\s*$" % (re.escape(mark), re.escape(mark[0])),
                lines[j]):
            j += 1
        body = [ln[indent:] if ln[:indent].strip() == "" else ln
                for ln in lines[i + 1:j]]
        out.append({"start": i, "end": j, "info": info, "body": body})
        i = j + 1
    return out


def paragraph(lines, i, step, stop):
    """The paragraph next to line i going by step (-1 up, +1 down): blank
    lines and HTML comments skipped first, then lines up to a blank line,
    a heading, a fence or index stop."""
    text = []

    def inside(k):
        return stop < k if step < 0 else k < stop

    while inside(i) and (not lines[i].strip()
                         or lines[i].lstrip().startswith("<!--")):
        i += step
    while inside(i) and lines[i].strip() and not FENCE.match(lines[i]) \
            and not lines[i].startswith("#"):
        text.append(lines[i])
        i += step
    if step < 0:
        text.reverse()
    return " ".join(t.strip() for t in text)


def parentheses(text):
    """Every outermost (...) group of text."""
    out, depth, begin = [], 0, 0
    for k, c in enumerate(text):
        if c == "(":
            if depth == 0:
                begin = k + 1
            depth += 1
        elif c == ")" and depth:
            depth -= 1
            if depth == 0:
                out.append(text[begin:k])
    return out


def rules(notes):
    """What the sentences about the tests next to an example say: a dict
    with rtol, atol, args (daemon options), illustrative (the reason), and
    unread (a sentence the runner cannot read)."""
    r = {"rtol": 0.0, "atol": 0.0, "args": None, "fresh": False,
         "illustrative": None, "unread": None}
    for s in parentheses(notes):
        if not re.search(r"\bthe tests\b", s, re.I):
            continue
        s = re.sub(r"\s+", " ", s)
        known = False
        m = re.search(r"\billustrative\b", s, re.I)
        if m:
            r["illustrative"] = s
            known = True
        n = r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
        m = re.search(r"\bwithin (?:rtol %s)?(?: and )?(?:atol %s)?" % (n, n),
                      s)
        if m and (m.group(1) or m.group(2)):
            r["rtol"] = float(m.group(1) or 0)
            r["atol"] = float(m.group(2) or 0)
            known = True
        m = re.search(r"\bagainst (a fresh )?`attnd ?([^`]*)`", s)
        if m:
            r["fresh"] = bool(m.group(1))
            r["args"] = tuple(shlex.split(m.group(2)))
            known = True
        if not known:
            r["unread"] = s
    return r


def comment_of(line):
    """The text of a "# ..." comment ending a command line, or None (a
    # inside quotes or a word is no comment)."""
    quote = None
    for k, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                continue
        elif c in "'\"":
            quote = c
        elif c == "#" and k > 0 and line[k - 1] in " \t":
            return line[k + 1:].strip()
    return None


def session(body):
    """A "$ " session: (commands, expected output) or None."""
    if not body or not body[0].startswith("$ "):
        return None
    cmds, out, cont = [], [], False
    for ln in body:
        if ln.startswith("$ ") or cont:
            cmds.append(ln[2:] if ln.startswith("$ ") and not cont else ln)
            cont = ln.endswith("\\")
        else:
            out.append(ln)
    return "\n".join(cmds), "\n".join(out)


def title(cmd):
    """METHOD /path of the last curl of a command."""
    k = [m.end() for m in CURL_CMD.finditer(cmd)]
    seg = cmd[k[-1]:] if k else cmd
    seg = re.split(r"(?<!\\)\n|\|", seg.replace("\\\n", " "))[0]
    url = re.search(r"(?:https?://[^/\s\"']+|\b[a-z0-9.]+:\d+|\$\{?\w+\}?)"
                    r"(/[^\s\"'?]*)", seg)
    path = url.group(1) if url else "?"
    m = re.search(r"(?:-X|--request)\s+([A-Z]+)", seg)
    if m:
        method = m.group(1)
    elif re.search(r"(?:^|\s)(?:-d|--data[a-z-]*|-F|--form|-T)\b", seg):
        method = "POST"
    elif re.search(r"(?:^|\s)(?:-I|--head)\b", seg):
        method = "HEAD"
    else:
        method = "GET"
    return "%s %s" % (method, path)


def imports(code):
    """The top-level modules a Python example imports, sorted."""
    mods = set()
    for m in IMPORT.finditer(code):
        names = m.group(1).split(",") if m.group(1) else [m.group(2)]
        for n in names:
            mods.add(n.split()[0].split(".")[0])
    return sorted(mods)


def examples(page):
    """The curl blocks of a page, and the blocks marked as examples, as
    dicts; recipes and setup blocks too."""
    rel = os.path.relpath(page, ROOT)
    lines = open(page, encoding="utf-8").read().split("\n")
    blocks = fences(lines)
    out = []
    for n, b in enumerate(blocks):
        text = "\n".join(b["body"])
        gap = lines[(blocks[n - 1]["end"] + 1) if n else 0:b["start"]]
        # the comment alone on a line, the last before the block
        last = [g.strip() for g in gap if g.strip()][-1:]
        marked = last == [EXAMPLE_MARK]
        python = b["info"] in PYTHON_INFO
        if b["info"] not in SHELL_INFO and not (python and marked):
            continue
        ex = {"page": rel, "line": b["start"] + 2, "body": b["body"],
              "lang": "python" if python else "sh"}
        if not python and any("<!-- example setup -->" in g for g in gap):
            ex["kind"] = "setup"
            ex["cmd"] = text
            out.append(ex)
            continue
        if not marked and not CURL_CMD.search(text):
            continue
        m = None if python else RECIPE_CMD.search(text)
        if m:
            ex["kind"] = "recipe"
            ex["why"] = m.group(1)
            out.append(ex)
            continue
        ex["kind"] = "example"
        after = b["end"]
        s = None if python else session(b["body"])
        nxt = blocks[n + 1] if n + 1 < len(blocks) else None
        if s:
            ex["cmd"], ex["expected"] = s
            ex["answer_line"] = ex["line"]
        elif nxt and nxt["info"] not in SHELL_INFO + PYTHON_INFO and all(
                not ln.strip() for ln in lines[b["end"] + 1:nxt["start"]]):
            ex["cmd"] = text
            ex["expected"] = "\n".join(nxt["body"])
            ex["answer_line"] = nxt["start"] + 2
            after = nxt["end"]
        elif python:
            ex["cmd"] = text
            ex["expected"] = None
            ex["answer_line"] = ex["line"]
        else:
            ex["cmd"] = text
            said = [comment_of(ln) for ln in b["body"]
                    if not ln.lstrip().startswith("#")]
            said = [c for c in said if c is not None]
            ex["expected"] = "\n".join(said) if said else None
            ex["answer_line"] = ex["line"]
        stop_up = blocks[n - 1]["end"] if n else -1
        later = [c["start"] for c in blocks if c["start"] > after]
        stop_down = later[0] if later else len(lines)
        ex["notes"] = (paragraph(lines, b["start"] - 1, -1, stop_up) + " " +
                       paragraph(lines, after + 1, 1, stop_down))
        ex["rules"] = rules(ex["notes"])
        if python:
            url = URL_PATH.search(text)
            ex["title"] = "python" + (" " + url.group(1) if url else "")
            ex["imports"] = imports(text)
        elif CURL_CMD.search(ex["cmd"]):
            ex["title"] = title(ex["cmd"])
        else:
            ex["title"] = "sh: " + ex["cmd"].split()[0] if ex["cmd"].split() \
                else "sh"
        out.append(ex)
    return out


# -------------------------------------------------------------- comparing


def _refuse(constant):
    raise ValueError("%s is not JSON" % constant)


class Json:
    """Parsing JSON with every number as a double (NaN and Infinity are
    not JSON)."""
    decoder = json.JSONDecoder(parse_int=float, parse_float=float,
                               parse_constant=_refuse)

    @classmethod
    def values(cls, text):
        """The JSON documents text holds one after another, or None."""
        out, k, text = [], 0, text.strip()
        try:
            while k < len(text):
                v, k = cls.decoder.raw_decode(text, k)
                out.append(v)
                while k < len(text) and text[k] in " \t\r\n":
                    k += 1
        except ValueError:
            return None
        return out if out else None


def pointer(path):
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1")
                   for p in path) or "(the whole answer)"


def tidy(v):
    """v with integral doubles as ints, for printing."""
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    if isinstance(v, list):
        return [tidy(x) for x in v]
    if isinstance(v, dict):
        return {k: tidy(x) for k, x in v.items()}
    return v


def short(v, limit=160):
    s = v if isinstance(v, str) else json.dumps(tidy(v), ensure_ascii=False)
    return s if len(s) <= limit else s[:limit] + "…"


def num(x):
    """A double as JSON would print it."""
    return json.dumps(int(x)) if x.is_integer() and abs(x) < 2**53 \
        and math.copysign(1, x) > 0 else repr(x)


def same_number(e, g, rtol, atol):
    if e == g:
        return math.copysign(1, e) == math.copysign(1, g)
    if math.isinf(e) or math.isinf(g):
        return False
    return abs(g - e) <= atol + rtol * abs(e)


def json_diff(e, g, rtol, atol, path=()):
    """The first difference of two JSON values: (path, why) or None."""
    if isinstance(e, bool) or isinstance(g, bool) or e is None or g is None:
        if type(e) is type(g) and e == g:
            return None
        return path, "expected %s, got %s" % (short(e), short(g))
    if isinstance(e, float) and isinstance(g, float):
        if same_number(e, g, rtol, atol):
            return None
        tol = ""
        if rtol or atol:
            tol = " (difference %.3g, allowed %.3g)" % (
                abs(g - e), atol + rtol * abs(e))
        return path, "expected %s, got %s%s" % (num(e), num(g), tol)
    if isinstance(e, list) and isinstance(g, list):
        for k, (a, b) in enumerate(zip(e, g)):
            d = json_diff(a, b, rtol, atol, path + (k,))
            if d:
                return d
        if len(e) != len(g):
            return path, "expected %d elements, got %d" % (len(e), len(g))
        return None
    if isinstance(e, dict) and isinstance(g, dict):
        for k in e:
            if k not in g:
                return path, "member %s missing from the answer" % short(k)
            d = json_diff(e[k], g[k], rtol, atol, path + (k,))
            if d:
                return d
        for k in g:
            if k not in e:
                return path, "member %s not in the expected answer: %s" % (
                    json.dumps(k), short(g[k]))
        return None
    if isinstance(e, str) and isinstance(g, str):
        if e == g:
            return None
        k = next((i for i, (a, b) in enumerate(zip(e, g)) if a != b),
                 min(len(e), len(g)))
        return path, "strings differ at character %d:\n  expected %s\n" \
            "  got      %s" % (k, json.dumps(e), json.dumps(g))
    return path, "expected %s, got %s" % (short(e), short(g))


def text_lines(text):
    lines = [ln.rstrip() for ln in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    while lines and not lines[0]:
        lines.pop(0)
    return lines


def line_matches(e, g, rtol, atol):
    """One expected line against one line of output: "…" is any text; with
    a tolerance, numbers may differ within it."""
    parts = re.split(r"(…)", e)
    pattern = ""
    for p in parts:
        if p == "…":
            pattern += ".*"
        elif rtol or atol:
            last = 0
            for m in NUMBER.finditer(p):
                pattern += re.escape(p[last:m.start()]) + "(%s)" % \
                    NUMBER.pattern
                last = m.end()
            pattern += re.escape(p[last:])
        else:
            pattern += re.escape(p)
    m = re.fullmatch(pattern, g)
    if not m:
        return False
    if rtol or atol:
        want = [float(x) for x in NUMBER.findall(e.replace("…", " "))]
        got = [float(x) for x in m.groups()]
        return all(same_number(a, b, rtol, atol) for a, b in zip(want, got))
    return True


def text_diff(expected, got, rtol, atol):
    e, g = text_lines(expected), text_lines(got)
    for k in range(max(len(e), len(g))):
        a = e[k] if k < len(e) else None
        b = g[k] if k < len(g) else None
        if a is None or b is None or not line_matches(a, b, rtol, atol):
            return "line %d of the answer differs:\n  expected %s\n" \
                "  got      %s" % (k + 1, "(nothing)" if a is None else a,
                                   "(nothing)" if b is None else b)
    return None


def split_http(text):
    """(status line, [(name, value)], body) of an answer with headers."""
    text = text.replace("\r\n", "\n").lstrip("\n")
    head, _, body = text.partition("\n\n")
    lines = head.split("\n")
    headers = []
    for ln in lines[1:]:
        name, _, value = ln.partition(":")
        headers.append((name.strip().lower(), value.strip()))
    return lines[0].strip(), headers, body


def compare(expected, got, rtol=0.0, atol=0.0):
    """None when got is the expected answer, else why not."""
    if expected.lstrip().startswith("HTTP/"):
        es, eh, eb = split_http(expected)
        if not got.lstrip().startswith("HTTP/"):
            return "expected an answer with its headers (HTTP/...), got:\n" \
                "  " + short(got.strip())
        gs, gh, gb = split_http(got)
        if es != gs:
            return "status line: expected %s, got %s" % (es, gs)
        for name, value in eh:
            values = [v for n, v in gh if n == name]
            if not values:
                return "header %s missing; the answer has: %s" % (
                    name, ", ".join(n for n, _ in gh))
            if not any(line_matches(value, v, 0, 0) for v in values):
                return "header %s: expected %s, got %s" % (
                    name, value, " / ".join(values))
        return compare(eb, gb, rtol, atol)
    want = Json.values(expected)
    if want is not None:
        have = Json.values(got)
        if have is None:
            return "expected JSON, got:\n  " + short(got.strip(), 300)
        for k, (a, b) in enumerate(zip(want, have)):
            d = json_diff(a, b, rtol, atol)
            if d:
                where = pointer(d[0])
                if len(want) > 1:
                    where = "document %d, %s" % (k + 1, where)
                return "%s: %s" % (where, d[1])
        if len(want) != len(have):
            return "expected %d JSON documents, got %d" % (len(want),
                                                          len(have))
        return None
    return text_diff(expected, got, rtol, atol)


# ---------------------------------------------------------------- running


def start_https(binary, args, log):
    """daemon.start for a TLS daemon (its start line says https://)."""
    proc = subprocess.Popen([binary, "--port", "0"] + list(args),
                            stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(200):
        with open(log.name, errors="replace") as f:
            m = re.search(r"listening on https://[^ ]*:(\d+)", f.read())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("attnd %s did not start" % " ".join(args))


class Page:
    """One page's folder and daemons."""

    def __init__(self, binary, page):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="attnd-docs-")
        self.daemons = {}
        self.logs = {}
        self.hosts = set()
        self.page = page

    def daemon(self, args, key=None):
        """(base URL, environment) of the daemon with these options (one
        per key: the options, or an example's own for a fresh daemon),
        started on first use. Files the options name are made first when
        missing: a certificate and key for the page's https host names, a
        token file with one random token ($TOKEN)."""
        key = key or args
        if key in self.daemons:
            return self.daemons[key][1:]
        env = {}
        opts = dict(zip(args, args[1:]))
        tls = "--tls-cert" in opts
        if "--auth-token-file" in opts:
            path = os.path.join(self.dir, opts["--auth-token-file"])
            if not os.path.exists(path):
                with open(path, "w") as f:
                    f.write(secrets.token_hex(32) + "\n")
                os.chmod(path, 0o600)
            with open(path) as f:
                # a line is the token, or a label and the token
                env["TOKEN"] = next(ln.split()[-1] for ln in f
                                    if ln.strip() and not ln.startswith("#"))
        if tls:
            cert = os.path.join(self.dir, opts["--tls-cert"])
            keyfile = os.path.join(self.dir, opts.get("--tls-key", "key.pem"))
            if not os.path.exists(cert):
                names = sorted(self.hosts | {"localhost"})
                san = ",".join(["DNS:" + n for n in names] + ["IP:127.0.0.1"])
                subprocess.run(
                    ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                     "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                     keyfile, "-out", cert, "-days", "2", "-subj",
                     "/CN=localhost", "-addext", "subjectAltName=" + san],
                    check=True, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
        log = open(os.path.join(self.dir, "attnd-%d.log" % len(self.daemons)),
                   "w")
        self.logs[key] = log.name
        cwd = os.getcwd()
        os.chdir(self.dir)
        try:
            if tls:
                proc, port = start_https(self.binary, args, log)
            else:
                proc, port, _ = start(self.binary, *args, log=log)
        finally:
            os.chdir(cwd)
        base = "%s://%s:%d" % ("https" if tls else "http",
                               "localhost" if tls else "127.0.0.1", port)
        env["ATTND"] = base
        if tls:
            home = os.path.join(self.dir, "curl-%d" % port)
            os.mkdir(home)
            with open(os.path.join(home, ".curlrc"), "w") as f:
                f.write("cacert = %s\n" % cert)
                for h in sorted(self.hosts):
                    f.write("resolve = %s:%d:127.0.0.1\n" % (h, port))
            env["CURL_HOME"] = home
        self.daemons[key] = (proc, base, env)
        return base, env

    def rewrite(self, cmd, base):
        port = base.rsplit(":", 1)[1]
        if base.startswith("https:"):
            return HTTPS.sub(lambda m: "https://%s:%s" % (m.group(1), port),
                             LOCAL.sub("localhost:" + port, cmd))
        return LOCAL.sub("127.0.0.1:" + port, cmd)

    def run(self, cmd, env_extra, python=None):
        """Runs cmd with sh -c, or as a script with the Python python."""
        env = dict(os.environ)
        env.update(env_extra)
        argv = ["sh", "-c", cmd]
        if python:
            script = os.path.join(self.dir, ".example.py")
            with open(script, "w", encoding="utf-8") as f:
                f.write(cmd + "\n")
            argv = [python, script]
        try:
            p = subprocess.run(argv, cwd=self.dir, env=env,
                               stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=EXAMPLE_TIMEOUT)
        except subprocess.TimeoutExpired:
            return None, "", "timed out after %d s" % EXAMPLE_TIMEOUT
        return (p.returncode, p.stdout.decode("utf-8", "replace"),
                p.stderr.decode("utf-8", "replace"))

    def deaths(self):
        """What to say of the daemons that have exited."""
        out = []
        for key, (proc, _, _) in self.daemons.items():
            if proc.poll() is not None:
                with open(self.logs[key], errors="replace") as f:
                    tail = f.read()[-600:]
                rc = proc.returncode
                how = "was killed by %s" % signal.Signals(-rc).name \
                    if rc < 0 else "exited with status %d" % rc
                out.append("attnd %s %s; its log ends:\n%s" % (
                    " ".join(proc.args[1:]), how, tail))
        return out

    def close(self):
        for proc, _, _ in self.daemons.values():
            proc.send_signal(signal.SIGTERM)
        for proc, _, _ in self.daemons.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


PYTHONS = {}


def python_with(modules):
    """The first Python here that imports every one of modules: python3 on
    the PATH, Debian's /usr/bin/python3, the runner's own; or None."""
    key = tuple(modules)
    if key not in PYTHONS:
        PYTHONS[key] = None
        seen = set()
        for c in (shutil.which("python3"), "/usr/bin/python3",
                  sys.executable):
            if not c or c in seen or not os.access(c, os.X_OK):
                continue
            seen.add(c)
            code = "import " + ", ".join(modules) if modules else "pass"
            if subprocess.run([c, "-c", code], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                PYTHONS[key] = c
                break
    return PYTHONS[key]


def not_ok(text):
    FAILED.append(text)
    print("not ok " + text)


def explain(text):
    for ln in text.rstrip("\n").split("\n"):
        print("#   " + ln)


def run_pages(binary, pages, counter):
    """Runs every example of pages, printing one TAP line each; returns
    (checked, illustrative, recipes, skipped)."""
    checked = illustrative = recipes = skipped = 0
    for path in pages:
        exs = examples(path)
        page = Page(binary, path)
        for ex in exs:
            if ex["kind"] == "example":
                page.hosts |= set(HTTPS.findall(ex["cmd"]))
        try:
            for ex in exs:
                where = "%s:%d" % (ex["page"], ex["line"])
                if ex["kind"] == "recipe":
                    recipes += 1
                    print("# %s: a deployment recipe (%s), not run" % (
                        where, ex["why"]))
                    continue
                if ex["kind"] == "setup":
                    _, env = page.daemon(())
                    rc, out, err = page.run(ex["cmd"], env)
                    if rc != 0:
                        counter[0] += 1
                        not_ok("%d - %s setup block" % (counter[0], where))
                        explain("exit status %s\n%s" % (rc, err))
                    continue
                counter[0] += 1
                name = "%d - %s %s" % (counter[0], where, ex["title"])
                r = ex["rules"]
                if r["unread"]:
                    not_ok(name)
                    explain("a sentence about the tests that says no rule "
                            "this runner knows:\n(%s)" % r["unread"])
                    continue
                if r["illustrative"]:
                    illustrative += 1
                    print("ok %s # SKIP %s" % (name, r["illustrative"]))
                    continue
                if ex["expected"] is None:
                    not_ok(name)
                    explain("no answer to compare with: show one in the "
                            "block after it%s, or say the example is "
                            "illustrative" % ("" if ex["lang"] == "python"
                                              else ", as \"# ...\" comments"))
                    continue
                python = None
                if ex["lang"] == "python":
                    python = python_with(ex["imports"])
                    if python is None:
                        skipped += 1
                        print("ok %s # SKIP no Python here imports %s" % (
                            name, ", ".join(ex["imports"])))
                        continue
                checked += 1
                try:
                    base, env = page.daemon(
                        r["args"] or (), where if r["fresh"] else None)
                except (RuntimeError, SystemExit, subprocess.CalledProcessError
                        ) as e:
                    not_ok(name)
                    explain("could not start attnd %s: %s" % (
                        " ".join(r["args"] or ()), e))
                    continue
                cmd = page.rewrite(ex["cmd"], base)
                t0 = time.monotonic()
                rc, out, err = page.run(cmd, env, python)
                took = time.monotonic() - t0
                why = None
                if rc != 0:
                    why = "exit status %s" % rc
                    if err.strip():
                        # a traceback says the most at its end
                        why += "; stderr:\n" + (err.strip()[-600:] if python
                                                else err.strip()[:600])
                else:
                    why = compare(ex["expected"], out, r["rtol"], r["atol"])
                if why is None:
                    tol = ""
                    if r["rtol"] or r["atol"]:
                        tol = " (within rtol %g atol %g)" % (r["rtol"],
                                                             r["atol"])
                    print("ok %s%s" % (name, tol))
                else:
                    not_ok(name)
                    explain(why)
                    explain("expected (%s:%d):\n%s" % (
                        ex["page"], ex["answer_line"],
                        ex["expected"].strip()[:800]))
                    explain("got (in %.2f s):\n%s" % (took,
                                                      out.strip()[:800]))
                    for d in page.deaths():
                        explain(d)
        finally:
            page.close()
    return checked, illustrative, recipes, skipped


# --------------------------------------------------------------- self-test

def self_test(binary, counter):
    """The runner on tests/docs/fixtures/*.md: each example sits under a
    heading that starts "must pass" or "must fail"; the runner's verdict on
    it must be that one."""
    fixtures = sorted(glob.glob(os.path.join(HERE, "fixtures", "*.md")))
    for fx in fixtures:
        rel = os.path.relpath(fx, ROOT)
        lines = open(fx, encoding="utf-8").read().split("\n")
        want = {}
        for ex in examples(fx):
            if ex["kind"] != "example":
                continue
            heading = next((ln for ln in reversed(lines[:ex["line"] - 1])
                            if ln.startswith("#")), "")
            m = re.match(r"^#+\s+(must (?:pass|fail|be illustrative|be "
                         r"skipped))\b", heading)
            want[ex["line"]] = (m.group(1) if m else None,
                                heading.lstrip("# "))
        p = subprocess.run([sys.executable, os.path.abspath(__file__),
                            binary, fx], capture_output=True, timeout=300)
        tap = p.stdout.decode("utf-8", "replace")
        got = {}
        for ln in tap.split("\n"):
            m = re.match(r"^(ok|not ok) \d+ - %s:(\d+)\b(.*)" % re.escape(rel),
                         ln)
            if m:
                verdict = m.group(1)
                if re.search(r"# SKIP .*illustrative", m.group(3), re.I):
                    verdict = "illustrative"
                elif re.search(r"# SKIP ", m.group(3)):
                    verdict = "skipped"
                got[int(m.group(2))] = verdict
        for line in sorted(want):
            must, heading = want[line]
            expect = {"must pass": "ok", "must fail": "not ok",
                      "must be illustrative": "illustrative",
                      "must be skipped": "skipped"}.get(must)
            counter[0] += 1
            verdict = got.get(line, "no verdict")
            what = "self-test %s:%d (%s): the runner says %s" % (
                rel, line, heading, verdict)
            if verdict == expect:
                print("ok %d - %s" % (counter[0], what))
            else:
                not_ok("%d - %s" % (counter[0], what))
                explain(tap)
        counter[0] += 1
        what = "self-test %s: the runner exits with status %d" % (
            rel, p.returncode)
        if p.returncode == 1:
            print("ok %d - %s" % (counter[0], what))
        else:
            not_ok("%d - %s, not 1" % (counter[0], what))
            explain(p.stderr.decode("utf-8", "replace"))


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: examples.py BUILD/attnd [PAGE.md ...]")
    binary = os.path.abspath(sys.argv[1])
    pages = [os.path.abspath(p) for p in sys.argv[2:]]
    own = not pages
    if own:
        pages = [os.path.join(ROOT, "README.md")] + sorted(
            glob.glob(os.path.join(ROOT, "docs", "*.md")))
    t0 = time.monotonic()
    counter = [0]
    checked, illustrative, recipes, skipped = run_pages(binary, pages,
                                                        counter)
    if own:
        self_test(binary, counter)
    print("1..%d" % counter[0])
    print("# %d examples checked, %d illustrative, %d deployment recipes "
          "listed%s, in %.1f s" % (
              checked, illustrative, recipes,
              ", %d skipped for want of a Python module" % skipped
              if skipped else "", time.monotonic() - t0))
    sys.stdout.flush()
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()

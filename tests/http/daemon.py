"""daemon.py — start an attnd of its own for the raw-socket suites: on a
free loopback port, its log in a temporary file, the port read from its
"listening on" line."""
import re
import subprocess
import sys
import tempfile
import time


def start(binary, *args, log=None):
    """(process, port, log path) of binary --port 0 args...; exits the
    suite when it does not start within 10 s."""
    if log is None:
        log = tempfile.NamedTemporaryFile(prefix="attnd-http-", delete=False)
    proc = subprocess.Popen([binary, "--port", "0"] + list(args),
                            stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(200):
        with open(log.name, errors="replace") as f:
            m = re.search(r"listening on http://[^ ]*:(\d+)", f.read())
        if m:
            return proc, int(m.group(1)), log.name
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    sys.exit("attnd did not start")

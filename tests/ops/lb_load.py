#!/usr/bin/env python3
"""lb_load.py — clients for tests/ops/t_lb.sh, each bound to its own
loopback source address so that nginx's limit per address (keyed by
$binary_remote_addr) tells them apart. Every answer is checked, not only
its status; the summary is one JSON object on standard output.

  rate PORT SECONDS FLOOD_ADDR FLOOD_RATE CALM_ADDR CALM_RATE
      Two clients at once, each on one kept-alive connection, sending
      POST /regression/nw (the contract's worked example) at a steady
      pace: a flood (FLOOD_RATE requests/s) and a calm one. For each:
      how many were sent, the statuses, how many 200s were right, how many
      429s were well-formed (problem+json rate_limited, Retry-After >= 1,
      Access-Control-Allow-Origin: *), the time taken, the rate reached.

  loop PORT ADDRS RATE STOP_FILE
      One closed-loop client per comma-separated address in ADDRS, each
      sending POST /attention/dot (tests/cases/attention_dot/causal_false)
      and waiting for its answer, at most RATE requests/s each (a slow
      answer is not made up for with a burst afterwards), until
      STOP_FILE exists. A failed connection is counted (status 0) and
      retried on a new one. Totals: requests, statuses, right answers, the
      errors seen, the longest wait for an answer.
"""
import http.client
import json
import os
import sys
import threading
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
NW = ('{"x_train":[1,2,4],"y_train":[0,3,1],"x_query":[2.5],"w":0.5}')
NW_PRED = 1.4774782878985795
DOT_DIR = os.path.join(ROOT, "tests", "cases", "attention_dot", "causal_false")


def close_to(got, want):
    """The same JSON shape, numbers equal to 1e-9 (relative) or 1e-12: the
    case file's numbers come from another implementation."""
    if isinstance(want, dict):
        return (isinstance(got, dict) and got.keys() == want.keys()
                and all(close_to(got[k], want[k]) for k in want))
    if isinstance(want, list):
        return (isinstance(got, list) and len(got) == len(want)
                and all(close_to(g, w) for g, w in zip(got, want)))
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return (isinstance(got, (int, float)) and not isinstance(got, bool)
                and abs(got - want) <= max(1e-12, 1e-9 * abs(want)))
    return got == want


def connect(port, addr):
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(addr, 0))


def well_formed_429(resp, body):
    """nginx's (or attnd's) refusal, as docs/errors.md describes it."""
    try:
        p = json.loads(body)
        retry = int(resp.getheader("Retry-After", "0"))
    except ValueError:
        return False
    return (resp.getheader("Content-Type", "").startswith(
                "application/problem+json")
            and p.get("type") == "about:blank"
            and p.get("title") == "Too Many Requests"
            and p.get("status") == 429 and p.get("code") == "rate_limited"
            and isinstance(p.get("detail"), str) and retry >= 1
            and resp.getheader("Access-Control-Allow-Origin") == "*")


def paced(port, addr, rate, seconds, out):
    """POST /regression/nw at `rate` per second for `seconds`."""
    codes, right, good_429, errors = {}, 0, 0, []
    c = connect(port, addr)
    start = time.monotonic()
    n = 0
    while True:
        due = start + n / rate
        now = time.monotonic()
        if due - start >= seconds:
            break
        if due > now:
            time.sleep(due - now)
        n += 1
        try:
            c.request("POST", "/regression/nw", NW,
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            body = r.read()
        except (OSError, http.client.HTTPException) as e:
            codes[0] = codes.get(0, 0) + 1
            errors.append(repr(e))
            c.close()
            c = connect(port, addr)
            continue
        codes[r.status] = codes.get(r.status, 0) + 1
        if r.status == 200:
            try:
                if json.loads(body)["predictions"] == [NW_PRED]:
                    right += 1
            except (ValueError, KeyError):
                pass
        elif r.status == 429 and well_formed_429(r, body):
            good_429 += 1
    elapsed = time.monotonic() - start
    c.close()
    out.update(addr=addr, sent=n, codes=codes, right=right,
               well_formed_429=good_429, seconds=round(elapsed, 3),
               rate=round(n / elapsed, 1), errors=errors[:5])


def rate_main(port, seconds, flood_addr, flood_rate, calm_addr, calm_rate):
    flood, calm = {}, {}
    threads = [threading.Thread(target=paced, args=(port, flood_addr,
                                                    flood_rate, seconds, flood)),
               threading.Thread(target=paced, args=(port, calm_addr,
                                                    calm_rate, seconds, calm))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"flood": flood, "calm": calm}))


def loop_client(port, addr, rate, stop_file, body, expected, out, lock):
    codes, right, errors, longest = {}, 0, [], 0.0
    c = connect(port, addr)
    start = due = time.monotonic()
    n = 0
    while not os.path.exists(stop_file):
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        # never more than RATE/s, even to catch up after a slow answer
        due = max(due, now) + 1 / rate
        n += 1
        t = time.monotonic()
        try:
            c.request("POST", "/attention/dot", body,
                      {"Content-Type": "application/json"})
            r = c.getresponse()
            answer = r.read()
        except (OSError, http.client.HTTPException) as e:
            codes[0] = codes.get(0, 0) + 1
            errors.append(repr(e))
            c.close()
            c = connect(port, addr)
            continue
        longest = max(longest, time.monotonic() - t)
        codes[r.status] = codes.get(r.status, 0) + 1
        if r.status == 200:
            try:
                if close_to(json.loads(answer), expected):
                    right += 1
            except ValueError:
                pass
    c.close()
    with lock:
        out["requests"] += n
        out["right"] += right
        for k, v in codes.items():
            out["codes"][k] = out["codes"].get(k, 0) + v
        out["errors"].extend(errors[:5])
        out["longest_s"] = round(max(out["longest_s"], longest), 3)
        out["seconds"] = round(max(out["seconds"], time.monotonic() - start), 2)


def loop_main(port, addrs, rate, stop_file):
    with open(os.path.join(DOT_DIR, "request.json"), "rb") as f:
        body = f.read()
    with open(os.path.join(DOT_DIR, "expected.json")) as f:
        expected = json.load(f)["body"]
    out = {"clients": len(addrs), "requests": 0, "right": 0, "codes": {},
           "errors": [], "longest_s": 0.0, "seconds": 0.0}
    lock = threading.Lock()
    threads = [threading.Thread(target=loop_client,
                                args=(port, a, rate, stop_file, body,
                                      expected, out, lock)) for a in addrs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(out))


def main(argv):
    if len(argv) == 8 and argv[1] == "rate":
        rate_main(int(argv[2]), float(argv[3]), argv[4], float(argv[5]),
                  argv[6], float(argv[7]))
    elif len(argv) == 6 and argv[1] == "loop":
        loop_main(int(argv[2]), argv[3].split(","), float(argv[4]), argv[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)

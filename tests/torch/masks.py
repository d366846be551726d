"""masks.py — attnd's attn_mask and key_padding_mask against PyTorch
in float64: outputs, weights and gradients to 1e-12.

  * /attention/dot and /softmax/masked against
    torch.nn.functional.scaled_dot_product_attention (torch 1.13 has it as
    F._scaled_dot_product_attention), whose boolean attn_mask has the
    opposite polarity (True = takes part): attnd gets ~mask;
  * /attention/multihead against nn.MultiheadAttention (batch_first,
    dropout 0, need_weights=True, average_attn_weights=False) with a 2-D
    and a 3-D (B·H, Nq, Nk) attn_mask, boolean and float, and
    key_padding_mask; gradients from autograd for the inputs and every
    parameter.

Random patterns, not prefixes. No row is left without a key (PyTorch
answers NaN there; attnd's fully_masked policies are tested in
tests/unit). Fails, never skips, when torch is missing.
  usage: /usr/bin/python3 tests/torch/masks.py BASE_URL
"""
import json
import math
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1].rstrip("/") if len(sys.argv) > 1 else \
    "http://127.0.0.1:8080"
TOL = 1e-12
counts = {"run": 0, "failed": 0}


def tap(ok, name, detail=""):
    counts["run"] += 1
    if not ok:
        counts["failed"] += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", counts["run"], name))
    if not ok and detail:
        for line in str(detail).splitlines():
            print("# " + line)


try:
    import torch
    import torch.nn.functional as F
except ImportError as e:  # a failure, not a skip
    tap(False, "torch is importable for /usr/bin/python3", str(e))
    print("1..%d" % counts["run"])
    sys.exit(1)

torch.manual_seed(20240611)
torch.set_default_dtype(torch.float64)


def post(path, body):
    req = urllib.request.Request(
        BASE + path, data=json.dumps(body, allow_nan=False).encode(),
        headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def sdpa(q, k, v, mask):
    """(output, weights) of PyTorch's scaled dot-product attention, whose
    boolean mask is True = takes part."""
    if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        s = s.masked_fill(~mask, -math.inf) if mask.dtype == torch.bool \
            else s + mask
        return out, torch.softmax(s, -1)
    return F._scaled_dot_product_attention(q, k, v, mask, 0.0, True)


def float_json(m):
    """A float mask as JSON: -inf is null."""
    return [float_json(x) for x in m] if isinstance(m, list) else \
        (None if m == -math.inf else m)


def worst(got, want):
    """Largest |got - want| / max(1, |want|), inf on a shape mismatch."""
    g = torch.tensor(got, dtype=torch.float64)
    w = want.detach()
    if g.shape != w.shape:
        return math.inf
    return ((g - w).abs() / w.abs().clamp(min=1.0)).max().item()


def compare(name, answer, pairs):
    """One TAP line: every (answer key path, torch tensor) within TOL."""
    bad = []
    for path, want in pairs:
        got = answer
        for key in path.split("."):
            got = got.get(key) if isinstance(got, dict) else None
        e = math.inf if got is None else worst(got, want)
        if not e <= TOL:
            bad.append("%s: worst relative error %g" % (path, e))
    tap(not bad, name, "\n".join(bad) or "")


def blocked(shape, p=0.4):
    """A random boolean pattern, True = not allowed, at least one key free
    in every row."""
    m = torch.rand(shape) < p
    rows = m.reshape(-1, shape[-1])
    for r in rows:
        if r.all():
            r[torch.randint(shape[-1], (1,))] = False
    return m


def repair(block, allowed):
    """block (True = not allowed), changed in place so that every row keeps
    a key that allowed (broadcast to block's shape: the other masks, True
    = admitted) admits too: an empty row gets its first such key back."""
    a = allowed.expand(block.shape).reshape(-1, block.shape[-1])
    rows = block.view(-1, block.shape[-1])
    for r in range(rows.shape[0]):
        if not (~rows[r] & a[r]).any():
            rows[r, a[r].nonzero().flatten()[0]] = False
    return block


def padding(B, Nk):
    pad = torch.rand(B, Nk) < 0.3
    for b in range(B):
        if pad[b].all():
            pad[b, torch.randint(Nk, (1,))] = False
    return pad


# ------------------------------------------------------------ dot, SDPA

def dot_case(name, B, Nq, Nk, d, dv, kind, per_example, extra=None):
    q = torch.randn(B, Nq, d, requires_grad=True)
    k = torch.randn(B, Nk, d, requires_grad=True)
    v = torch.randn(B, Nk, dv, requires_grad=True)
    shape = (B, Nq, Nk) if per_example else (Nq, Nk)
    block = blocked(shape)
    if extra == "causal":  # query i keeps key 0 at least
        repair(block, torch.ones(Nq, Nk).tril().bool())
    body = {"queries": q.tolist(), "keys": k.tolist(), "values": v.tolist()}
    if kind == "bool":
        torch_mask = ~block  # SDPA: True = takes part
        body["attn_mask"] = block.tolist()
    else:
        add = torch.randn(shape) * 2
        torch_mask = add.masked_fill(block, -math.inf)
        body["attn_mask"] = float_json(torch_mask.tolist())
    if extra == "causal":
        # attnd ANDs causal with the mask; torch gets the combined mask
        causal = torch.ones(Nq, Nk).tril().bool()
        if kind == "bool":
            torch_mask = torch_mask & causal
        else:
            torch_mask = torch_mask.masked_fill(~causal, -math.inf)
        body["causal"] = True
    grad = torch.randn(B, Nq, dv)
    body["grad_output"] = grad.tolist()
    out, w = sdpa(q, k, v, torch_mask)
    out.backward(grad)
    status, ans = post("/attention/dot", body)
    if status != 200:
        tap(False, name, "status %d: %s" % (status, ans))
        return
    compare(name, ans, [("output", out), ("weights", w),
                        ("grads.queries", q.grad), ("grads.keys", k.grad),
                        ("grads.values", v.grad)])
    # the weights are exactly 0 where the mask says no
    zero = all(x == 0 for wb, mb in zip(ans["weights"], torch_mask.expand(
        B, Nq, Nk).tolist()) for wr, mr in zip(wb, mb)
        for x, m in zip(wr, mr) if m is False or m == -math.inf)
    tap(zero, name + ": masked weights exactly 0")


dot_case("dot, shared bool mask (Nq, Nk) = ~SDPA's", 2, 5, 7, 4, 3,
         "bool", False)
dot_case("dot, per-example bool mask (B, Nq, Nk)", 3, 4, 6, 5, 2,
         "bool", True)
dot_case("dot, shared float mask with -inf (null)", 2, 6, 5, 3, 4,
         "float", False)
dot_case("dot, per-example float mask", 2, 3, 8, 4, 4, "float", True)
dot_case("dot, bool mask AND causal", 2, 6, 6, 4, 3, "bool", True, "causal")
dot_case("dot, float mask AND causal", 1, 5, 5, 2, 2, "float", False,
         "causal")


def dot_unbatched():
    q, k, v = torch.randn(4, 3), torch.randn(6, 3), torch.randn(6, 2)
    block = blocked((4, 6))
    pad = torch.zeros(6, dtype=torch.bool)
    pad[[1, 4]] = True
    repair(block, ~pad)
    out, w = sdpa(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0),
                  ~(block | pad))
    status, ans = post("/attention/dot", {
        "queries": q.tolist(), "keys": k.tolist(), "values": v.tolist(),
        "attn_mask": block.tolist(), "key_padding_mask": pad.tolist()})
    if status != 200:
        tap(False, "dot, unbatched", "status %d: %s" % (status, ans))
        return
    compare("dot, unbatched (Nq, Nk) mask and (Nk) key_padding_mask", ans,
            [("output", out[0]), ("weights", w[0])])


dot_unbatched()


def softmax_case():
    B, Nq, Nk = 2, 4, 9
    s = torch.randn(B, Nq, Nk) * 3
    block = blocked((B, Nq, Nk))
    add = torch.randn(B, Nq, Nk).masked_fill(block, -math.inf)
    pad = padding(B, Nk)
    block2 = repair(blocked((B, Nq, Nk)), ~pad[:, None, :])
    cases = [
        ("softmax/masked, float mask (B, Nq, Nk)", {"attn_mask": float_json(
            add.tolist())}, torch.softmax(s + add, -1)),
        ("softmax/masked, bool mask and key_padding_mask",
         {"attn_mask": block2.tolist(), "key_padding_mask": pad.tolist()},
         torch.softmax(s.masked_fill(block2 | pad[:, None, :], -math.inf),
                       -1)),
    ]
    for name, extra, want in cases:
        status, ans = post("/softmax/masked", dict({"scores": s.tolist()},
                                                   **extra))
        if status != 200:
            tap(False, name, "status %d: %s" % (status, ans))
            continue
        compare(name, ans, [("weights", want)])


softmax_case()


# ------------------------------------------- multihead, MultiheadAttention

def mha_case(name, B, Nq, Nk, E, H, mask_kind, mask_dims, use_pad):
    mha = torch.nn.MultiheadAttention(E, H, dropout=0.0, bias=True,
                                      batch_first=True)
    with torch.no_grad():  # biases not all zero, so their gradients count
        mha.in_proj_bias.normal_()
        mha.out_proj.bias.normal_()
    q = torch.randn(B, Nq, E, requires_grad=True)
    k = torch.randn(B, Nk, E, requires_grad=True)
    v = torch.randn(B, Nk, E, requires_grad=True)
    pad = padding(B, Nk) if use_pad else torch.zeros(B, Nk, dtype=torch.bool)
    if mask_dims == 2:  # a shared mask needs a key no example pads
        pad[:, 0] = False
    body = {"queries": q.tolist(), "keys": k.tolist(), "values": v.tolist(),
            "num_heads": H}
    W = mha.in_proj_weight.detach()
    bias = mha.in_proj_bias.detach()
    params = {"W_q": W[:E], "W_k": W[E:2 * E], "W_v": W[2 * E:],
              "W_o": mha.out_proj.weight.detach(),
              "b_q": bias[:E], "b_k": bias[E:2 * E], "b_v": bias[2 * E:],
              "b_o": mha.out_proj.bias.detach()}
    body.update({n: t.tolist() for n, t in params.items()})
    attn_mask = None
    if mask_dims:
        shape = (Nq, Nk) if mask_dims == 2 else (B * H, Nq, Nk)
        block = blocked(shape)
        if mask_dims == 3:  # slab b*H + t meets example b's padding
            repair(block.view(B, H, Nq, Nk), ~pad[:, None, None, :])
        else:  # one mask for every example: a key no example pads
            repair(block, ~pad.any(0))
        if mask_kind == "bool":
            attn_mask = block
            body["attn_mask"] = block.tolist()
        else:
            attn_mask = (torch.randn(shape) * 2).masked_fill(block,
                                                             -math.inf)
            body["attn_mask"] = float_json(attn_mask.tolist())
    if use_pad:
        body["key_padding_mask"] = pad.tolist()
    grad = torch.randn(B, Nq, E)
    body["grad_output"] = grad.tolist()
    out, w = mha(q, k, v, key_padding_mask=pad if use_pad else None,
                 need_weights=True, attn_mask=attn_mask,
                 average_attn_weights=False)
    out.backward(grad)
    Wg = mha.in_proj_weight.grad
    bg = mha.in_proj_bias.grad
    status, ans = post("/attention/multihead", body)
    if status != 200:
        tap(False, name, "status %d: %s" % (status, ans))
        return
    compare(name, ans, [
        ("output", out), ("weights", w), ("grads.queries", q.grad),
        ("grads.keys", k.grad), ("grads.values", v.grad),
        ("grads.W_q", Wg[:E]), ("grads.W_k", Wg[E:2 * E]),
        ("grads.W_v", Wg[2 * E:]), ("grads.W_o", mha.out_proj.weight.grad),
        ("grads.b_q", bg[:E]), ("grads.b_k", bg[E:2 * E]),
        ("grads.b_v", bg[2 * E:]), ("grads.b_o", mha.out_proj.bias.grad)])


mha_case("multihead, 2-D bool attn_mask", 2, 5, 6, 8, 2, "bool", 2, False)
mha_case("multihead, 3-D (B*H, Nq, Nk) bool attn_mask", 2, 4, 7, 8, 4,
         "bool", 3, False)
mha_case("multihead, key_padding_mask alone", 3, 4, 5, 6, 3, None, 0, True)
mha_case("multihead, 2-D float attn_mask and key_padding_mask", 2, 5, 5, 4,
         2, "float", 2, True)
mha_case("multihead, 3-D float attn_mask and key_padding_mask", 2, 3, 6, 6,
         3, "float", 3, True)
mha_case("multihead, 3-D bool attn_mask and key_padding_mask", 3, 4, 4, 4,
         2, "bool", 3, True)

print("1..%d" % counts["run"])
sys.exit(1 if counts["failed"] else 0)

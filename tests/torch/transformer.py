#!/usr/bin/python3
"""POST /transformer/encoder and /transformer/decoder against PyTorch.

Builds nn.TransformerEncoder / nn.TransformerDecoder in float64 with
dropout 0 and batch_first=True, loads the same state_dict into attnd's
request, and compares (prints TAP):
  * the output, with the entry-wise tolerance |got - want| <= 1e-12 +
    1e-12 |want| (each line reports the max abs error, and the max rel
    error over the entries with |want| >= 1e-6);
  * every layer's per-head attention weights, from the layers' own
    self_attn / multihead_attn (need_weights=True,
    average_attn_weights=False) called on the inputs that forward hooks
    caught;
  * autograd's gradients of sum(output * grad_output) for src (tgt and
    memory) and every parameter, same tolerance;
  * every trace member against the steps recomputed with the layers'
    modules (and that chain against the model's output);
over norm_first both ways, num_layers 1 … 3, unbatched input, positional
encoding (d2l: X·sqrt(E) + P), GELU and a causal encoder; and with
PyTorch's masks (src_mask, src_key_padding_mask; tgt_mask, memory_mask,
tgt_key_padding_mask, memory_key_padding_mask), boolean and float, 2-D
(N, Nk) and per head 3-D (B·H, N, Nk), with and without causal (no row
left without a key: PyTorch answers NaN there). Also: central
finite differences of a few gradients (h = 1e-5, |fd - grad| <= 1e-7), and
the seeded parameters against attnd's generator in plain Python
(tests/vectors/attnrng.py), exactly.
Torch missing is a failure, not a skip.
  usage: /usr/bin/python3 tests/torch/transformer.py BASE_URL
"""
import json
import math
import os
import sys
import urllib.error
import urllib.request

BASE = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"
T = 0
FAILED = 0


def ok(what):
    global T
    T += 1
    print("ok %d - %s" % (T, what))


def not_ok(what, *why):
    global T, FAILED
    T += 1
    FAILED += 1
    print("not ok %d - %s" % (T, what))
    for line in why:
        print("#   %s" % line)


try:
    import torch
    import numpy as np
except ImportError as e:  # a failure: the parity checks need torch
    not_ok("torch and numpy import for /usr/bin/python3", str(e))
    print("1..%d" % T)
    sys.exit(1)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "vectors"))
import attnrng  # noqa: E402

torch.set_default_dtype(torch.float64)
ATOL = RTOL = 1e-12


def post(path, body):
    data = json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def as_array(x):
    """attnd's nested lists (null for masked entries) as float64, NaN for
    null."""
    def conv(v):
        if isinstance(v, list):
            return [conv(u) for u in v]
        return float("nan") if v is None else v
    return np.array(conv(x), dtype=np.float64)


def rel_of(err, want):
    """The max relative error over the entries with |want| >= 1e-6 (the
    others, gradients that are 0 in exact arithmetic, are held to the
    absolute part of the tolerance)."""
    big = np.abs(want) >= 1e-6
    return float((err[big] / np.abs(want[big])).max()) if big.any() else 0.0


def close(what, got, want, atol=ATOL, rtol=RTOL):
    got = as_array(got) if not isinstance(got, np.ndarray) else got
    want = want.detach().numpy() if torch.is_tensor(want) else np.asarray(want)
    if got.shape != want.shape:
        not_ok(what, "shape %s, want %s" % (got.shape, want.shape))
        return False
    gn, wn = np.isnan(got), np.isnan(want)
    if not np.array_equal(gn, wn):
        not_ok(what, "null entries differ")
        return False
    g, w = got[~gn], want[~wn]
    err = np.abs(g - w)
    abs_err = float(err.max()) if err.size else 0.0
    rel_err = rel_of(err, w)
    if np.all(err <= atol + rtol * np.abs(w)):
        ok("%s (max abs %.1e, max rel %.1e)" % (what, abs_err, rel_err))
        return True
    not_ok(what, "max abs error %.3e, max rel error %.3e" % (abs_err, rel_err))
    return False


def posenc(n, e):
    """d2l 11.6.3's P, float64."""
    P = torch.zeros(n, e)
    X = torch.arange(n, dtype=torch.float64).reshape(-1, 1) / torch.pow(
        10000.0, torch.arange(0, e, 2, dtype=torch.float64) / e)
    P[:, 0::2] = torch.sin(X)
    P[:, 1::2] = torch.cos(X)[:, : e // 2]
    return P


def causal_mask(n):
    return torch.triu(torch.full((n, n), float("-inf")), diagonal=1)


def make_attn_mask(kind, B, H, Nq, Nk, g):
    """A random attn_mask: kind "bool2", "bool3", "float2" or "float3"
    (2-D (Nq, Nk) or per head (B·H, Nq, Nk)); key 0 is always allowed, so
    no row is left without a key. Float masks hold -inf entries too."""
    shape = (Nq, Nk) if kind.endswith("2") else (B * H, Nq, Nk)
    hide = torch.rand(shape, generator=g) < 0.35
    hide[..., 0] = False
    if kind.startswith("bool"):
        return hide
    m = torch.randn(shape, generator=g)
    return m.masked_fill(hide, float("-inf"))


def make_kpm(B, Nk):
    """key_padding_mask (B, Nk): example b pads its last b + 1 keys (key 0
    never)."""
    kpm = torch.zeros(B, Nk, dtype=torch.bool)
    for b in range(B):
        kpm[b, max(1, Nk - 1 - b):] = True
    return kpm


def additive(mask, kpm, causal, B, H, Nq, Nk):
    """The scores' additive mask (B, H, Nq, Nk) that PyTorch's
    nn.MultiheadAttention makes of attn_mask, key_padding_mask and a
    causal mask: 0 or the float entry where allowed, -inf where not."""
    A = torch.zeros(B, H, Nq, Nk)
    if mask is not None:
        m = mask.reshape(-1, Nq, Nk)
        if m.dtype == torch.bool:
            m = torch.zeros(m.shape).masked_fill(m, float("-inf"))
        A = A + (m.reshape(B, H, Nq, Nk) if m.shape[0] > 1 else m[0])
    if kpm is not None:
        A = A.masked_fill(kpm.reshape(B, 1, 1, Nk), float("-inf"))
    if causal:
        A = A + causal_mask(Nq)
    return A


def with_causal(mask, n):
    """attn_mask and the causal mask as one mask for PyTorch (attnd takes
    the two apart)."""
    if mask is None:
        return causal_mask(n)
    if mask.dtype == torch.bool:
        return mask | torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    return mask + causal_mask(n)


def wire(t):
    """A mask as JSON: -inf as null."""
    if t.dtype == torch.bool:
        return t.tolist()

    def conv(v):
        if isinstance(v, list):
            return [conv(u) for u in v]
        return None if v == float("-inf") else v
    return conv(t.tolist())


def attention_trace(mha, q, kv, mask):
    """The multi-head names of the plan for one nn.MultiheadAttention call
    on batched q (B, Nq, E), kv (B, Nk, E); mask additive, (Nq, Nk) or
    (B, H, Nq, Nk), or None."""
    E, H = mha.embed_dim, mha.num_heads
    dh = E // H
    W, b = mha.in_proj_weight, mha.in_proj_bias
    Wq, Wk, Wv = W.chunk(3)
    bq, bk, bv = b.chunk(3)
    B, Nq, Nk = q.shape[0], q.shape[1], kv.shape[1]
    Q, K, V = q @ Wq.T + bq, kv @ Wk.T + bk, kv @ Wv.T + bv

    def heads(X, n):
        return X.view(B, n, H, dh).transpose(1, 2)
    Qh, Kh, Vh = heads(Q, Nq), heads(K, Nk), heads(V, Nk)
    QK = Qh @ Kh.transpose(-1, -2)
    scaled = QK * (1.0 / math.sqrt(dh))
    masked = scaled.clone()
    if mask is not None:
        masked = masked + mask
        masked = torch.where(torch.isinf(masked),
                             torch.tensor(float("nan")), masked)
    w = torch.softmax(scaled + (mask if mask is not None else 0), dim=-1)
    wv = w @ Vh
    concat = wv.transpose(1, 2).reshape(B, Nq, E)
    out = concat @ mha.out_proj.weight.T + mha.out_proj.bias
    return [("Q", Q), ("K", K), ("V", V), ("Q_heads", Qh), ("K_heads", Kh),
            ("V_heads", Vh), ("QK", QK), ("scaled", scaled),
            ("masked", masked), ("weights", w), ("weighted_values", wv),
            ("concat", concat), ("output", out)]


def reference_trace(model, x, memory, self_mask, decoder, norm_first, act,
                    cross_mask=None):
    """Every trace member per layer, recomputed with the layers' modules
    (batched x); returns ({name: (L, ...) tensor}, order, output)."""
    per = {}
    order = []
    f = torch.relu if act == "relu" else torch.nn.functional.gelu

    def put(name, v):
        if name not in per:
            per[name] = []
            order.append(name)
        per[name].append(v)
    for layer in model.layers:
        blocks = [("self_attention", layer.self_attn)]
        if decoder:
            blocks.append(("cross_attention", layer.multihead_attn))
        norms = [layer.norm1, layer.norm2] + ([layer.norm3] if decoder else [])
        for k in range(len(norms)):
            norm = norms[k]
            if norm_first:
                n = norm(x)
                put("norm_%d" % (k + 1), n)
                a = n
            else:
                a = x
            if k < len(blocks):
                name, mha = blocks[k]
                kv = memory if name == "cross_attention" else a
                tr = attention_trace(mha, a, kv, self_mask
                                     if name == "self_attention"
                                     else cross_mask)
                for member, v in tr:
                    put(name + "." + member, v)
                y = tr[-1][1]
            else:
                h = f(layer.linear1(a))
                put("ffn_hidden", h)
                y = layer.linear2(h)
                put("ffn_output", y)
            r = x + y
            put("residual_%d" % (k + 1), r)
            if norm_first:
                x = r
            else:
                x = norm(r)
                put("norm_%d" % (k + 1), x)
    return {k: torch.stack(v) for k, v in per.items()}, order, x


def build(decoder, E, H, F, L, norm_first, act, seed):
    torch.manual_seed(seed)
    if decoder:
        layer = torch.nn.TransformerDecoderLayer(
            E, H, F, dropout=0.0, activation=act, batch_first=True,
            norm_first=norm_first)
        model = torch.nn.TransformerDecoder(layer, L)
    else:
        layer = torch.nn.TransformerEncoderLayer(
            E, H, F, dropout=0.0, activation=act, batch_first=True,
            norm_first=norm_first)
        model = torch.nn.TransformerEncoder(layer, L,
                                            enable_nested_tensor=False)
    model = model.double()
    with torch.no_grad():  # layers apart, biases and norms not trivial
        for p in model.parameters():
            p.add_(0.2 * torch.randn_like(p))
    model.train()  # dropout is 0; the slow path, as autograd needs
    return model


def run_case(decoder, L, norm_first, batched=True, pe=False, act="relu",
             causal=None, seed=0, masks=None):
    """masks: None, or {"self": kind, "self_kpm": True, "cross": kind,
    "cross_kpm": True} (kinds of make_attn_mask; any member may be left
    out): the self-attention's src_mask / tgt_mask and key padding, the
    decoder's memory_mask and memory_key_padding_mask."""
    E, H, F, B, S, Tn = 8, 2, 12, 2, 5, 4
    masks = masks or {}
    path = "/transformer/decoder" if decoder else "/transformer/encoder"
    label = "%s L=%d %s%s%s%s%s%s" % (
        "decoder" if decoder else "encoder", L,
        "norm_first" if norm_first else "post-norm",
        "" if batched else " unbatched", " positional" if pe else "",
        " gelu" if act == "gelu" else "",
        " causal" if causal else "",
        "".join(" %s=%s" % (k, v) for k, v in sorted(masks.items())))
    model = build(decoder, E, H, F, L, norm_first, act, seed + 100)
    g = torch.Generator().manual_seed(seed)
    N = Tn if decoder else S
    x_in = torch.randn(B, N, E, generator=g)
    mem = torch.randn(B, S, E, generator=g) if decoder else None
    grad_out = torch.randn(B, N, E, generator=g)
    is_causal = decoder if causal is None else causal
    Bm = B if batched else 1
    sm = (make_attn_mask(masks["self"], Bm, H, N, N, g)
          if "self" in masks else None)
    skpm = make_kpm(Bm, N) if masks.get("self_kpm") else None
    cm = (make_attn_mask(masks["cross"], Bm, H, N, S, g)
          if "cross" in masks else None)
    ckpm = make_kpm(Bm, S) if masks.get("cross_kpm") else None
    # what PyTorch is given: the causal mask folded into attn_mask
    mask = with_causal(sm, N) if is_causal else sm
    # the scores' whole additive masks (B, H, N, Nk), for weights and trace
    self_add = additive(sm, skpm, is_causal, Bm, H, N, N)
    cross_add = additive(cm, ckpm, False, Bm, H, N, S)
    kpm_of = (lambda t: None if t is None else t if batched else t[0])
    body = {
        ("tgt" if decoder else "src"): (x_in if batched else x_in[0]).tolist(),
        "num_heads": H, "num_layers": L, "norm_first": norm_first,
        "activation": act, "positional_encoding": pe,
        "state_dict": {k: v.tolist() for k, v in model.state_dict().items()},
        "grad_output": (grad_out if batched else grad_out[0]).tolist(),
        "trace": True,
    }
    if decoder:
        body["memory"] = (mem if batched else mem[0]).tolist()
    if causal is not None:
        body["causal"] = causal
    names = (("tgt_mask", "tgt_key_padding_mask", "memory_mask",
              "memory_key_padding_mask") if decoder else
             ("src_mask", "src_key_padding_mask", None, None))
    for name, t in zip(names, (sm, kpm_of(skpm), cm, kpm_of(ckpm))):
        if t is not None:
            body[name] = wire(t)
    status, ans = post(path, body)
    if status != 200:
        not_ok(label + ": 200", "status %d: %s" % (status, ans))
        return
    # PyTorch: autograd through the model on the same input
    src = (x_in if batched else x_in[0]).clone().requires_grad_()
    memt = None
    if decoder:
        memt = (mem if batched else mem[0]).clone().requires_grad_()
    x = src * math.sqrt(E) + posenc(N, E) if pe else src
    caught = {"self": [], "cross": []}
    hooks = []
    for layer in model.layers:
        hooks.append(layer.self_attn.register_forward_pre_hook(
            lambda mod, args: caught["self"].append((mod, args))))
        if decoder:
            hooks.append(layer.multihead_attn.register_forward_pre_hook(
                lambda mod, args: caught["cross"].append((mod, args))))
    if decoder:
        out = model(x, memt, tgt_mask=mask, memory_mask=cm,
                    tgt_key_padding_mask=kpm_of(skpm),
                    memory_key_padding_mask=kpm_of(ckpm))
    else:
        out = model(x, mask=mask, src_key_padding_mask=kpm_of(skpm))
    for h in hooks:
        h.remove()
    gout = grad_out if batched else grad_out[0]
    (out * gout).sum().backward()
    close(label + ": output", ans["output"], out)
    for kind, name, m in (("self", "self_weights" if decoder else "weights",
                           self_add), ("cross", "cross_weights", cross_add)):
        if kind == "cross" and not decoder:
            continue
        ws = []
        m3 = m.reshape(-1, m.shape[2], m.shape[3])  # (B·H, Nq, Nk)
        with torch.no_grad():
            for mod, args in caught[kind]:
                _, w = mod(*args, attn_mask=m3, need_weights=True,
                           average_attn_weights=False)
                ws.append(w)
        close(label + ": " + name + " (per layer, per head)", ans[name],
              torch.stack(ws))
    grads = ans.get("grads", {})
    close(label + ": grads." + ("tgt" if decoder else "src"),
          grads.get("tgt" if decoder else "src"), src.grad)
    if decoder:
        close(label + ": grads.memory", grads.get("memory"), memt.grad)
    sd = grads.get("state_dict", {})
    params = dict(model.named_parameters())
    if list(sd.keys()) != list(params.keys()):
        not_ok(label + ": grads.state_dict has PyTorch's keys in order",
               "got %s" % list(sd.keys())[:5])
    else:
        bad = []
        worst = (0.0, 0.0)
        for k, p in params.items():
            got = as_array(sd[k])
            want = p.grad.numpy()
            err = np.abs(got - want)
            worst = (max(worst[0], float(err.max())),
                     max(worst[1], rel_of(err, want)))
            if got.shape != want.shape or not np.all(
                    err <= ATOL + RTOL * np.abs(want)):
                bad.append(k)
        if bad:
            not_ok(label + ": grads.state_dict (every parameter)",
                   "differ: %s" % bad[:4])
        else:
            ok("%s: grads.state_dict, %d parameters (max abs %.1e, max rel "
               "%.1e)" % (label, len(params), worst[0], worst[1]))
    # the trace against the steps recomputed with the layers' modules
    with torch.no_grad():
        xb = x.detach() if batched else x.detach().unsqueeze(0)
        mb = None
        if decoder:
            mb = memt.detach() if batched else memt.detach().unsqueeze(0)
        ref, order, final = reference_trace(model, xb, mb, self_add, decoder,
                                            norm_first, act, cross_add)
    trace = ans.get("trace", {})
    head = ["input"]
    if pe:
        head = ["positional", "embedded_scaled", "input"]
    if list(trace.keys()) != head + order:
        not_ok(label + ": trace members in computation order",
               "got %s" % list(trace.keys()),
               "want %s" % (head + order))
        return
    ok(label + ": trace has the %d members in computation order"
       % len(trace))
    close(label + ": the recomputed chain gives the model's output",
          (final if batched else final[0]).numpy(), out)
    if pe:
        close(label + ": trace.positional", trace["positional"],
              posenc(N, E))
        emb = x_in * math.sqrt(E)
        close(label + ": trace.embedded_scaled", trace["embedded_scaled"],
              emb if batched else emb[0])
    close(label + ": trace.input", trace["input"],
          x.detach())
    bad = []
    for name in order:
        want = ref[name] if batched else ref[name][:, 0]
        got = as_array(trace[name])
        w = want.numpy()
        if got.shape != w.shape or not np.array_equal(np.isnan(got),
                                                      np.isnan(w)):
            bad.append(name + " (shape or nulls)")
            continue
        sel = ~np.isnan(w)
        if not np.all(np.abs(got[sel] - w[sel]) <=
                      ATOL + RTOL * np.abs(w[sel])):
            bad.append(name)
    if bad:
        not_ok(label + ": every trace member matches", "differ: %s" % bad)
    else:
        ok(label + ": all %d per-layer trace members match (1e-12)"
           % len(order))


def seeded():
    """Seeded parameters: PyTorch's distributions drawn with attnd's
    generator in state_dict order, layer after layer."""
    E, H, F, L = 4, 2, 6, 2
    status, ans = post("/transformer/decoder", {
        "tgt": [[0.5, -1, 2, 0], [1, 1, 0, -2]],
        "memory": [[1, 0, 0, 1], [0, 2, 1, 0], [-1, 0, 1, 1]],
        "num_heads": H, "num_layers": L, "dim_feedforward": F, "seed": 7})
    if status != 200:
        not_ok("seeded decoder: 200", str(ans))
        return
    rng = attnrng.Rng(7)

    def uni(shape, a):
        n = shape[0] * (shape[1] if len(shape) > 1 else 1)
        v = [-a + 2.0 * a * rng.uniform() for _ in range(n)]
        return np.array(v).reshape(shape)
    want = {}
    for l in range(L):
        for attn in ("self_attn", "multihead_attn"):
            p = "layers.%d.%s." % (l, attn)
            want[p + "in_proj_weight"] = np.array(rng.xavier(3 * E, E))
            want[p + "in_proj_bias"] = np.zeros(3 * E)
            want[p + "out_proj.weight"] = uni((E, E), 1 / math.sqrt(E))
            want[p + "out_proj.bias"] = np.zeros(E)
        p = "layers.%d." % l
        want[p + "linear1.weight"] = uni((F, E), 1 / math.sqrt(E))
        want[p + "linear1.bias"] = uni((F,), 1 / math.sqrt(E))
        want[p + "linear2.weight"] = uni((E, F), 1 / math.sqrt(F))
        want[p + "linear2.bias"] = uni((E,), 1 / math.sqrt(F))
        for n in (1, 2, 3):
            want[p + "norm%d.weight" % n] = np.ones(E)
            want[p + "norm%d.bias" % n] = np.zeros(E)
    got = ans.get("state_dict", {})
    # PyTorch's key order, from the model itself
    model = build(True, E, H, F, L, False, "relu", 0)
    order = list(model.state_dict().keys())
    if list(got.keys()) != order:
        not_ok("seeded state_dict has nn.TransformerDecoder's keys in order",
               "got %s" % list(got.keys())[:4])
        return
    ok("seeded state_dict has nn.TransformerDecoder's %d keys in order"
       % len(order))
    same = all(np.array_equal(np.array(got[k]), want[k]) for k in order)
    if same:
        ok("seeded parameters are attnd's generator drawing PyTorch's "
           "distributions in state_dict order (exactly)")
    else:
        not_ok("seeded parameters equal the plain-Python draw")
    # and the seeded model answers as PyTorch does with those parameters
    model.load_state_dict({k: torch.tensor(v) for k, v in got.items()})
    with torch.no_grad():
        out = model(torch.tensor([[0.5, -1, 2, 0], [1, 1, 0, -2]]),
                    torch.tensor([[1, 0, 0, 1], [0, 2, 1, 0], [-1, 0, 1, 1.]]),
                    tgt_mask=causal_mask(2))
    close("seeded decoder (unbatched) output as PyTorch's", ans["output"], out)


def finite_differences():
    """Central differences of attnd's own loss sum(output * grad_output)
    against its gradients, h = 1e-5, |fd - grad| <= 1e-7."""
    torch.manual_seed(3)
    for decoder, norm_first in ((False, False), (True, True)):
        model = build(decoder, 4, 2, 6, 2, norm_first, "relu", 5)
        sd = {k: v.tolist() for k, v in model.state_dict().items()}
        x = torch.randn(1, 3, 4).tolist()
        mem = torch.randn(1, 2, 4).tolist()
        g = torch.randn(1, 3, 4)
        name = "tgt" if decoder else "src"
        body = {name: x, "num_heads": 2, "num_layers": 2,
                "norm_first": norm_first, "state_dict": sd,
                "grad_output": g.tolist()}
        if decoder:
            body["memory"] = mem
        path = "/transformer/decoder" if decoder else "/transformer/encoder"
        status, ans = post(path, body)
        if status != 200:
            not_ok("finite differences: 200", str(ans))
            continue

        def loss(b):
            b = dict(b)
            b.pop("grad_output")
            s, a = post(path, b)
            return float((np.array(a["output"]) * g.numpy()).sum())

        probes = [(name, (0, 1, 2)), ("layers.1.linear1.weight", (3, 1)),
                  ("layers.0.norm1.bias", (2,)),
                  ("layers.0.self_attn.in_proj_weight", (5, 0)),
                  ("layers.1.self_attn.out_proj.bias", (1,))]
        if decoder:
            probes += [("memory", (0, 1, 3)),
                       ("layers.0.multihead_attn.in_proj_weight", (6, 2))]
        h = 1e-5
        for key, idx in probes:
            def with_value(delta):
                b = json.loads(json.dumps(body))
                holder = b if key in (name, "memory") else b["state_dict"]
                t = holder[key]
                for i in idx[:-1]:
                    t = t[i]
                t[idx[-1]] += delta
                return b
            fd = (loss(with_value(h)) - loss(with_value(-h))) / (2 * h)
            grad = (ans["grads"][key] if key in (name, "memory")
                    else ans["grads"]["state_dict"][key])
            for i in idx:
                grad = grad[i]
            what = "%s finite difference of d loss / d %s%s" % (
                "decoder" if decoder else "encoder", key, list(idx))
            if abs(fd - grad) <= 1e-7:
                ok("%s (|fd - grad| = %.1e)" % (what, abs(fd - grad)))
            else:
                not_ok(what, "fd %.12g, grad %.12g" % (fd, grad))


def main():
    seed = 0
    for decoder in (False, True):
        for norm_first in (False, True):
            for L in (1, 2, 3):
                run_case(decoder, L, norm_first, seed=seed)
                seed += 1
        run_case(decoder, 2, False, batched=False, seed=seed)
        run_case(decoder, 2, True, pe=True, seed=seed + 1)
        run_case(decoder, 1, False, act="gelu", seed=seed + 2)
        seed += 3
    run_case(False, 2, False, causal=True, seed=seed)
    run_case(True, 1, True, batched=False, pe=True, causal=False, seed=seed + 1)
    seed += 2
    # PyTorch's masks: boolean and float, 2-D and per head, key padding
    for masks, causal in (({"self": "bool2"}, None),
                          ({"self": "float2"}, True),
                          ({"self": "bool3", "self_kpm": True}, None),
                          ({"self": "float3", "self_kpm": True}, True),
                          ({"self_kpm": True}, None)):
        run_case(False, 2, False, causal=causal, seed=seed, masks=masks)
        run_case(False, 1, True, causal=causal, seed=seed + 1, masks=masks)
        seed += 2
    for masks, causal in (({"self": "bool2", "cross": "bool2"}, None),
                          ({"self": "float3", "cross": "float2"}, False),
                          ({"self_kpm": True, "cross_kpm": True}, None),
                          ({"self": "bool3", "self_kpm": True,
                            "cross": "bool3", "cross_kpm": True}, None),
                          ({"self": "float2", "self_kpm": True,
                            "cross": "float3", "cross_kpm": True}, True)):
        run_case(True, 2, False, causal=causal, seed=seed, masks=masks)
        run_case(True, 1, True, causal=causal, seed=seed + 1, masks=masks)
        seed += 2
    run_case(False, 2, False, batched=False, seed=seed,
             masks={"self": "float3", "self_kpm": True})
    run_case(True, 1, False, batched=False, seed=seed + 1,
             masks={"self": "bool2", "cross": "float3", "cross_kpm": True})
    seeded()
    finite_differences()
    print("1..%d" % T)
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())

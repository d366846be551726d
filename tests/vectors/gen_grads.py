#!/usr/bin/python3
"""Reference gradients for the backward passes (lib/*_backward.c), from
torch autograd in float64.

Writes, in the format of vecfile.py:
  grads_dot.txt        scaled dot-product attention, written out with
                       explicit masks (torch 1.13 has no
                       scaled_dot_product_attention);
  grads_additive.txt   additive attention, the (B, Nq, Nk, h) features
                       broadcast as in d2l 11.3.3;
  grads_multihead.txt  torch.nn.MultiheadAttention (batch_first,
                       need_weights, average_attn_weights=False, kdim/vdim),
                       parameters copied in, d_out = h.

Masks follow docs/contract.md section 1: key j is visible to query i iff
j < valid_len and the causal rule admits it. Scores of masked keys are
filled with -inf before the softmax. A fully masked row would be NaN that
way, so dot and additive give such rows a constant (0 under "zero", 1/Nk
under "uniform") through torch.where: no gradient reaches their scores and
the values get what the constant weights pass on. nn.MultiheadAttention has
no such policy, so its cases have no fully masked row (the C tests cover
those by finite differences).

Fields of a case: sizes ([B, Nq, Nk, d, dv] dot; [B, Nq, Nk, dq, dk, dv,
h] additive; [B, Nq, Nk, dq, dk, dv, h, H, d_out] multihead), scale (dot),
causal (0 none, 1 top_left, 2 bottom_right), fully_masked (0 zero,
1 uniform), valid_lens (B) or (B, Nq) when present, the inputs (queries,
keys, values, parameters), grad_output, then the forward's output and
weights and the gradients grad_<field> (grad_queries, grad_keys,
grad_values, grad_W_q, ...).

Run from the repository root: /usr/bin/python3 tests/vectors/gen_grads.py
"""
import math
import os
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vecfile import VecWriter  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)


def visible(B, Nq, Nk, valid_lens, causal):
    """(B, Nq, Nk) bool, True where the key is visible."""
    j = np.arange(Nk)[None, None, :]
    i = np.arange(Nq)[None, :, None]
    vis = np.ones((B, Nq, Nk), dtype=bool)
    if valid_lens is not None:
        vl = np.asarray(valid_lens)
        lens = vl[:, None, None] if vl.ndim == 1 else vl[:, :, None]
        vis &= j < lens
    if causal == 1:
        vis &= j <= i
    elif causal == 2:
        vis &= j <= i + Nk - Nq
    return vis


def masked_softmax(S, vis, policy):
    """Softmax over visible keys (masked filled with -inf); a fully masked
    row is the policy's constant, 0 or 1/Nk, with no gradient to S."""
    vis = torch.tensor(vis)
    full = ~vis.any(dim=-1, keepdim=True)
    # A fully masked row is filled with 0 instead of -inf only so that its
    # (discarded) softmax stays finite: where() then sends it no gradient.
    fill = torch.where(full, 0.0, -math.inf).expand_as(S)
    W = torch.softmax(torch.where(vis, S, fill), dim=-1)
    const = 1.0 / S.shape[-1] if policy == 1 else 0.0
    return torch.where(full, torch.full_like(W, const), W)


def draw_mask(rng, B, Nq, Nk, valid_kind, allow_zero):
    lo = 0 if allow_zero else 1
    if valid_kind == 1:
        return rng.integers(lo, Nk + 1, size=B)
    if valid_kind == 2:
        return rng.integers(lo, Nk + 1, size=(B, Nq))
    return None


def leaf(a):
    return torch.tensor(a, requires_grad=True)


def grads_of(out, grad_output, tensors):
    out.backward(torch.tensor(grad_output))
    return [t.grad.numpy().copy() for t in tensors]


# ------------------------------------------------------------------ dot

def dot_case(rng, B, Nq, Nk, d, dv, scale, valid_kind, causal, policy,
             allow_zero):
    q = rng.standard_normal((B, Nq, d))
    k = rng.standard_normal((B, Nk, d))
    v = rng.standard_normal((B, Nk, dv))
    dO = rng.standard_normal((B, Nq, dv))
    valid_lens = draw_mask(rng, B, Nq, Nk, valid_kind, allow_zero)
    if allow_zero and valid_lens is not None:
        valid_lens.reshape(-1)[0] = 0  # at least one fully masked row
    vis = visible(B, Nq, Nk, valid_lens, causal)
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    tq, tk, tv = leaf(q), leaf(k), leaf(v)
    S = torch.bmm(tq, tk.transpose(1, 2)) * scale
    W = masked_softmax(S, vis, policy)
    O = torch.bmm(W, tv)
    gq, gk, gv = grads_of(O, dO, [tq, tk, tv])
    return [("sizes", [B, Nq, Nk, d, dv]), ("scale", scale),
            ("causal", causal), ("fully_masked", policy),
            ("valid_lens", valid_lens), ("queries", q), ("keys", k),
            ("values", v), ("grad_output", dO),
            ("output", O.detach().numpy()), ("weights", W.detach().numpy()),
            ("grad_queries", gq), ("grad_keys", gk), ("grad_values", gv)]


# ------------------------------------------------------------- additive

def additive_case(rng, B, Nq, Nk, dq, dk, dv, h, valid_kind, causal, policy,
                  allow_zero):
    q = rng.standard_normal((B, Nq, dq))
    k = rng.standard_normal((B, Nk, dk))
    v = rng.standard_normal((B, Nk, dv))
    Wq = rng.standard_normal((h, dq)) / math.sqrt(dq)
    Wk = rng.standard_normal((h, dk)) / math.sqrt(dk)
    wv = rng.standard_normal(h)
    dO = rng.standard_normal((B, Nq, dv))
    valid_lens = draw_mask(rng, B, Nq, Nk, valid_kind, allow_zero)
    if allow_zero and valid_lens is not None:
        valid_lens.reshape(-1)[0] = 0
    vis = visible(B, Nq, Nk, valid_lens, causal)
    t = [leaf(a) for a in (q, k, v, Wq, Wk, wv)]
    tq, tk, tv, tWq, tWk, twv = t
    # d2l 11.3.3: features = tanh(W_q q (B, Nq, 1, h) + W_k k (B, 1, Nk, h))
    features = torch.tanh((tq @ tWq.T).unsqueeze(2) + (tk @ tWk.T).unsqueeze(1))
    S = features @ twv
    W = masked_softmax(S, vis, policy)
    O = torch.bmm(W, tv)
    g = grads_of(O, dO, t)
    return [("sizes", [B, Nq, Nk, dq, dk, dv, h]), ("causal", causal),
            ("fully_masked", policy), ("valid_lens", valid_lens),
            ("queries", q), ("keys", k), ("values", v), ("W_q", Wq),
            ("W_k", Wk), ("w_v", wv), ("grad_output", dO),
            ("output", O.detach().numpy()), ("weights", W.detach().numpy()),
            ("grad_queries", g[0]), ("grad_keys", g[1]),
            ("grad_values", g[2]), ("grad_W_q", g[3]), ("grad_W_k", g[4]),
            ("grad_w_v", g[5])]


# ------------------------------------------------------------ multihead

def multihead_case(rng, B, Nq, Nk, dk, dv, h, H, bias, valid_kind, causal):
    dq = d_out = h
    q = rng.standard_normal((B, Nq, dq))
    k = rng.standard_normal((B, Nk, dk))
    v = rng.standard_normal((B, Nk, dv))
    Wq = rng.standard_normal((h, dq)) / math.sqrt(dq)
    Wk = rng.standard_normal((h, dk)) / math.sqrt(dk)
    Wv = rng.standard_normal((h, dv)) / math.sqrt(dv)
    Wo = rng.standard_normal((d_out, h)) / math.sqrt(h)
    bq, bk, bv, bo = ([rng.standard_normal(n) for n in (h, h, h, d_out)]
                      if bias else [None] * 4)
    dO = rng.standard_normal((B, Nq, d_out))
    valid_lens = draw_mask(rng, B, Nq, Nk, valid_kind, False)
    vis = visible(B, Nq, Nk, valid_lens, causal)
    assert vis.any(axis=2).all(), "MultiheadAttention: a fully masked row"

    mha = torch.nn.MultiheadAttention(embed_dim=h, num_heads=H, bias=bias,
                                      kdim=dk, vdim=dv, batch_first=True,
                                      dtype=torch.float64)
    same = mha._qkv_same_embed_dim
    with torch.no_grad():
        if same:
            mha.in_proj_weight.copy_(torch.tensor(np.concatenate([Wq, Wk, Wv])))
        else:
            mha.q_proj_weight.copy_(torch.tensor(Wq))
            mha.k_proj_weight.copy_(torch.tensor(Wk))
            mha.v_proj_weight.copy_(torch.tensor(Wv))
        mha.out_proj.weight.copy_(torch.tensor(Wo))
        if bias:
            mha.in_proj_bias.copy_(torch.tensor(np.concatenate([bq, bk, bv])))
            mha.out_proj.bias.copy_(torch.tensor(bo))
    # torch's masks: True = may not attend; one (Nq, Nk) per example and head
    attn_mask = torch.tensor(np.repeat(~vis, H, axis=0))
    tq, tk, tv = leaf(q), leaf(k), leaf(v)
    out, w = mha(tq, tk, tv, need_weights=True, attn_mask=attn_mask,
                 average_attn_weights=False)
    gq, gk, gv = grads_of(out, dO, [tq, tk, tv])
    if same:
        gW = mha.in_proj_weight.grad.numpy()
        gWq, gWk, gWv = gW[:h], gW[h:2 * h], gW[2 * h:]
    else:
        gWq = mha.q_proj_weight.grad.numpy()
        gWk = mha.k_proj_weight.grad.numpy()
        gWv = mha.v_proj_weight.grad.numpy()
    gWo = mha.out_proj.weight.grad.numpy()
    gb = [None] * 4
    if bias:
        gin = mha.in_proj_bias.grad.numpy()
        gb = [gin[:h], gin[h:2 * h], gin[2 * h:],
              mha.out_proj.bias.grad.numpy()]
    return [("sizes", [B, Nq, Nk, dq, dk, dv, h, H, d_out]),
            ("causal", causal), ("fully_masked", 0),
            ("valid_lens", valid_lens), ("queries", q), ("keys", k),
            ("values", v), ("W_q", Wq), ("W_k", Wk), ("W_v", Wv),
            ("W_o", Wo), ("b_q", bq), ("b_k", bk), ("b_v", bv), ("b_o", bo),
            ("grad_output", dO), ("output", out.detach().numpy()),
            ("weights", w.detach().numpy()), ("grad_queries", gq),
            ("grad_keys", gk), ("grad_values", gv), ("grad_W_q", gWq),
            ("grad_W_k", gWk), ("grad_W_v", gWv), ("grad_W_o", gWo),
            ("grad_b_q", gb[0]), ("grad_b_k", gb[1]), ("grad_b_v", gb[2]),
            ("grad_b_o", gb[3])]


def header(what):
    return f"""
Reference gradients of {what}, generated by tests/vectors/gen_grads.py
from torch {torch.__version__} autograd in float64 (numpy {np.__version__});
format in tests/vectors/vecfile.py."""


def main():
    rng = np.random.default_rng(20240612)

    w = VecWriter(os.path.join(HERE, "grads_dot.txt"),
                  header("scaled dot-product attention"))
    # (name, B, Nq, Nk, d, dv, scale, valid_kind, causal, policy, zero)
    for c in [
        ("plain", 2, 3, 4, 5, 2, None, 0, 0, 0, False),
        ("scale_given", 1, 4, 3, 2, 3, 0.7, 0, 0, 0, False),
        ("valid_lens_1d", 3, 4, 5, 3, 4, None, 1, 0, 0, False),
        ("valid_lens_2d", 2, 5, 4, 4, 3, None, 2, 0, 0, False),
        ("causal_top_left", 2, 4, 4, 3, 2, None, 0, 1, 0, False),
        ("causal_bottom_right", 2, 3, 6, 4, 3, None, 0, 2, 0, False),
        ("causal_and_lens_2d", 2, 5, 5, 3, 3, None, 2, 1, 0, False),
        ("zero_rows_lens_1d", 3, 3, 4, 2, 3, None, 1, 0, 0, True),
        ("uniform_rows_lens_1d", 3, 3, 4, 2, 3, None, 1, 0, 1, True),
        ("uniform_rows_lens_2d", 2, 4, 5, 3, 2, None, 2, 1, 1, True),
        ("zero_rows_bottom_right", 2, 6, 3, 2, 2, None, 0, 2, 0, False),
        ("uniform_rows_bottom_right", 2, 6, 3, 2, 2, 1.3, 0, 2, 1, False),
        ("larger", 3, 17, 23, 8, 6, None, 2, 0, 0, False),
    ]:
        w.case(c[0], dot_case(rng, *c[1:]))
    w.close()

    w = VecWriter(os.path.join(HERE, "grads_additive.txt"),
                  header("additive attention"))
    # (name, B, Nq, Nk, dq, dk, dv, h, valid_kind, causal, policy, zero)
    for c in [
        ("plain", 2, 3, 4, 5, 2, 3, 6, 0, 0, 0, False),
        ("valid_lens_1d", 3, 2, 5, 3, 4, 2, 4, 1, 0, 0, False),
        ("valid_lens_2d", 2, 4, 3, 2, 2, 3, 5, 2, 0, 0, False),
        ("causal_top_left", 2, 4, 4, 3, 5, 2, 3, 0, 1, 0, False),
        ("causal_bottom_right", 1, 3, 5, 2, 3, 4, 8, 0, 2, 0, False),
        ("zero_rows_lens_2d", 2, 3, 4, 3, 2, 2, 4, 2, 0, 0, True),
        ("uniform_rows_lens_1d", 3, 3, 4, 4, 3, 2, 3, 1, 0, 1, True),
        ("uniform_rows_bottom_right", 2, 5, 3, 2, 2, 3, 4, 0, 2, 1, False),
        ("larger", 2, 11, 13, 7, 5, 4, 16, 1, 0, 0, False),
    ]:
        w.case(c[0], additive_case(rng, *c[1:]))
    w.close()

    w = VecWriter(os.path.join(HERE, "grads_multihead.txt"),
                  header("multi-head attention (nn.MultiheadAttention)"))
    # (name, B, Nq, Nk, dk, dv, h, H, bias, valid_kind, causal)
    for c in [
        ("same_dims", 2, 3, 3, 4, 4, 4, 2, True, 0, 0),
        ("kdim_vdim", 2, 3, 5, 3, 2, 6, 3, True, 0, 0),
        ("no_bias", 3, 4, 6, 5, 7, 8, 4, False, 0, 0),
        ("valid_lens_1d", 3, 4, 6, 5, 3, 6, 2, True, 1, 0),
        ("valid_lens_2d", 2, 5, 4, 3, 6, 8, 2, True, 2, 0),
        ("causal_top_left", 2, 5, 5, 4, 4, 6, 3, True, 0, 1),
        ("causal_bottom_right", 2, 3, 6, 5, 2, 6, 2, False, 0, 2),
        ("causal_and_lens_2d", 2, 4, 4, 3, 3, 4, 4, True, 2, 1),
        ("one_head", 1, 2, 3, 2, 2, 5, 1, True, 1, 0),
        ("larger", 3, 9, 11, 7, 5, 12, 3, True, 1, 0),
    ]:
        w.case(c[0], multihead_case(rng, *c[1:]))
    w.close()


if __name__ == "__main__":
    main()

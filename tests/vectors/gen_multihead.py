#!/usr/bin/python3
"""Reference vectors for multi-head attention (lib/multihead.c).

Writes tests/vectors/multihead.txt (format: vecfile.py) with two oracles:
  torch_*  torch.nn.MultiheadAttention (float64, batch_first, kdim/vdim,
           need_weights, average_attn_weights=False); valid_lens and causal
           expressed as key_padding_mask / attn_mask. torch needs the query
           features and the output projection to be h (dq = d_out = h), all
           biases or none, and gives NaN for a query that sees no key, so
           those cases have none.
  d2l_*    a line-by-line float64 transcription of d2l's MultiHeadAttention
           (11.5, with d2l's masked_softmax fill -1e6) for what torch cannot
           take: dq != h, d_out != h, some biases only, valid_len 0 (d2l's
           fill gives those rows 1/Nk: the "uniform" fully_masked policy).
and tests/vectors/multihead_xavier.txt: seeded parameters drawn with the
contract's generator (attnrng.py).

Fields of a case: sizes = [B, Nq, Nk, dq, dk, dv, h, H, d_out], causal
(0 none, 1 top_left, 2 bottom_right), fully_masked (0 zero, 1 uniform),
valid_lens (B) or (B, Nq) when present, queries, keys, values, W_q, W_k,
W_v, W_o, b_q, b_k, b_v, b_o when present, expected output (B, Nq, d_out)
and weights (B, H, Nq, Nk).

Run from the repository root: /usr/bin/python3 tests/vectors/gen_multihead.py
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attnrng import Rng, check_golden  # noqa: E402
from vecfile import VecWriter  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
torch.set_default_dtype(torch.float64)


def visible_mask(B, Nq, Nk, valid_lens, causal):
    """(B, Nq, Nk) bool, True = key visible (the contract's mask rule)."""
    vis = np.ones((B, Nq, Nk), dtype=bool)
    j = np.arange(Nk)[None, :]
    i = np.arange(Nq)[:, None]
    if valid_lens is not None:
        vl = np.asarray(valid_lens)
        lens = vl[:, None] if vl.ndim == 1 else vl
        vis &= j[None, :, :] < lens[:, :, None]
    if causal == 1:
        vis &= (j <= i)[None]
    elif causal == 2:
        vis &= (j <= i + Nk - Nq)[None]
    return vis


def torch_case(rng, B, Nq, Nk, dk, dv, h, H, bias, valid_kind, causal):
    dq = d_out = h
    q = rng.standard_normal((B, Nq, dq))
    k = rng.standard_normal((B, Nk, dk))
    v = rng.standard_normal((B, Nk, dv))
    Wq = rng.standard_normal((h, dq)) / math.sqrt(dq)
    Wk = rng.standard_normal((h, dk)) / math.sqrt(dk)
    Wv = rng.standard_normal((h, dv)) / math.sqrt(dv)
    Wo = rng.standard_normal((d_out, h)) / math.sqrt(h)
    bq, bk, bv, bo = ((rng.standard_normal(n) for n in (h, h, h, d_out))
                      if bias else (None,) * 4)
    valid_lens = None
    if valid_kind == 1:
        valid_lens = rng.integers(1, Nk + 1, size=B)
    elif valid_kind == 2:
        valid_lens = rng.integers(1, Nk + 1, size=(B, Nq))
    vis = visible_mask(B, Nq, Nk, valid_lens, causal)
    assert vis.any(axis=2).all(), "torch gives NaN for fully masked rows"

    mha = torch.nn.MultiheadAttention(embed_dim=h, num_heads=H, bias=bias,
                                      kdim=dk, vdim=dv, batch_first=True,
                                      dtype=torch.float64)
    with torch.no_grad():
        if mha._qkv_same_embed_dim:
            mha.in_proj_weight.copy_(torch.tensor(np.concatenate([Wq, Wk, Wv])))
        else:
            mha.q_proj_weight.copy_(torch.tensor(Wq))
            mha.k_proj_weight.copy_(torch.tensor(Wk))
            mha.v_proj_weight.copy_(torch.tensor(Wv))
        mha.out_proj.weight.copy_(torch.tensor(Wo))
        if bias:
            mha.in_proj_bias.copy_(torch.tensor(np.concatenate([bq, bk, bv])))
            mha.out_proj.bias.copy_(torch.tensor(bo))

    # Masks in torch's convention, True = not allowed to attend.
    key_padding_mask = attn_mask = None
    i = np.arange(Nq)[:, None]
    j = np.arange(Nk)[None, :]
    if valid_kind == 1:
        key_padding_mask = torch.tensor(j >= valid_lens[:, None])  # (B, Nk)
    if causal:
        blocked = j > i if causal == 1 else j > i + Nk - Nq
        attn_mask = torch.tensor(blocked)  # (Nq, Nk)
    if valid_kind == 2:
        blocked = ~vis  # per-query lengths AND causal, one per head
        attn_mask = torch.tensor(np.repeat(blocked, H, axis=0))  # (B*H, ...)
    with torch.no_grad():
        out, w = mha(torch.tensor(q), torch.tensor(k), torch.tensor(v),
                     key_padding_mask=key_padding_mask, need_weights=True,
                     attn_mask=attn_mask, average_attn_weights=False)
    out, w = out.numpy(), w.numpy()
    assert np.isfinite(out).all() and np.isfinite(w).all()
    assert (w[~np.repeat(vis[:, None], H, axis=1)] == 0).all()
    if bias == 0:
        # The d2l transcription agrees wherever both apply.
        if causal == 0:
            o2, w2 = d2l_forward(q, k, v, Wq, Wk, Wv, Wo, None, None, None,
                                 None, valid_lens, H)
            assert np.abs(o2 - out).max() < 1e-12
            assert np.abs(w2 - w).max() < 1e-12
    return dict(sizes=[B, Nq, Nk, dq, dk, dv, h, H, d_out], causal=causal,
                fully_masked=0, valid_lens=valid_lens, queries=q, keys=k,
                values=v, W_q=Wq, W_k=Wk, W_v=Wv, W_o=Wo, b_q=bq, b_k=bk,
                b_v=bv, b_o=bo, output=out, weights=w)


# ---- d2l 11.5 MultiHeadAttention, transcribed (float64, no dropout) ----

def masked_softmax(X, valid_lens):
    """d2l 11.3.1: masked elements replaced by -1e6 before the softmax."""
    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32,
                            device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    if valid_lens is None:
        return F.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return F.softmax(X.reshape(shape), dim=-1)


def dot_product_attention(queries, keys, values, valid_lens):
    d = queries.shape[-1]
    scores = torch.bmm(queries, keys.transpose(1, 2)) / math.sqrt(d)
    attention_weights = masked_softmax(scores, valid_lens)
    return torch.bmm(attention_weights, values), attention_weights


def transpose_qkv(X, num_heads):
    X = X.reshape(X.shape[0], X.shape[1], num_heads, -1)
    X = X.permute(0, 2, 1, 3)
    return X.reshape(-1, X.shape[2], X.shape[3])


def transpose_output(X, num_heads):
    X = X.reshape(-1, num_heads, X.shape[1], X.shape[2])
    X = X.permute(0, 2, 1, 3)
    return X.reshape(X.shape[0], X.shape[1], -1)


def d2l_forward(q, k, v, Wq, Wk, Wv, Wo, bq, bk, bv, bo, valid_lens, H):
    t = (lambda a: None if a is None else torch.tensor(a))
    queries = transpose_qkv(F.linear(t(q), t(Wq), t(bq)), H)
    keys = transpose_qkv(F.linear(t(k), t(Wk), t(bk)), H)
    values = transpose_qkv(F.linear(t(v), t(Wv), t(bv)), H)
    vl = None
    if valid_lens is not None:
        vl = torch.repeat_interleave(torch.tensor(valid_lens), repeats=H,
                                     dim=0)
    output, weights = dot_product_attention(queries, keys, values, vl)
    output_concat = transpose_output(output, H)
    out = F.linear(output_concat, t(Wo), t(bo))
    B, Nq, Nk = q.shape[0], q.shape[1], k.shape[1]
    return out.numpy(), weights.reshape(B, H, Nq, Nk).numpy()


def d2l_case(rng, B, Nq, Nk, dq, dk, dv, h, H, d_out, biases, valid_kind,
             allow_zero):
    q = rng.standard_normal((B, Nq, dq))
    k = rng.standard_normal((B, Nk, dk))
    v = rng.standard_normal((B, Nk, dv))
    Wq = rng.standard_normal((h, dq)) / math.sqrt(dq)
    Wk = rng.standard_normal((h, dk)) / math.sqrt(dk)
    Wv = rng.standard_normal((h, dv)) / math.sqrt(dv)
    Wo = rng.standard_normal((d_out, h)) / math.sqrt(h)
    b = {name: (rng.standard_normal(n) if name in biases else None)
         for name, n in (("b_q", h), ("b_k", h), ("b_v", h), ("b_o", d_out))}
    lo = 0 if allow_zero else 1
    valid_lens = None
    if valid_kind == 1:
        valid_lens = rng.integers(lo, Nk + 1, size=B)
        if allow_zero:
            valid_lens[0] = 0
    elif valid_kind == 2:
        valid_lens = rng.integers(lo, Nk + 1, size=(B, Nq))
        if allow_zero:
            valid_lens[0, 0] = 0
    out, w = d2l_forward(q, k, v, Wq, Wk, Wv, Wo, b["b_q"], b["b_k"],
                         b["b_v"], b["b_o"], valid_lens, H)
    return dict(sizes=[B, Nq, Nk, dq, dk, dv, h, H, d_out], causal=0,
                fully_masked=1, valid_lens=valid_lens, queries=q, keys=k,
                values=v, W_q=Wq, W_k=Wk, W_v=Wv, W_o=Wo, output=out,
                weights=w, **b)


ORDER = ["sizes", "causal", "fully_masked", "valid_lens", "queries", "keys",
         "values", "W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o",
         "output", "weights"]


def main():
    check_golden()
    rng = np.random.default_rng(20240611)
    w = VecWriter(os.path.join(HERE, "multihead.txt"), f"""
Multi-head attention reference vectors, generated by
tests/vectors/gen_multihead.py with torch {torch.__version__} and numpy
{np.__version__}; format in tests/vectors/vecfile.py.""")
    # (name, B, Nq, Nk, dk, dv, h, H, bias, valid_kind, causal)
    torch_cases = [
        ("torch_same_dims", 2, 3, 3, 4, 4, 4, 2, True, 0, 0),
        ("torch_kdim_vdim", 2, 3, 5, 3, 2, 6, 3, True, 0, 0),
        ("torch_nobias", 3, 4, 6, 5, 7, 8, 4, False, 0, 0),
        ("torch_valid_lens_1d", 3, 4, 6, 5, 3, 6, 2, True, 1, 0),
        ("torch_valid_lens_2d", 2, 5, 4, 3, 6, 8, 2, True, 2, 0),
        ("torch_causal_top_left", 2, 5, 5, 4, 4, 6, 3, True, 0, 1),
        ("torch_causal_wide", 2, 3, 6, 2, 5, 4, 1, True, 0, 1),
        ("torch_causal_bottom_right", 2, 3, 6, 5, 2, 6, 2, True, 0, 2),
        ("torch_causal_and_lens_1d", 3, 4, 4, 3, 3, 4, 4, True, 1, 1),
        ("torch_bottom_right_lens_2d", 2, 3, 5, 4, 6, 6, 3, False, 2, 2),
        ("torch_one_head", 1, 2, 3, 2, 2, 5, 1, True, 1, 0),
        ("torch_head_dim_1", 2, 4, 3, 3, 2, 4, 4, True, 2, 1),
        ("torch_larger", 4, 9, 11, 7, 5, 12, 3, True, 1, 0),
    ]
    for name, B, Nq, Nk, dk, dv, h, H, bias, vk, causal in torch_cases:
        c = torch_case(rng, B, Nq, Nk, dk, dv, h, H, bias, vk, causal)
        w.case(name, [(f, c[f]) for f in ORDER])
    # (name, B, Nq, Nk, dq, dk, dv, h, H, d_out, biases, valid_kind, zero)
    d2l_cases = [
        ("d2l_dq_dout_differ", 2, 3, 4, 5, 3, 2, 6, 2, 7, (), 0, False),
        ("d2l_output_bias_only", 2, 4, 3, 2, 5, 3, 4, 2, 3, ("b_o",), 1,
         False),
        ("d2l_qv_bias", 3, 2, 5, 3, 3, 4, 6, 3, 2, ("b_q", "b_v"), 2, False),
        ("d2l_uniform_lens_1d", 3, 3, 4, 2, 4, 3, 4, 2, 5,
         ("b_q", "b_k", "b_v", "b_o"), 1, True),
        ("d2l_uniform_lens_2d", 2, 4, 5, 6, 2, 3, 6, 3, 4, ("b_k",), 2, True),
    ]
    for (name, B, Nq, Nk, dq, dk, dv, h, H, d_out, biases, vk,
         zero) in d2l_cases:
        c = d2l_case(rng, B, Nq, Nk, dq, dk, dv, h, H, d_out, biases, vk,
                     zero)
        w.case(name, [(f, c[f]) for f in ORDER])
    w.close()

    # Seeded parameters: one generator, W_q, W_k, W_v, W_o in that order.
    x = VecWriter(os.path.join(HERE, "multihead_xavier.txt"), """
Seeded multi-head parameters (docs/contract.md sections 6-7), generated by
tests/vectors/gen_multihead.py with an independent Python xoshiro256**.""")
    for seed, dq, dk, dv, h in ((0, 3, 2, 4, 4), (42, 2, 5, 3, 6),
                                (2**63 - 1, 1, 1, 1, 2)):
        r = Rng(seed)
        mats = [r.xavier(h, dq), r.xavier(h, dk), r.xavier(h, dv),
                r.xavier(h, h)]
        x.case("seed_%d" % seed, [
            ("seed_hi", seed >> 32), ("seed_lo", seed & 0xFFFFFFFF),
            ("sizes", [dq, dk, dv, h]), ("W_q", mats[0]), ("W_k", mats[1]),
            ("W_v", mats[2]), ("W_o", mats[3])])
    x.close()


if __name__ == "__main__":
    main()

"""masked_reference.py — the masked softmax of d2l 11.3.1 in numpy,
written from the formula, for the catalogues' tests (mistakes_*.py): which
keys each query sees, and the softmax over those.
"""
import numpy as np


def visible(B, Nq, Nk, valid_lens=None, causal=None):
    """(B, Nq, Nk) booleans: key j visible to query i of example b.
    valid_lens (B) is one length per example, (B, Nq) one per query;
    causal "top_left" is j <= i, "bottom_right" j <= i + Nk - Nq."""
    vis = np.ones((B, Nq, Nk), bool)
    if valid_lens is not None:
        L = np.asarray(valid_lens, dtype=float)
        if L.ndim == 1:
            L = np.repeat(L[:, None], Nq, axis=1)
        vis &= np.arange(Nk)[None, None, :] < L[:, :, None]
    i = np.arange(Nq)[:, None]
    j = np.arange(Nk)[None, :]
    if causal == "top_left":
        vis &= (j <= i)[None]
    elif causal == "bottom_right":
        vis &= (j <= i + Nk - Nq)[None]
    return vis


def softmax_visible(s, vis, axis=-1):
    """Softmax along axis over the visible entries; hidden entries and
    slices with nothing visible get 0 (fully_masked "zero")."""
    x = np.where(vis, s, -np.inf)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.where(vis, np.exp(x - m), 0.0)
    tot = e.sum(axis=axis, keepdims=True)
    return np.where(tot > 0, e / np.where(tot > 0, tot, 1.0), 0.0)

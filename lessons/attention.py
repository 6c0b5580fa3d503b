"""A small attention read, with or without RoPE.

Introduced in ``notebooks/01_order_and_the_2d_turn.ipynb`` (the puzzle: a swap of two
(K, V) rows leaves the read unchanged) and used again in ``notebooks/05_the_token_swap.ipynb``
(with RoPE the same swap changes the read).

    scores  = q k^T / sqrt(d)          (+ causal mask: a query never sees later keys)
    weights = softmax(scores)          (each row sums to 1)
    output  = weights v

RoPE sits between the head split and the scores: it rotates q and k, never v, and keeps d.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, as_positions, check_base, check_layout
from .frequencies import DEFAULT_BASE
from .rope import rope_rotate


def softmax(scores, axis: int = -1) -> np.ndarray:
    """A numerically stable softmax along ``axis``; -inf entries get weight 0.

    A row that is -inf everywhere (every key masked) has no weights to give: ValueError.
    """
    scores = np.asarray(scores)
    if scores.dtype != np.float32:
        scores = scores.astype(np.float64)
    if scores.size == 0:
        raise ValueError(f"scores must hold at least one score; got shape {scores.shape}")
    largest = np.max(scores, axis=axis, keepdims=True)
    if np.isneginf(largest).any():
        raise ValueError("scores: a row is -inf everywhere (every key masked), so softmax has no weights "
                         "to give it; mask fewer keys, or leave that query out")
    shifted = scores - largest
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def attention(
    q,
    k,
    v,
    *,
    causal: bool = False,
    q_positions=None,
    k_positions=None,
    base=DEFAULT_BASE,
    layout="interleaved",
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled dot-product attention; returns ``(weights, output)`` (``01``, ``05``).

    Shapes: q [..., Tq, d], k [..., Tk, d], v [..., Tk, dv]. When ``q_positions`` and
    ``k_positions`` are given, q and k are rotated by RoPE at those positions first (v is
    not). ``causal=True`` masks every key whose position is after the query's (positions
    default to 0 .. T-1, the queries being the last Tq of them).
    """
    q = as_float_array(q, "q", min_ndim=2)
    k = as_float_array(k, "k", min_ndim=2)
    v = as_float_array(v, "v", min_ndim=2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"q and k must have the same head width (last axis); got q {q.shape} and k {k.shape}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"k and v must hold one row per key (the same T axis); got k {k.shape} and v {v.shape}"
        )
    Tq, Tk = q.shape[-2], k.shape[-2]
    layout, base = check_layout(layout), check_base(base)  # checked even when no positions use them
    rope = q_positions is not None or k_positions is not None
    if rope and (q_positions is None or k_positions is None):
        raise ValueError("give both q_positions and k_positions to apply RoPE, or neither")
    if rope:
        # checked here for their names and the causal mask; rope_rotate checks base and layout
        qp = as_positions(q_positions, "q_positions", length=Tq)
        kp = as_positions(k_positions, "k_positions", length=Tk)
        q = rope_rotate(q, qp, base=base, layout=layout)
        k = rope_rotate(k, kp, base=base, layout=layout)
    else:
        kp = np.arange(Tk, dtype=np.float64)
        qp = kp[Tk - Tq :] if Tq <= Tk else np.arange(Tq, dtype=np.float64)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        hidden = kp[None, :] > qp[:, None]
        blind = np.flatnonzero(hidden.all(axis=1))
        if blind.size:
            raise ValueError(
                "causal attention needs at least one key at or before each query's position; "
                f"query {int(blind[0])} (position {qp[blind[0]]:g}) comes before every key "
                f"(k_positions start at {kp.min():g})"
            )
        scores = np.where(hidden, -np.inf, scores)
    weights = softmax(scores)
    return weights, weights @ v

"""The original Transformer's additive sinusoidal encoding, for comparison with RoPE.

Introduced in ``notebooks/07_added_vs_rotated.ipynb``.

PE[m, 2i] = sin(m * omega_i), PE[m, 2i+1] = cos(m * omega_i), omega_i = base^(-2i/d),
added to the token vectors. Expanding the score of added positions,

    (q + P[m]) . (k + P[n]) = q.k + q.P[n] + P[m].k + P[m].P[n],

only the last term depends on n - m alone; the two cross terms each hold one absolute
position, so the score moves when both positions shift together. Addition also changes
the norm, where a rotation keeps it.

That split is the simplified setup, with P added to q and k directly. The original
Transformer adds P to the token before the projections W_Q and W_K, and then even the
position-only term (P[m] W_Q) . (P[n] W_K) is not a function of n - m in general.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, as_number, as_positions, check_base, check_width
from .frequencies import DEFAULT_BASE, angle_table, pair_frequencies


def sinusoidal_encoding(positions, d, base=DEFAULT_BASE) -> np.ndarray:
    """The [T, d] table of added position vectors for ``positions`` (``07``)."""
    positions = as_positions(positions)
    d = check_width(d, "d")
    base = check_base(base)
    angles = angle_table(positions, pair_frequencies(d, base))
    pe = np.empty((positions.shape[0], d), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def added_score(q, k, m, n, base=DEFAULT_BASE) -> float:
    """(q + P[m]) . (k + P[n]) for 1-D q and k: the score with added positions (``07``)."""
    q, k = _query_and_key(q, k)
    pe = sinusoidal_encoding([as_number(m, "m"), as_number(n, "n")], q.shape[0], base)
    return float((q + pe[0]) @ (k + pe[1]))


def _query_and_key(q, k) -> tuple[np.ndarray, np.ndarray]:
    """q and k as float64 vectors, checked: finite, 1-D, of one width."""
    q = as_float_array(q, "q").astype(np.float64, copy=False)
    k = as_float_array(k, "k").astype(np.float64, copy=False)
    if q.ndim != 1 or q.shape != k.shape:
        raise ValueError(f"q and k must be 1-D vectors of the same width; got q {q.shape} and k {k.shape}")
    return q, k


def rotary_score(q, k, m, n, base=DEFAULT_BASE) -> float:
    """R(m) q . R(n) k for 1-D q and k (interleaved pairs): the score with rotated positions (``07``)."""
    from .rope import rope_rotate

    q, k = _query_and_key(q, k)
    m, n = as_number(m, "m"), as_number(n, "n")
    return float(rope_rotate(q[None, :], [m], base=base)[0] @ rope_rotate(k[None, :], [n], base=base)[0])


def score_terms(q, k, m, n, base=DEFAULT_BASE) -> np.ndarray:
    """The four terms of (q + P[m]) . (k + P[n]) as [q.k, q.P[n], P[m].k, P[m].P[n]] (``07``).

    The first holds no position, the last only n - m; each cross term holds ONE absolute
    position, so their sum cannot be a function of n - m alone. The four add up to
    :func:`added_score`.
    """
    q, k = _query_and_key(q, k)
    pm, pn = sinusoidal_encoding([as_number(m, "m"), as_number(n, "n")], q.shape[0], base)
    return np.array([q @ k, q @ pn, pm @ k, pm @ pn])


def fixed_gap_scores(q, k, starts, gap, base=DEFAULT_BASE) -> tuple[np.ndarray, np.ndarray]:
    """Scores of q at each start m and k at m + gap: ``(rotary, additive)`` arrays (``07``).

    The rotary scores agree to float rounding whatever the start; the additive ones move.
    """
    starts = as_positions(starts, "starts")
    rotary = np.array([rotary_score(q, k, m, m + gap, base) for m in starts])
    additive = np.array([added_score(q, k, m, m + gap, base) for m in starts])
    return rotary, additive

"""The whole head: every pair at once.

Introduced in ``notebooks/03_many_pairs_many_speeds.ipynb`` (the block-diagonal rotation,
each pair's share of a score, the long-term decay), used in ``notebooks/04_the_code.ipynb``
(a score table that is constant along its diagonals) and
``notebooks/05_the_token_swap.ipynb`` (a head built by hand that looks D tokens back).

A head of width d holds d/2 pairs. At position m, RoPE turns pair i by m * omega_i, so the
whole rotation is one d x d matrix made of d/2 blocks of 2 x 2 on its diagonal:

    R_m = diag( R(m omega_0), R(m omega_1), ..., R(m omega_{d/2-1}) ).

Each pair only ever meets itself in a dot product, so the score splits pair by pair:

    (R_m q) . (R_n k) = sum_i  q_i^T R((n - m) omega_i) k_i ,

where q_i = (q[2i], q[2i+1]). Every term depends on n - m only, hence the sum. The course's
distance is the query's position minus the key's, m - n (notebook 02): a key before its query
is at a positive distance, and the formulas' n - m is minus the distance.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, as_number, as_positions, check_base, check_width
from .frequencies import DEFAULT_BASE, pair_frequencies
from .rope import rope_rotate
from .rotation import rotate_2d, rotation_matrix


def _frequencies(d, base, inv_freq) -> np.ndarray:
    """The frequency table: ``inv_freq`` when given (one per pair), else base^(-2i/d)."""
    if inv_freq is None:
        return pair_frequencies(d, base)
    inv_freq = as_float_array(inv_freq, "inv_freq").astype(np.float64, copy=False)
    if inv_freq.shape != (d // 2,):
        raise ValueError(
            f"inv_freq must hold one frequency per pair: expected shape ({d // 2},) for a head "
            f"of width {d}, got {inv_freq.shape}"
        )
    return inv_freq


def block_rotation_matrix(position, d, base=DEFAULT_BASE) -> np.ndarray:
    """The d x d matrix R_m that RoPE applies at ``position`` m (``03``).

    Block-diagonal: block i (rows and columns 2i, 2i+1) is the 2 x 2 rotation by
    m * omega_i, every other entry is 0. ``R_m @ x`` equals ``rope_rotate`` of x at m.
    """
    m = as_number(position, "position")
    d = check_width(d, "d")
    check_base(base)
    blocks = rotation_matrix(m * pair_frequencies(d, base))  # [d/2, 2, 2]
    matrix = np.zeros((d, d))
    for i, block in enumerate(blocks):
        matrix[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = block
    return matrix


def pair_scores(q, k, q_position, k_position, *, base=DEFAULT_BASE, inv_freq=None) -> np.ndarray:
    """Each pair's share of the rotated score (R_m q) . (R_n k), one number per pair (``03``).

    Pair i contributes (R(m omega_i) q_i) . (R(n omega_i) k_i) = q_i^T R((n - m) omega_i) k_i;
    the shares sum to the whole score. ``q`` and ``k`` are single vectors of the same even
    width d. ``inv_freq`` replaces the default table base^(-2i/d) (e.g. two chosen speeds).
    """
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    if q.ndim != 1 or q.shape != k.shape:
        raise ValueError(
            f"q and k must be single vectors of the same width (shape (d,)); got q {q.shape} and k {k.shape}"
        )
    d = check_width(q.shape[0], "the width of q and k")
    m = as_number(q_position, "q_position")
    n = as_number(k_position, "k_position")
    check_base(base)
    freqs = _frequencies(d, base, inv_freq)
    q_turned = rotate_2d(q.reshape(-1, 2), m * freqs)
    k_turned = rotate_2d(k.reshape(-1, 2), n * freqs)
    return np.sum(q_turned * k_turned, axis=-1)


def cosine_sum(distance, d=128, base=DEFAULT_BASE) -> np.ndarray:
    """sum_i cos(distance * omega_i) over the d/2 pairs of a head (``03``).

    With all-ones q and k (the same content (1, 1) in every pair) the rotated score at that
    distance is exactly twice this sum. ``distance`` may be a number or an array; the
    result has its shape. The sum is even in the distance (cos is).
    """
    distance = as_float_array(distance, "distance", min_ndim=0).astype(np.float64, copy=False)
    freqs = pair_frequencies(check_width(d, "d"), base)
    return np.cos(distance[..., None] * freqs).sum(axis=-1)


def roformer_bound(distance, d=128, base=DEFAULT_BASE) -> np.ndarray:
    """RoFormer's long-term-decay quantity: (2/d) * sum_{j=1}^{d/2} |S_j| (``03``).

    S_j = sum_{k=0}^{j-1} exp(i * distance * omega_k) is the sum of the first j pairs' unit
    turns. Su et al. (RoFormer, in its analysis of long-term decay) bound the score of any q, k by
    (max_i |h_{i+1} - h_i|) * sum_j |S_j| (Abel summation, h_i = q_i conj(k_i) as complex
    numbers) and plot this mean of |S_j|, which falls as the distance grows. At distance 0
    every |S_j| = j, so the mean is (d/2 + 1)/2.
    """
    distance = as_float_array(distance, "distance", min_ndim=0).astype(np.float64, copy=False)
    freqs = pair_frequencies(check_width(d, "d"), base)
    partial_sums = np.cumsum(np.exp(1j * distance[..., None] * freqs), axis=-1)  # S_1 .. S_{d/2}
    return np.abs(partial_sums).mean(axis=-1)


def look_back_query(d, D, base=DEFAULT_BASE) -> np.ndarray:
    """A query that scores highest on the key exactly ``D`` positions back (``05``).

    Pair i of the query is (cos phi_i, sin phi_i) with phi_i = -D * omega_i. Against keys
    that hold (1, 0) in every pair, pair i contributes cos(phi_i - (n - m) omega_i) =
    cos((n - m + D) omega_i) for a key at n: all d/2 pairs reach their maximum 1 together
    when the key sits D positions before the query, wherever the query is. Nothing in it
    depends on the absolute position.
    """
    d = check_width(d, "d")
    if isinstance(D, bool) or not isinstance(D, (int, np.integer)):
        raise TypeError(f"D must be a whole number of positions (an int); got {D!r} ({type(D).__name__})")
    check_base(base)
    phi = -int(D) * pair_frequencies(d, base)
    return np.stack([np.cos(phi), np.sin(phi)], axis=-1).reshape(d)


def same_content_keys(n_keys, d) -> np.ndarray:
    """``n_keys`` keys of width d, each holding (1, 0) in every pair (``05``)."""
    if isinstance(n_keys, bool) or not isinstance(n_keys, (int, np.integer)) or n_keys < 1:
        raise ValueError(f"n_keys must be a positive whole number of keys; got {n_keys!r}")
    d = check_width(d, "d")
    return np.tile([1.0, 0.0], (int(n_keys), d // 2))


def diagonal_spread(table) -> float:
    """The largest (max - min) along any diagonal of a square table (``04``).

    0 means every diagonal is constant: entry [m, n] depends on n - m only.
    """
    table = as_float_array(table, "table", min_ndim=2)
    if table.ndim != 2 or table.shape[0] != table.shape[1]:
        raise ValueError(f"table must be a square 2-D table [T, T]; got shape {table.shape}")
    T = table.shape[0]
    if T == 0:
        raise ValueError("table must hold at least one row and column; got shape (0, 0)")
    spreads = [np.ptp(np.diagonal(table, offset)) for offset in range(-(T - 1), T)]
    return float(max(spreads))


def score_table(contents, positions, *, base=DEFAULT_BASE) -> np.ndarray:
    """The [T, T] table of rotated q . rotated k when each token's q and k are its ``contents`` row (``04``).

    ``contents`` is [T, d]; row t is rotated to ``positions[t]``. Entry [m, n] is the score
    of query token m against key token n (no 1/sqrt(d), no mask).
    """
    contents = as_float_array(contents, "contents", min_ndim=2)
    if contents.ndim != 2:
        raise ValueError(f"contents must be a [T, d] table, one row per token; got shape {contents.shape}")
    positions = as_positions(positions, length=contents.shape[0])
    turned = rope_rotate(contents, positions, base=base)
    return turned @ turned.T

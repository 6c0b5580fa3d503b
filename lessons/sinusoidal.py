"""The original Transformer's additive sinusoidal encoding, for comparison with RoPE.

Introduced in ``notebooks/07_added_vs_rotated.ipynb``.

PE[m, 2i] = sin(m * omega_i), PE[m, 2i+1] = cos(m * omega_i), omega_i = base^(-2i/d),
added to the token vectors. Expanding the score of added positions,

    (q + P[m]) . (k + P[n]) = q.k + q.P[n] + P[m].k + P[m].P[n],

only the last term depends on n - m alone; the two cross terms each hold one absolute
position, so the score moves when both positions shift together. Addition also changes
the norm, where a rotation keeps it.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_positions, check_positive, check_width
from .frequencies import DEFAULT_BASE, angle_table, pair_frequencies


def sinusoidal_encoding(positions, d, base=DEFAULT_BASE) -> np.ndarray:
    """The [T, d] table of added position vectors for ``positions`` (``07``)."""
    positions = as_positions(positions)
    d = check_width(d, "d")
    base = check_positive(base, "base")
    angles = angle_table(positions, pair_frequencies(d, base))
    pe = np.empty((positions.shape[0], d), dtype=np.float64)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def added_score(q, k, m, n, base=DEFAULT_BASE) -> float:
    """(q + P[m]) . (k + P[n]) for 1-D q and k: the score with added positions (``07``)."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    pe = sinusoidal_encoding([m, n], q.shape[-1], base)
    return float((q + pe[0]) @ (k + pe[1]))

"""Claims of notebook 04: the code, apply_rope on [B, H, T, d]."""

import numpy as np

from ..rope import apply_rope
from ._registry import below, claim


def same_content_dot_table(positions=(0, 1, 2)) -> np.ndarray:
    """Dot table of [1,0] rotated at three positions (d = 2)."""
    x = np.tile([1.0, 0.0], (1, 1, len(positions), 1))  # [B=1, H=1, T, d=2]
    q, k = apply_rope(x, x, positions)
    return q[0, 0] @ k[0, 0].T


def dot_tables(q, k, positions) -> np.ndarray:
    """Every head's [T, T] table of rotated q . rotated k."""
    qr, kr = apply_rope(q, k, positions)
    return qr @ np.swapaxes(kr, -1, -2)


def _random_qk(seed=4, shape=(2, 4, 16, 64)):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape), rng.normal(size=shape)


@claim("04.dot_table.diagonal", "Same content at three positions: the diagonal of the dot table", ("1", "1", "1"), tolerance=1e-12)
def dot_table_diagonal():
    return np.diag(same_content_dot_table())


@claim("04.dot_table.one_apart", "One position apart", ("0.54030231", "0.54030231"))
def dot_table_one_apart():
    return np.diag(same_content_dot_table(), 1)


@claim("04.dot_table.two_apart", "Two positions apart", "-0.41614684")
def dot_table_two_apart():
    return same_content_dot_table()[0, 2]


@claim("04.norms_kept", "apply_rope keeps every vector's norm: largest change below 1e-12", True)
@below(1e-12)
def norms_kept():
    q, k = _random_qk()
    qr, _ = apply_rope(q, k, np.arange(16) * 37)
    return float(np.max(np.abs(np.linalg.norm(qr, axis=-1) - np.linalg.norm(q, axis=-1))))


@claim("04.shift_by_7", "Shifting every position by 7 changes the dot table by less than 1e-12", True)
@below(1e-12)
def shift_by_7():
    q, k = _random_qk()
    positions = np.arange(16)
    return float(np.max(np.abs(dot_tables(q, k, positions) - dot_tables(q, k, positions + 7))))


@claim("04.width_kept", "apply_rope keeps the shape [B, H, T, d]: nothing is appended", True)
def width_kept():
    q, k = _random_qk()
    qr, kr = apply_rope(q, k)
    return qr.shape == q.shape and kr.shape == k.shape

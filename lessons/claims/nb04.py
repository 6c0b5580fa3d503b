"""Claims of notebook 04: the code, apply_rope on [B, H, T, d]."""

import numpy as np

from ..head import diagonal_spread, score_table
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
    qr, kr = apply_rope(q, k, np.arange(16) * 37)
    return float(max(np.max(np.abs(np.linalg.norm(turned, axis=-1) - np.linalg.norm(x, axis=-1)))
                     for turned, x in ((qr, q), (kr, k))))


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


# --------------------------------------------------------------------------- the score table at a glance

TABLE_T, TABLE_D = 12, 64


def same_content_table() -> np.ndarray:
    """One seeded content vector (d = 64) at every one of 12 positions: its score table."""
    content = np.random.default_rng(12).normal(size=TABLE_D)
    return score_table(np.tile(content, (TABLE_T, 1)), np.arange(TABLE_T))


def random_content_table() -> np.ndarray:
    """A different seeded content vector at each of 12 positions: its score table."""
    return score_table(np.random.default_rng(12).normal(size=(TABLE_T, TABLE_D)), np.arange(TABLE_T))


@claim("04.same_content.diagonals_constant", "The same content at every position: each diagonal of the score table is constant (largest spread below 1e-12)", True)
@below(1e-12)
def same_content_diagonals_constant():
    return diagonal_spread(same_content_table())


@claim("04.random_content.diagonals_vary", "A different content at each position: some diagonal of the score table varies by more than 10", True)
def random_content_diagonals_vary():
    return diagonal_spread(random_content_table()) > 10

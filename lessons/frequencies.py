"""Many pairs at many speeds: the frequency table and the angle table.

Introduced in ``notebooks/03_many_pairs_many_speeds.ipynb``.

A head of width d is cut into d/2 coordinate pairs. Pair i (from 0) turns by
omega_i = theta^(-2i/d) radians per position, so pair 0 (omega = 1) is the fastest, the
highest frequency, and the last pair the slowest. The angle of pair i at position m is
m * omega_i. The table depends only on d and theta: a constant of the model, never learned;
with one head width and one base (as in Llama) one table serves every head of every layer.
"""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, as_number, as_positions, check_base, check_width

DEFAULT_BASE = 10000.0


def pair_frequencies(d, base=DEFAULT_BASE) -> np.ndarray:
    """omega_i = base^(-2i/d) for i = 0 .. d/2 - 1, in float64 (``03``).

    This is ``inv_freq`` of Hugging Face transformers and ``freqs`` of Meta's LLaMA.
    """
    d = check_width(d, "d")
    base = check_base(base)
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)


def angle_table(positions, inv_freq) -> np.ndarray:
    """Angles m * omega_i as a [T, d/2] table, by broadcasting (``04``).

    ``positions`` is 1-D (one per token); ``inv_freq`` is 1-D (one per pair).
    """
    positions = as_positions(positions)
    inv_freq = as_float_array(inv_freq, "inv_freq").astype(np.float64, copy=False)
    if inv_freq.ndim != 1:
        raise ValueError(
            f"inv_freq must be one-dimensional (one frequency per pair); got shape {inv_freq.shape}"
        )
    return positions[:, None] * inv_freq[None, :]


def turns_at_distance(distance, inv_freq) -> np.ndarray:
    """How many full turns each pair makes over ``distance`` positions: delta*omega/(2*pi) (``03``)."""
    distance = as_number(distance, "distance")
    inv_freq = as_float_array(inv_freq, "inv_freq").astype(np.float64, copy=False)
    return distance * inv_freq / (2 * np.pi)


def pairs_under_one_turn(distance, d, base=DEFAULT_BASE) -> int:
    """The number of pairs that have not yet completed one full turn at ``distance`` (``03``).

    These pairs still tell distances apart without wrapping around the circle. A distance of
    either sign counts the same: a key 10 after its query is as many turns away as one 10 before.
    """
    turns = turns_at_distance(distance, pair_frequencies(d, base))
    return int(np.count_nonzero(np.abs(turns) < 1.0))


def wavelengths(inv_freq) -> np.ndarray:
    """The distance over which each pair makes exactly one turn: 2*pi / omega_i (``09``)."""
    inv_freq = as_float_array(inv_freq, "inv_freq").astype(np.float64, copy=False)
    return 2 * np.pi / inv_freq

"""Claims of notebook 05: the token swap, again."""

import numpy as np

from ..attention import attention
from ._registry import claim
from .nb01 import KEYS, QUERY, SWAP, VALUES

QUERY_POSITION = [2]
KEY_POSITIONS = [0, 1, 2]


def rope_read(keys=KEYS, values=VALUES) -> np.ndarray:
    """The query at position 2 reading keys at 0, 1, 2 with RoPE: the output vector."""
    return attention(QUERY, keys, values, q_positions=QUERY_POSITION, k_positions=KEY_POSITIONS)[1][0]


@claim("05.rope.original", "With RoPE, the original order reads", ("0.6047", "1.6751"))
def _():
    return rope_read()


@claim("05.rope.swapped", "With RoPE, the first two (K, V) rows swapped read", ("0.6475", "1.4569"))
def _():
    return rope_read(KEYS[SWAP], VALUES[SWAP])


@claim("05.no_rope.original", "Without RoPE, the original order reads", ("0.8022", "1.1978"))
def _():
    return attention(QUERY, KEYS, VALUES)[1][0]


@claim("05.no_rope.swapped", "Without RoPE, the swapped order reads the same", ("0.8022", "1.1978"))
def _():
    return attention(QUERY, KEYS[SWAP], VALUES[SWAP])[1][0]


@claim("05.rope.swap_changes_output", "With RoPE the swap changes the output", True)
def _():
    return not np.allclose(rope_read(), rope_read(KEYS[SWAP], VALUES[SWAP]))


@claim("05.identical_content", "Swapping two identical (K, V) rows changes nothing, even with RoPE", "0", tolerance=1e-12)
def _():
    keys = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    values = np.array([[0.0, 2.0], [0.0, 2.0], [1.0, 2.0]])
    return float(np.max(np.abs(rope_read(keys, values) - rope_read(keys[SWAP], values[SWAP]))))

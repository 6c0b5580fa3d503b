"""Claims of notebook 01: order, and turning a 2D arrow."""

import numpy as np

from ..attention import attention
from ..rotation import basis_contributions, rotate_2d
from ._registry import claim

# The puzzle's data: one query reads three keys.
QUERY = np.array([[1.0, 0.0]])
KEYS = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
VALUES = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 2.0]])
SWAP = [1, 0, 2]  # the first two (K, V) rows exchanged
WORKED_COS, WORKED_SIN = 0.8, 0.6


def worked_angle() -> float:
    """The angle with cos 0.8 and sin 0.6, in radians."""
    return float(np.arctan2(WORKED_SIN, WORKED_COS))


@claim("01.puzzle.weights", "Without positions, query [1,0] weighs the three keys", ("0.4011", "0.1978", "0.4011"))
def puzzle_weights():
    return attention(QUERY, KEYS, VALUES)[0][0]


@claim("01.puzzle.output", "Without positions, the read returns", ("0.8022", "1.1978"))
def puzzle_output():
    return attention(QUERY, KEYS, VALUES)[1][0]


@claim("01.puzzle.swapped_output", "Swapping the first two (K, V) rows gives the same read", ("0.8022", "1.1978"))
def puzzle_swapped_output():
    return attention(QUERY, KEYS[SWAP], VALUES[SWAP])[1][0]


@claim("01.puzzle.swap_changes_nothing", "Without positions the swap changes the output by 0", "0", tolerance=1e-12)
def puzzle_swap_changes_nothing():
    a = attention(QUERY, KEYS, VALUES)[1]
    b = attention(QUERY, KEYS[SWAP], VALUES[SWAP])[1]
    return float(np.max(np.abs(a - b)))


@claim("01.quarter_turn.x_axis", "A quarter turn sends [1,0] to", ("0", "1"), tolerance=1e-12)
def quarter_turn_x_axis():
    return rotate_2d([1.0, 0.0], np.pi / 2)


@claim("01.quarter_turn.3_4", "A quarter turn sends [3,4] to", ("-4", "3"), tolerance=1e-12)
def quarter_turn_3_4():
    return rotate_2d([3.0, 4.0], np.pi / 2)


@claim("01.worked.degrees", "The angle with cos 0.8 and sin 0.6, in degrees", "36.87")
def worked_degrees():
    return np.degrees(worked_angle())


@claim("01.worked.rotated", "[2,1] turned by that angle becomes", ("1", "2"), tolerance=1e-12)
def worked_rotated():
    return rotate_2d([2.0, 1.0], worked_angle())


@claim("01.worked.head_to_tail", "The two basis contributions [1.6,1.2] and [-0.6,0.8] add to", ("1", "2"), tolerance=1e-12)
def worked_head_to_tail():
    a, b = basis_contributions([2.0, 1.0], worked_angle())
    return a + b


@claim("01.length.before", "Squared length of [3,4]", "25", tolerance=1e-12)
def length_before():
    return float(np.sum(np.square([3.0, 4.0])))


@claim("01.length.after", "Squared length of [3,4] after a quarter turn", "25", tolerance=1e-12)
def length_after():
    return float(np.sum(np.square(rotate_2d([3.0, 4.0], np.pi / 2))))


@claim("01.length.norms", "[3,4] and [-4,3] both have length", ("5", "5"), tolerance=1e-12)
def length_norms():
    v = np.array([3.0, 4.0])
    return [np.linalg.norm(v), np.linalg.norm(rotate_2d(v, np.pi / 2))]

"""Claims of notebook 02: radians, position times frequency, relative position."""

import numpy as np

from ..rotation import radians_to_degrees, rotate_2d
from ._registry import claim

CONTENT = np.array([1.0, 0.0])  # the same content for Q and K


def rotated_dot(q_position, k_position, q=CONTENT, k=CONTENT, frequency=1.0) -> float:
    """Dot product of q and k after turning each by position * frequency."""
    return float(rotate_2d(q, q_position * frequency) @ rotate_2d(k, k_position * frequency))


@claim("02.radian.degrees", "One radian in degrees, about", "57.3")
def radian_degrees():
    return radians_to_degrees(1.0)


@claim("02.quarter_turn.radians", "A quarter turn in radians, pi/2, about", "1.5708")
def quarter_turn_radians():
    return np.pi / 2


@claim("02.position_1", "[1,0] at position 1 (frequency 1) becomes [cos 1, sin 1]", ("0.54030231", "0.84147098"))
def position_1():
    return rotate_2d(CONTENT, 1.0)


@claim("02.dot.positions_0_0", "Same content at positions 0 and 0: dot", "1", tolerance=1e-12)
def dot_positions_0_0():
    return rotated_dot(0, 0)


@claim("02.dot.positions_0_1", "Same content at positions 0 and 1: dot cos 1", "0.54030231")
def dot_positions_0_1():
    return rotated_dot(0, 1)


@claim("02.dot.positions_3_4", "Both moved by 3 (positions 3 and 4): dot still", "0.54030231")
def dot_positions_3_4():
    return rotated_dot(3, 4)


@claim("02.identity", "R(m w)q . R(n w)k - q . R((n-m) w)k over 1000 random cases (relative), at most", "0", tolerance=1e-10)
def identity():
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(2, 1000, 2))
    m, n = rng.integers(0, 4096, size=(2, 1000))
    w = rng.uniform(1e-4, 1.0, size=1000)
    both = np.sum(rotate_2d(q, m * w) * rotate_2d(k, n * w), axis=-1)
    relative = np.sum(q * rotate_2d(k, (n - m) * w), axis=-1)
    return float(np.max(np.abs(both - relative) / (1 + np.abs(both))))


@claim("02.cos_distance.2", "Dot of rotated [1,0] pairs at distance 2: cos 2", "-0.41614684")
def cos_distance_2():
    return rotated_dot(0, 2)


@claim("02.cos_distance.7", "Dot of rotated [1,0] pairs at distance 7: cos 7", "0.75390225")
def cos_distance_7():
    return rotated_dot(0, 7)


@claim("02.moving.both_shift_3", "Q at 1, K at 0, both moved by 3 (Q 4, K 3): dot", "0.54030231")
def moving_both_shift_3():
    return rotated_dot(4, 3)


@claim("02.moving.k_to_2", "Then K moves from 3 to 2 (distance 2): the dot crosses below 0", "-0.41614684")
def moving_k_to_2():
    return rotated_dot(4, 2)

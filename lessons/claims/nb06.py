"""Claims of notebook 06: the answers of the two numeric exercises."""

import numpy as np

from ..frequencies import angle_table, pair_frequencies
from ..rope import rope_rotate
from ._registry import claim
from .nb02 import rotated_dot


@claim("06.ex1.positions_2_3", "Exercise 1: Q = K = [1,0] at positions 2 and 3, frequency 1: dot", "0.54030231")
def _():
    return rotated_dot(2, 3)


@claim("06.ex1.positions_9_10", "Exercise 1: the same at positions 9 and 10", "0.54030231")
def _():
    return rotated_dot(9, 10)


@claim("06.ex2.angles", "Exercise 2: d = 4 at position 1, the two angles (rad)", ("1", "0.01"), tolerance=1e-12)
def _():
    return angle_table([1], pair_frequencies(4))[0]


@claim("06.ex2.length", "Exercise 2: the length of [1,0,1,0] after rotation, sqrt 2", "1.41421356")
def _():
    return float(np.linalg.norm(rope_rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [1])))

"""Claims of notebook 06: the answers of the lesson's two exercises (seed 002). Notebook 06 never
shows this table: its values are the answers of graded items, checked here by
``python -m lessons.l13``. (The first edition's two bug hunts, the cache reset and the layout,
are notebook 08's now; their numbers are its claims ``08.cache.*`` and ``08.split_half.d4``.)"""

import numpy as np

from ..frequencies import angle_table, pair_frequencies
from ..rope import rope_rotate
from ._registry import claim
from .nb02 import rotated_dot


@claim("06.ex1.positions_2_3", "The lesson's exercise 1: Q = K = [1,0] at positions 2 and 3, frequency 1: dot", "0.54030231")
def ex1_positions_2_3():
    return rotated_dot(2, 3)


@claim("06.ex1.positions_9_10", "The lesson's exercise 1: the same at positions 9 and 10", "0.54030231")
def ex1_positions_9_10():
    return rotated_dot(9, 10)


@claim("06.ex2.angles", "The lesson's exercise 2: d = 4 at position 1, the two angles (rad)", ("1", "0.01"), tolerance=1e-12)
def ex2_angles():
    return angle_table([1], pair_frequencies(4))[0]


@claim("06.ex2.length", "The lesson's exercise 2: the length of [1,0,1,0] after rotation, sqrt 2", "1.41421356")
def ex2_length():
    return float(np.linalg.norm(rope_rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [1])))

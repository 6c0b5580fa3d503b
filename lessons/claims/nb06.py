"""Claims of notebook 06: the answers of the lesson's two exercises (seed 002), and of the two
bug hunts the first edition asked in 06 (notebook 08's exercises now). Notebook 06 never shows
this table: its values are the answers of graded items, checked here by ``python -m lessons.l13``."""

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


@claim("06.ex4.cache_reset", "The cache-reset bug: the cache code that rotates the new query at position 0 gives [1, cos 1]/sqrt 2", ("0.70710678", "0.38205142"))
def ex4_cache_reset():
    from ..kv_cache import RotaryKVCache

    cache = RotaryKVCache(d=2)
    cache.append(np.array([[1.0, 0.0], [1.0, 0.0]]), np.zeros((2, 1)))
    return cache.scores(np.array([1.0, 0.0]), position=0)


@claim("06.ex4.cache_fixed", "The cache-reset bug fixed: the new query at position 2 gives [cos 2, cos 1]/sqrt 2", ("-0.29426025", "0.38205142"))
def ex4_cache_fixed():
    from ..kv_cache import RotaryKVCache

    cache = RotaryKVCache(d=2)
    cache.append(np.array([[1.0, 0.0], [1.0, 0.0]]), np.zeros((2, 1)))
    return cache.scores(np.array([1.0, 0.0]))


@claim("06.ex4.layout_fixed", "The layout bug fixed: [1,2,3,4] at position 1 in the split-half layout", ("-1.98411065", "1.95990067", "2.46237790", "4.01979967"))
def ex4_layout_fixed():
    return rope_rotate(np.array([[1.0, 2.0, 3.0, 4.0]]), [1.0], layout="split_half")[0]

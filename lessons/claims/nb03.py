"""Claims of notebook 03: many pairs, many speeds."""

import numpy as np

from ..frequencies import angle_table, pair_frequencies, pairs_under_one_turn
from ._registry import claim

# Distances at which the lesson counts the pairs of a 64-wide head still under one turn.
UNDER_ONE_TURN_D64 = {1: 32, 8: 31, 16: 28, 64: 23, 256: 19, 1000: 14, 4096: 9, 10000: 6, 60000: 0}


@claim("03.d4.frequencies", "d = 4: the two pair frequencies", ("1", "0.01"), tolerance=1e-12)
def d4_frequencies():
    return pair_frequencies(4)


@claim("03.d4.angles_at_1", "d = 4 at position 1: the pairs turn (rad)", ("1", "0.01"), tolerance=1e-12)
def d4_angles_at_1():
    return angle_table([1], pair_frequencies(4))[0]


@claim("03.d4.angles_at_10", "d = 4 at position 10: the pairs turn (rad)", ("10", "0.1"), tolerance=1e-12)
def d4_angles_at_10():
    return angle_table([10], pair_frequencies(4))[0]


@claim("03.d32.pairs", "d = 32 has this many pairs", 16)
def d32_pairs():
    return len(pair_frequencies(32))


@claim("03.d32.first_frequencies", "d = 32: the first four frequencies", ("1", "0.5623", "0.3162", "0.1778"))
def d32_first_frequencies():
    return pair_frequencies(32)[:4]


@claim("03.fastest_pair", "The pair with the highest frequency (the fastest) is pair", 0)
def fastest_pair():
    return int(np.argmax(pair_frequencies(128)))


@claim("03.d128.pair1.frequency", "d = 128: pair 1 has frequency", "0.8660")
def d128_pair1_frequency():
    return pair_frequencies(128)[1]


@claim("03.d128.pair1.degrees_at_2", "d = 128: pair 1 at position 2 has turned about (degrees)", "99", tolerance=0.5)
def d128_pair1_degrees_at_2():
    return np.degrees(2 * pair_frequencies(128)[1])


def _register_turn_counts():
    for distance, count in UNDER_ONE_TURN_D64.items():
        claim(
            f"03.d64.under_one_turn.{distance}",
            f"d = 64: pairs under one full turn at distance {distance}",
            count,
        )(lambda distance=distance: pairs_under_one_turn(distance, 64))


_register_turn_counts()

"""Claims of notebook 03: many pairs, many speeds."""

import numpy as np

from ..frequencies import angle_table, pair_frequencies, pairs_under_one_turn
from ..head import block_rotation_matrix, cosine_sum, pair_scores, roformer_bound
from ..rope import rope_rotate
from ..rotation import rotation_matrix
from ._registry import below, claim

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


# --------------------------------------------------------------------------- the whole head

BLOCK_D, BLOCK_POSITION = 8, 3
TWO_SPEEDS = (1.0, 0.1)  # the two pairs of the two-planes experiment (pairs 0 and 4 of d = 32)
DECAY_D = 128
DECAY_DISTANCES = (0, 2, 16, 256, 1024)


@claim("03.block.entries_outside_blocks", "d = 8, m = 3: nonzero entries of R_m outside its 2 x 2 diagonal blocks", 0)
def block_entries_outside_blocks():
    matrix = block_rotation_matrix(BLOCK_POSITION, BLOCK_D)
    inside = np.kron(np.eye(BLOCK_D // 2), np.ones((2, 2))).astype(bool)
    return int(np.count_nonzero(matrix[~inside]))


@claim("03.block.first_block", "d = 8, m = 3: the first block is R(3) = [[cos 3, -sin 3], [sin 3, cos 3]]", ("-0.98999250", "-0.14112001", "0.14112001", "-0.98999250"))
def block_first_block():
    return block_rotation_matrix(BLOCK_POSITION, BLOCK_D)[:2, :2].ravel()


@claim("03.block.equals_rope_rotate", "R_m x equals RoPE's rotation of x at position m (d = 8, m = 3): largest difference below 1e-12", True)
@below(1e-12)
def block_equals_rope_rotate():
    x = np.random.default_rng(3).normal(size=BLOCK_D)
    return float(np.max(np.abs(block_rotation_matrix(BLOCK_POSITION, BLOCK_D) @ x - rope_rotate(x[None, :], [BLOCK_POSITION])[0])))


@claim("03.block.score_is_sum_over_pairs", "(R_m q) . (R_n k) equals sum_i q_i^T R((n - m) omega_i) k_i (d = 64, m = 5, n = 17): difference below 1e-12", True)
@below(1e-12)
def block_score_is_sum_over_pairs():
    rng = np.random.default_rng(64)
    q, k, m, n = rng.normal(size=64), rng.normal(size=64), 5, 17
    whole = (block_rotation_matrix(m, 64) @ q) @ (block_rotation_matrix(n, 64) @ k)
    turns = rotation_matrix((n - m) * pair_frequencies(64))  # [32, 2, 2]
    by_pair = np.einsum("pi,pij,pj->p", q.reshape(-1, 2), turns, k.reshape(-1, 2))
    return abs(whole - by_pair.sum())


@claim("03.two_planes.start", "Two pairs (frequencies 1 and 0.1), content [1, 0], Q at 2 and K at 0: the shares of pair 0 and pair 1, and the total", ("-0.4161", "0.9801", "0.5639"))
def two_planes_start():
    shares = pair_scores([1, 0, 1, 0], [1, 0, 1, 0], 2, 0, inv_freq=TWO_SPEEDS)
    return (*shares, shares.sum())


@claim("03.two_planes.move_both", "Moving Q and K both by 5 (Q at 7, K at 5) changes no share: largest change below 1e-12", True)
@below(1e-12)
def two_planes_move_both():
    before = pair_scores([1, 0, 1, 0], [1, 0, 1, 0], 2, 0, inv_freq=TWO_SPEEDS)
    after = pair_scores([1, 0, 1, 0], [1, 0, 1, 0], 7, 5, inv_freq=TWO_SPEEDS)
    return float(np.max(np.abs(after - before)))


@claim("03.two_planes.move_only_k", "Two pairs as above, then only K moved by 1 (Q at 7, K at 6): the shares and the total", ("0.5403", "0.9950", "1.5353"))
def two_planes_move_only_k():
    shares = pair_scores([1, 0, 1, 0], [1, 0, 1, 0], 7, 6, inv_freq=TWO_SPEEDS)
    return (*shares, shares.sum())


@claim("03.decay.cosine_sum", "d = 128: sum_i cos(distance * omega_i) at distances 0, 2, 16, 256, 1024", ("64", "57.3819", "39.7017", "20.5248", "13.0843"))
def decay_cosine_sum():
    return cosine_sum(DECAY_DISTANCES, DECAY_D)


@claim("03.decay.roformer_bound", "d = 128: RoFormer's decay quantity, mean over j of |sum_{k<j} exp(i distance omega_k)|, at the same distances", ("32.5", "28.9560", "15.7750", "6.5431", "4.0241"))
def decay_roformer_bound():
    return roformer_bound(DECAY_DISTANCES, DECAY_D)


@claim("03.decay.score_is_twice_the_sum", "All-ones q and k, d = 128, the query at 2000 and the key at 2000 - distance: the score is 2 * sum_i cos(distance * omega_i) (difference below 1e-9)", True)
@below(1e-9)
def decay_score_is_twice_the_sum():
    ones = np.ones((1, DECAY_D))
    q = rope_rotate(ones, [2000])[0]
    scores = [q @ rope_rotate(ones, [2000 - delta])[0] for delta in DECAY_DISTANCES]
    return float(np.max(np.abs(np.array(scores) - 2 * cosine_sum(DECAY_DISTANCES, DECAY_D))))


@claim("03.decay.one_pair_returns", "One pair never fades: pair 0 (frequency 1) at distance 710 scores cos 710", "1.0000")
def decay_one_pair_returns():
    return float(np.cos(710 * pair_frequencies(DECAY_D)[0]))

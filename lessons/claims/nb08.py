"""Claims of notebook 08: layouts, caches and five silent failures."""

import numpy as np

from ..attention import softmax
from ..frequencies import pair_frequencies
from ..kv_cache import RotaryKVCache
from ..rope import (
    apply_rope,
    interleaved_to_split_half_permutation,
    rope_rotate,
    split_half_to_interleaved,
)
from ..scaling import linear_frequencies, unseen_angle_pairs
from ._registry import below, claim

X4 = np.array([[1.0, 2.0, 3.0, 4.0]])
ONES = np.array([[1.0, 0.0], [1.0, 0.0]])  # two raw keys [1, 0] for the d = 2 cache
SHIFT = 5


def seeded_heads(seed=8, T=6, d=8):
    """q, k, v of one head [T, d] drawn from a seeded normal: the pitfalls' data."""
    q, k, v = np.random.default_rng(seed).normal(size=(3, T, d))
    return q, k, v


def seeded_projection(seed=8, T=6, d_model=16, d=8):
    """Token vectors X [T, d_model] and q/k projection weights trained for the interleaved layout."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(T, d_model))
    w_q, w_k = rng.normal(size=(2, d_model, d)) / 4
    return x, w_q, w_k


def projected_scores(w_q, w_k, layout, positions=None, seed=8):
    x, _, _ = seeded_projection(seed)
    q, k = apply_rope(x @ w_q, x @ w_k, positions, layout=layout)
    return q @ k.T / np.sqrt(q.shape[-1])


def read(positions, *, rotate_v=False, k_layout="interleaved", base=10000.0, key_twice=False):
    """Scores and output of the seeded head, with one of the mistakes switched on."""
    q, k, v = seeded_heads()
    qr = rope_rotate(q, positions, base=base)
    kr = rope_rotate(k, positions, layout=k_layout, base=base)
    if key_twice:
        kr = rope_rotate(kr, positions, base=base)
    v = rope_rotate(v, positions) if rotate_v else v
    scores = qr @ kr.T / np.sqrt(q.shape[-1])
    return scores, softmax(scores) @ v


def shift_change(**mistake):
    """The shift check: the largest change of scores and output when every position moves by 5."""
    positions = np.arange(6)
    s0, o0 = read(positions, **mistake)
    s1, o1 = read(positions + SHIFT, **mistake)
    return max(float(np.max(np.abs(s1 - s0))), float(np.max(np.abs(o1 - o0))))


def correct_change(**mistake):
    """Largest change of scores and output against the correct read."""
    positions = np.arange(6)
    s0, o0 = read(positions)
    s1, o1 = read(positions, **mistake)
    return max(float(np.max(np.abs(s1 - s0))), float(np.max(np.abs(o1 - o0))))


def two_key_cache():
    cache = RotaryKVCache(d=2)
    cache.append(ONES, np.zeros((2, 1)))
    return cache


def double_rotated_scores(start=0):
    """Keys [1,0] cached rotated at start, start+1, rotated AGAIN when read; query at start+2."""
    positions = [start, start + 1]
    cached = rope_rotate(ONES, positions)
    again = rope_rotate(cached, positions)
    query = rope_rotate(np.array([[1.0, 0.0]]), [start + 2])[0]
    return again @ query / np.sqrt(2)


# ---- layouts -------------------------------------------------------------------------------

@claim("08.split_half.d4", "d = 4, x = [1,2,3,4] at position 1, split-half layout", ("-1.98411065", "1.95990067", "2.46237790", "4.01979967"))
def split_half_d4():
    return rope_rotate(X4, [1], layout="split_half")[0]


@claim("08.split_half.formula", "... equals [cos1 - 3 sin1, 2 cos0.01 - 4 sin0.01, sin1 + 3 cos1, 2 sin0.01 + 4 cos0.01]: difference: below 1e-12", True)
@below(1e-12)
def split_half_formula():
    c1, s1, c2, s2 = np.cos(1), np.sin(1), np.cos(0.01), np.sin(0.01)
    formula = np.array([c1 - 3 * s1, 2 * c2 - 4 * s2, s1 + 3 * c1, 2 * s2 + 4 * c2])
    return float(np.max(np.abs(rope_rotate(X4, [1], layout="split_half")[0] - formula)))


@claim("08.interleaved.d4", "The same stored x rotated with interleaved pairs instead", ("-1.14263966", "1.92207560", "2.95985067", "4.02979950"))
def interleaved_d4():
    return rope_rotate(X4, [1], layout="interleaved")[0]


@claim("08.permutation.d4", "d = 4: split-half order takes interleaved coordinates", ("0", "2", "1", "3"))
def permutation_d4():
    return interleaved_to_split_half_permutation(4)


@claim("08.permutation.commutes", "Permute, rotate split-half, permute back = rotate interleaved (random d = 64 tensors): difference: below 1e-12", True)
@below(1e-12)
def permutation_commutes():
    x = np.random.default_rng(0).normal(size=(2, 3, 50, 64))
    positions = np.arange(50) * 13
    p = interleaved_to_split_half_permutation(64)
    via_split = split_half_to_interleaved(rope_rotate(x[..., p], positions, layout="split_half"))
    return float(np.max(np.abs(via_split - rope_rotate(x, positions, layout="interleaved"))))


@claim("08.weights.mismatch", "Interleaved-trained weights run by split-half code: largest score change", "3.3522")
def weights_mismatch():
    _, w_q, w_k = seeded_projection()
    return float(np.max(np.abs(projected_scores(w_q, w_k, "split_half") - projected_scores(w_q, w_k, "interleaved"))))


@claim("08.weights.position_0_hides_it", "At position 0 the two layouts give the same scores: difference: below 1e-12", True)
@below(1e-12)
def weights_position_0_hides_it():
    _, w_q, w_k = seeded_projection()
    zeros = np.zeros(6)
    return float(np.max(np.abs(projected_scores(w_q, w_k, "split_half", zeros) - projected_scores(w_q, w_k, "interleaved", zeros))))


@claim("08.weights.permuted_fix", "Permuting the weight columns first: largest score change: below 1e-12", True)
@below(1e-12)
def weights_permuted_fix():
    _, w_q, w_k = seeded_projection()
    p = interleaved_to_split_half_permutation(8)
    return float(np.max(np.abs(projected_scores(w_q[:, p], w_k[:, p], "split_half") - projected_scores(w_q, w_k, "interleaved"))))


# ---- KV cache ------------------------------------------------------------------------------

@claim("08.cache.correct", "Keys at 0 and 1 cached, query at 2 (d = 2, all [1,0]): [cos2, cos1]/sqrt2", ("-0.29426025", "0.38205142"))
def cache_correct():
    return two_key_cache().scores(np.array([1.0, 0.0]))


@claim("08.cache.reset", "Query position wrongly reset to 0: [1, cos1]/sqrt2", ("0.70710678", "0.38205142"))
def cache_reset():
    return two_key_cache().scores(np.array([1.0, 0.0]), position=0)


@claim("08.cache.double", "Cached keys rotated again when read: [cos2, cos0]/sqrt2", ("-0.29426025", "0.70710678"))
def cache_double():
    return double_rotated_scores()


@claim("08.cache.double_shifted", "The same mistake with every position moved by 5", ("-0.70003041", "0.20057945"))
def cache_double_shifted():
    return double_rotated_scores(SHIFT)


@claim("08.cache.correct_shifted", "The correct cache with every position moved by 5: change: below 1e-12", True)
@below(1e-12)
def cache_correct_shifted():
    query = rope_rotate(np.array([[1.0, 0.0]]), [SHIFT + 2])[0]
    shifted = rope_rotate(ONES, [SHIFT, SHIFT + 1]) @ query / np.sqrt(2)
    return float(np.max(np.abs(shifted - two_key_cache().scores(np.array([1.0, 0.0])))))


# ---- the five pitfalls ---------------------------------------------------------------------

@claim("08.pitfall1.unseen_pairs", "d = 64 trained on 2048 positions, run on 8192: pairs meeting angles never seen in training", 11)
def pitfall1_unseen_pairs():
    inv = pair_frequencies(64)
    return int(unseen_angle_pairs(inv, 2048, inv, 8192).sum())


@claim("08.pitfall1.linear_fix", "... with linear interpolation s = 4: such pairs", 0)
def pitfall1_linear_fix():
    return int(unseen_angle_pairs(pair_frequencies(64), 2048, linear_frequencies(64, 4), 8192).sum())


@claim("08.pitfall2.change", "Rotating V: largest change of the attention output", "1.9505")
def pitfall2_change():
    return correct_change(rotate_v=True)


@claim("08.pitfall2.shift", "Rotating V: the shift check moves the output by", "0.9788")
def pitfall2_shift():
    return shift_change(rotate_v=True)


@claim("08.correct.shift", "Correct code: the shift check moves scores and output by: below 1e-12", True)
@below(1e-12)
def correct_shift():
    return shift_change()


@claim("08.pitfall3.change", "Q interleaved, K split-half: largest change of scores or output", "3.3847")
def pitfall3_change():
    return correct_change(k_layout="split_half")


@claim("08.pitfall3.shift", "Q interleaved, K split-half: the shift check moves the scores by", "2.7335")
def pitfall3_shift():
    return shift_change(k_layout="split_half")


@claim("08.pitfall4.change", "A cached key rotated twice: largest change of scores or output", "2.5219")
def pitfall4_change():
    return correct_change(key_twice=True)


@claim("08.pitfall4.shift", "A cached key rotated twice: the shift check moves them by", "2.2019")
def pitfall4_shift():
    return shift_change(key_twice=True)


@claim("08.pitfall5.change", "Base 500000 at inference for a model trained with 10000: largest change", "0.2479")
def pitfall5_change():
    return correct_change(base=500000.0)


@claim("08.pitfall5.shift_blind", "... and the shift check does not see it: change: below 1e-12", True)
@below(1e-12)
def pitfall5_shift_blind():
    return shift_change(base=500000.0)

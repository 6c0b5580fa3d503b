"""Claims of notebook 08: layouts, caches and seven silent failures."""

import numpy as np

from ..attention import softmax
from ..frequencies import pair_frequencies
from ..kv_cache import RotaryKVCache, positions_from_attention_mask
from ..precision import (
    angles_in,
    positions_rounding_to,
    rotate_with_angles,
    round_to,
    to_bfloat16,
    to_float16,
)
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


def read(
    positions,
    *,
    rotate_v=False,
    k_layout=None,
    base=10000.0,
    key_twice=False,
    layout="interleaved",
    sign=1.0,
    angle_dtype=None,
    rotary_dim=None,
):
    """Scores and output of the seeded head, with one of the mistakes switched on.

    ``layout`` rotates both q and k with that layout (a checkpoint trained interleaved run in
    split-half code), ``sign=-1`` turns both the other way, ``angle_dtype`` computes the angles
    in a low precision, ``rotary_dim`` rotates only the first dims.
    """
    q, k, v = seeded_heads()
    positions = sign * np.asarray(positions, dtype=np.float64)
    if angle_dtype is not None:
        angles = angles_in(angle_dtype, positions, q.shape[-1])
        qr, kr = rotate_with_angles(q, angles), rotate_with_angles(k, angles)
    else:
        qr = rope_rotate(q, positions, base=base, layout=layout, rotary_dim=rotary_dim)
        kr = rope_rotate(k, positions, layout=k_layout or layout,
                         base=base, rotary_dim=rotary_dim)
    if key_twice:
        kr = rope_rotate(kr, positions, base=base)
    v = rope_rotate(v, positions) if rotate_v else v
    scores = qr @ kr.T / np.sqrt(q.shape[-1])
    return scores, softmax(scores) @ v


def shift_change(start=0, **mistake):
    """The shift check: the largest change of scores and output when every position moves by 5."""
    positions = np.arange(6) + start
    s0, o0 = read(positions, **mistake)
    s1, o1 = read(positions + SHIFT, **mistake)
    return max(float(np.max(np.abs(s1 - s0))), float(np.max(np.abs(o1 - o0))))


def correct_change(start=0, reference=None, **mistake):
    """Largest change of scores and output against the correct read (``reference``: its settings)."""
    positions = np.arange(6) + start
    s0, o0 = read(positions, **(reference or {}))
    s1, o1 = read(positions, **mistake)
    return max(float(np.max(np.abs(s1 - s0))), float(np.max(np.abs(o1 - o0))))


# The partial-rotary checkpoint of failure 7: the first 4 of 8 dims rotate (rotary_pct 0.5).
PARTIAL = {"rotary_dim": 4}
LOW_PRECISION_START = 4090


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


# ---- the layout bug and the shift check ----------------------------------------------------

@claim("08.weights.shift_blind", "Interleaved-trained weights run by split-half code: the shift check (all positions + 5) moves the scores by: below 1e-12", True)
@below(1e-12)
def weights_shift_blind():
    _, w_q, w_k = seeded_projection()
    at_0 = projected_scores(w_q, w_k, "split_half", np.arange(6))
    shifted = projected_scores(w_q, w_k, "split_half", np.arange(6) + SHIFT)
    return float(np.max(np.abs(shifted - at_0)))


# ---- per-head weight permutation -----------------------------------------------------------

N_HEADS, HEAD_D, D_MODEL = 2, 4, 16


def two_head_weights(seed=11):
    """Tokens [6, 16] and q/k projections in PyTorch's [out, in] layout for 2 heads of width 4."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(6, D_MODEL))
    w_q, w_k = rng.normal(size=(2, N_HEADS * HEAD_D, D_MODEL)) / 4
    return x, w_q, w_k


def permute_rows_per_head(w, n_heads):
    """Meta -> Hugging Face: view [n_heads, d/2, 2, d_model], swap the middle axes, reshape back."""
    out, d_model = w.shape
    return w.reshape(n_heads, out // n_heads // 2, 2, d_model).transpose(0, 2, 1, 3).reshape(out, d_model)


def two_head_scores(w_q, w_k, layout):
    """Scores [2 heads, 6, 6] of the two-head projection, positions 0..5."""
    x, _, _ = two_head_weights()
    q = (x @ w_q.T).reshape(6, N_HEADS, HEAD_D).transpose(1, 0, 2)
    k = (x @ w_k.T).reshape(6, N_HEADS, HEAD_D).transpose(1, 0, 2)
    qr, kr = apply_rope(q, k, layout=layout)
    return qr @ np.swapaxes(kr, -1, -2) / np.sqrt(HEAD_D)


@claim("08.heads.row_order", "Two heads of width 4: the per-head permutation takes the rows", ("0", "2", "1", "3", "4", "6", "5", "7"), tolerance=0)
def heads_row_order():
    rows = np.arange(N_HEADS * HEAD_D, dtype=np.float64)[:, None]
    return permute_rows_per_head(rows, N_HEADS)[:, 0]


@claim("08.heads.per_head_fix", "Rows permuted within each head, split-half code: change against the interleaved original: below 1e-12", True)
@below(1e-12)
def heads_per_head_fix():
    _, w_q, w_k = two_head_weights()
    fixed = two_head_scores(permute_rows_per_head(w_q, N_HEADS), permute_rows_per_head(w_k, N_HEADS), "split_half")
    return float(np.max(np.abs(fixed - two_head_scores(w_q, w_k, "interleaved"))))


@claim("08.heads.whole_matrix_wrong", "Rows permuted across the whole 8-row matrix instead: largest score change", "1.8845")
def heads_whole_matrix_wrong():
    _, w_q, w_k = two_head_weights()
    p = interleaved_to_split_half_permutation(N_HEADS * HEAD_D)
    wrong = two_head_scores(w_q[p], w_k[p], "split_half")
    return float(np.max(np.abs(wrong - two_head_scores(w_q, w_k, "interleaved"))))


# ---- cache: padding, the sign of the reset, moving tokens ----------------------------------

@claim("08.padding.positions", "Left padding, mask [0,0,1,1,1]: positions as generate() builds them", ("1", "1", "0", "1", "2"), tolerance=0)
def padding_positions():
    return positions_from_attention_mask([0, 0, 1, 1, 1])


@claim("08.padding.no_score_change", "Whatever value the padded slots hold (1 or 0), the real tokens' attention output changes by: below 1e-12", True)
@below(1e-12)
def padding_no_score_change():
    mask = np.array([0, 0, 1, 1, 1])
    q, k, v = seeded_heads(T=5)
    outputs = []
    for fill in (1, 0):
        positions = np.where(mask == 1, np.cumsum(mask) - 1, fill)
        qr, kr = apply_rope(q, k, positions)
        s = qr @ kr.T / np.sqrt(q.shape[-1])
        allowed = np.tril(np.ones((5, 5), dtype=bool)) & (mask[None, :] == 1)
        s = np.where(allowed, s, -np.inf)[mask == 1]   # the real tokens' queries
        outputs.append(softmax(s) @ v)
    return float(np.max(np.abs(outputs[0] - outputs[1])))


def sign_cache():
    """Keys [1,0] at 0 and [0,1] at 1 cached; the sign example reads the key at 1."""
    cache = RotaryKVCache(d=2)
    cache.append(np.array([[1.0, 0.0], [0.0, 1.0]]), np.zeros((2, 1)))
    return cache


@claim("08.cache.reset_sign", "q = [1,0] at 2, k = [0,1] at 1, scaled by 1/sqrt 2: correct, then with the query reset to 0", ("0.59500984", "-0.59500984"))
def cache_reset_sign():
    cache, query = sign_cache(), np.array([1.0, 0.0])
    return cache.scores(query)[1], cache.scores(query, position=0)[1]


@claim("08.cache.reset_sign_dot", "... the same before the 1/sqrt 2 scaling: sin 1 and -sin 1", ("0.84147098", "-0.84147098"))
def cache_reset_sign_dot():
    return np.array(cache_reset_sign()) * np.sqrt(2)


@claim("08.cache.moved_key", "A cached key moved from position 7 to 3 and re-rotated by -4 equals the raw key rotated at 3: difference: below 1e-12", True)
@below(1e-12)
def cache_moved_key():
    raw = seeded_heads()[1][:1]
    re_rotated = rope_rotate(rope_rotate(raw, [7]), [3 - 7])
    return float(np.max(np.abs(re_rotated - rope_rotate(raw, [3]))))


# ---- the wider shift-blind failures ---------------------------------------------------------

@claim("08.layout_bug.change", "The seeded head read with split-half code, trained interleaved: largest change", "2.7326")
def layout_bug_change():
    return correct_change(layout="split_half")


@claim("08.layout_bug.shift_blind", "... and the shift check moves it by: below 1e-12", True)
@below(1e-12)
def layout_bug_shift_blind():
    return shift_change(layout="split_half")


@claim("08.sign_flip.change", "Both q and k turned the other way: largest change", "2.1201")
def sign_flip_change():
    return correct_change(sign=-1.0)


@claim("08.sign_flip.shift_blind", "... and the shift check moves it by: below 1e-12", True)
@below(1e-12)
def sign_flip_shift_blind():
    return shift_change(sign=-1.0)


# ---- failure 6: angles in low precision ----------------------------------------------------

@claim("08.pitfall6.bf16_block", "Integer positions that bfloat16 stores as 4096: first and last", ("4088", "4112"), tolerance=0)
def pitfall6_bf16_block():
    block = positions_rounding_to(4096, "bfloat16")
    assert np.array_equal(block, np.arange(block[0], block[-1] + 1))
    return block[0], block[-1]


@claim("08.pitfall6.bf16_4090_4112", "Every position 4090 .. 4112 becomes 4096 in bfloat16", True)
def pitfall6_bf16_4090_4112():
    return bool(np.all(to_bfloat16(np.arange(4090, 4113)) == 4096))


@claim("08.pitfall6.bf16_spacing", "Gap between neighbouring bfloat16 values just below and just above 4096", ("16", "32"), tolerance=0)
def pitfall6_bf16_spacing():
    values = np.unique(to_bfloat16(np.arange(3900.0, 4300.0)))
    return int(np.diff(values[values <= 4096])[-1]), int(np.diff(values[values >= 4096])[0])


@claim("08.pitfall6.bf16_spacing_angles", "Gap between neighbouring bfloat16 values from 128 to 256: an angle there is kept to the nearest radian", 1, tolerance=0)
def pitfall6_bf16_spacing_angles():
    values = np.unique(to_bfloat16(np.linspace(128.0, 256.0, 2049)))
    gaps = np.unique(np.diff(values))
    if len(gaps) != 1:
        raise AssertionError(f"bfloat16 gaps from 128 to 256 are not all equal: {gaps}")
    return int(gaps[0])


@claim("08.pitfall6.bf16_first_inexact", "The first integer bfloat16 cannot hold exactly (every integer up to 256 it holds)", 257, tolerance=0)
def pitfall6_bf16_first_inexact():
    n = np.arange(1.0, 1025.0)
    return int(n[to_bfloat16(n) != n][0])


@claim("08.pitfall6.cos", "cos(4100) and cos(bfloat16(4100))", ("-0.97554988", "0.80399061"))
def pitfall6_cos():
    return np.cos(4100.0), np.cos(float(to_bfloat16(4100.0)))


@claim("08.pitfall6.float16", "float16 stores 4097 as", "4096")
def pitfall6_float16():
    return float(to_float16(4097.0))


@claim("08.pitfall6.change", "Angles in bfloat16, six tokens at 4090 .. 4095: largest change against the float64 reference", "3.3293")
def pitfall6_change():
    return correct_change(start=LOW_PRECISION_START, angle_dtype="bfloat16")


@claim("08.pitfall6.shift_blind", "... and the shift check there moves it by: below 1e-12", True)
@below(1e-12)
def pitfall6_shift_blind():
    return shift_change(start=LOW_PRECISION_START, angle_dtype="bfloat16")


@claim("08.pitfall6.float32_distinct", "Angles in float32 at positions 4090 .. 4095: all distinct", True)
def pitfall6_float32_distinct():
    return len(np.unique(angles_in("float32", np.arange(4090, 4096), 8)[:, 0])) == 6


# ---- failure 7: a rotary width that does not match the checkpoint ---------------------------

@claim("08.pitfall7.change", "A checkpoint rotating 4 of 8 dims, read with full-width rotation: largest change", "0.3550")
def pitfall7_change():
    return correct_change(reference=PARTIAL)


@claim("08.pitfall7.shift_blind", "... and the shift check moves the full-width code by: below 1e-12", True)
@below(1e-12)
def pitfall7_shift_blind():
    return shift_change()


@claim("08.pitfall6.significant_bits", "Significant bits kept by float32, float16 and bfloat16 (the first integer they cannot hold is 2^bits + 1)", ("24", "11", "8"), tolerance=0)
def pitfall6_significant_bits():
    def bits(dtype):
        odd = 2.0 ** np.arange(1, 30) + 1          # 3, 5, 9, ...: the first one lost is 2^bits + 1
        return int(np.log2(odd[round_to(odd, dtype) != odd][0] - 1))

    return [bits(dtype) for dtype in ("float32", "float16", "bfloat16")]

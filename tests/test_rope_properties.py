"""Properties of RoPE that must hold for every width, position, value, layout and dtype.

Hypothesis draws the inputs; every comparison uses a tolerance scaled to the dtype's
precision and to the size of the angles involved (an angle p * omega computed in float64 is
off by about p * 1e-16 radians), never ``==`` on computed floats. Pure reorderings
(permutations, pass-through dims) move numbers without arithmetic and are compared exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lessons.attention import attention, softmax
from lessons.rope import (
    apply_rope,
    interleaved_to_split_half,
    interleaved_to_split_half_permutation,
    rope_rotate,
    split_half_to_interleaved,
    split_half_to_interleaved_permutation,
)
from lessons.rotation import rotate_2d, rotation_matrix

LAYOUTS = ("interleaved", "split_half")
DTYPES = (np.float32, np.float64)
MAX_POSITION = 100_000

layouts = st.sampled_from(LAYOUTS)
dtypes = st.sampled_from(DTYPES)
widths = st.integers(1, 12).map(lambda h: 2 * h) | st.sampled_from([64, 128])
bases = st.sampled_from([10_000.0, 500_000.0, 100.0]) | st.floats(2.0, 1e7)


def eps(dtype) -> float:
    return float(np.finfo(dtype).eps)


def angle_error(max_position) -> float:
    """Rounding error of an angle p * omega (omega <= 1) computed in float64, in radians."""
    return 4 * eps(np.float64) * (1.0 + float(max_position))


@st.composite
def qk_inputs(draw, *, same_dtype=True):
    """(q, k, positions, layout, dtype, base): q, k of shape [*lead, T, d]."""
    dtype = draw(dtypes)
    d = draw(widths)
    T = draw(st.integers(1, 6))
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    shape = (*lead, T, d)
    elements = st.floats(-100, 100, allow_nan=False, allow_infinity=False, width=32)
    q = draw(hnp.arrays(dtype, shape, elements=elements))
    k = draw(hnp.arrays(dtype, shape, elements=elements))
    positions = draw(hnp.arrays(np.int64, T, elements=st.integers(0, MAX_POSITION)))
    return q, k, positions, draw(layouts), dtype, draw(bases)


def scores(q, k):
    return q.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64)


def score_tolerance(q, k, dtype, max_position) -> float:
    """Largest rounding error expected in a score of rotated q and k."""
    size = float(np.max(np.linalg.norm(q.astype(np.float64), axis=-1), initial=0.0)) * float(
        np.max(np.linalg.norm(k.astype(np.float64), axis=-1), initial=0.0)
    )
    d = q.shape[-1]
    return (8 * d * eps(dtype) + 4 * angle_error(max_position)) * size + 1e-300


# --------------------------------------------------------------------------- lengths kept


@given(qk_inputs())
def test_norms_are_kept(case):
    q, k, positions, layout, dtype, base = case
    qr, kr = apply_rope(q, k, positions, layout=layout, base=base)
    for before, after in ((q, qr), (k, kr)):
        n0 = np.linalg.norm(before.astype(np.float64), axis=-1)
        n1 = np.linalg.norm(after.astype(np.float64), axis=-1)
        np.testing.assert_allclose(n1, n0, rtol=16 * eps(dtype), atol=1e-30)


# --------------------------------------------------------------------------- relative position


@given(qk_inputs(), st.integers(-MAX_POSITION // 2, MAX_POSITION))
def test_scores_unchanged_when_every_position_shifts(case, shift):
    q, k, positions, layout, dtype, base = case
    assume(positions.min() + shift >= 0)
    qr, kr = apply_rope(q, k, positions, layout=layout, base=base)
    qs, ks = apply_rope(q, k, positions + shift, layout=layout, base=base)
    tol = score_tolerance(q, k, dtype, positions.max() + abs(shift))
    np.testing.assert_allclose(scores(qs, ks), scores(qr, kr), rtol=0, atol=tol)


@given(qk_inputs(), st.integers(1, MAX_POSITION))
def test_shift_moves_the_rotated_vectors_by_the_chord(case, shift):
    """The tables move with the shift; only their products stay (REFERENCE_FORMULAS.md).

    Pair 0 (frequency 1) turns by ``shift`` more radians, so its 2D part moves by the chord
    2 |sin(shift / 2)| |pair| -- not zero unless the shift is a whole number of turns.
    """
    q, k, positions, layout, dtype, base = case
    d = q.shape[-1]
    second = 1 if layout == "interleaved" else d // 2
    qr, _ = apply_rope(q, k, positions, layout=layout, base=base)
    qs, _ = apply_rope(q, k, positions + shift, layout=layout, base=base)
    pair = lambda x: x[..., [0, second]].astype(np.float64)  # noqa: E731
    moved = np.linalg.norm(pair(qs) - pair(qr), axis=-1)
    chord = 2 * abs(np.sin(shift / 2)) * np.linalg.norm(pair(q), axis=-1)
    scale = float(np.max(np.abs(q), initial=0.0))
    tol = (8 * eps(dtype) + 4 * angle_error(positions.max() + shift)) * scale + 1e-300
    np.testing.assert_allclose(moved, chord, rtol=0, atol=tol)


@given(
    st.floats(-1e4, 1e4, allow_nan=False),
    st.floats(-1e4, 1e4, allow_nan=False),
)
def test_rotation_matrix_transpose_times_rotation_is_the_difference(m, n):
    rm, rn = rotation_matrix(m), rotation_matrix(n)
    tol = 8 * eps(np.float64) * (1 + abs(m) + abs(n))
    np.testing.assert_allclose(rm.T @ rn, rotation_matrix(n - m), rtol=0, atol=tol)
    np.testing.assert_allclose(rm @ rn, rotation_matrix(m + n), rtol=0, atol=tol)
    np.testing.assert_allclose(rm.T @ rm, np.eye(2), rtol=0, atol=8 * eps(np.float64))


@given(hnp.arrays(np.float64, st.integers(1, 5), elements=st.floats(-1e3, 1e3)))
def test_rotation_matrix_of_an_array_stacks_matrices(angles):
    r = rotation_matrix(angles)
    assert r.shape == angles.shape + (2, 2)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, rtol=0, atol=1e-12)
    for a, m in zip(angles, r, strict=True):
        np.testing.assert_allclose(m @ [1.0, 0.0], [np.cos(a), np.sin(a)], rtol=0, atol=1e-15)


@given(
    hnp.arrays(np.float64, 2, elements=st.floats(-100, 100)),
    hnp.arrays(np.float64, 2, elements=st.floats(-100, 100)),
    st.integers(0, MAX_POSITION),
    st.integers(0, MAX_POSITION),
    st.floats(1e-4, 1.0),
)
def test_rotated_dot_depends_on_the_distance_only(q, k, m, n, w):
    """R(m w) q . R(n w) k = q . R((n - m) w) k (the identity of notebook 02)."""
    both = rotate_2d(q, m * w) @ rotate_2d(k, n * w)
    relative = q @ rotate_2d(k, (n - m) * w)
    tol = 8 * angle_error(max(m, n)) * (1 + np.linalg.norm(q) * np.linalg.norm(k))
    assert abs(both - relative) <= tol


# --------------------------------------------------------------------------- layouts


@given(widths)
def test_layout_permutations_are_inverse_and_follow_the_formula(d):
    to_split = interleaved_to_split_half_permutation(d)
    to_inter = split_half_to_interleaved_permutation(d)
    np.testing.assert_array_equal(to_split[to_inter], np.arange(d))
    np.testing.assert_array_equal(to_inter[to_split], np.arange(d))
    x = np.arange(d, dtype=np.float64) * 10 + 1  # distinct values, exact
    x_split = x[to_split]
    for t in (0, 1):
        for i in range(d // 2):
            assert x_split[t * d // 2 + i] == x[2 * i + t]


@given(qk_inputs())
def test_split_half_and_interleaved_agree_under_the_permutation(case):
    q, _, positions, _, dtype, base = case
    direct = rope_rotate(q, positions, layout="interleaved", base=base)
    via_split = split_half_to_interleaved(
        rope_rotate(interleaved_to_split_half(q), positions, layout="split_half", base=base)
    )
    assert via_split.dtype == direct.dtype == dtype
    scale = float(np.max(np.abs(q), initial=0.0))
    np.testing.assert_allclose(via_split, direct, rtol=0, atol=4 * eps(dtype) * scale + 1e-300)
    # and the permutations are inverses on the data too (pure reordering: exact)
    np.testing.assert_array_equal(split_half_to_interleaved(interleaved_to_split_half(q)), q)


@given(
    st.integers(2, 32).map(lambda h: 2 * h),
    st.integers(2, 8),
    st.integers(0, 2**32 - 1),
    dtypes,
)
def test_mixing_layouts_changes_the_scores(d, T, seed, dtype):
    """Loading one layout into code of the other keeps every shape and changes scores."""
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(2, 1, T, d)).astype(dtype)
    positions = np.arange(T) * 3 + int(rng.integers(0, 1000))
    qi, ki = apply_rope(q, k, positions, layout="interleaved")
    qs, ks = apply_rope(q, k, positions, layout="split_half")
    assert qi.shape == qs.shape == q.shape
    diff = np.max(np.abs(scores(qi, ki) - scores(qs, ks)))
    assert diff > 100 * score_tolerance(q, k, dtype, positions.max())


# --------------------------------------------------------------------------- partial rotary


@given(qk_inputs(), st.data())
def test_rotary_dim_below_width_passes_the_rest_through(case, data):
    q, _, positions, layout, dtype, base = case
    d = q.shape[-1]
    rotary_dim = 2 * data.draw(st.integers(1, d // 2), label="rotary_dim / 2")
    out = rope_rotate(q, positions, layout=layout, base=base, rotary_dim=rotary_dim)
    assert out.shape == q.shape and out.dtype == dtype
    np.testing.assert_array_equal(out[..., rotary_dim:], q[..., rotary_dim:])  # untouched: exact
    alone = rope_rotate(np.ascontiguousarray(q[..., :rotary_dim]), positions, layout=layout, base=base)
    scale = float(np.max(np.abs(q), initial=0.0))
    np.testing.assert_allclose(out[..., :rotary_dim], alone, rtol=0, atol=4 * eps(dtype) * scale + 1e-300)


# --------------------------------------------------------------------------- dtypes


@given(qk_inputs())
def test_float32_stays_float32_and_matches_float64(case):
    q, k, positions, layout, dtype, base = case
    qr, kr = apply_rope(q, k, positions, layout=layout, base=base)
    assert qr.dtype == kr.dtype == dtype
    assert qr.shape == kr.shape == q.shape
    q64, k64 = apply_rope(q.astype(np.float64), k.astype(np.float64), positions, layout=layout, base=base)
    assert q64.dtype == np.float64
    scale = float(np.max(np.abs(q), initial=0.0))
    np.testing.assert_allclose(qr, q64, rtol=0, atol=4 * eps(dtype) * scale + 1e-300)


@pytest.mark.parametrize("source", [np.int64, np.int32, np.float16, np.bool_, "list"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_other_inputs_become_float64(source, layout):
    base = np.array([[[1, 0, 2, 1], [0, 1, 1, 3], [1, 1, 0, 0]]])
    x = base.tolist() if source == "list" else base.astype(source)
    out = rope_rotate(x, [3, 4, 9], layout=layout)
    assert out.dtype == np.float64
    expected = rope_rotate(np.asarray(x, dtype=np.float64), [3, 4, 9], layout=layout)
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)
    qr, kr = apply_rope(x, x, [3, 4, 9], layout=layout)
    assert qr.dtype == kr.dtype == np.float64


@given(qk_inputs())
def test_every_pair_is_turned_by_the_2d_rotation(case):
    """rope_rotate equals rotate_2d (notebook 01) applied pair by pair at angle p * omega_i."""
    q, _, positions, layout, dtype, base = case
    d = q.shape[-1]
    angles = positions[:, None] * base ** (-np.arange(0, d, 2) / d)  # [T, d/2]
    first = np.arange(0, d, 2) if layout == "interleaved" else np.arange(d // 2)
    second = first + (1 if layout == "interleaved" else d // 2)
    pairs = np.stack([q[..., first], q[..., second]], axis=-1).astype(np.float64)  # [..., T, d/2, 2]
    turned = rotate_2d(pairs, angles)
    expected = np.empty(q.shape)
    expected[..., first], expected[..., second] = turned[..., 0], turned[..., 1]
    out = rope_rotate(q, positions, layout=layout, base=base)
    assert out.dtype == dtype
    scale = float(np.max(np.abs(q), initial=0.0))
    tol = (4 * eps(dtype) + 4 * angle_error(positions.max())) * scale + 1e-300
    np.testing.assert_allclose(out, expected, rtol=0, atol=tol)


@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.integers(1, 6).map(lambda h: 2 * h)),
        elements=st.floats(-1e6, 1e6),
    )
)
def test_a_quarter_turn_of_split_half_pairs_is_rotate_half(x):
    """Every pair (j, j + d/2) turned by pi/2 is transformers' rotate_half: [x1, x2] -> [-x2, x1]."""
    half = x.shape[-1] // 2
    turned = rope_rotate(x, np.full(x.shape[0], np.pi / 2), layout="split_half", inv_freq=np.ones(half))
    scale = float(np.max(np.abs(x), initial=0.0))
    tol = 4 * eps(np.float64) * scale + 1e-300  # cos(pi/2) is 6e-17, not 0
    np.testing.assert_allclose(turned[..., :half], -x[..., half:], rtol=0, atol=tol)
    np.testing.assert_allclose(turned[..., half:], x[..., :half], rtol=0, atol=tol)


# --------------------------------------------------------------------------- batch positions


@given(qk_inputs(), st.data())
def test_batch_positions_equal_one_call_per_row(case, data):
    """positions [B, T] against q, k [B, ..., T, d]: row b is rotated at its own positions."""
    q, k, _, layout, dtype, base = case
    assume(q.ndim >= 3)
    B, T = q.shape[0], q.shape[-2]
    positions = data.draw(hnp.arrays(np.int64, (B, T), elements=st.integers(0, MAX_POSITION)))
    qr, kr = apply_rope(q, k, positions, layout=layout, base=base)
    assert qr.shape == q.shape and qr.dtype == dtype
    # the same arithmetic, perhaps through another numpy loop: within a rounding or two
    tol = 4 * eps(dtype) * float(np.max(np.abs(np.concatenate([q, k])), initial=0.0)) + 1e-300
    alone = rope_rotate(q, positions, layout=layout, base=base)
    for b in range(B):
        qb, kb = apply_rope(q[b], k[b], positions[b], layout=layout, base=base)
        np.testing.assert_allclose(qr[b], qb, rtol=0, atol=tol)
        np.testing.assert_allclose(kr[b], kb, rtol=0, atol=tol)
        np.testing.assert_allclose(alone[b], qb, rtol=0, atol=tol)
    # a single row [1, T] serves every batch entry, like positions [T]
    one_row = apply_rope(q, k, positions[:1], layout=layout, base=base)[0]
    shared = apply_rope(q, k, positions[0], layout=layout, base=base)[0]
    np.testing.assert_allclose(one_row, shared, rtol=0, atol=tol)


# --------------------------------------------------------------------------- defaults


@given(qk_inputs())
def test_positions_none_means_arange(case):
    q, k, _, layout, dtype, base = case
    T = q.shape[-2]
    tol = 4 * eps(dtype) * float(np.max(np.abs(np.concatenate([q, k])), initial=0.0)) + 1e-300
    default = rope_rotate(q, layout=layout, base=base)
    explicit = rope_rotate(q, np.arange(T), layout=layout, base=base)
    np.testing.assert_allclose(default, explicit, rtol=0, atol=tol)
    qd, kd = apply_rope(q, k, layout=layout, base=base)
    qe, ke = apply_rope(q, k, list(range(T)), layout=layout, base=base)
    np.testing.assert_allclose(qd, qe, rtol=0, atol=tol)
    np.testing.assert_allclose(kd, ke, rtol=0, atol=tol)


@given(qk_inputs())
def test_position_zero_is_the_identity(case):
    q, _, _, layout, dtype, base = case
    out = rope_rotate(q, np.zeros(q.shape[-2]), layout=layout, base=base)
    np.testing.assert_allclose(out, q, rtol=0, atol=4 * eps(dtype) * float(np.max(np.abs(q), initial=0.0)))


# --------------------------------------------------------------------------- attention


@st.composite
def attention_inputs(draw):
    d = draw(widths.filter(lambda w: w <= 16))
    Tq, Tk = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    dv = draw(st.integers(1, 4))
    el = st.floats(-3, 3, allow_nan=False, width=32)
    q = draw(hnp.arrays(np.float64, (Tq, d), elements=el))
    k = draw(hnp.arrays(np.float64, (Tk, d), elements=el))
    v = draw(hnp.arrays(np.float64, (Tk, dv), elements=el))
    qp = draw(hnp.arrays(np.int64, Tq, elements=st.integers(0, 5000)))
    kp = draw(hnp.arrays(np.int64, Tk, elements=st.integers(0, 5000)))
    return q, k, v, qp, kp, draw(layouts)


@given(attention_inputs())
def test_attention_with_positions_never_rotates_v(case):
    q, k, v, qp, kp, layout = case
    weights, output = attention(q, k, v, q_positions=qp, k_positions=kp, layout=layout)
    np.testing.assert_allclose(output, weights @ v, rtol=0, atol=1e-12 * (1 + np.abs(v).max()))
    qr = rope_rotate(q, qp, layout=layout)
    kr = rope_rotate(k, kp, layout=layout)
    expected = softmax(qr @ kr.T / np.sqrt(q.shape[-1]))
    np.testing.assert_allclose(weights, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


def test_attention_output_would_differ_if_v_were_rotated():
    """A concrete case where rotating V changes the read: the property above has teeth."""
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0]])
    v = np.array([[1.0, 0.0], [0.0, 1.0]])
    weights, output = attention(q, k, v, q_positions=[1], k_positions=[0, 1])
    rotated_v = rope_rotate(v, [0, 1])
    assert np.max(np.abs(output - weights @ rotated_v)) > 0.1
    np.testing.assert_allclose(output, weights @ v, rtol=0, atol=1e-15)


@given(attention_inputs())
def test_causal_attention_gives_later_keys_no_weight(case):
    q, k, v, qp, kp, layout = case
    kp = kp.copy()
    kp[0] = min(kp[0], qp.min())  # every query sees at least one key
    weights, output = attention(q, k, v, causal=True, q_positions=qp, k_positions=kp, layout=layout)
    later = kp[None, :] > qp[:, None]
    assert np.all(weights[later] == 0.0)  # masked keys: exp(-inf) is exactly 0
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(output, weights @ v, rtol=0, atol=1e-12 * (1 + np.abs(v).max()))


@given(attention_inputs(), st.integers(0, 50_000))
def test_attention_weights_unchanged_by_a_common_shift(case, shift):
    q, k, v, qp, kp, layout = case
    w0, o0 = attention(q, k, v, q_positions=qp, k_positions=kp, layout=layout)
    w1, o1 = attention(q, k, v, q_positions=qp + shift, k_positions=kp + shift, layout=layout)
    size = (1 + np.abs(q).max()) * (1 + np.abs(k).max()) * q.shape[-1]
    tol = 4 * size * (angle_error(5000 + shift) + q.shape[-1] * eps(np.float64))
    np.testing.assert_allclose(w1, w0, rtol=0, atol=tol)

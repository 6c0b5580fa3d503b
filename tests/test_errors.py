"""Bad input gets a clear error: the message names the argument, what was expected and what was given."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lessons.attention import attention
from lessons.frequencies import angle_table, pair_frequencies, pairs_under_one_turn, turns_at_distance
from lessons.kv_cache import RotaryKVCache, continuation_positions, positions_from_attention_mask
from lessons.rope import apply_rope, interleaved_to_split_half_permutation, rope_frequencies, rope_rotate
from lessons.rotation import (
    basis_contributions,
    degrees_to_radians,
    radians_to_degrees,
    rotate_2d,
    rotation_matrix,
)
from lessons.scaling import (
    dynamic_ntk_base,
    linear_frequencies,
    llama3_frequencies,
    longrope_frequencies,
    yarn_frequencies,
)
from lessons.sinusoidal import sinusoidal_encoding

Q = np.ones((1, 2, 3, 8))  # [B, H, T, d]


def esc(text: str) -> str:
    return re.escape(text)


# --------------------------------------------------------------------------- shapes


def test_odd_head_width():
    q = np.ones((1, 3, 5))
    with pytest.raises(ValueError, match=r"head width\).*positive even integer.*got 5"):
        apply_rope(q, q)
    with pytest.raises(ValueError, match=r"head width\).*got 7"):
        rope_rotate(np.ones((2, 7)))


def test_mismatched_q_and_k_shapes():
    k = np.ones((1, 2, 4, 8))
    with pytest.raises(
        ValueError,
        match=esc("q and k must have the same shape [B, H, T, d]; got q (1, 2, 3, 8) and k (1, 2, 4, 8)"),
    ):
        apply_rope(Q, k)


def test_mismatched_q_and_k_dtypes():
    with pytest.raises(TypeError, match=esc("q and k must have the same dtype; got q float32 and k float64")):
        apply_rope(Q.astype(np.float32), Q)


def test_too_few_dimensions():
    with pytest.raises(ValueError, match=esc("x must have at least 2 dimension(s); got shape (8,)")):
        rope_rotate(np.ones(8))
    with pytest.raises(ValueError, match=esc("q must have at least 2 dimension(s); got shape (8,)")):
        apply_rope(np.ones(8), np.ones(8))


def test_positions_of_three_dimensions():
    with pytest.raises(
        ValueError,
        match=esc(
            "positions must have shape [T] (one position per token) or [B, T] (one row per batch "
            "entry); got shape (1, 1, 3)"
        ),
    ):
        apply_rope(Q, Q, [[[0, 1, 2]]])


def test_scalar_positions():
    with pytest.raises(
        ValueError,
        match=esc(
            "positions must have shape [T] (one position per token) or [B, T] (one row per batch "
            "entry); got shape ()"
        ),
    ):
        rope_rotate(np.ones((1, 2)), 5)


def test_batch_positions_with_the_wrong_number_of_rows():
    with pytest.raises(
        ValueError,
        match=esc(
            "positions of shape [B, T] must have one row per batch entry: expected 1 "
            "(the first axis), got 2"
        ),
    ):
        apply_rope(Q, Q, [[0, 1, 2], [0, 1, 2]])
    with pytest.raises(
        ValueError,
        match=esc(
            "positions of shape [B, T] must have one row per batch entry: expected 3 "
            "(the first axis) or 1 (one row for all), got 2"
        ),
    ):
        rope_rotate(np.ones((3, 2, 3, 8)), [[0, 1, 2], [0, 1, 2]])
    with pytest.raises(
        ValueError,
        match=esc("positions must hold one position per token: expected 3 along the last (T) axis, "
                  "got shape (1, 2)"),
    ):
        apply_rope(Q, Q, [[0, 1]])
    # Three positions in a column: the message shows the shape given, not a count of 1.
    with pytest.raises(
        ValueError,
        match=esc("positions must hold one position per token: expected 3 along the last (T) axis, "
                  "got shape (3, 1)"),
    ):
        apply_rope(Q, Q, np.arange(3)[:, None])


def test_batch_positions_need_a_batch_axis():
    with pytest.raises(
        ValueError,
        match=esc(
            "positions of shape [B, T] need a batch axis: a tensor of shape [B, ..., T, d]; "
            "got shape (3, 8)"
        ),
    ):
        rope_rotate(np.ones((3, 8)), [[0, 1, 2]])


def test_wrong_number_of_positions():
    with pytest.raises(
        ValueError, match=esc("positions must hold one position per token: expected 3 (the T axis), got 2")
    ):
        apply_rope(Q, Q, [0, 1])


def test_inv_freq_of_the_wrong_length():
    with pytest.raises(
        ValueError, match=r"inv_freq must hold one frequency per pair: expected shape \(4,\).*got \(3,\)"
    ):
        apply_rope(Q, Q, inv_freq=[1.0, 0.1, 0.01])
    with pytest.raises(
        ValueError,
        match=r"inv_freq must hold one frequency per pair: expected shape \(1,\) for a rotary width of 2",
    ):
        rope_rotate(Q, rotary_dim=2, inv_freq=[1.0, 0.1])


def test_base_and_inv_freq_together():
    pattern = esc(
        "give base or inv_freq, not both: inv_freq replaces the frequencies base would make; "
        "got base=500000.0 and inv_freq"
    )
    for call in (
        lambda: apply_rope(Q, Q, base=500000.0, inv_freq=[1.0, 0.1, 0.01, 0.001]),
        lambda: rope_rotate(Q, base=500000.0, inv_freq=[1.0, 0.1, 0.01, 0.001]),
        lambda: rope_frequencies(8, 500000.0, [1.0, 0.1, 0.01, 0.001]),
        lambda: RotaryKVCache(8, base=500000.0, inv_freq=[1.0, 0.1, 0.01, 0.001]),
    ):
        with pytest.raises(ValueError, match=pattern):
            call()


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("which", ["q", "k"])
def test_non_finite_q_or_k(bad, which):
    broken = Q.copy()
    broken[0, 1, 2, 5] = bad
    args = (broken, Q) if which == "q" else (Q, broken)
    for layout in ("interleaved", "split_half"):
        with pytest.raises(
            ValueError, match=esc(f"{which} must be finite; it holds 1 NaN or infinite value(s)")
        ):
            apply_rope(*args, layout=layout)


def test_non_finite_in_the_pass_through_dims():
    broken = Q.copy()
    broken[..., 7] = np.nan
    with pytest.raises(ValueError, match=esc("x must be finite; it holds 6 NaN or infinite value(s)")):
        rope_rotate(broken, rotary_dim=4)


def test_non_finite_float32():
    broken = Q.astype(np.float32)
    broken[0, 0, 0, 0] = np.inf
    with pytest.raises(ValueError, match=esc("q must be finite; it holds 1 NaN or infinite value(s)")):
        apply_rope(broken, Q.astype(np.float32))


def test_huge_finite_values_are_not_mistaken_for_infinite():
    big = np.full((1, 2, 4), 1e308)
    out = rope_rotate(big, [0, 0])  # position 0: no rotation, and the finiteness check must not trip
    np.testing.assert_allclose(out, big, rtol=1e-15)


def test_non_finite_positions():
    with pytest.raises(
        ValueError, match=esc("positions must be finite; it holds 1 NaN or infinite value(s)")
    ):
        apply_rope(Q, Q, [0, np.nan, 2])


@pytest.mark.parametrize("base", [0, -10000.0, np.inf, np.nan])
def test_non_positive_or_non_finite_base(base):
    pattern = r"base must be a finite number greater than 0; got " + esc(str(float(base)))
    with pytest.raises(ValueError, match=pattern):
        apply_rope(Q, Q, base=base)
    with pytest.raises(ValueError, match=pattern):
        pair_frequencies(8, base)


@pytest.mark.parametrize("base", ["10000", True, [10000.0]])
def test_base_of_the_wrong_type(base):
    with pytest.raises(TypeError, match=r"base must be a positive real number; got .*\((str|bool|list)\)"):
        rope_rotate(Q, base=base)
    with pytest.raises(TypeError, match=r"base must be a positive real number; got .*\((str|bool|list)\)"):
        RotaryKVCache(8, base=base)


def test_base_none_is_the_default_in_rope_but_an_error_in_pair_frequencies():
    default = rope_rotate(Q, [0, 1, 2], base=None)
    np.testing.assert_array_equal(default, rope_rotate(Q, [0, 1, 2], base=10000.0))
    with pytest.raises(TypeError, match=esc("base must be a positive real number; got None (NoneType)")):
        pair_frequencies(8, None)


@pytest.mark.parametrize("factor", [0, -2.0, np.inf])
def test_non_positive_scaling_factor(factor):
    pattern = r"factor must be a finite number greater than 0; got " + esc(str(float(factor)))
    with pytest.raises(ValueError, match=pattern):
        linear_frequencies(64, factor)
    with pytest.raises(ValueError, match=pattern):
        dynamic_ntk_base(64, factor, 5000, 2048)
    with pytest.raises(ValueError, match=pattern):
        llama3_frequencies(128, factor)
    with pytest.raises(ValueError, match=pattern):
        yarn_frequencies(64, factor, 2048)


def test_yarn_factor_below_one():
    with pytest.raises(ValueError, match=esc("factor must be at least 1.0; got 0.5")):
        yarn_frequencies(64, 0.5, 2048)


def test_llama3_frequency_factors_in_the_wrong_order():
    with pytest.raises(
        ValueError, match=esc("high_freq_factor must be greater than low_freq_factor; got 1.0 and 4.0")
    ):
        llama3_frequencies(128, 8.0, low_freq_factor=4.0, high_freq_factor=1.0)


def test_longrope_inputs():
    short, long = np.ones(4), np.full(4, 2.0)
    with pytest.raises(
        ValueError, match=esc("long_factor must hold d/2 = 4 positive numbers, one per pair; got shape (3,)")
    ):
        longrope_frequencies(8, short, [1.0, 2.0, 3.0], 10, 100, factor=2.0)
    with pytest.raises(
        ValueError,
        match=esc(
            "short_factor must hold d/2 = 4 positive numbers, one per pair; got shape (4,) with a value <= 0"
        ),
    ):
        longrope_frequencies(8, [1.0, 0.0, 1.0, 1.0], long, 10, 100, factor=2.0)
    with pytest.raises(
        ValueError,
        match=esc(
            "give factor, or max_position_embeddings for factor = "
            "max_position_embeddings / original_max_position_embeddings"
        ),
    ):
        longrope_frequencies(8, short, long, 10, 100)
    with pytest.raises(ValueError, match=esc("seq_len must be a finite number greater than 0; got 0.0")):
        longrope_frequencies(8, short, long, 0, 100, factor=2.0)
    with pytest.raises(
        ValueError, match=esc("attention_factor must be a finite number greater than 0; got -1.0")
    ):
        longrope_frequencies(8, short, long, 10, 100, factor=2.0, attention_factor=-1.0)


def test_dynamic_ntk_needs_width_four():
    with pytest.raises(ValueError, match=r"d must be at least 4 for dynamic NTK"):
        dynamic_ntk_base(2, 2.0, 5000, 2048)


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize("layout", ["split", "INTERLEAVED", None, 0])
def test_unknown_layout(layout):
    pattern = esc(f"layout must be one of ('interleaved', 'split_half'); got {layout!r}")
    with pytest.raises(ValueError, match=pattern):
        apply_rope(Q, Q, layout=layout)
    with pytest.raises(ValueError, match=pattern):
        rope_rotate(Q, layout=layout)
    with pytest.raises(ValueError, match=pattern):
        attention(Q[0, 0], Q[0, 0], Q[0, 0], q_positions=[0, 1, 2], k_positions=[0, 1, 2], layout=layout)


@pytest.mark.parametrize(
    ("rotary_dim", "error", "pattern"),
    [
        (10, ValueError, "rotary_dim must be at most the head width 8; got 10"),
        (
            3,
            ValueError,
            "rotary_dim must be a positive even integer (coordinates are rotated in pairs); got 3",
        ),
        (
            0,
            ValueError,
            "rotary_dim must be a positive even integer (coordinates are rotated in pairs); got 0",
        ),
        (
            -2,
            ValueError,
            "rotary_dim must be a positive even integer (coordinates are rotated in pairs); got -2",
        ),
        (4.0, TypeError, "rotary_dim must be a positive even integer; got 4.0 (float)"),
        ("4", TypeError, "rotary_dim must be a positive even integer; got '4' (str)"),
    ],
)
def test_bad_rotary_dim(rotary_dim, error, pattern):
    with pytest.raises(error, match=esc(pattern)):
        apply_rope(Q, Q, rotary_dim=rotary_dim)
    with pytest.raises(error, match=esc(pattern)):
        rope_rotate(Q, rotary_dim=rotary_dim)


# --------------------------------------------------------------------------- not numbers


@pytest.mark.parametrize(
    ("value", "pattern"),
    [
        ("abc", "q must be an array of real numbers; got 'abc' (str)"),
        (b"ab", "q must be an array of real numbers; got b'ab' (bytes)"),
        (None, "q must be an array of real numbers; got None (NoneType)"),
        (np.array([[1.0, "a"]], dtype=object), "q must hold real numbers; got dtype object"),
        (np.array([["a", "b"]]), "q must hold real numbers; got dtype <U1"),
        (np.ones((2, 4), dtype=complex), "q must hold real numbers; got dtype complex128"),
        ([[1.0, 2.0], [3.0]], "q must be an array of real numbers; got [[1.0, 2.0], [3.0]] (list)"),
    ],
)
def test_q_that_is_not_an_array_of_reals(value, pattern):
    with pytest.raises(TypeError, match=esc(pattern)):
        apply_rope(value, np.ones((2, 4)))


def test_k_is_named_when_k_is_wrong():
    with pytest.raises(TypeError, match=esc("k must be an array of real numbers; got None (NoneType)")):
        apply_rope(Q, None)


def test_positions_that_are_strings():
    with pytest.raises(TypeError, match=esc("positions must hold real numbers; got dtype <U1")):
        apply_rope(Q, Q, ["0", "1", "2"])


# --------------------------------------------------------------------------- the other modules


@pytest.mark.parametrize(
    ("d", "error", "pattern"),
    [
        (3, ValueError, "d must be a positive even integer (coordinates are rotated in pairs); got 3"),
        (0, ValueError, "d must be a positive even integer (coordinates are rotated in pairs); got 0"),
        (4.0, TypeError, "d must be a positive even integer; got 4.0 (float)"),
        (True, TypeError, "d must be a positive even integer; got True (bool)"),
    ],
)
def test_bad_width(d, error, pattern):
    with pytest.raises(error, match=esc(pattern)):
        pair_frequencies(d)
    with pytest.raises(error, match=esc(pattern)):
        sinusoidal_encoding([0, 1], d)
    with pytest.raises(error, match=esc(pattern)):
        interleaved_to_split_half_permutation(d)
    with pytest.raises(error, match=esc(pattern)):
        pairs_under_one_turn(10, d)
    with pytest.raises(error, match=esc(pattern)):
        RotaryKVCache(d)


def test_angle_table_inputs():
    with pytest.raises(
        ValueError, match=esc("inv_freq must be one-dimensional (one frequency per pair); got shape (2, 2)")
    ):
        angle_table([0, 1], np.ones((2, 2)))
    with pytest.raises(
        ValueError, match=esc("positions must be one-dimensional (one position per token); got shape (2, 1)")
    ):
        angle_table([[0], [1]], [1.0])


def test_rotation_inputs():
    with pytest.raises(
        ValueError, match=esc("vector must have 2 coordinates on its last axis; got shape (3,)")
    ):
        rotate_2d([1.0, 2.0, 3.0], 0.5)
    with pytest.raises(
        ValueError, match=esc("vector must be a single 2D vector of shape (2,); got shape (2, 2)")
    ):
        basis_contributions(np.eye(2), 0.5)
    with pytest.raises(ValueError, match=esc("angle must be finite; it holds 1 NaN or infinite value(s)")):
        rotation_matrix(np.nan)
    with pytest.raises(TypeError, match=esc("angle must be an array of real numbers; got 'pi' (str)")):
        rotate_2d([1.0, 0.0], "pi")


def test_attention_inputs():
    q, k, v = np.ones((2, 4)), np.ones((3, 4)), np.ones((3, 2))
    with pytest.raises(
        ValueError, match=esc("q and k must have the same head width (last axis); got q (2, 4) and k (3, 6)")
    ):
        attention(q, np.ones((3, 6)), v)
    with pytest.raises(
        ValueError,
        match=esc("k and v must hold one row per key (the same T axis); got k (3, 4) and v (2, 2)"),
    ):
        attention(q, k, np.ones((2, 2)))
    with pytest.raises(
        ValueError, match=esc("give both q_positions and k_positions to apply RoPE, or neither")
    ):
        attention(q, k, v, q_positions=[0, 1])
    with pytest.raises(
        ValueError, match=esc("k_positions must hold one position per token: expected 3 (the T axis), got 2")
    ):
        attention(q, k, v, q_positions=[0, 1], k_positions=[0, 1])
    with pytest.raises(
        ValueError, match=r"query 0 \(position 0\) comes before every key \(k_positions start at 5\)"
    ):
        attention(q, k, v, causal=True, q_positions=[0, 9], k_positions=[5, 6, 7])


def test_kv_cache_inputs():
    with pytest.raises(ValueError, match=esc("cache_length must be at least 0; got -1")):
        continuation_positions(-1)
    with pytest.raises(ValueError, match=esc("n_new must be at least 1; got 0")):
        continuation_positions(3, 0)
    with pytest.raises(TypeError, match=esc("cache_length must be an integer; got 2.0 (float)")):
        continuation_positions(2.0)
    with pytest.raises(ValueError, match=esc("cache_length must be at least 0; got -2")):
        continuation_positions([3, -2])
    with pytest.raises(
        TypeError,
        match=esc(
            "cache_length must be an integer or a 1-D array of integers (one per row); got [2.5] (list)"
        ),
    ):
        continuation_positions([2.5])
    with pytest.raises(
        ValueError,
        match=r"attention_mask must be a 1-D or 2-D array of 0s and 1s; got \[0, 2, 1\] \(list\)",
    ):
        positions_from_attention_mask([0, 2, 1])
    cache = RotaryKVCache(4)
    with pytest.raises(
        ValueError, match=esc("raw_keys must have shape [n, d] with d = 4 (the cache's width); got (2, 6)")
    ):
        cache.append(np.ones((2, 6)), np.ones((2, 1)))
    with pytest.raises(
        ValueError, match=esc("raw_keys and values must have one row per token; got (2, 4) and (3, 1)")
    ):
        cache.append(np.ones((2, 4)), np.ones((3, 1)))
    cache.append(np.ones((2, 4)), np.ones((2, 1)))
    with pytest.raises(
        ValueError, match=esc("values must have shape [n, 1] like the values already cached; got (1, 3)")
    ):
        cache.append(np.ones((1, 4)), np.ones((1, 3)))
    with pytest.raises(ValueError, match=esc("raw_query must be one vector of shape (4,); got (1, 4)")):
        cache.scores(np.ones((1, 4)))
    with pytest.raises(
        ValueError, match=esc("layout must be one of ('interleaved', 'split_half'); got 'meta'")
    ):
        RotaryKVCache(4, layout="meta")


def test_overflow_of_finite_values_is_one_warning():
    with pytest.warns(
        RuntimeWarning, match=r"overflow: rotating x gave infinite values .*1\.5e\+308.*float64"
    ):
        out = rope_rotate(np.full((3, 4), 1.5e308), [1, 2, 3])
    assert not np.isfinite(out).all()


def test_angle_conversions_and_distances():
    with pytest.raises(TypeError, match=esc("degrees must be an array of real numbers; got '90' (str)")):
        degrees_to_radians("90")
    with pytest.raises(ValueError, match=esc("radians must be finite; it holds 1 NaN or infinite value(s)")):
        radians_to_degrees([1.0, np.nan])
    with pytest.raises(ValueError, match=esc("distance must be a single number; got an array of shape (2,)")):
        turns_at_distance([1, 2], pair_frequencies(4))


# --- from a read of every public function with a learner's wrong inputs -----------------------
@pytest.mark.parametrize("base", [0.5, 1, 1.0])
def test_a_base_of_one_or_less_is_refused_everywhere(base):
    """A base <= 1 reverses the ladder (or stops every pair): refused, by name."""
    from lessons.head import look_back_query
    from lessons.scaling import ntk_aware_base, yarn_correction_dim, yarn_correction_range

    message = re.escape(f"base must be greater than 1 (each later pair then turns slower); got {float(base)}")
    for call in (lambda: pair_frequencies(8, base), lambda: sinusoidal_encoding([0, 1], 8, base),
                 lambda: ntk_aware_base(8, 4, base), lambda: yarn_correction_range(128, base, 4096),
                 lambda: yarn_correction_dim(32, 128, base, 4096), lambda: look_back_query(8, 1, base)):
        with pytest.raises(ValueError, match=message):
            call()


@pytest.mark.parametrize("call", [
    lambda: linear_frequencies(8, 0.5), lambda: dynamic_ntk_base(8, 0.5, 4096, 2048),
    lambda: llama3_frequencies(8, 0.5),
])
def test_a_scaling_factor_below_one_is_refused(call):
    with pytest.raises(ValueError, match=re.escape("factor must be at least 1.0; got 0.5")):
        call()


def test_yarn_betas_in_the_wrong_order_are_refused():
    from lessons.scaling import yarn_correction_range

    with pytest.raises(ValueError, match=r"beta_fast .* must be greater than beta_slow .*got 1 and 32"):
        yarn_correction_range(128, 10000.0, 4096, beta_fast=1.0, beta_slow=32.0)


def test_pairs_under_one_turn_counts_a_distance_of_either_sign_alike():
    assert pairs_under_one_turn(-10, 8) == pairs_under_one_turn(10, 8) == 3
    assert pairs_under_one_turn(-1000, 64) == pairs_under_one_turn(1000, 64) == 14


@pytest.mark.parametrize("q, k, expected", [
    ([np.nan, 0.0], [1.0, 0.0], "q must be finite; it holds 1 NaN or infinite value(s)"),
    (np.ones(4), np.ones(2), "q and k must be 1-D vectors of the same width; got q (4,) and k (2,)"),
    (np.ones((2, 2)), np.ones((2, 2)), "q and k must be 1-D vectors of the same width; got q (2, 2)"),
])
def test_added_score_checks_q_and_k_as_its_neighbours_do(q, k, expected):
    from lessons.sinusoidal import added_score

    with pytest.raises(ValueError, match=re.escape(expected)):
        added_score(q, k, 0, 1)


def test_softmax_refuses_a_row_with_every_key_masked():
    from lessons.attention import softmax

    scores = np.array([[0.0, -np.inf], [-np.inf, -np.inf]])
    with pytest.raises(ValueError, match=r"a row is -inf everywhere \(every key masked\)"):
        softmax(scores)
    assert softmax(scores[:1]).tolist() == [[1.0, 0.0]]  # a masked entry alone: weight 0
    with pytest.raises(ValueError, match=r"scores must hold at least one score; got shape \(0,\)"):
        softmax([])


def test_rotate_with_angles_blames_an_odd_width_on_x():
    from lessons.precision import rotate_with_angles

    with pytest.raises(ValueError,
                       match=r"the last axis of x \(head width\) must be a positive even integer .*got 5"):
        rotate_with_angles(np.ones((3, 5)), np.ones((3, 2)))


def test_a_list_of_lengths_is_kept_as_a_tuple():
    from lessons.tiny_model import Config

    assert Config(lengths=[16, 32, 64]).lengths == (16, 32, 64)
    with pytest.raises(ValueError, match=r"lengths must be a non-empty tuple of lengths above distance"):
        Config(lengths=64)


def test_the_dot_table_figures_name_their_positions_argument():
    from lessons.figures.attention import dot_table_heatmap, dot_tables_side_by_side, shifted_dot_tables

    expect = r"{} must hold one position per token: expected {} \(the T axis\), got {}"
    with pytest.raises(ValueError, match=expect.format("positions", 3, 2)):
        dot_table_heatmap(np.eye(3), [0, 1])
    with pytest.raises(ValueError, match=expect.format("positions_after", 2, 1)):
        shifted_dot_tables(np.eye(2), np.eye(2), [0, 1], [5])
    with pytest.raises(ValueError, match=expect.format("positions", 2, 3)):
        dot_tables_side_by_side([np.eye(2)], ["a"], positions=[1, 2, 3])


def test_one_query_and_one_key_take_one_position_each():
    from lessons.sinusoidal import added_score, rotary_score, score_terms

    for score in (added_score, rotary_score, score_terms):
        with pytest.raises(ValueError, match=r"m must be a single number; got an array of shape \(2,\)"):
            score(np.ones(4), np.ones(4), [0, 1], 1)


def test_attention_checks_layout_and_base_even_without_positions():
    q = np.ones((2, 4))
    with pytest.raises(ValueError, match="layout must be one of"):
        attention(q, q, q, layout="bogus")
    with pytest.raises(ValueError, match="base must be a finite number greater than 0; got -1.0"):
        attention(q, q, q, base=-1)


def test_one_angle_or_position_where_one_is_expected():
    from lessons.figures.arrows import unit_circle_figure
    from lessons.figures.motion import pair_state

    with pytest.raises(ValueError, match=r"angle must be a single number; got an array of shape \(2,\)"):
        basis_contributions([1.0, 0.0], [1.0, 2.0])
    with pytest.raises(ValueError, match=r"angle must be a single number; got an array of shape \(2,\)"):
        unit_circle_figure([1.0, 2.0])
    with pytest.raises(ValueError, match=r"q_position must be a single number; got an array of shape \(2,\)"):
        pair_state([1, 2], 0)
    with pytest.raises(ValueError, match=r"angle must be one number, or one per vector \(shape \(3,\)\); "
                                         r"got shape \(2,\)"):
        rotate_2d(np.ones((3, 2)), [1.0, 2.0])
    assert rotate_2d(np.ones((3, 2)), [0.0, 0.0, 0.0]).tolist() == [[1.0, 1.0]] * 3


def test_more_wrong_inputs_named():
    from lessons.head import diagonal_spread
    from lessons.precision import positions_rounding_to
    from lessons.tiny_model import Config

    with pytest.raises(ValueError, match=r"value must be a single number; got an array of shape \(2,\)"):
        positions_rounding_to([4096, 8192], "bfloat16")
    with pytest.raises(ValueError, match=r"table must hold at least one row and column"):
        diagonal_spread(np.zeros((0, 0)))
    with pytest.raises(ValueError, match=r"seed must be a whole number, 0 or more; got -1"):
        Config(seed=-1)


def test_notebook_10s_helpers_tell_a_run_from_its_config():
    """A Config where a trained Run is expected (or the reverse) is named, with what to pass."""
    from lessons.tiny_model import (
        Config,
        Run,
        accuracy,
        init_params,
        look_back_coefficients,
        pair_score_by_distance,
        peak_distance,
        token_pair_scores,
        train,
    )

    config = Config(method="rope")
    run = Run(config, init_params(config), np.zeros(1), 0.0, 0)
    untrained = r"run must be a Run \(what train or run_of returns\); got Config: train it first"
    for call in (lambda: accuracy(config, 64), lambda: pair_score_by_distance(config, [1, 2]),
                 lambda: peak_distance(config, 10)):
        with pytest.raises(TypeError, match=untrained):
            call()
    for call in (lambda: look_back_coefficients(run), lambda: train(run)):
        with pytest.raises(TypeError, match=r"config must be a Config; got Run: pass run.config"):
            call()
    with pytest.raises(ValueError, match=r"length must be an integer above the distance 1; got '64'"):
        accuracy(run, "64")
    with pytest.raises(ValueError, match=r"distance must be a single number; got an array of shape \(2,\)"):
        token_pair_scores(run, [1, 2])
    with pytest.raises(ValueError, match=r"distances must be one number or a 1-D array of distances; "
                                         r"got shape \(1, 2\)"):
        pair_score_by_distance(run, [[1, 2]])
    one = pair_score_by_distance(run, 3)  # one distance: one row
    assert one.shape == (1, config.width // 2)
    assert np.array_equal(one, pair_score_by_distance(run, [3]))


def test_unseen_angle_pairs_names_the_argument_that_is_wrong():
    from lessons.scaling import unseen_angle_pairs

    omega = pair_frequencies(8, 10000.0)
    with pytest.raises(ValueError, match=r"trained_length must be a finite number greater than 0; got -1.0"):
        unseen_angle_pairs(omega, -1, omega, 10)
    with pytest.raises(ValueError, match=r"trained_inv_freq must be a 1-D array of positive finite"):
        unseen_angle_pairs(-omega, 10, omega, 10)
    with pytest.raises(TypeError, match=r"inv_freq must be an array of real numbers; got 'x' \(str\)"):
        unseen_angle_pairs(omega, 10, "x", 10)
    with pytest.raises(TypeError, match=r"^length must be a positive real number"):
        unseen_angle_pairs(omega, 10, omega, "x")

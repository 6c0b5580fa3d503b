"""Exercises of notebook 08 (``solutions/08_layouts_caches_and_failures.ipynb``).

Expected answers come from :mod:`lessons.rope` and :mod:`lessons.kv_cache`, never from the
solution notebook. The two bug hunts that 06 used to hold live here, after 08 teaches caches
and layouts; their data differ from the examples the notebook works through, so the
notebook's prose never states their answers.
"""

from __future__ import annotations

import numpy as np

from ..i18n import gettext
from ..kv_cache import RotaryKVCache
from ..rope import interleaved_to_split_half_permutation, rope_rotate
from ._spec import N_, Mutant, function_exercise, value_exercise, written_question

SIGN_HINT = N_(
    "your output is what you get with the angle's sign flipped (a clockwise turn): "
    "look at the minus sign in the rotation"
)

# Exercise 3's data (the double rotation), as the notebook shows it.
RAW_KEYS = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
RAW_QUERY = np.array([1.0, 0.0, 1.0, 0.0])

# Exercise 4's data (the cache that forgets where it is): content where the sign shows.
CACHE_KEYS = np.array([[0.0, 1.0], [1.0, 2.0], [-1.0, 1.0]])  # raw keys at positions 0, 1, 2
CACHE_QUERY = np.array([2.0, -1.0])  # the new token's raw query

# Exercise 5's data (weights from another layout).
LAYOUT_X = np.array([0.5, -1.0, 2.0, 1.5, -0.5, 1.0])  # split-half pairs (x_i, x_{i+3})
LAYOUT_POSITION = 7


def _rotate_split_half_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"x": rng.normal(size=4).round(2).tolist(), "position": int(rng.integers(1, 10))}]
    for _ in range(7):
        d = int(2 * rng.integers(1, 17))
        cases.append({"x": rng.normal(size=d).tolist(), "position": int(rng.integers(0, 4000))})
    return cases


def _split_where(index, case) -> str:
    d = len(case["x"]) if case else 0
    j = index[0]
    if d:
        return gettext("coordinate {index} (pair {pair})").format(index=j, pair=j % (d // 2))
    return gettext("coordinate {index}").format(index=j)


@function_exercise(
    "ex08_rotate_split_half",
    title=N_("Exercise 1: rotate with split-half pairs"),
    points=2,
    name="rotate_split_half",
    cases=_rotate_split_half_cases,
    where=_split_where,
    practises="the split-half layout: pair i is (x_i, x_{i+d/2})",
    mutants=(
        Mutant(
            "interleaved",
            N_("your output pairs adjacent coordinates (2i, 2i+1): this exercise pairs x[i] with x[i + d/2]"),
            lambda x, position: rope_rotate(np.asarray(x)[None, :], [position])[0],
        ),
        Mutant(
            "sign_flipped",
            SIGN_HINT,
            lambda x, position: rope_rotate(np.asarray(x)[None, :], [-position], layout="split_half")[0],
        ),
    ),
)
def _(x, position):
    return rope_rotate(np.asarray(x)[None, :], [position], layout="split_half")[0]


def _permute_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"w": np.arange(16.0).reshape(8, 2).tolist(), "n_heads": 2}]
    for i in range(5):
        n_heads = 2 if i < 3 else int(rng.integers(1, 5))
        d = int(2 * rng.integers(2, 7))
        d_model = int(rng.integers(2, 9))
        cases.append({"w": rng.normal(size=(n_heads * d, d_model)).round(3).tolist(), "n_heads": n_heads})
    return cases


def _per_head(w, n_heads):
    w = np.asarray(w, dtype=float)
    d = w.shape[0] // int(n_heads)
    return w.reshape(int(n_heads), d, -1)[:, interleaved_to_split_half_permutation(d)].reshape(w.shape)


def _permute_where(index, case) -> str:
    row, col = index
    d = len(case["w"]) // case["n_heads"] if case else 1
    return gettext("row {row} (head {head}, row {head_row} of that head), column {column}").format(
        row=row, head=row // d, head_row=row % d, column=col
    )


@function_exercise(
    "ex08_split_half_rows",
    title=N_("Exercise 2: convert a multi-head projection to split-half"),
    points=3,
    name="split_half_rows",
    cases=_permute_cases,
    where=_permute_where,
    practises="the per-head permutation of W_q / W_k rows when converting interleaved weights to split-half",
    mutants=(
        Mutant(
            "whole_matrix",
            N_(
                "your rows are permuted across the whole projection: the permutation "
                "works within each head's slice of d rows"
            ),
            lambda w, n_heads: np.asarray(w)[interleaved_to_split_half_permutation(np.shape(w)[0])],
        ),
        Mutant(
            "inverse",
            N_(
                "your rows are permuted the other way (split-half to interleaved): the first "
                "rows of each head must be its rows 0, 2, 4, ..."
            ),
            lambda w, n_heads: _per_head_inverse(w, n_heads),
        ),
        Mutant(
            "unchanged",
            N_("your projection is unchanged: reorder the rows of each head"),
            lambda w, n_heads: np.asarray(w),
        ),
    ),
)
def _(w, n_heads):
    return _per_head(w, n_heads)


def _per_head_inverse(w, n_heads):
    w = np.asarray(w, dtype=float)
    d = w.shape[0] // int(n_heads)
    inverse = np.argsort(interleaved_to_split_half_permutation(d))
    return w.reshape(int(n_heads), d, -1)[:, inverse].reshape(w.shape)


@value_exercise(
    "ex08_double_rotation_bug",
    title=N_("Exercise 3: the decoding step's scores, fixed"),
    points=2,
    name="fixed_scores",
    where=lambda index, case: gettext("the score of the key cached at position {position}").format(
        position=index[0]
    ),
    practises="finding a double rotation through the cache (rotate each key exactly once)",
    wrong_values=(
        (
            lambda: _double_rotated(),
            N_("these are the buggy code's scores: the cached keys are rotated again"),
        ),
        (
            lambda: _fixed_scores() * np.sqrt(4),
            N_("your scores are not divided by sqrt(d) = sqrt(4): divide each dot product by sqrt(4)"),
        ),
    ),
)
def _():
    return _fixed_scores()


def _fixed_scores():
    cache = RotaryKVCache(d=4)
    cache.append(RAW_KEYS, np.zeros((3, 1)))
    return cache.scores(RAW_QUERY)  # keys rotated once, the query at position 3


def _double_rotated():
    keys = rope_rotate(rope_rotate(RAW_KEYS, [0, 1, 2]), [0, 1, 2])
    query = rope_rotate(RAW_QUERY[None, :], [3])[0]
    return keys @ query / np.sqrt(4)


def _cache_scores(query_position):
    keys = rope_rotate(CACHE_KEYS, [0, 1, 2])
    query = rope_rotate(CACHE_QUERY[None, :], [query_position])[0]
    return keys @ query / np.sqrt(2)


@value_exercise(
    "ex08_cache_reset_bug",
    title=N_("Exercise 4: the cache that forgets where it is, fixed"),
    points=2,
    name="cache_fixed_scores",
    where=lambda index, case: gettext("the score of the key cached at position {position}").format(
        position=index[0]
    ),
    practises="finding a cache position reset (the new query must sit after the cached keys)",
    wrong_values=(
        (
            lambda: _cache_scores(0),
            N_("these are the buggy code's scores: the new query is still rotated at position 0"),
        ),
        (
            lambda: _cache_scores(2),
            N_("the new token comes after the three cached ones: its position is 3, not 2"),
        ),
        (
            lambda: _cache_scores(3) * np.sqrt(2),
            N_("your scores are not divided by sqrt(d) = sqrt(2): divide each dot product by sqrt(2)"),
        ),
    ),
)
def _():
    return _cache_scores(3)


@value_exercise(
    "ex08_layout_bug",
    title=N_("Exercise 5: weights from another layout, rotated correctly"),
    points=2,
    name="layout_fixed_rotation",
    where=lambda index, case: gettext("coordinate {index}").format(index=index[0]),
    practises="finding a layout mismatch: split-half weights rotated by interleaved code",
    wrong_values=(
        (
            lambda: rope_rotate(LAYOUT_X[None, :], [LAYOUT_POSITION])[0],
            N_("this is the buggy code's rotation (adjacent pairs): pair i is (x[i], x[i + 3])"),
        ),
        (lambda: LAYOUT_X, N_("this is x unrotated")),
    ),
)
def _():
    return rope_rotate(LAYOUT_X[None, :], [LAYOUT_POSITION], layout="split_half")[0]


written_question(
    "ex08_why_not_v",
    title=N_("Question 1: why is V never rotated?"),
    points=1,
    prompt="Why are only the queries and keys rotated, never the values? What would rotating V do?",
    practises="where position enters attention: the scores, not the content that is mixed",
)


written_question(
    "ex08_shift_question",
    title=N_("Question 2: what a passing shift check tells you"),
    points=1,
    prompt="A decoding step whose cache positions are right passes the shift check (every position "
    "moved by the same amount, the scores unchanged). Why does it pass? Name a bug of this notebook "
    "that passes it too, and the check that catches that bug.",
    practises="the shift check sees only distances; a comparison with a reference sees the rest",
)

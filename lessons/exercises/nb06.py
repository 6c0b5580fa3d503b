"""Exercises of notebook 06 (``solutions/06_exercises.ipynb``).

Every expected answer is computed here with the package's own code (``lessons.rotation``,
``lessons.frequencies``, ``lessons.rope``), never with the solution notebook's code, so a
wrong solution cannot agree with itself. The mutants are known wrong answers: an answer that
behaves like one gets its hint, in the notebook's check and in the grader's feedback alike.
"""

from __future__ import annotations

import numpy as np

from ..frequencies import pair_frequencies, pairs_under_one_turn
from ..head import look_back_query, same_content_keys
from ..i18n import gettext
from ..rope import apply_rope, rope_rotate
from ..rotation import rotate_2d
from . import _rope_mutants as rm
from ._spec import N_, Mutant, checker_exercise, function_exercise, value_exercise, written_question

SIGN_HINT = N_(
    "your output is what you get with the angle's sign flipped (a clockwise turn): "
    "look at the minus sign in the rotation"
)
# Exercises 1 and 2a: other slips give exactly the clockwise turn too, and the hint names them.
SCORE_SIGN_HINT = N_(
    "your score is what you get with the angle's sign flipped (a clockwise turn): check the "
    "minus sign in the rotation, and that q turns by m and k by n (turning only k, by n - m)"
)
PAIR_SIGN_HINT = N_(
    "your output is what you get with the angle's sign flipped (a clockwise turn): check the "
    "minus sign in the rotation, and that you compute R @ pair (pair @ R turns the other way)"
)


# ------------------------------------------------------------ Exercise 1: one pair, two positions
def _score_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"q": [1.0, 0.0], "k": [0.0, 1.0], "m": int(rng.integers(1, 6)), "n": int(rng.integers(0, 6))}]
    for i in range(7):
        top = 20 if i < 4 else 3000
        cases.append(
            {
                "q": rng.normal(size=2).tolist(),
                "k": rng.normal(size=2).tolist(),
                "m": int(rng.integers(0, top)),
                "n": int(rng.integers(0, top)),
            }
        )
    return cases


@function_exercise(
    "ex06_score",
    title=N_("Exercise 1: the score of one pair at two positions"),
    points=2,
    name="score",
    cases=_score_cases,
    practises="turning q and k by their own positions (frequency 1) and taking the dot product",
    mutants=(
        Mutant(
            "sign_flipped", SCORE_SIGN_HINT, lambda q, k, m, n: float(rotate_2d(q, -m) @ rotate_2d(k, -n))
        ),
        Mutant(
            "positions_ignored",
            N_(
                "your score does not change with the positions m and n: "
                "turn q by m radians and k by n radians before the dot product"
            ),
            lambda q, k, m, n: float(np.dot(q, k)),
        ),
        Mutant(
            "only_key_turned",
            N_("your score is what you get when only k is turned: turn q by m as well"),
            lambda q, k, m, n: float(np.dot(q, rotate_2d(k, n))),
        ),
        Mutant(
            "only_query_turned",
            N_("your score is what you get when only q is turned: turn k by n as well"),
            lambda q, k, m, n: float(rotate_2d(q, m) @ np.asarray(k)),
        ),
        Mutant(
            "degrees",
            N_("your score treats the positions as degrees: the angle is m radians (no pi/180)"),
            lambda q, k, m, n: float(rotate_2d(q, np.radians(m)) @ rotate_2d(k, np.radians(n))),
        ),
    ),
    hides=("lessons.rotation.rotate_2d", "lessons.rotation.rotation_matrix", "lessons.head.pair_scores",
           "lessons.rotation.basis_contributions", "lessons.precision.rotate_with_angles",
           "lessons.tiny_model.rotate", "lessons.sinusoidal.rotary_score",
           "lessons.claims.nb02.complex_score"),
)
def _(q, k, m, n):
    return float(rotate_2d(q, float(m)) @ rotate_2d(k, float(n)))


written_question(
    "ex06_gap_question",
    title=N_("Exercise 1, question: two positions, one distance"),
    points=1,
    prompt="With q = k = [1, 0], compute score at positions 2 and 3, then at 9 and 10. "
    "Compare the two and explain why.",
    practises="the lesson's first exercise: only the distance between the positions counts",
)


# ------------------------------------------------------------ Exercise 2: the rotation, step by step
def _turned_pair_where(i: int) -> str:
    if i == 0:
        return gettext("output [{index}] (x of the turned pair)").format(index=i)
    return gettext("output [{index}] (y of the turned pair)").format(index=i)


def _rotate_pair_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"pair": [1.0, 0.0], "angle": float(rng.uniform(0.1, 3.0))}]
    for _ in range(7):
        scale = float(10 ** rng.uniform(-1, 2))
        pair = (scale * rng.normal(size=2)).tolist()
        cases.append({"pair": pair, "angle": float(rng.uniform(-20.0, 20.0))})
    return cases


@function_exercise(
    "ex06_rotate_pair",
    title=N_("Exercise 2a: rotate one pair"),
    points=2,
    name="rotate_pair",
    cases=_rotate_pair_cases,
    where=lambda index, case: _turned_pair_where(index[0]),
    practises="the 2D rotation [cos -sin; sin cos]",
    mutants=(
        Mutant("sign_flipped", PAIR_SIGN_HINT, lambda pair, angle: rotate_2d(pair, -angle)),
        Mutant(
            "degrees",
            N_("your output treats the angle as degrees: numpy's cos and sin take radians"),
            lambda pair, angle: rotate_2d(pair, np.radians(angle)),
        ),
        Mutant(
            "coordinates_swapped",
            N_(
                "your output has the two coordinates in the wrong order: "
                "return [x', y'] with x' = x cos - y sin first"
            ),
            lambda pair, angle: rotate_2d(pair, angle)[::-1],
        ),
    ),
    hides=("lessons.rotation.rotate_2d", "lessons.rotation.rotation_matrix",
           "lessons.rope._rotate_interleaved", "lessons.rope.rope_rotate", "lessons.rope._rotate",
           "lessons.rope._rotate_split_half", "lessons.rotation.basis_contributions",
           "lessons.precision.rotate_with_angles", "lessons.tiny_model.rotate"),
)
def _(pair, angle):
    return rotate_2d(pair, angle)


def _pair_frequencies_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for i in range(6):
        d = int(2 * rng.integers(2, 33))
        base = 10000.0 if i < 2 else float(10 ** rng.uniform(1.0, 6.0))
        cases.append({"d": d, "base": base})
    return cases


@function_exercise(
    "ex06_pair_frequencies",
    title=N_("Exercise 2b: the frequency table"),
    points=2,
    name="pair_frequencies",
    cases=_pair_frequencies_cases,
    where=lambda index, case: gettext("pair {pair}").format(pair=index[0]),
    practises="omega_i = base^(-2i/d), one frequency per pair",
    mutants=(
        Mutant(
            "i_not_2i",
            N_("your frequencies use i/d in the exponent: it is 2i/d, with i counting the pairs"),
            lambda d, base: base ** (-np.arange(d // 2) / d),
        ),
        Mutant(
            "exponent_sign",
            N_("your frequencies grow with i: the exponent is negative, base^(-2i/d)"),
            lambda d, base: base ** (np.arange(0, d, 2) / d),
        ),
        Mutant(
            "one_per_coordinate",
            N_("your table has one frequency per coordinate (d of them): there is one per pair, d/2 of them"),
            lambda d, base: base ** (-np.arange(d) / d),
        ),
    ),
    hides=("lessons.frequencies.pair_frequencies",),
)
def _(d, base):
    return pair_frequencies(d, base)


def _apply_rope_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for i in range(6):
        B, H = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        T = int(rng.integers(1, 6))
        d = int(rng.choice([4, 6, 8, 12, 16]))
        if i == 0:  # a small first case: the counterexample a learner can read
            B, H, T, d = 1, 1, 2, 4
            positions = list(range(T))
        else:
            start = int(rng.integers(0, 3000))
            window = np.arange(start, start + 50)
            positions = sorted(int(p) for p in rng.choice(window, size=T, replace=False))
        q = rng.normal(size=(B, H, T, d))
        k = rng.normal(size=(B, H, T, d))
        cases.append({"q": q.tolist(), "k": k.tolist(), "positions": positions})
    return cases


def _rope_where(index, case) -> str:
    which, b, h, t, j = index
    position = case["positions"][t] if case else t
    return gettext("{array}[{b}, {h}, {t}, {j}]: token {t} (position {position}), pair {pair}").format(
        array="q" if which == 0 else "k", b=b, h=h, t=t, j=j, position=f"{position:g}", pair=j // 2
    )


OFF_BY_ONE_HINT = N_(
    "your angles are one position off: a token at position p turns by p times each pair's "
    "frequency, so a token at position 0 does not turn; use `positions` as they are"
)


def _interleaved(x, positions, inv_freq):
    return apply_rope(x, x, positions, inv_freq=inv_freq)[0]


@function_exercise(
    "ex06_apply_rope",
    title=N_("Exercise 2c: apply_rope on [B, H, T, d]"),
    points=3,
    name="apply_rope",
    cases=_apply_rope_cases,
    where=_rope_where,
    practises="rotating every pair of every query and key by position x frequency, by broadcasting",
    mutants=(
        Mutant(
            "sign_flipped",
            SIGN_HINT,
            lambda q, k, positions: apply_rope(q, k, -np.asarray(positions, dtype=float)),
        ),
        Mutant(
            "positions_ignored",
            N_(
                "your output does not use the positions you are given: it is what "
                "tokens at 0, 1, 2, ... would get; build the angles from `positions`"
            ),
            lambda q, k, positions: apply_rope(q, k, np.arange(np.shape(q)[-2])),
        ),
        Mutant(
            "position_plus_one",
            OFF_BY_ONE_HINT,
            lambda q, k, positions: apply_rope(q, k, np.asarray(positions, dtype=float) + 1),
        ),
        Mutant(
            "position_minus_one",
            OFF_BY_ONE_HINT,
            lambda q, k, positions: apply_rope(q, k, np.asarray(positions, dtype=float) - 1),
        ),
        Mutant(
            "nothing_rotated",
            N_("your output is q and k unchanged: nothing is rotated"),
            lambda q, k, positions: (np.asarray(q), np.asarray(k)),
        ),
        Mutant(
            "i_not_2i",
            N_("your angles use frequencies base^(-i/d): the exponent is 2i/d, i counting the pairs"),
            lambda q, k, positions: apply_rope(
                q, k, positions, inv_freq=10000.0 ** (-np.arange(np.shape(q)[-1] // 2) / np.shape(q)[-1])
            ),
        ),
        Mutant(
            "split_half",
            N_(
                "your output pairs coordinate i with i + d/2 (the split-half layout): "
                "this exercise pairs adjacent coordinates (2i, 2i+1)"
            ),
            lambda q, k, positions: apply_rope(q, k, positions, layout="split_half"),
        ),
        Mutant(
            "only_q",
            N_("your k is not rotated: rotate the keys as well"),
            lambda q, k, positions: (apply_rope(q, q, positions)[0], np.asarray(k)),
        ),
    ),
    hides=("lessons.rope.apply_rope", "lessons.rope.rope_rotate", "lessons.rope._rotate",
           "lessons.rope._rotate_interleaved", "lessons.rope._rotate_split_half", "lessons.rope._cos_sin"),
)
def _(q, k, positions):
    return apply_rope(q, k, positions)


def _rotated_d4():
    return rope_rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [1.0])[0]


@value_exercise(
    "ex06_rotated_d4",
    title=N_("Exercise 2d: [1, 0, 1, 0] rotated at position 1"),
    points=1,
    name="rotated_d4",
    where=lambda index, case: gettext("coordinate {index}").format(index=index[0]),
    practises="the lesson's second exercise: two pairs turning at two speeds (d = 4, base 10000)",
    wrong_values=(
        (
            lambda: np.array([1.0, 0.0, 1.0, 0.0]),
            N_("this is x unrotated: turn each pair by position x its frequency"),
        ),
        (
            lambda: rope_rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [1.0], layout="split_half")[0],
            N_(
                "this pairs coordinate i with i + 2 (split-half): "
                "pair the adjacent coordinates (0, 1) and (2, 3)"
            ),
        ),
        (
            lambda: rope_rotate(
                np.array([[1.0, 0.0, 1.0, 0.0]]), [1.0], inv_freq=10000.0 ** (-np.arange(2) / 4)
            )[0],
            N_("the second pair turns with base^(-1/4): its frequency is base^(-2i/d) = base^(-2/4)"),
        ),
        (lambda: rope_rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [-1.0])[0], SIGN_HINT),
    ),
    hides=("lessons.rope.apply_rope", "lessons.rope.rope_rotate", "lessons.rope._rotate",
           "lessons.rope._rotate_interleaved", "lessons.rope._rotate_split_half", "lessons.rope._cos_sin"),
)
def _():
    return _rotated_d4()


written_question(
    "ex06_length_question",
    title=N_("Exercise 2, question: the length after the rotation"),
    points=1,
    prompt="Print the two angles of rotated_d4 and the length of x before and after the rotation. "
    "Explain why the lengths compare as they do, for any position and base.",
    practises="the lesson's second exercise: each pair is turned, never stretched",
)


# ------------------------------------------------------------ Exercise 3: pairs under one turn
def _under_one_turn_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"d": 8, "distance": int(rng.integers(2, 50)), "base": 10000.0}]
    for i in range(9):
        d = int(2 * rng.integers(2, 129))
        distance = int(10 ** rng.uniform(0, 5.5))
        base = 10000.0 if i < 5 else float(10 ** rng.uniform(3, 6))
        cases.append({"d": d, "distance": distance, "base": base})
    return cases


@function_exercise(
    "ex06_pairs_under_one_turn",
    title=N_("Exercise 3: pairs under one turn at a distance"),
    points=2,
    name="pairs_under_one_turn",
    cases=_under_one_turn_cases,
    tolerance=0.0,
    practises="which pairs can still tell a distance apart: distance x omega_i below one full turn",
    mutants=(
        Mutant(
            "counted_the_others",
            N_("you counted the pairs that HAVE made a full turn: count those below one turn"),
            lambda d, distance, base: d // 2 - pairs_under_one_turn(distance, d, base),
        ),
        Mutant(
            "half_turn",
            N_("one full turn is 2*pi radians, not pi"),
            lambda d, distance, base: int(np.count_nonzero(distance * pair_frequencies(d, base) < np.pi)),
        ),
        Mutant(
            "one_radian",
            N_("one full turn is 2*pi radians: compare the angle with 2*pi, not 1"),
            lambda d, distance, base: int(np.count_nonzero(distance * pair_frequencies(d, base) < 1.0)),
        ),
        Mutant(
            "i_not_2i",
            N_("your frequencies use i/d in the exponent: it is 2i/d"),
            lambda d, distance, base: int(
                np.count_nonzero(distance * base ** (-np.arange(d // 2) / d) < 2 * np.pi)
            ),
        ),
    ),
    hides=("lessons.frequencies.pairs_under_one_turn", "lessons.frequencies.turns_at_distance"),
)
def _(d, distance, base):
    return pairs_under_one_turn(distance, d, base)


# ------------------------------------------------------------ Exercise 4: a head that looks back
def _look_back_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"d": 4, "D": int(rng.integers(1, 4)), "base": 10000.0}]
    for i in range(5):
        base = 10000.0 if i < 3 else float(10 ** rng.uniform(2, 6))
        cases.append({"d": int(2 * rng.integers(2, 65)), "D": int(rng.integers(0, 50)), "base": base})
    return cases


def _pair_where(index, case) -> str:
    j = index[0]
    return gettext("coordinate {index} (pair {pair}, {part} part)").format(
        index=j, pair=j // 2, part="cos" if j % 2 == 0 else "sin"
    )


@function_exercise(
    "ex06_look_back_query",
    title=N_("Exercise 4a: a query that looks D tokens back"),
    points=2,
    name="look_back_query",
    cases=_look_back_cases,
    where=_pair_where,
    practises="building a head by hand: every pair's peak at the same distance D back (notebook 05)",
    mutants=(
        Mutant(
            "looks_ahead",
            N_(
                "your query peaks D tokens AHEAD: mind the sign of phi_i = -D omega_i "
                "(the key sits before the query)"
            ),
            lambda d, D, base: look_back_query(int(d), -int(D), base),
        ),
        Mutant(
            "no_frequency",
            N_("your angle is the same for every pair: pair i needs phi_i = -D omega_i, its own frequency"),
            lambda d, D, base: np.tile([np.cos(-D), np.sin(-D)], int(d) // 2),
        ),
        Mutant(
            "cos_sin_swapped",
            N_("your pairs are (sin phi_i, cos phi_i): pair i is (cos phi_i, sin phi_i)"),
            lambda d, D, base: look_back_query(int(d), int(D), base).reshape(-1, 2)[:, ::-1].reshape(-1),
        ),
    ),
    hides=("lessons.head.look_back_query",),
)
def _(d, D, base):
    return look_back_query(int(d), int(D), base)


def _look_back_weight(d, D, m, scale):
    query = rope_rotate(look_back_query(int(d), int(D))[None, :], [m])[0]
    keys = rope_rotate(same_content_keys(int(m) + 1, int(d)), np.arange(int(m) + 1))
    scores = scale * (keys @ query)
    weights = np.exp(scores - scores.max())
    return float(weights[int(m) - int(D)] / weights.sum())


def _weight_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"d": 8, "D": 1, "m": int(rng.integers(2, 6)), "scale": 1.0}]
    for _ in range(5):
        D = int(rng.integers(1, 6))
        cases.append(
            {
                "d": int(2 * rng.integers(4, 33)),
                "D": D,
                "m": int(rng.integers(D, 300)),
                "scale": float(rng.choice([0.5, 1.0, 2.0, 4.0])),
            }
        )
    return cases


@function_exercise(
    "ex06_look_back_weight",
    title=N_("Exercise 4b: the attention weight D tokens back"),
    points=2,
    name="look_back_weight",
    cases=_weight_cases,
    practises="the look-back head at work: softmax over rotated scores; scaling the query sharpens it",
    mutants=(
        Mutant(
            "scores_not_weights",
            N_(
                "your answer is the score, not the softmax weight: "
                "divide exp(score) by the sum over every key"
            ),
            lambda d, D, m, scale: float(
                scale
                * rope_rotate(look_back_query(int(d), int(D))[None, :], [m])[0]
                @ rope_rotate(same_content_keys(1, int(d)), [int(m) - int(D)])[0]
            ),
        ),
        Mutant(
            "no_scale",
            N_(
                "your weight does not change with the scale: "
                "multiply the scores by the scale before the softmax"
            ),
            lambda d, D, m, scale: _look_back_weight(d, D, m, 1.0),
        ),
        Mutant(
            "divided_by_sqrt_d",
            N_(
                "your scores are divided by sqrt(d), as notebook 05's attention does: this "
                "exercise takes the softmax over scale times (query dot key), with no sqrt(d)"
            ),
            lambda d, D, m, scale: _look_back_weight(d, D, m, float(scale) / np.sqrt(int(d))),
        ),
        Mutant(
            "scale_applied_twice",
            N_(
                "your scores are multiplied by the scale twice (the query times scale, and "
                "then the scores times scale again): apply it once, to the query or to the scores"
            ),
            lambda d, D, m, scale: _look_back_weight(d, D, m, float(scale) ** 2),
        ),
        Mutant(
            "key_at_m",
            N_(
                "your weight is that of the key at the query's own position m: the key D "
                "positions back sits at m - D"
            ),
            lambda d, D, m, scale: _weight_on(d, D, m, scale, int(m)),
        ),
    ),
    hides=("lessons.head.look_back_query",),
)
def _(d, D, m, scale):
    return _look_back_weight(d, D, m, scale)


def _weight_on(d, D, m, scale, key):
    query = rope_rotate(look_back_query(int(d), int(D))[None, :], [m])[0]
    keys = rope_rotate(same_content_keys(int(m) + 1, int(d)), np.arange(int(m) + 1))
    scores = scale * (keys @ query)
    weights = np.exp(scores - scores.max())
    return float(weights[key] / weights.sum())


# ------------------------------------------------------------ Exercise 5: write the tests
PUBLIC_MUTANTS = (
    Mutant(
        "no_rotation",
        N_("a candidate that rotates nothing: compare its output with rotated values"),
        rm.rope_no_rotation,
    ),
    Mutant(
        "norm_not_kept",
        N_(
            "a candidate whose 'rotation' changes the length of the vectors: "
            "a rotation keeps every pair's length"
        ),
        rm.rope_norm_not_kept,
    ),
    Mutant(
        "query_only",
        N_("a candidate that leaves the keys unrotated: check k as well as q"),
        rm.rope_query_only,
    ),
)
HIDDEN_MUTANTS = (
    Mutant("sign_flipped", "the angle's sign flipped for q and k alike", rm.rope_sign_flipped),
    Mutant(
        "positions_ignored",
        "tokens rotated at 0, 1, 2, ... whatever the positions given",
        rm.rope_positions_ignored,
    ),
    Mutant("i_not_2i", "frequencies base^(-i/d) instead of base^(-2i/d)", rm.rope_i_not_2i),
    Mutant("split_half", "the split-half layout instead of adjacent pairs", rm.rope_split_half),
    Mutant("v_rotated", "V rotated like K", rm.rope_v_rotated),
    Mutant("cache_reset", "the queries' positions counted again from 0", rm.rope_cache_reset),
    Mutant("float16_angles", "angles rounded to float16", rm.rope_float16_angles),
    Mutant(
        "rotary_width_off", "the last pair left unrotated (a rotary width of d - 2)", rm.rope_rotary_width_off
    ),
    Mutant("base_wrong", "base 500000 instead of 10000", rm.rope_base_wrong),
    Mutant("key_rotated_twice", "every key rotated twice", rm.rope_key_rotated_twice),
    Mutant(
        "positions_off_by_one", "every position counted from 1 instead of 0", rm.rope_positions_off_by_one
    ),
)

checker_exercise(
    "ex06_check_rope",
    title=N_("Exercise 5: write the tests"),
    points=4,
    name="check_rope",
    correct=Mutant("correct", "the right implementation", rm.rope_correct),
    public_mutants=PUBLIC_MUTANTS,
    hidden_mutants=HIDDEN_MUTANTS,
    practises="writing the checks that catch silent RoPE bugs (graded by the hidden buggy ones caught)",
)

written_question(
    "ex06_shift_question",
    title=N_("Exercise 5, question: what the shift check cannot see"),
    points=1,
    prompt="A candidate that flips the sign of every angle, for q and k alike, passes the shift check "
    "(move every position by the same amount: the scores do not change). Why does it pass, "
    "and which check in your check_rope catches it?",
    practises="why only a comparison with values computed another way (non-zero positions) catches some bugs",
)

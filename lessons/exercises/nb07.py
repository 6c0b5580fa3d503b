"""Exercises of notebook 07 (``solutions/07_added_vs_rotated.ipynb``).

Expected answers come from :mod:`lessons.sinusoidal`, never from the solution notebook. The
exercise is the notebook's experiment (seed 000): the same gap at several starts, scored with
rotated and with added positions.
"""

from __future__ import annotations

import numpy as np

from ..i18n import gettext
from ..sinusoidal import added_score, fixed_gap_scores, rotary_score, sinusoidal_encoding
from ._spec import N_, Mutant, function_exercise, written_question


def _gap_cases(rng: np.random.Generator) -> list[dict]:
    cases = [
        {
            "q": rng.normal(size=4).round(2).tolist(),
            "k": rng.normal(size=4).round(2).tolist(),
            "starts": [0, int(rng.integers(1, 10))],
            "gap": int(rng.integers(1, 4)),
        }
    ]
    for _ in range(5):
        d = int(2 * rng.integers(2, 33))
        starts = sorted(int(s) for s in rng.choice(5000, size=int(rng.integers(2, 6)), replace=False))
        cases.append(
            {
                "q": rng.normal(size=d).tolist(),
                "k": rng.normal(size=d).tolist(),
                "starts": starts,
                "gap": int(rng.integers(1, 20)),
            }
        )
    return cases


def _gap_where(index, case) -> str:
    row, col = index
    start = case["starts"][col] if case else col
    if row == 0:
        text = gettext("the rotary score at start {start} (row {row}, column {column})")
    else:
        text = gettext("the added score at start {start} (row {row}, column {column})")
    return text.format(start=f"{start:g}", row=row, column=col)


def _both(rotary, added):
    return np.array([rotary, added])


def _sin_cos_swapped(q, k, starts, gap):
    d = len(q)
    out = []
    for m in np.asarray(starts, dtype=int):
        pm, pn = sinusoidal_encoding([m, m + gap], d).reshape(2, d // 2, 2)[..., ::-1].reshape(2, d)
        out.append((np.asarray(q) + pm) @ (np.asarray(k) + pn))
    return _both(fixed_gap_scores(q, k, np.asarray(starts, dtype=int), int(gap))[0], out)


@function_exercise(
    "ex07_gap_scores",
    title=N_("Exercise 1: one gap at several starts, rotated and added"),
    points=3,
    name="gap_scores",
    cases=_gap_cases,
    where=_gap_where,
    practises="the fixed-gap experiment: rotary scores depend on the gap only, added ones on the start too",
    mutants=(
        Mutant(
            "rotary_sign_flipped",
            N_(
                "your rotary scores are what you get with the angle's sign flipped: "
                "look at the minus sign in the rotation"
            ),
            lambda q, k, starts, gap: _both(
                [rotary_score(q, k, -m, -(m + gap)) for m in np.asarray(starts, dtype=int)],
                fixed_gap_scores(q, k, np.asarray(starts, dtype=int), int(gap))[1],
            ),
        ),
        Mutant(
            "key_at_query_position",
            N_("your scores put the key at the query's position: the key sits at start + gap"),
            lambda q, k, starts, gap: _both(
                [rotary_score(q, k, m, m) for m in np.asarray(starts, dtype=int)],
                [added_score(q, k, m, m) for m in np.asarray(starts, dtype=int)],
            ),
        ),
        Mutant(
            "sin_cos_swapped",
            N_(
                "your added position vector has cos at the even coordinates: P[m] holds "
                "sin(m omega_i) at 2i and cos(m omega_i) at 2i + 1"
            ),
            _sin_cos_swapped,
        ),
        Mutant(
            "nothing_added",
            N_(
                "your added scores do not change with the positions: add P[m] to q and "
                "P[m + gap] to k before the dot product"
            ),
            lambda q, k, starts, gap: _both(
                fixed_gap_scores(q, k, np.asarray(starts, dtype=int), int(gap))[0],
                [float(np.dot(q, k))] * len(starts),
            ),
        ),
        Mutant(
            "rows_swapped",
            N_("your two rows are swapped: row 0 holds the rotary scores, row 1 the added ones"),
            lambda q, k, starts, gap: np.array(
                fixed_gap_scores(q, k, np.asarray(starts, dtype=int), int(gap))[::-1]
            ),
        ),
    ),
    hides=("lessons.sinusoidal.fixed_gap_scores",),
)
def _(q, k, starts, gap):
    starts = np.asarray(starts, dtype=int)
    return np.array(fixed_gap_scores(q, k, starts, int(gap)))


written_question(
    "ex07_spread_question",
    title=N_("Exercise 1, question: the two spreads"),
    points=1,
    prompt="Run gap_scores on the notebook's q and k at starts 3, 10, 100, 4000 with gap 2, and print "
    "each row's spread (largest minus smallest). Why is one spread tiny but not exactly zero, "
    "and why is the other large?",
    practises="reading the experiment: float64 rounding of the angle vs the position leaking into the score",
)

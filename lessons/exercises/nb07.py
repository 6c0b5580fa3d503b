"""Exercises of notebook 07 (``solutions/07_added_vs_rotated.ipynb``).

Expected answers come from :mod:`lessons.sinusoidal`, never from the solution notebook.
"""

from __future__ import annotations

import numpy as np

from ..sinusoidal import score_terms, sinusoidal_encoding
from ._spec import function_exercise


def _position_vector_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"m": 1, "d": 4}]
    for _ in range(7):
        cases.append({"m": int(rng.integers(0, 5000)), "d": int(2 * rng.integers(1, 33))})
    return cases


@function_exercise(
    "ex07_position_vector",
    title="Exercise 1: the sinusoidal position vector P[m]",
    points=1,
    name="position_vector",
    cases=_position_vector_cases,
)
def _(m, d):
    return sinusoidal_encoding([m], d)[0]


def _four_terms_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for i in range(8):
        d = 4 if i == 0 else int(2 * rng.integers(1, 33))
        m = int(rng.integers(0, 5000))
        n = m + int(rng.integers(-20, 21))
        q, k = rng.normal(size=(2, d))
        cases.append({"q": q.tolist(), "k": k.tolist(), "m": m, "n": max(n, 0)})
    return cases


@function_exercise(
    "ex07_four_terms",
    title="Exercise 2: the four terms of the added score",
    points=2,
    name="four_terms",
    cases=_four_terms_cases,
)
def _(q, k, m, n):
    return score_terms(q, k, m, n)

"""Exercises of notebook 08 (``solutions/08_layouts_caches_and_failures.ipynb``).

Expected answers come from :mod:`lessons.rope` and :mod:`lessons.kv_cache`, never from the
solution notebook.
"""

from __future__ import annotations

import numpy as np

from ..kv_cache import RotaryKVCache
from ..rope import rope_rotate
from ._spec import function_exercise, value_exercise

# Exercise 2's data, as the notebook shows it.
RAW_KEYS = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
RAW_QUERY = np.array([1.0, 0.0, 1.0, 0.0])


def _rotate_split_half_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"x": [1.0, 2.0, 3.0, 4.0], "position": 1}]
    for _ in range(7):
        d = int(2 * rng.integers(1, 17))
        cases.append({"x": rng.normal(size=d).tolist(), "position": int(rng.integers(0, 4000))})
    return cases


@function_exercise(
    "ex08_rotate_split_half",
    title="Exercise 1: rotate with split-half pairs",
    points=2,
    name="rotate_split_half",
    cases=_rotate_split_half_cases,
)
def _(x, position):
    return rope_rotate(np.asarray(x)[None, :], [position], layout="split_half")[0]


@value_exercise(
    "ex08_double_rotation_bug",
    title="Exercise 2: the decoding step's scores, fixed",
    points=2,
    name="fixed_scores",
)
def _():
    cache = RotaryKVCache(d=4)
    cache.append(RAW_KEYS, np.zeros((3, 1)))
    return cache.scores(RAW_QUERY)  # keys rotated once, the query at position 3

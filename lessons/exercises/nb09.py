"""Exercises of notebook 09 (``solutions/09_longer_contexts.ipynb``).

Expected answers come from :mod:`lessons.scaling`, never from the solution notebook.
"""

from __future__ import annotations

import numpy as np

from ..frequencies import pair_frequencies
from ..scaling import ntk_aware_frequencies, unseen_angle_pairs, yarn_frequencies
from ._spec import function_exercise, value_exercise


def _yarn_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"d": 64, "factor": 4.0, "original_length": 2048}]
    for _ in range(7):
        cases.append({
            "d": int(rng.choice([8, 16, 32, 64, 96, 128, 256])),
            "factor": float(rng.choice([2.0, 4.0, 8.0, 16.0, 32.0])),
            "original_length": int(rng.choice([256, 512, 1024, 2048, 4096, 8192, 32768])),
        })
    return cases


@function_exercise(
    "ex09_yarn_inv_freq",
    title="Exercise 1: YaRN's frequencies",
    points=3,
    name="yarn_inv_freq",
    cases=_yarn_cases,
)
def _(d, factor, original_length):
    return yarn_frequencies(d, factor, original_length)[0]


@value_exercise(
    "ex09_unseen_ntk",
    title="Exercise 2: pairs past their trained range under NTK-aware scaling",
    points=1,
    name="unseen_ntk_128",
)
def _():
    inv = pair_frequencies(128)
    return int(unseen_angle_pairs(inv, 4096, ntk_aware_frequencies(128, 4), 16384).sum())

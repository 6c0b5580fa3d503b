"""Exercises of notebook 06 (``solutions/06_exercises.ipynb``).

Every expected answer is computed here with the package's own code (``lessons.rotation``,
``lessons.frequencies``, ``lessons.rope``, ``lessons.kv_cache``), never with the solution
notebook's code, so a wrong solution cannot agree with itself.
"""

from __future__ import annotations

import numpy as np

from ..frequencies import angle_table, pair_frequencies
from ..kv_cache import RotaryKVCache
from ..rope import apply_rope, rope_rotate
from ..rotation import rotate_2d
from ._spec import function_exercise, value_exercise


def _rotated_dot(q_position: int, k_position: int) -> float:
    content = np.array([1.0, 0.0])
    return float(rotate_2d(content, float(q_position)) @ rotate_2d(content, float(k_position)))


# Exercise 1: the same content [1, 0] for Q and K, frequency 1.
@value_exercise("ex06_dot_2_3", title="Exercise 1a: the dot at positions 2 and 3", points=1,
                name="dot_2_3")
def _():
    return _rotated_dot(2, 3)


@value_exercise("ex06_dot_9_10", title="Exercise 1b: the dot at positions 9 and 10", points=1,
                name="dot_9_10")
def _():
    return _rotated_dot(9, 10)


# Exercise 2: d = 4, [1, 0, 1, 0] at position 1, theta = 10000.
@value_exercise("ex06_angles_d4", title="Exercise 2a: the two angles at position 1", points=1,
                name="angles_d4")
def _():
    return angle_table([1.0], pair_frequencies(4))[0]


@value_exercise("ex06_length_d4", title="Exercise 2b: the length after rotation", points=1,
                name="length_d4")
def _():
    return float(np.linalg.norm(rope_rotate(np.array([[1.0, 0.0, 1.0, 0.0]]), [1.0])))


# Exercise 3: functions, graded on inputs drawn at grading time.
def _rotate_pair_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"pair": [1.0, 0.0], "angle": float(rng.uniform(0.1, 3.0))}]
    for _ in range(7):
        scale = float(10 ** rng.uniform(-1, 2))
        pair = (scale * rng.normal(size=2)).tolist()
        cases.append({"pair": pair, "angle": float(rng.uniform(-20.0, 20.0))})
    return cases


@function_exercise(
    "ex06_rotate_pair",
    title="Exercise 3a: rotate one pair",
    points=2,
    name="rotate_pair",
    cases=_rotate_pair_cases,
)
def _(pair, angle):
    return rotate_2d(pair, angle)


def _pair_frequencies_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for i in range(6):
        d = int(2 * rng.integers(1, 33))
        base = 10000.0 if i < 2 else float(10 ** rng.uniform(1.0, 6.0))
        cases.append({"d": d, "base": base})
    return cases


@function_exercise(
    "ex06_pair_frequencies",
    title="Exercise 3b: the frequency table",
    points=2,
    name="pair_frequencies",
    cases=_pair_frequencies_cases,
)
def _(d, base):
    return pair_frequencies(d, base)


def _apply_rope_cases(rng: np.random.Generator) -> list[dict]:
    cases = []
    for i in range(6):
        B, H = int(rng.integers(1, 3)), int(rng.integers(1, 4))
        T = int(rng.integers(1, 6))
        d = int(rng.choice([2, 4, 6, 8, 12, 16]))
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


@function_exercise(
    "ex06_apply_rope",
    title="Exercise 3c: apply_rope on [B, H, T, d]",
    points=3,
    name="apply_rope",
    cases=_apply_rope_cases,
)
def _(q, k, positions):
    return apply_rope(q, k, positions)


# Exercise 4: silent bugs. Code that runs, keeps every shape, and computes the wrong numbers.
@value_exercise(
    "ex06_cache_bug",
    title="Exercise 4a: the KV-cache scores, fixed",
    points=2,
    name="fixed_scores",
)
def _():
    cache = RotaryKVCache(d=2)
    cache.append(np.array([[1.0, 0.0], [1.0, 0.0]]), np.zeros((2, 1)))
    return cache.scores(np.array([1.0, 0.0]))  # the query at its true position, 2


@value_exercise(
    "ex06_layout_bug",
    title="Exercise 4b: the split-half vector, rotated correctly",
    points=2,
    name="fixed_rotation",
)
def _():
    return rope_rotate(np.array([[1.0, 2.0, 3.0, 4.0]]), [1.0], layout="split_half")[0]

"""Exercises of notebook 10 (``solutions/10_does_it_help.ipynb``).

Expected answers come from :mod:`lessons.rope` and :mod:`lessons.frequencies`, never from
the solution notebook.
"""

from __future__ import annotations

import numpy as np

from ..i18n import gettext
from ..rope import rope_rotate
from ._spec import N_, Mutant, function_exercise


def _rope_backward_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"grad": [[1.0, 0.0]], "positions": [1]}]
    for _ in range(7):
        d = int(2 * rng.integers(1, 9))
        T = int(rng.integers(1, 7))
        cases.append({"grad": rng.normal(size=(T, d)).tolist(),
                      "positions": rng.integers(0, 300, size=T).tolist()})
    return cases


def _turned(grad, positions, sign=-1, layout="interleaved"):
    """The rows of ``grad`` turned by sign * (their position's angles)."""
    return rope_rotate(grad, sign * np.asarray(positions, dtype=np.float64), layout=layout)


def _where(index, case) -> str:
    if len(index) != 2 or not case:
        return gettext("entry {index}").format(index=list(index))
    t, j = index
    return gettext("row {row} (position {position}), coordinate {index} (pair {pair})").format(
        row=t, position=case["positions"][t], index=j, pair=j // 2
    )


@function_exercise(
    "ex10_rope_backward",
    title=N_("Exercise 1: the backward pass of RoPE"),
    points=2,
    name="rope_backward",
    cases=_rope_backward_cases,
    where=_where,
    practises="RoPE is linear and orthogonal: its backward is the rotation by the negative angles",
    mutants=(
        Mutant(
            "forward_rotation",
            N_(
                "your output turns the gradient by +angle, as the forward pass does: the backward of "
                "a rotation is its transpose, the turn by -angle"
            ),
            lambda grad, positions: _turned(grad, positions, sign=1),
        ),
        Mutant(
            "identity",
            N_(
                "your output is the gradient unchanged: RoPE is not the identity, each row must be "
                "turned back by its position's angles"
            ),
            lambda grad, positions: np.asarray(grad, dtype=np.float64),
        ),
        Mutant(
            "split_half",
            N_(
                "your output pairs x[i] with x[i + d/2] (split-half): this model pairs adjacent "
                "coordinates (2i, 2i+1)"
            ),
            lambda grad, positions: _turned(grad, positions, layout="split_half"),
        ),
    ),
    # Nothing hidden: the notebook's own training cells need lessons.tiny_model.unrotate, and
    # unrotate takes angles, not positions, so it is a step of the answer, not the answer.
    hides=(),
)
def _(grad, positions):
    return _turned(grad, positions)

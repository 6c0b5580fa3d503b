"""Exercises of notebook 09 (``solutions/09_longer_contexts.ipynb``).

Expected answers come from :mod:`lessons.scaling`, never from the solution notebook. YaRN's
cases always include four that need what the exercise text asks for: low below 0 (the clamp
at 0), low == high (the +0.001), a very long original length where high must be clamped
(then low >= high, and the clamp decides whether the pairs are kept or divided), and a high
between d/2 and d - 1, where only a clamp at d - 1 (not at the last pair's index, d/2 - 1)
gives the right ramp; so an answer without them does not pass.
"""

from __future__ import annotations

import math

import numpy as np

from ..frequencies import pair_frequencies
from ..i18n import gettext
from ..scaling import ntk_aware_frequencies, unseen_angle_pairs, yarn_frequencies
from ._spec import N_, Mutant, function_exercise


def _yarn_cases(rng: np.random.Generator) -> list[dict]:
    cases = [
        {
            "d": 8,
            "factor": float(rng.choice([2.0, 4.0])),
            "original_length": int(rng.integers(2, 7)),
        },  # low == high
        {
            "d": int(rng.choice([8, 16])),
            "factor": 4.0,
            "original_length": int(rng.integers(64, 190)),
        },  # low < 0
        {"d": 4, "factor": float(rng.choice([4.0, 8.0])), "original_length": 10**12},  # high clamped
        {"d": 16, "factor": float(rng.choice([4.0, 8.0])), "original_length": 32768},  # high 8, past d/2 - 1
    ]
    for _ in range(5):
        cases.append(
            {
                "d": int(rng.choice([8, 16, 32, 64, 96, 128, 256])),
                "factor": float(rng.choice([2.0, 4.0, 8.0, 16.0, 32.0])),
                "original_length": int(rng.choice([256, 512, 1024, 2048, 4096, 8192, 32768])),
            }
        )
    return cases


def _yarn_unclamped(d, factor, original_length, *, clamp=True, epsilon=True, reverse=False, high_cap=None):
    base = 10000.0
    inv = pair_frequencies(d, base)

    def corr(turns):
        return d * math.log(original_length / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = math.floor(corr(32)), math.ceil(corr(1))
    if clamp:
        low, high = max(low, 0), min(high, d - 1 if high_cap is None else high_cap)
    if epsilon and low == high:
        high += 0.001
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = np.clip((np.arange(d // 2) - low) / (high - low), 0, 1)
    if reverse:
        ramp = 1 - ramp
    return inv * (1 - ramp) + inv / factor * ramp


@function_exercise(
    "ex09_yarn_inv_freq",
    title=N_("Exercise 1: YaRN's frequencies"),
    points=3,
    name="yarn_inv_freq",
    cases=_yarn_cases,
    where=lambda index, case: gettext("pair {pair}").format(pair=index[0]),
    practises="YaRN's per-pair ramp between keeping and interpolating a frequency, with its clamps",
    mutants=(
        Mutant(
            "no_clamps",
            N_(
                "your ramp is wrong when low falls below 0 or high above d - 1: clamp low "
                "to at least 0 and high to at most d - 1"
            ),
            lambda d, factor, original_length: _yarn_unclamped(d, factor, original_length, clamp=False),
        ),
        Mutant(
            "high_clamped_at_last_pair",
            N_(
                "your ramp is wrong when high lies between d/2 and d - 1: clamp high at d - 1 (d, the head "
                "width, as transformers does), not at the last pair's index d/2 - 1"
            ),
            lambda d, factor, original_length: _yarn_unclamped(d, factor, original_length,
                                                               high_cap=d // 2 - 1),
        ),
        Mutant(
            "no_epsilon",
            N_("when low == high your ramp divides by zero: add 0.001 to high in that case"),
            lambda d, factor, original_length: _yarn_unclamped(d, factor, original_length, epsilon=False),
        ),
        Mutant(
            "ramp_reversed",
            N_(
                "your ramp divides the fast pairs: the pairs below low keep their "
                "frequency and those above high are divided by the factor"
            ),
            lambda d, factor, original_length: _yarn_unclamped(d, factor, original_length, reverse=True),
        ),
        Mutant(
            "all_divided",
            N_("you divided every frequency by the factor (linear interpolation): YaRN keeps the fast pairs"),
            lambda d, factor, original_length: pair_frequencies(d) / factor,
        ),
    ),
    hides=("lessons.scaling.yarn_frequencies", "lessons.scaling.yarn_correction_range",
           "lessons.scaling.yarn_ramp"),
)
def _(d, factor, original_length):
    return yarn_frequencies(d, factor, original_length)[0]


def _unseen_cases(rng: np.random.Generator) -> list[dict]:
    cases = [{"d": 16, "trained_length": 512, "length": 2048, "factor": 4.0}]
    for _ in range(7):
        trained = int(rng.choice([512, 1024, 2048, 4096, 8192]))
        factor = float(rng.choice([2.0, 4.0, 8.0, 16.0]))
        length = int(trained * factor * rng.choice([0.5, 1.0, 2.0]))
        cases.append(
            {
                "d": int(rng.choice([16, 32, 64, 96, 128, 256])),
                "trained_length": trained,
                "length": length,
                "factor": factor,
            }
        )
    return cases


def _unseen(d, trained_length, length, inv_freq):
    return int(unseen_angle_pairs(pair_frequencies(d), trained_length, inv_freq, length).sum())


@function_exercise(
    "ex09_unseen_pairs",
    title=N_("Exercise 2: pairs still past their trained range under NTK-aware scaling"),
    points=2,
    name="unseen_pairs",
    cases=_unseen_cases,
    tolerance=0.0,
    practises="which pairs meet angles they never saw in training, after NTK-aware scaling",
    mutants=(
        Mutant(
            "no_scaling",
            N_("your count is that of the unscaled frequencies: use the NTK-aware base theta * s^(d/(d-2))"),
            lambda d, trained_length, length, factor: _unseen(d, trained_length, length, pair_frequencies(d)),
        ),
        Mutant(
            "full_turn_ignored",
            N_(
                "you counted pairs whose trained range already reached a full turn: "
                "those have seen every angle"
            ),
            lambda d, trained_length, length, factor: int(
                np.sum(
                    length * ntk_aware_frequencies(d, factor)
                    > trained_length * pair_frequencies(d) * (1 + 1e-9)
                )
            ),
        ),
        Mutant(
            "linear_base",
            N_("your NTK-aware base is theta * s: it is theta * s^(d/(d-2))"),
            lambda d, trained_length, length, factor: _unseen(
                d, trained_length, length, pair_frequencies(d, 10000.0 * factor)
            ),
        ),
    ),
    hides=("lessons.scaling.unseen_angle_pairs", "lessons.scaling.ntk_aware_frequencies",
           "lessons.scaling.ntk_aware_base"),
)
def _(d, trained_length, length, factor):
    return _unseen(d, trained_length, length, ntk_aware_frequencies(d, factor))

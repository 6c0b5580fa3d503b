"""Pictures of long-context scalings (``09``).

* :func:`angle_coverage_figure` — for every pair, the angle it turns across the trained
  length and across the extended length, before and after a scaling; the pairs pushed past
  what training showed them are marked.
* :func:`frequency_ratio_figure` — each method's frequency divided by the default one, pair
  by pair: 1 keeps a pair, 1/s interpolates it fully.

The frequencies come from :mod:`lessons.scaling`; these functions only draw them.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._checks import check_positive
from ..scaling import angle_range, unseen_angle_pairs
from .style import (
    MAX_FIGURE_WIDTH,
    SMALL_FONT_SIZE,
    Margins,
    legend_outside,
    new_figure,
    plain_log_ticks,
    right_legend_margin,
)

TRAINED = "0.55"
UNSCALED = "#dc2626"
SCALED = "#2563eb"
COLORS = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#a16207", "#0891b2")


# Fixed margins (inches) instead of a layout engine: the panels sit where constrained layout put
# them, and printing measures no text. A row of panels needs 0.3 in above it (title) and 0.5 in
# below (tick labels, x label); the left margin holds tick labels up to "100000" and the y label.
COVERAGE_MARGINS = Margins(left=0.85, right=0.1, bottom=1.05, top=0.3, wspace=0.9, hspace=0.75)
RATIO_MARGINS = dict(left=0.6, bottom=0.5, top=0.3)


def _frequencies(methods: Mapping, n_pairs: int | None = None) -> dict[str, np.ndarray]:
    if not isinstance(methods, Mapping) or not methods:
        raise ValueError("methods must be a non-empty mapping of name -> per-pair frequencies")
    out = {}
    for name, inv in methods.items():
        inv = np.asarray(inv, dtype=np.float64)
        if inv.ndim != 1 or (n_pairs is not None and inv.shape[0] != n_pairs):
            expected = f"({n_pairs},)" if n_pairs is not None else "one-dimensional"
            raise ValueError(f"frequencies of {name!r} must have shape {expected}; got {inv.shape}")
        out[str(name)] = inv
    return out


def angle_coverage_figure(methods: Mapping, trained_inv_freq, trained_length, length, ncols=2):
    """One panel per method: each pair's angle range, trained vs extended, before and after (``09``).

    In every panel (log y axis): ``lines[0]`` the range over ``trained_length`` with the trained
    frequencies (grey), ``lines[1]`` over ``length`` with them unchanged (red, dashed),
    ``lines[2]`` over ``length`` with the method's frequencies (blue). Pairs that still meet
    angles training never showed them are circled. The dotted line is one full turn, 2 pi:
    a pair above it in training has seen every angle.
    """
    trained_inv = np.asarray(trained_inv_freq, dtype=np.float64)
    freqs = _frequencies(methods, trained_inv.shape[0])
    trained_length = check_positive(trained_length, "trained_length")
    length = check_positive(length, "length")
    n = len(freqs)
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = new_figure(nrows, ncols, width=MAX_FIGURE_WIDTH, height=3.3 * nrows + 0.9, squeeze=False,
                           margins=COVERAGE_MARGINS)
    pairs = np.arange(trained_inv.shape[0])
    for ax, (name, inv) in zip(axes.flat, freqs.items(), strict=False):
        unseen = unseen_angle_pairs(trained_inv, trained_length, inv, length)
        ax.plot(pairs, angle_range(trained_inv, trained_length), color=TRAINED, lw=3,
                label=f"trained: {trained_length:g} positions")
        ax.plot(pairs, angle_range(trained_inv, length), color=UNSCALED, lw=1.2, linestyle="--",
                label=f"{length:g} positions, no scaling")
        ax.plot(pairs, angle_range(inv, length), color=SCALED, lw=1.8,
                label=f"{length:g} positions, after the scaling")
        ax.plot(pairs[unseen], angle_range(inv, length)[unseen], "o", mfc="none", mec="black", ms=8,
                label="still past the trained range")
        ax.axhline(2 * np.pi, color="0.2", lw=0.8, linestyle=":", label="one full turn (2 pi)")
        ax.set_yscale("log")
        plain_log_ticks(ax.yaxis)  # 0.1, 1, ..., 10000: as clear as powers of ten, much faster
        ax.set_xlabel("pair i (0 = fastest)")
        ax.set_ylabel("angle range (rad, log)")
        ax.set_title(f"{name}: {int(unseen.sum())} pairs meet unseen angles")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    # One legend for all panels, under them (in the bottom margin): the panels stay free of it.
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncols=3, fontsize=SMALL_FONT_SIZE)
    return fig


def frequency_ratio_figure(
    methods: Mapping, default_inv_freq, factor, marks: Mapping | None = None, title=None,
    mark_label_y=0.83,
):
    """Each method's frequency divided by the default one, pair by pair (``09``).

    ``lines[i]`` is method i in the order given. ``marks`` maps a label to a pair index drawn
    as a vertical line (e.g. YaRN's low and high), labelled beside it (the first on its left,
    the others on their right) at height ``mark_label_y`` (choose one where no curve passes).
    Dotted lines at 1 (kept) and 1/s (fully interpolated). The legend sits outside the axes, on the right.
    """
    default = np.asarray(default_inv_freq, dtype=np.float64)
    freqs = _frequencies(methods, default.shape[0])
    factor = check_positive(factor, "factor")
    pairs = np.arange(default.shape[0])
    right = right_legend_margin(freqs, MAX_FIGURE_WIDTH, RATIO_MARGINS["left"])
    fig, ax = new_figure(width=MAX_FIGURE_WIDTH, height=4.4, margins=Margins(right=right, **RATIO_MARGINS))
    for (name, inv), color in zip(freqs.items(), COLORS * 3, strict=False):
        ax.plot(pairs, inv / default, "o-", color=color, ms=3, lw=1.4, label=name)
    ax.axhline(1.0, color="0.3", lw=0.8, linestyle=":")
    ax.axhline(1.0 / factor, color="0.3", lw=0.8, linestyle=":")
    ax.text(pairs[-1], 1.0, "kept ", ha="right", va="bottom", fontsize=SMALL_FONT_SIZE)
    ax.text(pairs[0] + 0.3, 1.0 / factor - 0.015, f"divided by s = {factor:g}", ha="left", va="top",
            fontsize=SMALL_FONT_SIZE)
    for j, (label, index) in enumerate((marks or {}).items()):
        ax.axvline(index, color="0.5", lw=0.8, linestyle="--")
        # the first mark labelled on its left (kept pairs), the others on their right
        side, offset = ("right", -0.25) if j == 0 else ("left", 0.25)
        ax.text(index + offset, mark_label_y, label, rotation=90, ha=side, va="center",
                fontsize=SMALL_FONT_SIZE)
    ax.set_ylim(0, 1.08)
    ax.set_xlabel("pair i (0 = fastest)")
    ax.set_ylabel("scaled frequency / default frequency")
    ax.set_title(title or "How much each method slows each pair")
    legend_outside(ax, where="right")
    return fig

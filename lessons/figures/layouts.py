"""Pictures for layouts and silent failures (``08``).

* :func:`pairing_figure` — which coordinates of a head are paired, interleaved vs split-half.
* :func:`checks_figure` — for each mistake, how far it moves the result from the correct
  one and how far the shift check moves it: what each check can and cannot see.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from .._checks import check_width
from .style import MAX_FIGURE_WIDTH, MIN_FONT_SIZE, SMALL_FONT_SIZE, Margins, legend_outside, new_figure

FLOOR = 1e-16  # changes below this are drawn at this height on the log axis
# Fixed room (inches) for tick labels, axis labels, titles and the legend below the axes: no
# layout engine runs when a notebook prints these figures (lessons.figures.style.Margins).
# The layout names of pairing_figure sit inside its axes; checks_figure's bottom holds tick
# labels of two lines, the axis label and a legend of two rows.
PAIRING_MARGINS = Margins(left=0.3, right=0.05, bottom=0.5, top=0.28)
CHECKS_MARGINS = Margins(left=0.8, right=0.1, bottom=1.35, top=0.28)


def pair_of(d, layout: str) -> np.ndarray:
    """The pair index of every coordinate 0 .. d-1 in ``layout`` (``08``)."""
    d = check_width(d, "d")
    if layout == "interleaved":
        return np.arange(d) // 2
    if layout == "split_half":
        return np.arange(d) % (d // 2)
    raise ValueError(f"layout must be 'interleaved' or 'split_half'; got {layout!r}")


def pairing_figure(d=8):
    """Two rows of d boxes, coloured by the pair each coordinate belongs to (``08``).

    The rows are interleaved (top) and split-half (bottom); box j of a row shows "j" and
    "pair p". Patches carry ``gid`` = "<layout>:<coordinate>:<pair>".
    """
    d = check_width(d, "d")
    cmap = plt.get_cmap("tab10" if d // 2 <= 10 else "viridis", d // 2)
    fig, ax = new_figure(width=min(MAX_FIGURE_WIDTH, max(7.0, 0.9 * d + 2.5)), height=3.0,
                         margins=PAIRING_MARGINS)
    for row, layout in enumerate(("interleaved", "split_half")):
        y = 1.3 * (1 - row)
        for j, p in enumerate(pair_of(d, layout)):
            box = Rectangle((j, y), 0.92, 1.0, color=cmap(int(p)), alpha=0.75, gid=f"{layout}:{j}:{p}")
            ax.add_patch(box)
            ax.text(j + 0.46, y + 0.66, str(j), ha="center", va="center", fontsize=11, weight="bold")
            ax.text(j + 0.46, y + 0.28, f"pair {p}", ha="center", va="center", fontsize=max(MIN_FONT_SIZE, 9))
        name = "interleaved (2i, 2i+1)" if layout == "interleaved" else "split-half (i, i + d/2)"
        ax.text(-0.2, y + 0.5, name, ha="right", va="center", fontsize=SMALL_FONT_SIZE)
    ax.set_xlim(-3.3, d + 0.1)
    ax.set_ylim(-0.1, 2.4)
    ax.set_xticks(np.arange(d) + 0.46, [str(j) for j in range(d)])
    ax.set_yticks([])
    ax.set_ylabel("layout")
    ax.set_xlabel("coordinate of the head (0 .. d-1); colour = the pair it is rotated with")
    ax.set_title(f"d = {d}: the same rotation, two ways of pairing the coordinates")
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return fig


def checks_figure(names: Sequence[str], against_reference, shift_change):
    """Grouped bars on a log axis: each mistake's change against a reference and under the shift check.

    ``against_reference[i]`` is the largest change of scores/outputs from the correct code;
    ``shift_change[i]`` the largest change when every position moves by the same amount.
    Values below 1e-16 are drawn at 1e-16 ("float rounding"). ``containers[0]`` holds the
    reference bars, ``containers[1]`` the shift-check bars.
    """
    names = [str(n) for n in names]
    ref = np.asarray(against_reference, dtype=np.float64)
    shift = np.asarray(shift_change, dtype=np.float64)
    if ref.shape != (len(names),) or shift.shape != (len(names),):
        raise ValueError(
            f"against_reference and shift_change must hold one value per name ({len(names)}); "
            f"got shapes {ref.shape} and {shift.shape}"
        )
    x = np.arange(len(names))
    fig, ax = new_figure(width=MAX_FIGURE_WIDTH, height=5.0, margins=CHECKS_MARGINS)
    ref_label, shift_label = "change against a reference table", "change when all positions shift by 5"
    ax.bar(x - 0.2, np.maximum(ref, FLOOR), width=0.4, color="#7c3aed", label=ref_label)
    ax.bar(x + 0.2, np.maximum(shift, FLOOR), width=0.4, color="#0d9488", label=shift_label)
    ax.axhline(1e-9, color="0.4", lw=0.8, linestyle="--", label="tolerance 1e-9: below it, the check passes")
    ax.set_yscale("log")
    ax.set_ylim(FLOOR / 3, 30)
    ax.yaxis.set_major_locator(LogLocator(base=10.0, subs=(1.0,), numticks=10))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "1" if v == 1 else f"{v:.0e}".replace("e-0", "e-")
                                               .replace("e+0", "e").replace("e+", "e")))
    ax.set_xticks(x, names, fontsize=SMALL_FONT_SIZE if len(names) <= 6 else MIN_FONT_SIZE + 1)
    ax.set_xlabel("the code under test")
    ax.set_ylabel("largest change (log scale)")
    ax.set_title("Which check sees which mistake")
    legend_outside(ax, where="below", ncols=2, bbox_to_anchor=(0.5, -0.24))
    return fig

"""Pictures of frequencies and distances (``02``, ``03``).

* :func:`cos_distance_figure` — one pair: the dot of two rotated [1, 0] arrows is
  cos(frequency * distance), which rises again after it falls (``02``).
* :func:`frequency_ladder_figure` — the frequency of every pair of a head, on a log axis (``03``).
* :func:`turn_count_figure` — how many pairs of a head are still under one full turn, against
  distance on a log axis (``03``).
* :func:`two_planes_figure` — a fast pair and a slow pair turning together (``03``).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .._checks import as_float_array, as_positions, check_positive, check_width
from ..frequencies import DEFAULT_BASE, angle_table, pair_frequencies, pairs_under_one_turn
from .arrows import draw_arrow, plane_axes
from .style import SMALL_FONT_SIZE, Margins, legend_outside, new_figure, plain_log_ticks, suptitle_at_top

# Fixed room (inches) for tick labels, axis labels, titles and the legend below the axes: no
# layout engine runs when a notebook prints these figures (lessons.figures.style.Margins).
COS_DISTANCE_MARGINS = Margins(left=0.7, right=0.2, bottom=0.8, top=0.3)
FREQUENCY_LADDER_MARGINS = Margins(left=0.85, right=0.05, bottom=0.5, top=0.3)
TURN_COUNT_MARGINS = Margins(left=0.6, right=0.15, bottom=0.5, top=0.3)
TWO_PLANES_MARGINS = Margins(left=0.7, right=0.05, bottom=0.15, top=0.3, wspace=0.75)


def cos_distance_figure(frequency=1.0, max_distance=20, marked=(2, 7)):
    """The dot of rotated [1, 0] arrows against their distance: cos(frequency * distance) (``02``).

    The curve is drawn for real distances; whole-number distances get a dot, and the
    ``marked`` distances are labelled with their value. ``ax.lines[0]`` is the curve.
    """
    frequency = check_positive(frequency, "frequency")
    max_distance = check_positive(max_distance, "max_distance")
    marked = as_float_array(marked, "marked", min_ndim=0).ravel()
    x = np.linspace(0.0, max_distance, 400)
    whole = np.arange(0, int(max_distance) + 1, dtype=np.float64)
    fig, ax = new_figure(width=8.0, height=3.6, margins=COS_DISTANCE_MARGINS)
    ax.plot(x, np.cos(frequency * x), color="darkcyan", lw=1.8, label="cos(frequency x distance)")
    ax.plot(whole, np.cos(frequency * whole), "o", color="darkcyan", ms=4, label="whole-number distances")
    ax.axhline(0, color="0.6", lw=0.8)
    for m in marked:
        y = float(np.cos(frequency * m))
        ax.plot([m], [y], "o", color="tab:red", ms=7, zorder=3)
        ax.annotate(f"distance {m:.0f}: {y:.4f}", (m, y), xytext=(10, -16 if y > 0 else 10),
                    textcoords="offset points", color="tab:red", fontsize=SMALL_FONT_SIZE,
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.9})
    ax.set_xlim(0, max_distance)
    ax.set_ylim(-1.15, 1.15)
    ax.set_xlabel("distance between Q and K (positions)")
    ax.set_ylabel("dot of the rotated arrows")
    title = f"One pair, frequency {frequency:g} rad per position: farther is not always lower"
    ax.set_title(title)
    legend_outside(ax, where="below")
    return fig


def frequency_ladder_figure(d=32, base=DEFAULT_BASE):
    """Every pair's frequency omega_i = base^(-2i/d), one rung per pair, on a log axis (``03``).

    ``ax.lines[0]`` holds (pair index, frequency).
    """
    d = check_width(d, "d")
    freqs = pair_frequencies(d, base)
    pairs = np.arange(len(freqs))
    fig, ax = new_figure(width=8.0, height=4.0, margins=FREQUENCY_LADDER_MARGINS)
    ax.plot(pairs, freqs, "o", color="tab:purple", ms=5)
    ax.vlines(pairs, freqs.min() / 2, freqs, color="tab:purple", lw=1, alpha=0.5)
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_ylim(freqs.min() / 2, 4.0)
    ax.set_xlabel(f"pair index i (coordinates 2i, 2i+1), d = {d}")
    ax.set_ylabel("frequency (radians per position)")
    ax.set_title(f"The frequency ladder, d = {d}, base {base:g}: pair 0 turns fastest")
    ax.annotate(f"pair 0: {freqs[0]:.4f}\n(fastest, highest)", (0, freqs[0]), xytext=(10, 2),
                textcoords="offset points", fontsize=SMALL_FONT_SIZE)
    ax.annotate(f"pair {pairs[-1]}: {freqs[-1]:.6f}\n(slowest, lowest)", (pairs[-1], freqs[-1]),
                xytext=(-70, 75), textcoords="offset points", fontsize=SMALL_FONT_SIZE,
                arrowprops=dict(arrowstyle="-", color="0.5", lw=0.8))
    ax.grid(True, which="major", color="0.9")
    return fig


def turn_count_figure(d=64, base=DEFAULT_BASE, marked=(1, 8, 16, 64, 256, 1000, 4096, 10000, 60000)):
    """Pairs that have not yet made one full turn, against distance on a log axis (``03``).

    ``ax.lines[0]`` is the count for distances from 1 to 10^5 (a staircase); ``ax.lines[1]``
    holds the ``marked`` distances and their counts.
    """
    d = check_width(d, "d")
    marked = as_positions(marked, "marked")
    if np.any(marked <= 0):
        raise ValueError(f"marked must hold distances greater than 0 (a log axis); got {marked.tolist()}")
    distances = np.logspace(0, 5, 600)
    counts = [pairs_under_one_turn(x, d, base) for x in distances]
    marked_counts = [pairs_under_one_turn(x, d, base) for x in marked]
    fig, ax = new_figure(width=8.0, height=4.0, margins=TURN_COUNT_MARGINS)
    ax.step(distances, counts, where="post", color="tab:purple", lw=1.5)
    ax.plot(marked, marked_counts, "o", color="tab:red", ms=5)
    for x, c in zip(marked, marked_counts, strict=True):
        ax.annotate(f"{c}", (x, c), xytext=(4, 4), textcoords="offset points", fontsize=SMALL_FONT_SIZE,
                    color="tab:red")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlim(0.8, 1.3e5)
    ax.set_ylim(-1, d // 2 + 3)
    ax.set_xlabel("distance (positions, log scale)")
    ax.set_ylabel("pairs under one full turn")
    ax.set_title(f"d = {d}: how many of the {d // 2} pairs have not yet turned once")
    ax.grid(True, which="major", color="0.9")
    return fig


def two_planes_figure(positions=range(7), pairs=(0, 4), d=32, base=DEFAULT_BASE):
    """Two pairs' planes side by side, the arrow [1, 0] drawn at each position (``03``).

    The same positions are marked in both planes: the fast pair sweeps around the circle
    while the slow one barely leaves the start. ``fig.axes[j]`` shows ``pairs[j]``; its
    arrows have gids ``"position <p>"``.
    """
    d = check_width(d, "d")
    positions = as_positions(positions)
    freqs = pair_frequencies(d, base)
    pairs = [int(p) for p in pairs]
    for p in pairs:
        if not 0 <= p < len(freqs):
            raise ValueError(f"pairs must be pair indices from 0 to {len(freqs) - 1} for d = {d}; got {p}")
    table = angle_table(positions, freqs)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, len(positions)))
    fig, axes = new_figure(1, len(pairs), width=min(4.2 * len(pairs), 10.0), height=4.6,
                           margins=TWO_PLANES_MARGINS, squeeze=False)
    for ax, p in zip(axes[0], pairs, strict=True):
        plane_axes(ax, 1.35, circle=True, grid=False, title=f"pair {p}: {freqs[p]:.4f} rad per position",
                   xlabel=f"coordinate {2 * p}", ylabel=f"coordinate {2 * p + 1}")
        for pos, angle, color in zip(positions, table[:, p], colors, strict=True):
            head = np.array([np.cos(angle), np.sin(angle)])
            draw_arrow(ax, (0, 0), head, color=color, width=1.4, gid=f"position {pos:g}")
            ax.text(*(1.14 * head), f"{pos:g}", color=color, fontsize=SMALL_FONT_SIZE,
                    ha="center", va="center")
    first, last = positions[0], positions[-1]
    suptitle_at_top(fig, f"[1, 0] in two planes of one head (d = {d}), positions {first:g} to {last:g}")
    return fig

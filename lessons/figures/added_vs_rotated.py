"""Pictures of added vs rotated positions (``07``).

* :func:`fixed_gap_figure` — the score of q at start m and k at m + gap, for every start:
  the rotary score is a flat line, the additive one moves; beside it, the four terms of the
  additive score, of which only the two cross terms move.
* :func:`norm_figure` — the length of q + P[m] and of R(m) q against m.

Every function returns a :class:`matplotlib.figure.Figure`; the notebook cell ends with
``plt.show()``. The scores come from :mod:`lessons.sinusoidal` and :mod:`lessons.rope`.
"""

from __future__ import annotations

import numpy as np

from .._checks import as_float_array, as_positions
from ..frequencies import DEFAULT_BASE
from ..rope import rope_rotate
from ..sinusoidal import sinusoidal_encoding
from .style import MAX_FIGURE_WIDTH, SMALL_FONT_SIZE, Margins, legend_outside, new_figure, plain_log_ticks

ROTARY = "#1b7837"
ADDITIVE = "#c2410c"
TERM_COLORS = ("0.35", "#2563eb", "#9333ea", "0.65")
TERM_LABELS = ("q.k (no position)", "q.P[n] (n only)", "P[m].k (m only)", "P[m].P[n] (distance only)")
# Fixed room (inches) for tick labels, axis labels, titles and the legends outside the axes:
# no layout engine runs when a notebook prints these figures (lessons.figures.style.Margins).
# The left room holds y tick labels of up to four characters ("-0.5", "-10").
FIXED_GAP_MARGINS = Margins(left=0.65, right=0.15, bottom=1.3, top=0.28, wspace=0.8)
NORM_MARGINS = Margins(left=0.65, right=2.0, bottom=0.5, top=0.28)


def _qk(q, k):
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    if q.ndim != 1 or q.shape != k.shape:
        raise ValueError(f"q and k must be 1-D vectors of the same width; got q {q.shape} and k {k.shape}")
    return q, k


def sweep_scores(q, k, starts, gap, base=DEFAULT_BASE):
    """Vectorised scores for many starts: ``(rotary, additive, terms [4, len(starts)])``."""
    q, k = _qk(q, k)
    starts = as_positions(starts, "starts")
    d = q.shape[0]
    qr = rope_rotate(np.tile(q, (len(starts), 1)), starts, base=base)
    kr = rope_rotate(np.tile(k, (len(starts), 1)), starts + gap, base=base)
    rotary = np.sum(qr * kr, axis=1)
    pm = sinusoidal_encoding(starts, d, base)
    pn = sinusoidal_encoding(starts + gap, d, base)
    terms = np.stack([np.full(len(starts), q @ k), pn @ q, pm @ k, np.sum(pm * pn, axis=1)])
    return rotary, terms.sum(axis=0), terms


def fixed_gap_figure(q, k, marked=(3, 10, 100, 4000), gap=2, last_start=5000, base=DEFAULT_BASE):
    """Scores at a fixed gap against the start, and the four terms of the additive one (``07``).

    Starts 1 .. ``last_start`` on a log axis; the ``marked`` starts get large dots. Left axis:
    ``lines[0]`` additive, ``lines[1]`` rotary. Right axis: one line per term, in the order
    q.k, q.P[n], P[m].k, P[m].P[n].
    """
    marked = as_positions(marked, "marked")
    starts = np.arange(1, int(last_start) + 1, dtype=np.float64)
    rotary, additive, terms = sweep_scores(q, k, starts, gap, base)
    m_rotary, m_additive, _ = sweep_scores(q, k, marked, gap, base)
    fig, (left, right) = new_figure(1, 2, width=MAX_FIGURE_WIDTH, height=4.6, margins=FIXED_GAP_MARGINS)
    left.plot(starts, additive, color=ADDITIVE, lw=0.6, label="added positions (sinusoidal)")
    left.plot(starts, rotary, color=ROTARY, lw=2.0, label="rotated positions (RoPE)")
    left.plot(marked, m_additive, "o", color=ADDITIVE, mec="white", ms=8, zorder=3,
              label="the four starts of the table")
    left.plot(marked, m_rotary, "o", color=ROTARY, mec="white", ms=8, zorder=3)
    # Value labels sit in a band above the data, each joined to its dot by a thin line, so
    # they cover no trace and stay inside the axes (the last one is right-aligned).
    low, high = min(additive.min(), rotary.min()), max(additive.max(), rotary.max())
    span = high - low
    left.set_ylim(low - 0.05 * span, high + 0.32 * span)
    for j, (m, y) in enumerate(zip(marked, m_additive, strict=True)):
        last = j == len(marked) - 1
        left.annotate(
            f"{y:.2f}", (m, y), xytext=(m, high + 0.2 * span), textcoords="data",
            ha="right" if last else "center", va="center", fontsize=SMALL_FONT_SIZE, color=ADDITIVE,
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"},
            arrowprops={"arrowstyle": "-", "color": ADDITIVE, "lw": 0.6, "shrinkA": 0, "shrinkB": 4},
        )
    left.set_xscale("log")
    plain_log_ticks(left.xaxis)
    left.set_xlabel(f"start m of the query (log); key at m + {gap:g}")
    left.set_ylabel("score with positions")
    left.set_title(f"Gap fixed at {gap}: rotary stays, added moves")
    legend_outside(left, where="below", ncols=1)
    for row, color, label in zip(terms, TERM_COLORS, TERM_LABELS, strict=True):
        right.plot(starts, row, color=color, lw=1.2 if np.ptp(row) < 1e-9 else 0.6, label=label)
    right.set_xscale("log")
    plain_log_ticks(right.xaxis)
    right.set_xlabel("start m of the query (log)")
    right.set_ylabel("term of (q + P[m]) . (k + P[n])")
    right.set_title("Only the two cross terms move")
    legend_outside(right, where="below", ncols=2)
    return fig


def norm_figure(q, last_position=200, base=DEFAULT_BASE):
    """Length of q + P[m] (added) and of R(m) q (rotated) against the position m (``07``).

    ``lines[0]`` added, ``lines[1]`` rotated, ``lines[2]`` the length of q itself.
    """
    q = as_float_array(q, "q")
    if q.ndim != 1:
        raise ValueError(f"q must be a 1-D vector; got shape {q.shape}")
    positions = np.arange(0, int(last_position) + 1, dtype=np.float64)
    added = np.linalg.norm(q + sinusoidal_encoding(positions, q.shape[0], base), axis=1)
    rotated = np.linalg.norm(rope_rotate(np.tile(q, (len(positions), 1)), positions, base=base), axis=1)
    fig, ax = new_figure(width=9.0, height=3.8, margins=NORM_MARGINS)
    ax.plot(positions, added, color=ADDITIVE, lw=1.2, label="|q + P[m]| (added)")
    ax.plot(positions, rotated, color=ROTARY, lw=2.5, label="|R(m) q| (rotated)")
    ax.axhline(float(np.linalg.norm(q)), color="0.3", lw=0.8, linestyle=":", label="|q|")
    ax.set_xlabel("position m")
    ax.set_ylabel("length of the vector")
    ax.set_title("Rotation keeps the length of q; addition changes it")
    legend_outside(ax, where="right")
    return fig

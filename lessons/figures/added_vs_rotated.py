"""Pictures of added vs rotated positions (``07``).

* :func:`fixed_gap_figure` — the score of q at start m and k at m + gap, for every start:
  the rotary score is a flat line, the additive one moves; beside it, the four terms of the
  additive score, of which only the two cross terms move.
* :func:`norm_figure` — the length of q + P[m] and of R(m) q against m.

Every function returns a :class:`matplotlib.figure.Figure`; the notebook cell ends with
``plt.show()``. The scores come from :mod:`lessons.sinusoidal` and :mod:`lessons.rope`.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullLocator

from .._checks import as_float_array, as_positions
from ..frequencies import DEFAULT_BASE
from ..rope import rope_rotate
from ..sinusoidal import sinusoidal_encoding

DPI = 90
ROTARY = "#1b7837"
ADDITIVE = "#c2410c"
TERM_COLORS = ("0.35", "#2563eb", "#9333ea", "0.65")
TERM_LABELS = ("q.k (no position)", "q.P[n] (n only)", "P[m].k (m only)", "P[m].P[n] (n - m only)")


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
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2), dpi=DPI, layout="constrained")
    left.plot(starts, additive, color=ADDITIVE, lw=0.6, label="added positions (sinusoidal)")
    left.plot(starts, rotary, color=ROTARY, lw=2.0, label="rotated positions (RoPE)")
    left.plot(marked, m_additive, "o", color=ADDITIVE, ms=7, label="the four starts of the experiment")
    left.plot(marked, m_rotary, "o", color=ROTARY, ms=7)
    for m, y in zip(marked, m_additive, strict=True):
        left.annotate(
            f"{y:.2f}", (m, y), textcoords="offset points", xytext=(6, 6), fontsize=9, color=ADDITIVE
        )
    left.set_xscale("log")
    left.xaxis.set_minor_locator(NullLocator())
    left.set_xlabel(f"start m of the query (log scale); the key sits at m + {gap:g}")
    left.set_ylabel("score q . k with positions")
    left.set_title(f"Gap fixed at {gap}: the rotary score stays, the added one moves")
    left.legend(loc="upper left", fontsize=8)
    for row, color, label in zip(terms, TERM_COLORS, TERM_LABELS, strict=True):
        right.plot(starts, row, color=color, lw=1.2 if np.ptp(row) < 1e-9 else 0.6, label=label)
    right.set_xscale("log")
    right.xaxis.set_minor_locator(NullLocator())
    right.set_xlabel("start m of the query (log scale)")
    right.set_ylabel("term of (q + P[m]) . (k + P[n])")
    right.set_title("The four terms: only the two cross terms move")
    right.legend(loc="lower left", fontsize=8)
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
    fig, ax = plt.subplots(figsize=(9.0, 3.6), dpi=DPI, layout="constrained")
    ax.plot(positions, added, color=ADDITIVE, lw=1.2, label="|q + P[m]| (added)")
    ax.plot(positions, rotated, color=ROTARY, lw=2.5, label="|R(m) q| (rotated)")
    ax.axhline(float(np.linalg.norm(q)), color="0.3", lw=0.8, linestyle=":", label="|q|")
    ax.set_xlabel("position m")
    ax.set_ylabel("length of the vector")
    ax.set_title("Rotation keeps the length of q; addition changes it")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    return fig

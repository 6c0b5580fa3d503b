"""Pictures of the tiny trained head (``10``).

* :func:`training_curves_figure` — the training loss of the four runs, side by side.
* :func:`accuracy_by_length_figure` — median accuracy and the spread over seeds at each
  test length, one group of bars per method.
* :func:`accuracy_by_position_figure` — accuracy at each position of length-256 sequences:
  where each method stops working.
* :func:`attention_row_figure` — where one query of a long sequence puts its weight.
* :func:`pairs_figure` — inside the RoPE head: each pair's share of the distance part, and each pair's
  score against the distance, with the distances seen in training shaded.

Every function returns a :class:`matplotlib.figure.Figure` in the house style
(:mod:`lessons.figures.style`); the numbers come from :mod:`lessons.tiny_model`.
"""

from __future__ import annotations

import numpy as np

from ..tiny_model import (
    METHOD_NAMES,
    METHODS,
    Run,
    SweepResult,
    attention_weights,
    correct,
    look_back_coefficients,
    pair_coefficients,
    pair_score_by_distance,
)
from .style import FIGURE_WIDTH, Margins, legend_outside, new_figure, plain_log_ticks, right_legend_margin

COLORS = {"none": "0.45", "sinusoidal": "#c2410c", "learned": "#2563eb", "rope": "#1b7837"}
SEEN = "#fde68a"  # the distances (or positions) seen in training

# Fixed margins (inches) instead of a layout engine, where constrained layout put the panels:
# 0.3 in above for the title, 0.5 in below for tick labels and x label; the left margin holds
# the y label and tick labels a digit longer than the notebook's. A legend on the right gets a
# right margin as wide as its longest label needs (lessons.figures.style.right_legend_margin).
LEFT, BOTTOM, TOP = 0.7, 0.5, 0.3


def _method_color(method: str) -> str:
    return COLORS.get(method, "0.2")


def _legend_margins(labels, *, left: float = LEFT, bottom: float = BOTTOM) -> Margins:
    """Fixed margins for one axes, with room on the right for :func:`legend_outside` of ``labels``."""
    right = right_legend_margin(labels, FIGURE_WIDTH, left)
    return Margins(left=left, right=right, bottom=bottom, top=TOP)


def training_curves_figure(runs: dict[str, Run], *, window: int = 10):
    """The loss per step of each run (a running mean over ``window`` steps), log scale."""
    if not runs:
        raise ValueError("runs must name at least one run")
    labels = [METHOD_NAMES.get(method, method) for method in runs]
    fig, ax = new_figure(height=3.8, margins=_legend_margins(labels))
    for method, run in runs.items():
        losses = run.losses
        w = min(window, len(losses))
        smooth = np.convolve(losses, np.ones(w) / w, mode="valid")
        steps = np.arange(w, len(losses) + 1)
        ax.plot(steps, smooth, color=_method_color(method), label=METHOD_NAMES.get(method, method))
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel("training step")
    ax.set_ylabel("cross-entropy (log scale)")
    ax.set_title(f"Training loss, same budget, length {next(iter(runs.values())).config.train_length}")
    legend_outside(ax)
    return fig


def accuracy_by_length_figure(results: dict[str, SweepResult], *, chance: float | None = None):
    """Bars: the median accuracy over seeds at each test length; whiskers: lowest to highest seed."""
    if not results:
        raise ValueError("results must name at least one sweep")
    names = list(results)
    lengths = next(iter(results.values())).lengths
    chance_label = None
    if chance is not None:  # a legend entry: a label on the line would sit on the bars
        chance_label = (f"chance (1 in {round(1 / chance)})" if abs(1 / chance - round(1 / chance)) < 1e-9
                        else f"chance ({100 * chance:.1f}%)")
    labels = names + ([chance_label] if chance_label else [])
    fig, ax = new_figure(height=3.8, margins=_legend_margins(labels, left=0.65, bottom=0.3))  # no x label
    width = 0.8 / len(names)
    x = np.arange(len(lengths))
    for j, name in enumerate(names):
        r = results[name]
        med, low, high = 100 * r.median(), 100 * r.low(), 100 * r.high()
        pos = x - 0.4 + width * (j + 0.5)
        ax.bar(pos, med, width * 0.9, color=_method_color(r.config.method),
               alpha=1.0 if r.config.lengths is None and r.config.train_length == 16 else 0.55,
               label=name)
        ax.errorbar(pos, med, yerr=[med - low, high - med], fmt="none", ecolor="black", capsize=3, lw=1)
    if chance is not None:
        ax.axhline(100 * chance, color="0.3", ls=":", lw=1.2, label=chance_label)
    ax.set_xticks(x, [f"length {n}" for n in lengths])
    ax.set_ylim(0, 105)
    ax.set_ylabel("accuracy (%)")
    ax.set_title("Median over seeds (bars) and lowest to highest seed (whiskers)")
    legend_outside(ax)
    return fig


def accuracy_by_position_figure(runs: dict[str, Run], *, length: int = 256, window: int = 8):
    """Accuracy at each position t >= D of test sequences of ``length``, averaged over
    ``window`` neighbouring positions; the trained positions are shaded."""
    if not runs:
        raise ValueError("runs must name at least one run")
    fig, ax = new_figure(height=3.8, margins=_legend_margins(runs, left=0.65))  # y ticks 0 .. 100
    trained = max(r.config.table_rows for r in runs.values())
    ax.axvspan(0, trained - 1, color=SEEN, alpha=0.6, lw=0)
    ax.text(trained + 2, 103, f"positions 0..{trained - 1} seen in training", fontsize=10, va="top")
    for name, run in runs.items():
        per_position = correct(run, length).mean(axis=0) * 100
        positions = np.arange(run.config.distance, length)
        w = min(window, len(per_position))
        smooth = np.convolve(per_position, np.ones(w) / w, mode="valid")
        ax.plot(positions[w - 1 :], smooth, color=_method_color(run.config.method), label=name)
    ax.set_xlim(0, length)
    ax.set_ylim(0, 105)
    ax.set_xlabel(f"position in a sequence of length {length}")
    ax.set_ylabel(f"accuracy (%), mean of {window} positions")
    ax.set_title("Where each method stops working")
    legend_outside(ax)
    return fig


def attention_row_figure(run: Run, tokens, query: int, *, mark=()):
    """The weights of the query at position ``query`` of one sequence, against the distance back."""
    tokens = np.asarray(tokens)
    if tokens.ndim != 1:
        raise ValueError(f"tokens must be one sequence (1-D); got shape {tokens.shape}")
    if not 0 <= query < len(tokens):
        raise ValueError(f"query must be a position in 0..{len(tokens) - 1}; got {query}")
    for d in mark:
        if not 0 <= d <= query:
            raise ValueError(f"mark must hold distances back in 0..{query} (the query's position); got {d}")
    weights = attention_weights(run, tokens[None, : query + 1])[0, query]
    distances = query - np.arange(query + 1)
    fig, ax = new_figure(height=3.6, margins=Margins(left=0.75, right=0.15, bottom=BOTTOM, top=TOP))
    seen = run.config.table_rows - 1
    ax.axvspan(0, seen, color=SEEN, alpha=0.6, lw=0)
    ax.text(seen + 2, 0.97, f"distances 0..{seen} seen in training", fontsize=10, va="top",
            transform=ax.get_xaxis_transform())
    ax.vlines(distances, 0, weights, color=_method_color(run.config.method), lw=1.6)
    top = max(0.05, 1.2 * float(weights.max()))
    for d in mark:
        # A low bar gets its label well above the nearby bars, joined to it by a leader line.
        low = weights[query - d] < 0.5 * top
        leader = dict(arrowstyle="-", color="0.35", lw=0.8, shrinkA=0, shrinkB=2)
        ax.annotate(f"{d} back: {weights[query - d]:.2f}", (d, weights[query - d]),
                    xytext=(8, 0.4 * top) if low else (8, 6),
                    textcoords=("offset points", "data") if low else "offset points", fontsize=10,
                    arrowprops=leader if low else None)
    ax.set_xlim(-2, query + 2)
    ax.set_ylim(0, top)
    ax.set_xlabel("distance back from the query (query position minus key position)")
    ax.set_ylabel("attention weight")
    ax.set_title(f"{METHOD_NAMES[run.config.method]} head, query at position {query}")
    return fig


def pairs_figure(run: Run, *, max_distance: int = 130, mark=(1, 120)):
    """Inside a RoPE head: (left) each pair's amplitude |c_i| as a share, next to the hand-built
    look-back head's equal shares; (right) each pair's token-averaged score against the
    distance back, and their sum."""
    for d in mark:
        if not 0 <= d <= max_distance:
            raise ValueError(f"mark must hold distances in 0..max_distance ({max_distance}); got {d}")
    c = pair_coefficients(run)
    built = look_back_coefficients(run.config)
    pairs = np.arange(len(c))
    # the bottom margin holds the x labels and the legends under the panels
    margins = Margins(left=0.7, right=0.1, bottom=0.85, top=TOP, wspace=0.8)
    fig, (left, right) = new_figure(1, 2, width=10.0, height=4.0, width_ratios=[1, 2.2], margins=margins)
    left.bar(pairs - 0.2, np.abs(c) / np.abs(c).sum(), 0.4, color=_method_color("rope"), label="trained")
    left.bar(pairs + 0.2, np.abs(built) / np.abs(built).sum(), 0.4, color="0.6", label="built by hand")
    left.set_xticks(pairs)
    left.set_xlabel("pair i (0 = fastest)")
    left.set_ylabel("share of the token-averaged |c_i|")
    left.set_title("The distance part, by pair")
    legend_outside(left, where="below")

    distances = np.arange(max_distance + 1)
    per_pair = pair_score_by_distance(run, distances)
    seen = run.config.table_rows - 1
    right.axvspan(0, seen, color=SEEN, alpha=0.6, lw=0)
    top = np.argsort(-np.abs(c))[:2]
    for i, color in zip(sorted(top), ("tab:purple", "tab:olive"), strict=True):
        right.plot(distances, per_pair[:, i], color=color, lw=1.2, label=f"pair {i}")
    total = per_pair.sum(axis=1)
    right.plot(distances, total, color="black", lw=1.6, label="sum of all pairs")
    right.axhline(total[run.config.distance], color="black", ls=":", lw=1)
    for d in mark:
        right.plot([d], [total[d]], "o", color="crimson", ms=5)
        right.annotate(f"{d} back", (d, total[d]), xytext=(4, 8), textcoords="offset points", fontsize=10)
    right.set_xlabel("distance back (query position minus key position)")
    right.set_ylabel("score, averaged over tokens")
    right.set_title(f"Scores by distance (shaded: seen in training, 0..{seen})")
    legend_outside(right, where="below")
    return fig


__all__ = [
    "METHODS",
    "accuracy_by_length_figure",
    "accuracy_by_position_figure",
    "attention_row_figure",
    "pairs_figure",
    "training_curves_figure",
]

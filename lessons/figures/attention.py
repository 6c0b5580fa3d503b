"""Pictures of scores and attention reads: annotated heatmaps and grouped bars.

Used by ``notebooks/04_the_code.ipynb`` (the dot table of rotated queries and keys, the same
table after shifting every position, causal attention weights) and
``notebooks/05_the_token_swap.ipynb`` (the weights and outputs of one read, in the original
and the swapped order, without and with RoPE).

Every function returns a :class:`matplotlib.figure.Figure`; the notebook cell calls it and
ends with ``plt.show()``. Nothing here computes RoPE or attention: the numbers come in
already computed by :mod:`lessons.rope` and :mod:`lessons.attention`, so a picture shows
exactly what the notebook printed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, ScalarFormatter

from .._checks import as_positions
from .style import SMALL_FONT_SIZE, Margins, colorbar_beside, new_figure, text_inches

DPI = 100
CMAP = "RdBu_r"  # negative blue, zero white, positive red: the sign of a score is visible
MASKED_COLOR = "#d9d9d9"

# The panels sit at fixed margins (inches; lessons.figures.style.Margins): no layout engine
# runs when a notebook prints them. The room beside a heatmap follows its tick labels, whose
# width is known before anything is drawn (the labels' characters, the colour scale's limits).
HEATMAP_BOTTOM = 0.5      # tick labels and "key position"
HEATMAP_TOP = 0.28        # one title
HEATMAP_TOP_SUPTITLE = 0.56  # a figure title above the panels' titles
LABEL_ROOM = 0.36         # "query position", its pad and the ticks, without the tick labels
CBAR_PAD = 0.16           # heatmap to colour bar
CBAR_WIDTH = 0.16         # the bar
CBAR_ROOM = CBAR_PAD + CBAR_WIDTH + 0.36  # + ticks, label and its pad, without the tick labels
SWAP_MARGINS = Margins(left=0.65, right=0.1, bottom=0.8, top=0.55, wspace=0.8)


def _as_table(values, name: str) -> np.ndarray:
    table = np.asarray(values, dtype=np.float64)
    if table.ndim != 2 or table.size == 0:
        raise ValueError(f"{name} must be a non-empty 2-D table [rows, columns]; got shape {table.shape}")
    if np.any(np.isnan(table)):
        raise ValueError(f"{name} must not hold NaN (use -inf only for masked entries)")
    return table


def _tick_labels(labels, n: int, name: str) -> list[str]:
    if labels is None:
        return [str(i) for i in range(n)]
    labels = [str(x) for x in labels]
    if len(labels) != n:
        raise ValueError(f"{name} must give one label per entry: expected {n}, got {len(labels)}")
    return labels


def _label_query_key_axes(ax, title: str) -> None:
    """Title a [query, key] table and name its axes."""
    ax.set_title(title)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")


def _draw_heatmap(
    ax,
    table: np.ndarray,
    *,
    row_labels,
    col_labels,
    vmax: float,
    annotate: bool,
    decimals: int,
):
    """Draw ``table`` on ``ax``; masked (-inf) entries are grey and say "masked"."""
    finite = np.isfinite(table)
    shown = np.ma.masked_array(np.where(finite, table, 0.0), mask=~finite)
    cmap = plt.get_cmap(CMAP).with_extremes(bad=MASKED_COLOR)
    image = ax.imshow(shown, cmap=cmap, vmin=-vmax, vmax=vmax)
    ax.set_xticks(range(table.shape[1]), _tick_labels(col_labels, table.shape[1], "col_labels"))
    ax.set_yticks(range(table.shape[0]), _tick_labels(row_labels, table.shape[0], "row_labels"))
    if annotate:
        for (i, j), value in np.ndenumerate(table):
            if not np.isfinite(value):
                ax.text(j, i, "masked", ha="center", va="center", fontsize=8, color="#555555")
                continue
            dark = abs(value) > 0.6 * vmax
            ax.text(
                j, i, f"{value:.{decimals}f}", ha="center", va="center", fontsize=8,
                color="white" if dark else "black",
            )
    return image


def _symmetric_limit(*tables: np.ndarray) -> float:
    finite = np.concatenate([t[np.isfinite(t)] for t in tables])
    limit = float(np.max(np.abs(finite))) if finite.size else 1.0
    return limit if limit > 0 else 1.0


def _scale_labels(vmin: float, vmax: float, height: float) -> list[str]:
    """The tick labels a colour bar ``height`` inches tall shows for ``vmin`` .. ``vmax`` (as drawn)."""
    bins = min(9, max(1, int(height * 72.0 / (2 * SMALL_FONT_SIZE))))  # AutoLocator's own rule
    ticks = [t for t in MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10]).tick_values(vmin, vmax)
             if vmin - 1e-12 <= t <= vmax + 1e-12]
    formatter = ScalarFormatter()
    formatter.create_dummy_axis()
    formatter.axis.set_view_interval(vmin, vmax)
    return formatter.format_ticks(ticks)


def _colorbar_room(vmin: float, vmax: float, height: float) -> float:
    """Inches right of a heatmap for its colour bar, ticks and label."""
    return CBAR_ROOM + text_inches(_scale_labels(vmin, vmax, height))


def _label_room(labels) -> float:
    """Inches left of a heatmap for its row labels and "query position"."""
    return LABEL_ROOM + text_inches(labels)


def dot_table_heatmap(
    table,
    positions=None,
    *,
    title: str = "Dot products of rotated queries and keys",
    annotate: bool = True,
    decimals: int = 4,
    figsize=(4.6, 3.8),
) -> Figure:
    """A [T, T] table of rotated q . rotated k as an annotated heatmap (``04``).

    Rows are query positions, columns key positions (``positions`` labels both; default
    0 .. T-1). The colour scale is symmetric around 0, so negative scores are blue.
    """
    table = _as_table(table, "table")
    if table.shape[0] != table.shape[1]:
        raise ValueError(f"table must be square [T, T] (queries x keys); got shape {table.shape}")
    labels = _position_labels(positions, table.shape[1], "positions")
    vmax = _symmetric_limit(table)
    width, height = figsize
    side = height - HEATMAP_BOTTOM - HEATMAP_TOP
    margins = Margins(left=_label_room(labels), right=_colorbar_room(-vmax, vmax, side),
                      bottom=HEATMAP_BOTTOM, top=HEATMAP_TOP)
    fig, ax = new_figure(width=width, height=height, margins=margins)
    ax.set_anchor("E")  # the table next to its colour bar; spare width goes left, under the title
    image = _draw_heatmap(
        ax, table, row_labels=labels, col_labels=labels,
        vmax=vmax, annotate=annotate, decimals=decimals,
    )
    _label_query_key_axes(ax, title)
    colorbar_beside(fig, [ax], image, label="dot product (no unit)", pad=CBAR_PAD, width=CBAR_WIDTH)
    return fig


def shifted_dot_tables(
    before,
    after,
    positions_before,
    positions_after,
    *,
    title: str = "The dot table before and after shifting every position",
    annotate: bool = False,
    decimals: int = 2,
    figsize=(9.5, 4.6),
) -> Figure:
    """Two [T, T] dot tables side by side on one colour scale (``04``).

    Used to show that shifting every position by the same amount leaves the table alone:
    the two panels look identical. Each panel's axes are labelled with its own positions.
    """
    before = _as_table(before, "before")
    after = _as_table(after, "after")
    if before.shape != after.shape or before.shape[0] != before.shape[1]:
        raise ValueError(
            f"before and after must be square tables of the same shape; got {before.shape} and {after.shape}"
        )
    vmax = _symmetric_limit(before, after)
    n = before.shape[0]
    all_labels = [_position_labels(positions, n, name) for positions, name in
                  ((positions_before, "positions_before"), (positions_after, "positions_after"))]
    width, height = figsize
    side = height - HEATMAP_BOTTOM - HEATMAP_TOP_SUPTITLE
    margins = Margins(left=_label_room(all_labels[0]), right=_colorbar_room(-vmax, vmax, 0.9 * side),
                      bottom=HEATMAP_BOTTOM, top=HEATMAP_TOP_SUPTITLE,
                      wspace=_label_room(all_labels[1]) + 0.05)
    fig, axes = new_figure(1, 2, width=width, height=height, margins=margins)
    for ax, table, labels in zip(axes, (before, after), all_labels, strict=True):
        image = _draw_heatmap(
            ax, table, row_labels=labels, col_labels=labels,
            vmax=vmax, annotate=annotate, decimals=decimals,
        )
        _label_query_key_axes(ax, f"positions {labels[0]} .. {labels[-1]}")
    fig.suptitle(title)
    colorbar_beside(fig, axes, image, label="dot product (no unit)", shrink=0.9,
                    pad=CBAR_PAD, width=CBAR_WIDTH)
    return fig


def dot_tables_side_by_side(
    tables,
    titles,
    positions=None,
    *,
    title: str = "Dot tables side by side",
    annotate: bool = False,
    decimals: int = 1,
    figsize=(9.5, 4.6),
) -> Figure:
    """Square [T, T] dot tables next to each other, each on its own symmetric colour scale (``04``).

    ``titles`` names each panel; ``positions`` labels the rows and columns of every panel
    (default 0 .. T-1). Each panel gets its own scale, so a table's pattern shows even when
    the tables' sizes differ.
    """
    tables = [_as_table(t, f"tables[{i}]") for i, t in enumerate(tables)]
    titles = [str(t) for t in titles]
    if not tables or len(titles) != len(tables):
        raise ValueError(
            f"titles must give one title per table: expected {len(tables)}, got {len(titles)}"
        )
    for i, t in enumerate(tables):
        if t.shape[0] != t.shape[1]:
            raise ValueError(f"tables[{i}] must be square [T, T] (queries x keys); got shape {t.shape}")
    limits = [_symmetric_limit(table) for table in tables]
    width, height = figsize
    side = min(height - HEATMAP_BOTTOM - HEATMAP_TOP_SUPTITLE, width / len(tables) - 1.5)  # about
    labels = None if positions is None else _position_labels(positions, tables[0].shape[1], "positions")
    label_room = max(_label_room(_tick_labels(labels, t.shape[1], "col_labels")) for t in tables)
    bar_room = max(_colorbar_room(-v, v, side) for v in limits)
    margins = Margins(left=label_room, right=bar_room, bottom=HEATMAP_BOTTOM, top=HEATMAP_TOP_SUPTITLE,
                      wspace=bar_room + label_room)
    fig, axes = new_figure(1, len(tables), width=width, height=height, margins=margins, squeeze=False)
    for ax, table, vmax, panel_title in zip(axes[0], tables, limits, titles, strict=True):
        image = _draw_heatmap(
            ax, table, row_labels=labels, col_labels=labels,
            vmax=vmax, annotate=annotate, decimals=decimals,
        )
        _label_query_key_axes(ax, panel_title)
        colorbar_beside(fig, [ax], image, label="dot product (no unit)", pad=CBAR_PAD, width=CBAR_WIDTH)
    fig.suptitle(title)
    return fig


def attention_weights_heatmap(
    weights,
    *,
    title: str = "Causal attention weights of one head",
    decimals: int = 2,
    figsize=(5.8, 4.0),
) -> Figure:
    """A [T, T] matrix of attention weights, annotated; zero weights above the diagonal
    (keys a causal query may not see) are drawn grey and marked "masked" (``04``)."""
    weights = _as_table(weights, "weights")
    if np.any(weights < 0) or np.any(weights > 1):
        raise ValueError("weights must lie between 0 and 1 (rows of a softmax)")
    shown = weights.copy()
    rows, cols = np.triu_indices(weights.shape[0], k=1, m=weights.shape[1])
    future = np.zeros(weights.shape, dtype=bool)
    future[rows, cols] = True
    shown[future & (weights == 0)] = -np.inf
    width, height = figsize
    side = height - HEATMAP_BOTTOM - HEATMAP_TOP
    margins = Margins(left=_label_room([str(weights.shape[0] - 1)]), right=_colorbar_room(0.0, 1.0, side),
                      bottom=HEATMAP_BOTTOM, top=HEATMAP_TOP)
    fig, ax = new_figure(width=width, height=height, margins=margins)
    ax.set_anchor("E")  # the weights next to their colour bar; spare width goes left, under the title
    image = _draw_heatmap(
        ax, shown, row_labels=None, col_labels=None, vmax=1.0, annotate=True, decimals=decimals,
    )
    image.set_cmap(plt.get_cmap("Reds").with_extremes(bad=MASKED_COLOR))
    image.set_clim(0.0, 1.0)
    for text in ax.texts:  # re-colour the annotations for the one-sided scale
        value = text.get_text()
        if value != "masked":
            text.set_color("white" if float(value) > 0.6 else "black")
    _label_query_key_axes(ax, title)
    colorbar_beside(fig, [ax], image, label="attention weight (fraction of the read)",
                    pad=CBAR_PAD, width=CBAR_WIDTH)
    return fig


def swap_comparison(
    row_labels: Sequence[str],
    weights: Mapping[str, Sequence[float]],
    outputs: Mapping[str, Sequence[float]],
    *,
    title: str = "One read, original and swapped order",
    output_labels: Sequence[str] = ("output[0]", "output[1]"),
    figsize=(9.4, 4.6),
) -> Figure:
    """Grouped bars: the weight each (K, V) row receives, and the output vector (``05``).

    ``weights`` and ``outputs`` map the same case names (e.g. "no RoPE, original") to one
    weight per row in ``row_labels`` and one number per entry of ``output_labels``. Rows are
    identified by their content, not their position, so a swap that the read ignores leaves
    the bars of a case pair equal.
    """
    if list(weights) != list(outputs) or not weights:
        raise ValueError(
            "weights and outputs must name the same cases in the same order; "
            f"got {list(weights)} and {list(outputs)}"
        )
    cases = list(weights)
    w = np.array([np.asarray(weights[c], dtype=np.float64) for c in cases])
    o = np.array([np.asarray(outputs[c], dtype=np.float64) for c in cases])
    if w.shape[1:] != (len(row_labels),):
        raise ValueError(f"each case needs one weight per row ({len(row_labels)}); got shape {w.shape}")
    if o.shape[1:] != (len(output_labels),):
        raise ValueError(f"each case needs one output per label ({len(output_labels)}); got shape {o.shape}")
    fig, (ax_w, ax_o) = new_figure(
        1, 2, width=figsize[0], height=figsize[1], margins=SWAP_MARGINS, width_ratios=(3, 2)
    )
    colors = ["#9ecae1", "#3182bd", "#fdae6b", "#e6550d", "#a1d99b", "#31a354"]
    width = 0.8 / len(cases)
    for ax, data, groups in ((ax_w, w, row_labels), (ax_o, o, output_labels)):
        x = np.arange(len(groups))
        for n, case in enumerate(cases):
            bars = ax.bar(
                x + (n - (len(cases) - 1) / 2) * width, data[n], width,
                label=case, color=colors[n % len(colors)], edgecolor="black", linewidth=0.5,
            )
            ax.bar_label(bars, fmt="%.4f", fontsize=8, rotation=90, padding=2)
        ax.set_xticks(x, list(groups))
        ax.margins(y=0.25)
    ax_w.set_title("weight each (K, V) row receives")
    ax_w.set_xlabel("(K, V) row, named by its content")
    ax_w.set_ylabel("attention weight (fraction of the read)")
    ax_o.set_title("the output vector")
    ax_o.set_xlabel("output coordinate")
    ax_o.set_ylabel("value (units of V)")
    fig.legend(
        *ax_w.get_legend_handles_labels(), loc="lower center", ncols=len(cases), fontsize=8
    )
    fig.suptitle(title)
    return fig


def _position_labels(positions, n: int, name: str) -> list[str]:
    """Tick labels for a table of ``n`` rows: ``positions`` checked (one real number per row;
    the error names ``name``), or 0 .. n-1 when None."""
    if positions is None:
        return [str(i) for i in range(n)]
    return [_position_text(p) for p in as_positions(positions, name, length=n)]


def _position_text(p) -> str:
    p = float(p)
    return str(int(p)) if p.is_integer() else f"{p:g}"

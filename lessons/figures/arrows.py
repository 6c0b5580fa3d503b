"""Pictures of 2D arrows being turned (``01``).

Every arrow is drawn with :func:`draw_arrow`, an annotation whose ``xy`` is the head and
whose ``xyann`` is the tail, so a test can read back exactly what was drawn.

* :func:`quarter_turn_figure` — arrows before and after a quarter turn.
* :func:`decomposition_figure` — a vector turned by adding its two turned basis parts
  head to tail.
* :func:`unit_circle_figure` — the arrow at angle alpha ends at [cos alpha, sin alpha].
"""

from __future__ import annotations

import numpy as np
from matplotlib.patches import Arc, Circle

from .._checks import as_float_array, as_number
from ..rotation import basis_contributions, radians_to_degrees, rotate_2d
from . import style

# Sizes follow the house style (lessons.figures.style): its dpi and font sizes.
FIGSIZE_ONE = (4.8, 4.4)
FIGSIZE_WIDE = (6.4, 4.6)
# Fixed room (inches) for tick labels, axis labels and titles: no layout engine runs when a
# notebook prints these figures (lessons.figures.style.Margins).
QUARTER_TURN_MARGINS = style.Margins(left=0.8, right=0.15, bottom=0.6, top=0.7, wspace=0.6)
UNIT_CIRCLE_MARGINS = style.Margins(left=0.75, right=0.15, bottom=0.6, top=0.55)
DECOMPOSITION_MARGINS = style.Margins(left=0.7, right=0.15, bottom=0.6, top=0.35)
DPI = style.DPI
LABEL_SIZE = style.SMALL_FONT_SIZE
TITLE_SIZE = style.SMALL_FONT_SIZE + 1

# Colours used across the course's arrow pictures.
BEFORE = "0.55"
AFTER = "tab:blue"
PART_A = "tab:orange"
PART_B = "tab:green"
RESULT = "darkcyan"

# The worked example of ``01``: the angle whose cosine is 0.8 and sine 0.6 (about 36.87 degrees).
WORKED_ANGLE = float(np.arctan2(0.6, 0.8))


def _outward_alignment(direction) -> tuple[str, str]:
    """Text alignment that puts a label on the far side of a point, seen along ``direction``."""
    ux, uy = direction
    ha = "left" if ux > 0.35 else "right" if ux < -0.35 else "center"
    va = "bottom" if uy > 0.35 else "top" if uy < -0.35 else "center"
    return ha, va


LABEL_GAP = 5.0  # points between an arrow's head and its label


def draw_arrow(ax, tail, head, *, color, label=None, linestyle="-", width=2.0, gid=None, label_shift=None,
               label_align=None):
    """Draw one arrow from ``tail`` to ``head`` and return its annotation (``01``).

    ``label`` is written just past the head, on the far side of it as seen along the arrow
    (so it never sits on its own arrow), or at ``head + label_shift`` (data units, centred)
    when given. ``label_align`` = (ha, va) overrides the alignment, e.g. ("left", "top") puts
    the label below-right of the head. ``gid`` names the arrow so tests can find it. Call
    :func:`fit_labels` once every arrow is drawn to widen the axes around labels that would
    cross their edge.
    """
    tail = as_float_array(tail, "tail")
    head = as_float_array(head, "head")
    if tail.shape != (2,) or head.shape != (2,):
        raise ValueError(f"tail and head must be 2D points of shape (2,); got {tail.shape} and {head.shape}")
    ann = ax.annotate(
        "",
        xy=tuple(head),
        xytext=tuple(tail),
        arrowprops=dict(
            arrowstyle="-|>",
            color=color,
            lw=width,
            linestyle=linestyle,
            shrinkA=0,
            shrinkB=0,
            mutation_scale=14,
        ),
    )
    ann.set_gid(gid if gid is not None else label)
    if label:
        if label_shift is None:
            direction = head - tail
            direction = direction / (float(np.hypot(*direction)) or 1.0)
            ha, va = _outward_alignment(direction) if label_align is None else label_align
            text = ax.annotate(
                label, xy=tuple(head), xytext=tuple(LABEL_GAP * direction), textcoords="offset points",
                color=color, fontsize=LABEL_SIZE, ha=ha, va=va,
            )  # fmt: skip
        else:
            text = ax.text(*(head + np.asarray(label_shift, float)), label, color=color, fontsize=LABEL_SIZE,
                           ha="center", va="center")  # fmt: skip
        text.set_gid(None)
        ann.label = text
    return ann


def fit_labels(ax, *, pad=0.04, rounds=4) -> None:
    """Widen ``ax``'s limits until every text on it lies inside the axes (``01``).

    Text has a fixed size in points, so on equal-aspect axes a label past the head of a long
    arrow can cross the frame. Each round measures the texts in data units and widens the
    limits by what sticks out (plus ``pad``, a fraction of the width); a few rounds settle.
    """
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    for _ in range(rounds):
        ax.apply_aspect()  # the equal-aspect box for the current limits, without drawing
        x0, x1 = ax.get_xlim()
        y0, y1 = ax.get_ylim()
        to_data = ax.transData.inverted()
        low, high = np.array([x0, y0]), np.array([x1, y1])
        for text in ax.texts:
            if not text.get_text() or not text.get_visible():
                continue
            box = to_data.transform(text.get_window_extent(renderer).get_points())
            low = np.minimum(low, box.min(axis=0))
            high = np.maximum(high, box.max(axis=0))
        if np.allclose(low, [x0, y0]) and np.allclose(high, [x1, y1]):
            return
        margin = pad * (high - low)
        grow_low = np.where(low < [x0, y0], margin, 0.0)
        grow_high = np.where(high > [x1, y1], margin, 0.0)
        low, high = low - grow_low, high + grow_high
        ax.set_xlim(low[0], high[0])
        ax.set_ylim(low[1], high[1])


def arrows(ax) -> dict:
    """The arrows drawn on ``ax`` by :func:`draw_arrow`, as {gid: (tail, head)} (for tests)."""
    out = {}
    for text in ax.texts:
        if hasattr(text, "xyann") and text.get_gid():
            out[text.get_gid()] = (np.asarray(text.xyann, float), np.asarray(text.xy, float))
    return out


def plane_axes(ax, limit, *, title=None, circle=False, grid=True,
               xlabel="first coordinate", ylabel="second coordinate"):
    """Equal-aspect axes for arrows in a plane, with the two axes through the origin (``01``).

    ``limit`` is a half-width or (xmin, xmax, ymin, ymax); ``circle`` adds the unit circle.
    """
    xmin, xmax, ymin, ymax = (-limit, limit, -limit, limit) if np.ndim(limit) == 0 else limit
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal")
    ax.axhline(0, color="0.85", lw=0.8, zorder=0)
    ax.axvline(0, color="0.85", lw=0.8, zorder=0)
    if grid:
        ax.grid(True, color="0.93")
    if circle:
        ax.add_patch(Circle((0, 0), 1.0, fill=False, color="0.65", lw=1))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title, fontsize=TITLE_SIZE)


def _fmt(v: float) -> str:
    """A coordinate as short text: integers without decimals, others with two."""
    v = 0.0 if abs(v) < 1e-12 else float(v)
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 else f"{v:.2f}"


def _point(v) -> str:
    return "[" + ", ".join(_fmt(x) for x in v) + "]"


def quarter_turn_figure(vectors=((1.0, 0.0), (3.0, 4.0))):
    """One panel per vector: the arrow and the arrow after a quarter turn (``01``)."""
    vectors = as_float_array(vectors, "vectors", min_ndim=2)
    if vectors.ndim != 2 or vectors.shape[1] != 2:
        raise ValueError(f"vectors must be a list of 2D vectors, shape (n, 2); got shape {vectors.shape}")
    n = len(vectors)
    width = min(4.3 * n, style.MAX_FIGURE_WIDTH)
    fig, axes = style.new_figure(1, n, width=width, height=4.2, margins=QUARTER_TURN_MARGINS, squeeze=False)
    for ax, v in zip(axes[0], vectors, strict=True):
        turned = rotate_2d(v, np.pi / 2)
        limit = 1.25 * max(1.0, float(np.hypot(*v)))
        plane_axes(ax, limit, title=f"{_point(v)} turned a quarter turn is {_point(turned)}")
        draw_arrow(ax, (0, 0), v, color=BEFORE, label=_point(v), gid="before")
        draw_arrow(ax, (0, 0), turned, color=AFTER, label=_point(turned), gid="after")
        r = 0.35 * float(np.hypot(*v))
        start = float(radians_to_degrees(np.arctan2(v[1], v[0])))
        ax.add_patch(Arc((0, 0), 2 * r, 2 * r, theta1=start, theta2=start + 90, color=AFTER, lw=1))
    fig.suptitle("A quarter turn (90 degrees, counter-clockwise)")
    for ax in axes[0]:
        fit_labels(ax)
    return fig


def decomposition_figure(vector=(2.0, 1.0), angle=WORKED_ANGLE):
    """``vector`` turned by ``angle``: its two turned basis parts added head to tail (``01``).

    Solid arrows start at the origin: the horizontal part a turns into [a cos, a sin], the
    vertical part b into [-b sin, b cos]. The dashed copy of the second starts at the head
    of the first; their sum (the result) is the rotated vector.
    """
    v = as_float_array(vector, "vector")
    part_a, part_b = basis_contributions(v, angle)
    total = part_a + part_b
    fig, ax = style.new_figure(width=FIGSIZE_WIDE[0], height=FIGSIZE_WIDE[1], margins=DECOMPOSITION_MARGINS)
    points = np.array([v, part_a, part_b, total, (0, 0)])
    low, high = points.min(axis=0) - 0.4, points.max(axis=0) + 0.4
    degrees = float(radians_to_degrees(angle))
    title = f"{_point(v)} turned by {degrees:.2f} degrees, part by part"
    plane_axes(ax, (low[0], high[0], low[1], high[1]), title=title)
    # The two basis parts before turning, faint: a along the first axis, b along the second.
    ax.plot([0, v[0]], [0, 0], color=PART_A, lw=1, linestyle=":")
    ax.plot([0, 0], [0, v[1]], color=PART_B, lw=1, linestyle=":")
    origin = (0, 0)
    # The label of the arrow before turning sits below its head, clear of the a part's label.
    draw_arrow(ax, origin, v, color=BEFORE, label=f"{_point(v)} before", width=1.2, gid="before",
               label_align=(_outward_alignment(v / (np.hypot(*v) or 1.0))[0], "top"))
    draw_arrow(ax, origin, part_a, color=PART_A, label=f"a part\n{_point(part_a)}", gid="part_a")
    draw_arrow(ax, origin, part_b, color=PART_B, label=f"b part\n{_point(part_b)}", gid="part_b")
    draw_arrow(ax, part_a, total, color=PART_B, linestyle="--", width=1.5, gid="part_b_moved")
    draw_arrow(ax, origin, total, color=RESULT, label=f"sum {_point(total)}", width=2.5, gid="sum")
    fit_labels(ax)
    return fig


def unit_circle_figure(angle=WORKED_ANGLE):
    """The unit circle: the arrow at ``angle`` ends at [cos angle, sin angle] (``01``)."""
    angle = as_number(angle, "angle")
    c, s = np.cos(angle), np.sin(angle)
    fig, ax = style.new_figure(width=FIGSIZE_ONE[0], height=FIGSIZE_ONE[1], margins=UNIT_CIRCLE_MARGINS)
    degrees = float(radians_to_degrees(angle))
    title = f"The unit circle at {degrees:.2f} degrees:\n[cos, sin] = [{c:.2f}, {s:.2f}]"
    plane_axes(ax, 1.35, title=title, circle=True)
    draw_arrow(ax, (0, 0), (c, s), color=AFTER, gid="radius")
    ax.plot([c, c], [0, s], color=PART_B, lw=1.5, linestyle="--")
    ax.plot([0, c], [0, 0], color=PART_A, lw=3)
    ax.annotate(f"cos = {c:.2f}", (c / 2, 0), xytext=(0, -6), textcoords="offset points", color=PART_A,
                ha="center", va="top", fontsize=LABEL_SIZE)
    ax.annotate(f"sin = {s:.2f}", (c, s / 2), xytext=(8 if c >= 0 else -8, 0), textcoords="offset points",
                color=PART_B, ha="left" if c >= 0 else "right", va="center", fontsize=LABEL_SIZE)
    ax.add_patch(Arc((0, 0), 0.5, 0.5, theta1=0, theta2=degrees, color="0.3", lw=1))
    ax.text(0.3 * np.cos(angle / 2), 0.3 * np.sin(angle / 2), "angle", fontsize=LABEL_SIZE - 1,
            ha="left", va="center")
    ax.plot([c], [s], "o", color=AFTER, ms=4)
    fit_labels(ax)
    return fig

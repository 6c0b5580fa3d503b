"""Pictures of a whole head: many pairs at once (``03``, ``05``).

* :func:`block_matrix_heatmap` — the d x d rotation R_m, block-diagonal (``03``).
* :class:`TwoPlanesPicture` — two pairs of one head at two speeds, Q and K drawn in each
  plane, and each pair's share of the score as a bar next to the total (``03``);
  :func:`two_planes_story_figure` shows a few moments of it as still pictures and
  :class:`TwoPlanesExplorer` puts it under sliders.
* :func:`decay_figure` — the long-term decay of a head: sum_i cos(distance * omega_i) and
  RoFormer's bound against the distance, on a log axis (``03``).
* :func:`look_back_figure` — the hand-built look-back head: its scores by key position and
  the weight on the target key as the query is scaled up (``05``).

The numbers come from :mod:`lessons.head`; nothing here computes RoPE itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from .._checks import as_float_array, as_positions, check_base, check_positive, check_width
from ..frequencies import DEFAULT_BASE
from ..head import cosine_sum, pair_scores, roformer_bound
from ..rotation import rotate_2d
from .arrows import draw_arrow, plane_axes
from .motion import K_COLOR, Q_COLOR, label_positions
from .style import (
    DPI,
    SMALL_FONT_SIZE,
    Margins,
    colorbar_beside,
    legend_outside,
    new_figure,
    plain_log_ticks,
    png_bytes,
    set_margins,
    suptitle_at_top,
)

TOTAL_COLOR = "darkcyan"
PAIR_COLORS = ("tab:purple", "tab:green")

# Fixed room (inches) for tick labels, axis labels, titles, colour bar and legends: no layout
# engine runs when a notebook prints these figures (lessons.figures.style.Margins).
HEATMAP_ROOM = Margins(left=0.85, right=1.3, bottom=0.5, top=0.3)  # left: at least; right: colour bar
COLORBAR_GAP, COLORBAR_WIDTH, COLORBAR_SHRINK = 0.28, 0.21, 0.85  # inches, inches, of the matrix's height
# The two planes and the bars of a TwoPlanesPicture sit in columns 0, 2 and 4 of a grid whose
# columns 1 and 3 are gaps: widths in inches (a grid has one gap for all its columns, and the
# planes need less room between them than the bars' tick labels).
STORY_COLUMNS = (2.28, 0.29, 2.29, 0.6, 2.85)  # of an 8.6-inch row
STORY_MARGINS = Margins(left=0.25, right=0.04, bottom=0.28, top=0.7, hspace=0.9)
EXPLORER_COLUMNS = (2.41, 0.29, 2.4, 0.6, 3.01)  # of a 9-inch row
EXPLORER_MARGINS = Margins(left=0.25, right=0.04, bottom=0.28, top=0.25)
EXPLORER_LOCKED_MARGINS = Margins(left=0.25, right=0.04, bottom=0.28, top=0.45)  # 2-line bars heading
DECAY_MARGINS = Margins(left=0.7, right=0.05, bottom=1.15, top=0.3)
LOOK_BACK_MARGINS = Margins(left=0.6, right=0.45, bottom=0.5, top=0.3, wspace=0.6)


# --------------------------------------------------------------------------- R_m as a heatmap


def block_matrix_heatmap(matrix, *, title="R_m", decimals=3, width=7.0, height=5.6):
    """A square matrix as an annotated heatmap; exact zeros are left blank (``03``).

    Made for the block-diagonal R_m of :func:`lessons.head.block_rotation_matrix`: the
    2 x 2 blocks stand out on a white background. Rows and columns are labelled with the
    coordinate index. ``ax.images[0]`` holds the matrix.
    """
    matrix = as_float_array(matrix, "matrix", min_ndim=2)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"matrix must be a square 2-D table; got shape {matrix.shape}")
    d = matrix.shape[0]
    room = HEATMAP_ROOM
    side = min(height - room.bottom - room.top, width - room.left - room.right)  # the square matrix
    if side <= 0:
        raise ValueError(f"a {width:g} x {height:g} inch figure leaves no room for the matrix")
    bottom = room.bottom + (height - room.bottom - room.top - side) / 2
    fig, ax = new_figure(width=width, height=height, margins=Margins(
        left=width - room.right - side, right=room.right, bottom=bottom, top=height - bottom - side))
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
    for (i, j), value in np.ndenumerate(matrix):
        if value != 0:
            ax.text(j, i, f"{value:.{decimals}f}", ha="center", va="center", fontsize=9,
                    color="white" if abs(value) > 0.6 else "black")
    ax.set_xticks(range(d))
    ax.set_yticks(range(d))
    ax.set_xlabel("column: coordinate of the vector that goes in")
    ax.set_ylabel("row: coordinate that comes out")
    ax.set_title(title)
    colorbar_beside(fig, [ax], image, label="entry of the matrix", pad=COLORBAR_GAP, width=COLORBAR_WIDTH,
                    shrink=COLORBAR_SHRINK)
    return fig


# --------------------------------------------------------------------------- two planes, two speeds


@dataclass(frozen=True)
class TwoPlanesState:
    """Q and K of a two-pair head at their positions: turned pairs and each pair's share (``03``)."""

    q_position: float
    k_position: float
    q_turned: np.ndarray  # [2 pairs, 2]
    k_turned: np.ndarray  # [2 pairs, 2]
    shares: np.ndarray  # [2]: pair i's q_i . k_i after turning
    frequencies: np.ndarray  # [2]

    @property
    def distance(self) -> float:
        """The query's position minus the key's: the course's one distance (notebook 02)."""
        return self.q_position - self.k_position

    @property
    def total(self) -> float:
        """The score: the sum of the pairs' shares."""
        return float(self.shares.sum())


def two_planes_state(q_position, k_position, *, q=(1.0, 0.0, 1.0, 0.0), k=(1.0, 0.0, 1.0, 0.0),
                     frequencies=(1.0, 0.1)) -> TwoPlanesState:
    """Turn the two pairs of ``q`` and ``k`` to their positions, each at its own frequency (``03``)."""
    q = as_float_array(q, "q")
    k = as_float_array(k, "k")
    frequencies = as_float_array(frequencies, "frequencies")
    if q.shape != (4,) or k.shape != (4,):
        raise ValueError(f"q and k must hold two pairs, shape (4,); got q {q.shape} and k {k.shape}")
    if frequencies.shape != (2,) or np.any(frequencies <= 0):
        raise ValueError(f"frequencies must be two numbers greater than 0; got {frequencies.tolist()}")
    shares = pair_scores(q, k, q_position, k_position, inv_freq=frequencies)
    m, n = float(q_position), float(k_position)
    return TwoPlanesState(
        m, n, rotate_2d(q.reshape(2, 2), m * frequencies), rotate_2d(k.reshape(2, 2), n * frequencies),
        shares, frequencies,
    )


class TwoPlanesPicture:
    """Three panels on ``axes``: the plane of pair 0, the plane of pair 1, and the bars (``03``).

    :meth:`show` draws one :class:`TwoPlanesState`; ``locked`` (another state) is drawn as
    outlined bars beside the current ones, so a change is visible at a glance.
    """

    def __init__(self, axes, *, frequencies=(1.0, 0.1)):
        self.axes = list(axes)
        if len(self.axes) != 3:
            raise ValueError(f"axes must be three axes (two planes and the bars); got {len(self.axes)}")
        self.frequencies = as_float_array(frequencies, "frequencies")
        self.q_arrows, self.k_arrows = [], []
        for i, ax in enumerate(self.axes[:2]):
            plane_axes(ax, 1.45, circle=True, grid=False, xlabel=f"coordinate {2 * i}",
                       ylabel=f"coordinate {2 * i + 1}")
            ax.set_xticks([])  # the unit circle is the scale; ticks would only cost drawing time
            ax.set_yticks([])
            self.k_arrows.append(draw_arrow(ax, (0, 0), (1, 0), color=K_COLOR, gid="k", width=2.4))
            self.q_arrows.append(draw_arrow(ax, (0, 0), (1, 0), color=Q_COLOR, gid="q", width=1.6))
        self.q_labels = [ax.text(0, 0, "Q", color=Q_COLOR, fontsize=10, ha="center", va="center")
                         for ax in self.axes[:2]]
        self.k_labels = [ax.text(0, 0, "K", color=K_COLOR, fontsize=10, ha="center", va="center")
                         for ax in self.axes[:2]]
        bars = self.axes[2]
        self.names = ["pair 0", "pair 1", "total"]
        self.bars = bars.bar([-0.08, 0.92, 1.92], [0, 0, 0], width=0.46,
                             color=[*PAIR_COLORS, TOTAL_COLOR], edgecolor="black", linewidth=0.6)
        self.locked_bars = bars.bar([0.3, 1.3, 2.3], [0, 0, 0], width=0.2, fill=False,
                                    edgecolor="0.3", linestyle="--", linewidth=1.0)
        for bar in self.locked_bars:
            bar.set_visible(False)
        self.bar_texts = [bars.text(x - 0.08, 0, "", ha="center", fontsize=SMALL_FONT_SIZE) for x in range(3)]
        bars.axhline(0, color="0.5", lw=0.8)
        bars.set_xticks([0, 1, 2], self.names)
        bars.set_ylim(-2.6, 2.6)
        bars.set_xlim(-0.6, 2.7)
        bars.set_ylabel("share of the score q . k")
        self.state: TwoPlanesState | None = None

    def show(self, state: TwoPlanesState, locked: TwoPlanesState | None = None, caption: str | None = None):
        """Draw ``state`` (and ``locked`` as outlines, if given); return ``state``."""
        for i in range(2):
            heads = []
            for arrow, v in ((self.q_arrows[i], state.q_turned[i]), (self.k_arrows[i], state.k_turned[i])):
                norm = float(np.hypot(*v)) or 1.0
                heads.append(v / max(norm, 1e-12) * min(norm, 1.3))
                arrow.xy = tuple(heads[-1])
            # Just beyond each head, fanned apart when Q and K (nearly) coincide.
            q_at, k_at = label_positions(*heads, radii=[float(np.hypot(*h)) + 0.2 for h in heads])
            self.q_labels[i].set_position(q_at)
            self.k_labels[i].set_position(k_at)
            self.axes[i].set_title(
                f"pair {i}: {state.frequencies[i]:g} rad per position\nshare {state.shares[i]:+.4f}",
                fontsize=SMALL_FONT_SIZE + 1,
            )
        values = [*state.shares, state.total]
        for bar, text, value in zip(self.bars, self.bar_texts, values, strict=True):
            bar.set_height(value)
            text.set_text(f"{value:+.4f}")
            text.set_y(value + (0.12 if value >= 0 else -0.12))
            text.set_va("bottom" if value >= 0 else "top")
        if locked is not None:
            for bar, value in zip(self.locked_bars, [*locked.shares, locked.total], strict=True):
                bar.set_height(value)
                bar.set_visible(True)
        else:
            for bar in self.locked_bars:
                bar.set_visible(False)
        heading = (f"Q at {state.q_position:g}, K at {state.k_position:g}"
                   f" (distance {state.distance:+g})")
        if locked is not None:
            heading += "\ndashed outline: the locked result"
        title = heading if caption is None else f"{caption}\n{heading}"
        self.axes[2].set_title(title, fontsize=SMALL_FONT_SIZE + 1)
        self.state = state
        return state


# The story of the seed's experiment: start with Q at 2 and K at 0, move both by 5 (nothing
# changes), then move only K by 1 (the distance changes, so does the score).
STORY = (
    (2, 0, "start"),
    (7, 5, "both moved by 5"),
    (7, 6, "only K moved, by 1"),
)


def two_planes_story_figure(frames=STORY, *, frequencies=(1.0, 0.1)):
    """One row per moment: the two planes and the bars, the first moment locked (``03``).

    The still version of :class:`TwoPlanesExplorer`. ``fig.pictures[r]`` is the
    :class:`TwoPlanesPicture` of row r and ``fig.states[r]`` the state it shows.
    """
    frames = list(frames)
    if not frames or any(len(f) != 3 for f in frames):
        raise ValueError(f"frames must be (q_position, k_position, caption) entries; got {frames!r}")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(8.6, 3.3 * len(frames)), dpi=DPI, layout=None)
    axes = _picture_rows(fig, len(frames), STORY_COLUMNS, STORY_MARGINS)
    fig.pictures, fig.states = [], []
    first = two_planes_state(frames[0][0], frames[0][1], frequencies=frequencies)
    for row, (q_position, k_position, caption) in zip(axes, frames, strict=True):
        picture = TwoPlanesPicture(row, frequencies=frequencies)
        state = two_planes_state(q_position, k_position, frequencies=frequencies)
        picture.show(state, locked=first if fig.states else None, caption=caption)
        fig.pictures.append(picture)
        fig.states.append(state)
    suptitle_at_top(fig, "Two pairs of one head, content [1, 0] in each: the score is the sum of the shares")
    return fig


def _picture_rows(fig, nrows, columns, margins):
    """``nrows`` rows of three axes (plane, plane, bars) placed at fixed ``margins`` (inches);
    ``columns`` gives the widths of the five grid columns, the 2nd and 4th being gaps."""
    grid = fig.add_gridspec(nrows, 5, width_ratios=columns)
    axes = [[fig.add_subplot(grid[r, c]) for c in (0, 2, 4)] for r in range(nrows)]
    set_margins(fig, margins)
    return axes


MOVE_ONLY_K = "move only K"
MOVE_BOTH = "move Q and K together"


class TwoPlanesExplorer:
    """Sliders for the Q and K positions of a two-pair head, a mode, and a lock (``03``).

    In the mode :data:`MOVE_BOTH` a slider drags the other one by the same step (as far as
    both can go), so the distance stays; in :data:`MOVE_ONLY_K` each slider moves alone.
    "lock this result" keeps the current shares; they are then drawn as dashed outlines and
    the text line gives the change of the total. A plain ipywidgets box: no output capture.
    """

    def __init__(self, q_position=2, k_position=0, *, max_position=40, frequencies=(1.0, 0.1), dpi=DPI):
        import ipywidgets as widgets

        self.frequencies = frequencies
        self.dpi = dpi
        self.figure = Figure(figsize=(9.0, 3.7), dpi=dpi)
        (axes,) = _picture_rows(self.figure, 1, EXPLORER_COLUMNS, EXPLORER_MARGINS)
        self.picture = TwoPlanesPicture(axes, frequencies=frequencies)
        layout = widgets.Layout(width="420px")
        style = {"description_width": "90px"}
        self.q_slider = widgets.IntSlider(value=q_position, min=0, max=max_position,
                                          description="Q position", layout=layout, style=style)
        self.k_slider = widgets.IntSlider(value=k_position, min=0, max=max_position,
                                          description="K position", layout=layout, style=style)
        self.mode = widgets.ToggleButtons(options=[MOVE_BOTH, MOVE_ONLY_K], value=MOVE_BOTH,
                                          description="sliders",
                                          style={**style, "button_width": "190px"})
        self.lock_button = widgets.Button(description="lock this result")
        self.readout = widgets.Label()
        self.locked_readout = widgets.Label()
        self.image = widgets.Image(format="png")
        self.locked: TwoPlanesState | None = None
        self._syncing = False
        self.q_slider.observe(lambda change: self._moved(change, self.k_slider), names="value")
        self.k_slider.observe(lambda change: self._moved(change, self.q_slider), names="value")
        self.lock_button.on_click(lambda _button: self.lock())
        self.widget = widgets.VBox(
            [self.mode, self.q_slider, self.k_slider, self.lock_button, self.readout, self.locked_readout,
             self.image],
            layout=widgets.Layout(align_items="flex-start"),
        )
        self.state: TwoPlanesState | None = None
        self.update()

    def _moved(self, change, partner) -> None:
        if self._syncing:
            return
        if self.mode.value == MOVE_BOTH:
            step = change["new"] - change["old"]
            target = min(max(partner.value + step, partner.min), partner.max)
            done = target - partner.value  # the step both sliders can take
            self._syncing = True
            try:
                partner.value = target
                if done != step:
                    change["owner"].value = change["old"] + done
            finally:
                self._syncing = False
        self.update()

    def lock(self) -> TwoPlanesState:
        """Keep the current result to compare against; return it."""
        self.locked = self.state
        return self.update()

    def update(self, change=None) -> TwoPlanesState:
        """Redraw for the sliders' current values; return the new state."""
        state = two_planes_state(self.q_slider.value, self.k_slider.value, frequencies=self.frequencies)
        self.picture.show(state, locked=self.locked)
        set_margins(self.figure, EXPLORER_MARGINS if self.locked is None else EXPLORER_LOCKED_MARGINS)
        text = (f"Q at {state.q_position:g}, K at {state.k_position:g}, distance {state.distance:+g}: "
                f"pair 0 {state.shares[0]:+.4f}, pair 1 {state.shares[1]:+.4f}, total {state.total:+.4f}")
        locked_text = "nothing locked yet"
        if self.locked is not None:
            change = state.total - self.locked.total
            locked_text = (f"locked: Q at {self.locked.q_position:g}, K at {self.locked.k_position:g}, "
                           f"total {self.locked.total:+.4f}; change of the total {change:+.4f}")
        self.readout.value = text
        self.locked_readout.value = locked_text
        self.image.value = png_bytes(self.figure, self.dpi)
        self.state = state
        return state

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["text/plain"] = (
            "Sliders for the Q and K positions of a two-pair head "
            "(run the notebook from the top to use them)"
        )
        return bundle


# --------------------------------------------------------------------------- the long-term decay


def decay_figure(d=128, base=DEFAULT_BASE, marked=(2, 16, 256, 1024), max_distance=4096):
    """sum_i cos(distance * omega_i) and RoFormer's bound against the distance, log x-axis (``03``).

    Every whole distance from 1 to ``max_distance`` is drawn. ``ax.lines[0]`` is the cosine
    sum, ``ax.lines[1]`` the bound, ``ax.lines[2]`` / ``ax.lines[3]`` the ``marked`` points
    of each. The legend sits below the axes, off the data.
    """
    d = check_width(d, "d")
    check_base(base)
    marked = as_positions(marked, "marked")
    if np.any(marked <= 0):
        raise ValueError(f"marked must hold distances greater than 0 (a log axis); got {marked.tolist()}")
    distances = np.arange(1, int(check_positive(max_distance, "max_distance")) + 1, dtype=np.float64)
    fig, ax = new_figure(width=9.0, height=5.0, margins=DECAY_MARGINS)
    sums = cosine_sum(distances, d, base)
    ax.plot(distances, sums, color="tab:blue", lw=0.6, alpha=0.85,
            label=f"sum over the {d // 2} pairs of cos(distance x omega_i): half the score of all-ones q, k")
    ax.plot(distances, roformer_bound(distances, d, base), color="tab:red", lw=2.0,
            label=f"RoFormer's quantity: mean over j of |S_j| (|score| <= content factor x {d // 2} x this)")
    ax.plot(marked, cosine_sum(marked, d, base), "o", color="tab:blue", ms=7, mec="black", zorder=4)
    ax.plot(marked, roformer_bound(marked, d, base), "s", color="tab:red", ms=7, mec="black", zorder=4)
    box = dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none", alpha=0.9)
    above, below = (0, 12), (0, -22)
    for x in marked:
        c, b = float(cosine_sum(x, d, base)), float(roformer_bound(x, d, base))
        # The higher value's label above its point, the lower one's below: they never meet.
        ax.annotate(f"{c:.4f}", (x, c), xytext=above if c >= b else below, textcoords="offset points",
                    ha="center", color="tab:blue", bbox=box, zorder=5)
        ax.annotate(f"{b:.4f}", (x, b), xytext=below if c >= b else above, textcoords="offset points",
                    ha="center", color="tab:red", bbox=box, zorder=5)
    ax.axhline(0, color="0.6", lw=0.8)
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlim(1, max_distance)
    # Room below for the marked values' labels; a small base dips further, and its curve stays whole.
    ax.set_ylim(min(-14.0, 1.1 * float(sums.min())), d // 2 + 6)
    ax.set_xlabel("distance m - n, query minus key (positions, log scale)")
    ax.set_ylabel("value (no unit)")
    ax.set_title(f"A whole head (d = {d}, base {base:g}) fades with distance")
    ax.grid(True, which="major", color="0.9")
    legend_outside(ax, where="below", ncols=1)
    return fig


# --------------------------------------------------------------------------- the look-back head


def look_back_figure(key_positions, scores, scales, target_weights, *, query_position, target):
    """Two panels: the hand-built head's score for each key, and the weight on ``target``
    as the query is scaled (``05``).

    ``scores`` has one entry per key position; ``target_weights`` one per scale. The
    numbers come in computed; ``fig.axes[0]`` holds the score bars and ``fig.axes[1]`` the
    weight curve (``lines[0]``).
    """
    key_positions = as_positions(key_positions, "key_positions")
    scores = as_float_array(scores, "scores")
    scales = as_float_array(scales, "scales")
    target_weights = as_float_array(target_weights, "target_weights")
    if scores.shape != key_positions.shape:
        raise ValueError(
            f"scores must hold one score per key: expected {key_positions.shape}, got {scores.shape}"
        )
    if target_weights.shape != scales.shape:
        raise ValueError(
            f"target_weights must hold one weight per scale: expected {scales.shape}, "
            f"got {target_weights.shape}"
        )
    fig, (ax_s, ax_w) = new_figure(1, 2, width=9.5, height=4.4, width_ratios=(1.3, 1),
                                   margins=LOOK_BACK_MARGINS)
    colors = ["tab:red" if p == target else "tab:gray" for p in key_positions]
    ax_s.bar(key_positions, scores, color=colors, edgecolor="black", linewidth=0.5)
    best = int(np.argmax(scores))
    ax_s.annotate(f"key {key_positions[best]:g}: {scores[best]:.4f}", (key_positions[best], scores[best]),
                  xytext=(-150, 4), textcoords="offset points", color="tab:red")
    ax_s.set_ylim(min(0.0, float(scores.min())) * 1.1, float(scores.max()) * 1.15)
    ax_s.set_xticks(key_positions)
    ax_s.set_xlabel("key position")
    ax_s.set_ylabel("score q . k (rotated, unscaled)")
    ax_s.set_title(f"Query at {query_position:g}: scores of the keys")
    ax_w.plot(scales, target_weights, "o-", color="tab:red")
    for s, w in zip(scales, target_weights, strict=True):
        ax_w.annotate(f"{w:.4f}", (s, w), xytext=(4, -16), textcoords="offset points",
                      fontsize=SMALL_FONT_SIZE)
    ax_w.set_xscale("log", base=2)
    ax_w.set_xticks(scales, [f"{s:g}" for s in scales])
    ax_w.set_ylim(0, 1.08)
    ax_w.set_xlabel("scale of the query (log scale)")
    ax_w.set_ylabel(f"attention weight on key {target:g}")
    ax_w.set_title("A larger query sharpens the softmax")
    ax_w.grid(True, color="0.9")
    return fig

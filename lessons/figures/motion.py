"""The moving picture of ``02``: a query and a key turning, and their dot product.

Both Q and K hold the same content (default [1, 0]) and turn by position * frequency. The
picture shows the two turned arrows on the unit circle and, below them, the dot product as
a bar on a scale from -1 to 1. Three ways to look at it, all drawn by :class:`PairPicture`:

* :func:`moving_animation` — a matplotlib ``FuncAnimation`` of :data:`STORY` (embed it
  with ``to_jshtml()``: it plays in a browser without a kernel);
* :func:`key_frames_figure` — the same story as a row of still pictures (what a reader
  sees when the notebook is not trusted or is rendered statically);
* :class:`PositionExplorer` — two sliders (Q and K positions) that redraw the picture.

The computation behind every frame is :func:`pair_state`. The lesson's one definition of
distance is the query's position minus the key's (:attr:`PairState.distance`): a key 2
tokens before its query is at distance 2, a key after its query at a negative distance.
The titles of the pictures and the sliders' text line both come from
:func:`describe_positions`, so they cannot disagree.
"""

from __future__ import annotations

import html as html_lib
import json
import re
from dataclasses import dataclass

import numpy as np
from matplotlib.animation import FuncAnimation
from matplotlib.figure import Figure

from .._checks import as_float_array, as_number, check_positive
from ..rotation import rotate_2d
from . import style
from .arrows import draw_arrow, plane_axes

CONTENT = (1.0, 0.0)
Q_COLOR = "tab:blue"
K_COLOR = "tab:orange"
DOT_COLOR = "darkcyan"
BAR_Y = -1.55  # where the dot-product bar sits, below the unit circle
# Sizes follow the house style (lessons.figures.style): one picture is PANEL_SIZE inches at
# style.DPI, 390 x 480 px, with text of 10-12 points (14-17 px at 100%). Three still
# pictures side by side (FRAMES_PANEL_SIZE each) stay inside the widest house figure.
DPI = style.DPI
PANEL_SIZE = (3.9, 4.8)
FRAMES_PANEL_SIZE = (3.1, 4.1)
# Fixed room (inches) around and between the still pictures (no layout engine at print time).
KEY_FRAMES_MARGINS = style.Margins(left=0.55, right=0.05, bottom=0.05, top=0.3, wspace=0.6)
TITLE_SIZE = style.SMALL_FONT_SIZE + 1
TEXT_SIZE = style.FONT_SIZE
SMALL_SIZE = style.SMALL_FONT_SIZE


@dataclass(frozen=True)
class PairState:
    """One moment of the picture: positions, the turned arrows and their dot (``02``)."""

    q_position: float
    k_position: float
    q: np.ndarray
    k: np.ndarray
    dot: float

    @property
    def distance(self) -> float:
        """How far back the key sits: q_position - k_position (negative: the key is after the query)."""
        return self.q_position - self.k_position

    @property
    def description(self) -> str:
        """``"Q at 4, K at 2, distance 2"``: what the picture's title and the sliders' text say."""
        return describe_positions(self.q_position, self.k_position)


def pair_state(q_position, k_position, *, content=CONTENT, frequency=1.0) -> PairState:
    """Turn the same ``content`` for Q and K by position * ``frequency``; their dot (``02``)."""
    q_position = as_number(q_position, "q_position")
    k_position = as_number(k_position, "k_position")
    frequency = check_positive(frequency, "frequency")
    content = as_float_array(content, "content")
    if content.shape != (2,):
        raise ValueError(f"content must be one 2D vector of shape (2,); got shape {content.shape}")
    q = rotate_2d(content, q_position * frequency)
    k = rotate_2d(content, k_position * frequency)
    return PairState(q_position, k_position, q, k, float(q @ k))


def _position_text(p: float) -> str:
    p = float(p) + 0.0  # no "-0"
    return f"{p:.0f}" if p.is_integer() else f"{p:.2f}"


def describe_positions(q_position, k_position) -> str:
    """The positions and their distance in words, e.g. ``"Q at 4, K at 2, distance 2"`` (``02``).

    Distance is the query's position minus the key's: positive when the key comes before the
    query, negative when it comes after. Both the pictures' titles and the sliders' text line
    are made here, so the two always state the same distance.
    """
    q_position = as_number(q_position, "q_position")
    k_position = as_number(k_position, "k_position")
    return (
        f"Q at {_position_text(q_position)}, K at {_position_text(k_position)}, "
        f"distance {_position_text(q_position - k_position)}"
    )


LABEL_RADIUS = 1.18  # the "Q" and "K" labels sit just beyond their arrows' heads
LABEL_SPREAD = 0.5  # rad: arrows closer than this get their labels fanned apart
LABEL_LOWEST = -1.05  # below this a label would meet the "dot" text over the bar


def label_positions(q_head, k_head, radii=None) -> tuple[tuple[float, float], tuple[float, float]]:
    """Where the "Q" and "K" labels go for arrows ending at ``q_head`` and ``k_head``.

    Each label sits beyond its arrow's head (at :data:`LABEL_RADIUS` from the centre, or at
    ``radii`` = (Q's, K's) when given). When the two arrows (nearly) coincide, the labels
    are fanned apart along the circle, Q on the counter-clockwise side, so they never cover
    each other. A label that would drop below :data:`LABEL_LOWEST` (an arrow pointing down)
    goes beside its head instead, clear of the dot-product text below the circle.
    """
    angles = [float(np.arctan2(h[1], h[0])) for h in (q_head, k_head)]
    gap = (angles[0] - angles[1] + np.pi) % (2 * np.pi) - np.pi  # Q's angle minus K's, in (-pi, pi]
    nudge = max(0.0, (LABEL_SPREAD - abs(gap)) / 2)
    side = 1.0 if gap >= 0 else -1.0
    placed = []
    fanned = (angles[0] + side * nudge, angles[1] - side * nudge)
    radii = (LABEL_RADIUS, LABEL_RADIUS) if radii is None else radii
    for head, angle, radius in zip((q_head, k_head), fanned, radii, strict=True):
        x, y = radius * np.cos(angle), radius * np.sin(angle)
        if y < LABEL_LOWEST:
            x, y = float(head[0]) + (0.17 if x >= 0 else -0.17), float(head[1])
        placed.append((float(x), float(y)))
    return placed[0], placed[1]


class PairPicture:
    """Q and K arrows on the unit circle plus a dot-product bar, on one axes (``02``).

    :meth:`show` moves the arrows and the bar to the given positions and returns the
    :class:`PairState` it drew, so the animation, the still frames and the sliders share
    one drawing routine.
    """

    def __init__(self, ax, *, content=CONTENT, frequency=1.0):
        self.ax = ax
        self.content = as_float_array(content, "content")
        self.frequency = check_positive(frequency, "frequency")
        norm = float(np.hypot(*self.content)) or 1.0
        self.scale = 1.0 / norm  # arrows are drawn at unit length; the dot is not rescaled
        plane_axes(ax, (-1.45, 1.45, -1.95, 1.3), circle=True, grid=False)
        ax.set_xticks([-1, 0, 1])
        ax.set_yticks([-1, 0, 1])
        # The dot-product scale: a line from -1 to 1 with ticks, and the bar on it.
        ax.plot([-1, 1], [BAR_Y, BAR_Y], color="0.6", lw=1)
        for x in (-1, 0, 1):
            ax.plot([x, x], [BAR_Y - 0.08, BAR_Y + 0.08], color="0.4", lw=1)
            ax.text(x, BAR_Y - 0.13, f"{x}", ha="center", va="top", fontsize=SMALL_SIZE, color="0.35")
        (self.bar,) = ax.plot([0, 0], [BAR_Y, BAR_Y], color=DOT_COLOR, lw=7, solid_capstyle="butt")
        self.bar.set_gid("dot_bar")
        self.q_arrow = draw_arrow(ax, (0, 0), (1, 0), color=Q_COLOR, gid="q")
        self.k_arrow = draw_arrow(ax, (0, 0), (1, 0), color=K_COLOR, gid="k", width=1.6)
        self.q_label = ax.text(0, 0, "Q", color=Q_COLOR, fontsize=TEXT_SIZE, ha="center", va="center")
        self.k_label = ax.text(0, 0, "K", color=K_COLOR, fontsize=TEXT_SIZE, ha="center", va="center")
        self.dot_label = ax.text(
            0, BAR_Y + 0.16, "", color=DOT_COLOR, fontsize=TEXT_SIZE, ha="center", va="bottom"
        )
        self.state: PairState | None = None

    def show(self, q_position, k_position, caption: str | None = None) -> PairState:
        """Draw Q at ``q_position`` and K at ``k_position``; return what was drawn."""
        state = pair_state(q_position, k_position, content=self.content, frequency=self.frequency)
        heads = (state.q * self.scale, state.k * self.scale)
        for arrow, label, head, at in zip((self.q_arrow, self.k_arrow), (self.q_label, self.k_label),
                                          heads, label_positions(*heads), strict=True):
            arrow.xy = tuple(head)
            label.set_position(at)
        self.bar.set_xdata([0.0, state.dot])
        self.dot_label.set_text(f"dot {state.dot:.4f}")
        title = state.description
        self.ax.set_title(title if caption is None else f"{caption}\n{title}", fontsize=TITLE_SIZE)
        self.state = state
        return state


# The story of ``02``: Q at 1 and K at 0; both move on by 3 (the dot stays); then K alone
# moves back from 3 to 2 (distance 2: the dot crosses below 0). Steps are fractional so the
# arrows glide; the pauses repeat a frame.
STORY: tuple[tuple[float, float, str], ...] = (
    (1.0, 0.0, "start"),
    (1.0, 0.0, "start"),
    *((1.0 + s, 0.0 + s, "both move on together") for s in (0.5, 1.0, 1.5, 2.0, 2.5)),
    (4.0, 3.0, "both moved by 3: same dot"),
    (4.0, 3.0, "both moved by 3: same dot"),
    *((4.0, 3.0 - s, "K alone moves back") for s in (0.25, 0.5, 0.75)),
    (4.0, 2.0, "K at 2: the dot is below 0"),
    (4.0, 2.0, "K at 2: the dot is below 0"),
)

KEY_FRAMES: tuple[tuple[float, float, str], ...] = (
    (1.0, 0.0, "start"),
    (4.0, 3.0, "both moved by 3"),
    (4.0, 2.0, "then K moved to 2"),
)


def _check_story(frames) -> list[tuple[float, float, str]]:
    frames = list(frames)
    if not frames:
        raise ValueError("frames must hold at least one (q_position, k_position, caption) entry; got none")
    for i, f in enumerate(frames):
        if len(f) != 3:
            raise ValueError(f"frames[{i}] must be (q_position, k_position, caption); got {f!r}")
    return frames


def moving_animation(frames=STORY, *, interval=600, dpi=DPI, content=CONTENT, frequency=1.0) -> FuncAnimation:
    """The moving picture as a ``FuncAnimation``, one frame per entry of ``frames`` (``02``).

    The figure is built without pyplot, so a notebook's inline backend does not also print
    it as a still image; embed the animation with ``HTML(animation_html(anim))``. The
    :class:`PairPicture` is kept as ``anim.picture`` and the function that draws frame i
    (the one the animation calls) as ``anim.draw_frame``.
    """
    frames = _check_story(frames)
    fig = Figure(figsize=PANEL_SIZE, dpi=dpi)
    ax = fig.add_subplot()
    picture = PairPicture(ax, content=content, frequency=frequency)
    fig.subplots_adjust(left=0.16, right=0.97, bottom=0.1, top=0.89)

    def draw(i):
        q_position, k_position, caption = frames[i]
        picture.show(q_position, k_position, caption)
        return (picture.q_arrow, picture.k_arrow, picture.bar)

    draw(0)
    anim = FuncAnimation(fig, draw, frames=len(frames), interval=interval, repeat=True)
    anim.picture = picture
    anim.draw_frame = draw
    return anim


# What a reader sees where the player's script cannot run (a notebook opened untrusted, a
# static rendering without JavaScript): the first picture and how to make it play.
STILL_NOTE = (
    "This is the first picture of an animation. To play it, run the notebook from the top "
    "(Run > Run All Cells); the three still pictures below tell the same story."
)


def animation_html(anim: FuncAnimation, *, note: str = STILL_NOTE) -> str:
    """The animation as HTML that shows controls only where they work (``02``).

    ``anim.to_jshtml()`` is a player: an image, a slider and nine buttons, driven by a
    script. Where scripts do not run (JupyterLab shows a committed notebook untrusted and
    strips its scripts; a static page without JavaScript) those buttons would look alive and
    do nothing. So the HTML holds only the first frame as a plain ``<img>`` and ``note``;
    a small script that follows it replaces both with the player. Where scripts run (the
    cell has been run, or a static page with JavaScript) the reader gets the player; where
    they do not, the still picture and the note. The still part carries the player's class
    name, ``animation``, so a page check finds the animation in either state.
    """
    if not isinstance(note, str) or not note.strip():
        raise ValueError(f"note must be a non-empty string; got {note!r}")
    player = anim.to_jshtml()
    match = re.search(r'frames\[0\] = "(data:image/[a-z]+;base64,[A-Za-z0-9+/=\\\n]*)"', player)
    if match is None:
        raise ValueError("anim.to_jshtml() holds no frames[0] image: not a matplotlib jshtml player")
    first = match.group(1).replace("\\\n", "")
    # The player, as a JavaScript string literal; "</" is escaped so that the player's own
    # </script> tags cannot end the script that carries it.
    literal = json.dumps(player).replace("</", "<\\/")
    return (
        '<div class="animation rope-animation-still">'
        f'<img src="{first}" alt="the first picture of the animation">'
        f'<p style="margin: 0.3em 0 0.6em 0;"><em>{html_lib.escape(note)}</em></p>'
        "</div>\n"
        "<script>\n"
        "(function () {\n"
        "  var still = document.currentScript.previousElementSibling;\n"
        "  var box = document.createElement('div');\n"
        f"  box.innerHTML = {literal};\n"
        "  // Scripts set through innerHTML do not run: put fresh copies in their place.\n"
        "  box.querySelectorAll('script').forEach(function (old) {\n"
        "    var fresh = document.createElement('script');\n"
        "    fresh.textContent = old.textContent;\n"
        "    old.parentNode.replaceChild(fresh, old);\n"
        "  });\n"
        "  still.parentNode.replaceChild(box, still);\n"
        "})();\n"
        "</script>\n"
    )


def key_frames_figure(frames=KEY_FRAMES, *, content=CONTENT, frequency=1.0, dpi=DPI):
    """The story as still pictures side by side, the dot printed on each (``02``).

    This is the static fallback of :func:`moving_animation`; the pictures are kept as
    ``fig.pictures``.
    """
    frames = _check_story(frames)
    n = len(frames)
    width, height = FRAMES_PANEL_SIZE
    fig, axes = style.new_figure(1, n, width=min(width * n, style.MAX_FIGURE_WIDTH), height=height, dpi=dpi,
                                 margins=KEY_FRAMES_MARGINS, squeeze=False)
    fig.pictures = []
    for ax, (q_position, k_position, caption) in zip(axes[0], frames, strict=True):
        picture = PairPicture(ax, content=content, frequency=frequency)
        picture.show(q_position, k_position, caption)
        fig.pictures.append(picture)
    fig.suptitle("Same content [1, 0] for Q and K: the dot follows the distance")
    return fig


class PositionExplorer:
    """Two sliders, the Q and K positions, that redraw the picture and the dot (``02``).

    A plain ipywidgets box (sliders, a text line, an image): it needs no output capture,
    so it runs the same under a notebook, nbval and a unit test. Moving a slider calls
    :meth:`update`, which recomputes :attr:`state` with :func:`pair_state` and redraws.
    """

    def __init__(
        self, q_position=1, k_position=0, *, max_position=12, content=CONTENT, frequency=1.0, dpi=DPI
    ):
        import ipywidgets as widgets

        self.dpi = dpi
        self.figure = Figure(figsize=PANEL_SIZE, dpi=dpi)
        ax = self.figure.add_subplot()
        self.picture = PairPicture(ax, content=content, frequency=frequency)
        self.figure.subplots_adjust(left=0.16, right=0.97, bottom=0.1, top=0.93)
        self.q_slider = widgets.IntSlider(value=q_position, min=0, max=max_position, description="Q position")
        self.k_slider = widgets.IntSlider(value=k_position, min=0, max=max_position, description="K position")
        self.readout = widgets.Label()
        self.image = widgets.Image(format="png")
        self.q_slider.observe(self.update, names="value")
        self.k_slider.observe(self.update, names="value")
        # flex-start: the picture keeps its own size instead of stretching to the page width
        self.widget = widgets.VBox(
            [self.q_slider, self.k_slider, self.readout, self.image],
            layout=widgets.Layout(align_items="flex-start"),
        )
        self.state: PairState | None = None
        self.update()

    def update(self, change=None) -> PairState:
        """Redraw for the sliders' current values; return the new state."""
        state = self.picture.show(self.q_slider.value, self.k_slider.value)
        self.readout.value = f"{state.description}: dot {state.dot:.8f}"
        self.image.value = style.png_bytes(self.figure, self.dpi)
        self.state = state
        return state

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["text/plain"] = "Sliders for the Q and K positions (run the notebook from the top to use them)"
        return bundle

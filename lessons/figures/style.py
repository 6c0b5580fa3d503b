"""The house style of the course's figures: one size, one set of font sizes, legends off the data.

Every picture of the course is read in JupyterLab at 100% zoom, where a figure is shown at
its natural size (one PNG pixel = one CSS pixel) unless it is wider than the notebook's
output area, which shrinks it. Text of ``p`` points in a figure of ``dpi`` dots per inch is
``p * dpi / 72`` pixels tall there (a font size, as CSS ``font-size`` counts it: a digit is
about 0.7 of it). The numbers below are chosen so that every text of every figure is at
least :data:`MIN_TEXT_PX` pixels on screen:

=====================  ==========  ================================================
name                   value       what it is
=====================  ==========  ================================================
``DPI``                100         dots per inch of every figure (and its PNG)
``FIGURE_WIDTH``       8.0 in      default width: 800 px, fits any JupyterLab window
``FIGURE_HEIGHT``      4.0 in      default height of one row of panels
``MAX_FIGURE_WIDTH``   10.0 in     widest figure (1000 px); wider ones get shrunk
``FONT_SIZE``          11 pt       axis labels and text in the axes (15 px)
``TITLE_SIZE``         12 pt       axes titles; ``figure.titlesize`` is one more
``SMALL_FONT_SIZE``    10 pt       tick labels, legends, value labels (14 px)
``MIN_FONT_SIZE``      8 pt        the smallest text a figure may use (11 px)
``MIN_TEXT_PX``        10 px       the smallest text the browser check accepts on
                                   screen, after any shrinking by the page
=====================  ==========  ================================================

Where labels and legends go: titles, axis labels and units on every axes; labels inside
the axes and clear of the lines they name; a legend never on the data — outside the axes
(:func:`legend_outside`) unless an empty corner is certain. No text may cross the edge of
the figure or be cut by the axes.

How it is applied:

* ``import lessons.figures`` calls :func:`apply`, which updates ``matplotlib.rcParams``
  with :data:`STYLE` (sizes, fonts, legend defaults) and, inside an IPython kernel, makes the
  inline backend print each figure with one draw, uncropped (:func:`png_bytes`);
* a figure helper makes its figure with :func:`new_figure` (house size, dpi and
  constrained layout) and puts a legend off the data with :func:`legend_outside`;
* :func:`text_report` draws a figure and lists every text as drawn (its size in pixels,
  whether it crosses the figure's edge or is cut by its clip box); :func:`check_readable`
  raises ``AssertionError`` naming each text that breaks the style — for the figure
  modules' tests. The browser check (``tools/check_in_jupyterlab.py``) stores the same
  report in every PNG the kernel writes and fails a figure whose text is shown below
  :data:`MIN_TEXT_PX` or is clipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field

import matplotlib as mpl
import matplotlib.image

DPI = 100
FIGURE_WIDTH = 8.0
FIGURE_HEIGHT = 4.0
MAX_FIGURE_WIDTH = 10.0
FONT_SIZE = 11
TITLE_SIZE = 12
SMALL_FONT_SIZE = 10
MIN_FONT_SIZE = 8
MIN_TEXT_PX = 10.0
CLIP_TOLERANCE_PX = 1.0  # a text may touch an edge by this much (anti-aliasing), not cross it

# The key under which a PNG written by an instrumented kernel holds its text report.
PNG_TEXT_KEY = "lessons-figure-text"

STYLE: dict[str, object] = {
    "figure.figsize": (FIGURE_WIDTH, FIGURE_HEIGHT),
    "figure.dpi": DPI,
    "savefig.dpi": "figure",
    "font.size": FONT_SIZE,
    "axes.titlesize": TITLE_SIZE,
    # Titles sit at the top of their axes. matplotlib's default (None) measures the x axis and
    # the y offset text of every axes at each draw, to lift a title over ticks at the top; the
    # course puts no ticks there, so that search moved no title (every picture is the same,
    # pixel for pixel: tests/test_figures.py) and cost about 6% of printing a figure
    # (python benchmarks/bench_figures.py --titles).
    "axes.titley": 1.0,
    "axes.labelsize": FONT_SIZE,
    "figure.titlesize": TITLE_SIZE + 1,
    "xtick.labelsize": SMALL_FONT_SIZE,
    "ytick.labelsize": SMALL_FONT_SIZE,
    "legend.fontsize": SMALL_FONT_SIZE,
    "legend.title_fontsize": SMALL_FONT_SIZE,
    "legend.loc": "best",
    "legend.framealpha": 0.9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
}


# How a notebook prints a figure. The inline backend's default, ``bbox_inches="tight"``,
# draws every figure twice: once to find the box around everything drawn, once to render the
# cropped picture. The course's figures fit their own canvas (constrained layout; the browser
# check fails any text that crosses the edge), so a notebook draws each one once, at its size
# (:func:`png_bytes`).
INLINE_PRINT_KWARGS: dict[str, object] = {"bbox_inches": None}


def apply() -> None:
    """Put :data:`STYLE` into ``matplotlib.rcParams`` and, inside an IPython kernel, print
    figures with :data:`INLINE_PRINT_KWARGS` through :func:`png_bytes` (done once by
    ``import lessons.figures``)."""
    mpl.rcParams.update(STYLE)
    _configure_inline()


def _configure_inline() -> bool:
    """Make the inline backend print with :data:`INLINE_PRINT_KWARGS`; False outside IPython.

    Works before and after ``%matplotlib inline``: the backend reads its configuration when
    it is switched on, and the display formatter is replaced now for a backend already on.
    """
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
        from matplotlib_inline.config import InlineBackend
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    config = InlineBackend.instance(parent=shell)
    config.print_figure_kwargs = {**config.print_figure_kwargs, **INLINE_PRINT_KWARGS}
    set_matplotlib_formats(*config.figure_formats, **config.print_figure_kwargs)
    if set(config.figure_formats) == {"png"} and config.print_figure_kwargs == INLINE_PRINT_KWARGS:
        from matplotlib.figure import Figure

        shell.display_formatter.formatters["image/png"].for_type(Figure, _inline_png)
    return True


def _inline_png(fig) -> str | None:
    """What the inline backend shows for ``fig``: its PNG, base64-encoded (None for an empty figure)."""
    import base64

    if not fig.axes and not fig.lines:  # as IPython's print_figure: nothing to show
        return None
    return base64.b64encode(png_bytes(fig)).decode("ascii")


def pixels(points: float, dpi: float = DPI) -> float:
    """The height in screen pixels of ``points``-point text in a figure of ``dpi`` shown at 100%."""
    return float(points) * float(dpi) / 72.0


@dataclass(frozen=True)
class Margins:
    """Fixed room around a figure's grid of panels and between its panels, in inches.

    ``left``, ``right``, ``bottom`` and ``top`` run from the figure's edge to the panels
    (room for tick labels, axis labels, titles, a legend or colour bar outside the axes);
    ``wspace`` is the gap between two columns of panels, ``hspace`` between two rows.
    A figure helper that knows where its texts go passes these to :func:`new_figure` instead
    of asking constrained layout, which measures every text twice on each print: about a
    fifth of what a notebook spends on its figures. The figure modules' tests draw every
    helper and check that no text crosses the edge, is cut, or overlaps another
    (:func:`check_readable`).
    """

    left: float
    right: float
    bottom: float
    top: float
    wspace: float = 0.0
    hspace: float = 0.0

    def __post_init__(self):
        for name in ("left", "right", "bottom", "top", "wspace", "hspace"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
                raise ValueError(f"Margins.{name} must be a number of inches, 0 or more; got {value!r}")


def set_margins(fig, margins: Margins) -> None:
    """Place the grid of ``fig``'s panels (made by ``subplots``) with ``margins``, in inches.

    Raises ``ValueError`` when the margins leave no room for the panels at the figure's size.
    """
    if not isinstance(margins, Margins):
        raise ValueError(f"margins must be a Margins (inches); got {margins!r}")
    specs = [ax.get_subplotspec() for ax in fig.axes if ax.get_subplotspec() is not None]
    if not specs:
        raise ValueError("the figure has no grid of panels to place (make it with new_figure or subplots)")
    nrows, ncols = specs[0].get_gridspec().get_geometry()
    width, height = fig.get_size_inches()
    cell_w = (width - margins.left - margins.right - (ncols - 1) * margins.wspace) / ncols
    cell_h = (height - margins.bottom - margins.top - (nrows - 1) * margins.hspace) / nrows
    if cell_w <= 0 or cell_h <= 0:
        raise ValueError(f"margins {margins} leave no room for {nrows} x {ncols} panels in a "
                         f"{width:g} x {height:g} inch figure")
    fig.subplots_adjust(left=margins.left / width, right=1 - margins.right / width,
                        bottom=margins.bottom / height, top=1 - margins.top / height,
                        wspace=margins.wspace / cell_w, hspace=margins.hspace / cell_h)


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float | None = None, height: float | None = None,
               margins: Margins | None = None, **subplots_kw):
    """A figure in the house style: ``(fig, axes)`` as ``plt.subplots`` returns them.

    ``width`` defaults to :data:`FIGURE_WIDTH` (:data:`MAX_FIGURE_WIDTH` at most);
    ``height`` to :data:`FIGURE_HEIGHT` per row of panels. With ``margins`` (a
    :class:`Margins`) the panels sit at those fixed distances and no layout engine runs;
    without, the layout is constrained, so titles, labels and an outside legend get room.
    Other keywords go to ``plt.subplots``.
    """
    import matplotlib.pyplot as plt

    width = FIGURE_WIDTH if width is None else float(width)
    if not 0 < width <= MAX_FIGURE_WIDTH:
        raise ValueError(f"width must be in (0, {MAX_FIGURE_WIDTH}] inches; got {width}")
    height = FIGURE_HEIGHT * nrows if height is None else float(height)
    if height <= 0:
        raise ValueError(f"height must be positive (inches); got {height}")
    if margins is not None and subplots_kw.get("layout") is not None:
        raise ValueError(f"give margins or a layout, not both; got layout={subplots_kw['layout']!r}")
    subplots_kw.setdefault("layout", None if margins is not None else "constrained")
    subplots_kw.setdefault("dpi", DPI)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), **subplots_kw)
    if margins is not None:
        set_margins(fig, margins)
    return fig, axes


def plain_number(value, _position=None) -> str:
    """A log axis's tick label as a plain number: 0.0001, 0.1, 1, 10, 1000 (not 10^k)."""
    return f"{value:.0f}" if value >= 1 else f"{value:g}"


def plain_log_ticks(axis) -> None:
    """Label a log-scaled ``axis`` (``ax.xaxis`` or ``ax.yaxis``) with plain numbers, no minor ticks.

    matplotlib's default labels are powers (10^3) typeset with mathtext, whose parser costs
    a notebook's kernel about 0.1 s to build; the minor ticks cost more to draw than they say.
    A learner reads 1000 as easily as 10^3.
    """
    from matplotlib.ticker import FuncFormatter, NullLocator

    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(plain_number))


def legend_outside(ax, *, where: str = "right", **legend_kw):
    """A legend beside the axes (``where="right"``) or under it (``"below"``), never on the data.

    Returns the legend. With a constrained layout (:func:`new_figure`) the figure makes room.
    """
    if where == "right":
        placement = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0), "borderaxespad": 0.0}
    elif where == "below":
        handles, _ = ax.get_legend_handles_labels()
        placement = {"loc": "upper center", "bbox_to_anchor": (0.5, -0.18), "borderaxespad": 0.0,
                     "ncols": max(1, min(3, len(handles)))}
    else:
        raise ValueError(f"where must be 'right' or 'below'; got {where!r}")
    return ax.legend(**{**placement, **legend_kw})


def colorbar_beside(fig, axes, image, *, label: str, pad: float, width: float, shrink: float = 1.0):
    """A colour bar for ``image`` in an axes of its own, ``pad`` inches right of ``axes`` (as
    drawn, after their aspect) and ``width`` inches wide, ``shrink`` times their height and
    centred on them: a figure at fixed :class:`Margins` keeps room for it in its right margin."""
    fig_width = fig.get_size_inches()[0]
    boxes = []
    for ax in axes:
        ax.apply_aspect()
        boxes.append(ax.get_position())
    y0, y1 = min(b.y0 for b in boxes), max(b.y1 for b in boxes)
    bar = (y1 - y0) * shrink
    cax = fig.add_axes((max(b.x1 for b in boxes) + pad / fig_width, y0 + (y1 - y0 - bar) / 2,
                        width / fig_width, bar))
    return fig.colorbar(image, cax=cax, label=label)


SUPTITLE_GAP = 0.05  # inches from the figure's top edge to a suptitle placed by suptitle_at_top


def suptitle_at_top(fig, text: str, **kwargs):
    """``fig.suptitle(text)`` hung :data:`SUPTITLE_GAP` inches below the figure's top edge, so
    its place does not depend on the figure's height (for figures at fixed :class:`Margins`)."""
    height = fig.get_size_inches()[1]
    return fig.suptitle(text, y=1 - SUPTITLE_GAP / height, va="top", **kwargs)


def text_inches(texts, points: float = SMALL_FONT_SIZE) -> float:
    """The width in inches of the widest of ``texts`` in the house font at ``points``: the
    advance widths matplotlib itself lays the text out with, measured without drawing (0 for
    no texts). Fixed margins (:class:`Margins`) are sized with it."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    font = FontProperties(size=points)
    return max((text_to_path.get_text_width_height_descent(str(t), font, ismath=False)[0] / 72.0
                for t in texts), default=0.0)


def right_legend_margin(labels, figure_width: float, left: float) -> float:
    """The right margin (inches) that holds :func:`legend_outside`'s legend of ``labels`` on the
    right of one axes spanning the figure from ``left``: the gap of 2% of the axes, the
    legend's frame, handle and longest label."""
    legend = text_inches(labels) + 3.6 * SMALL_FONT_SIZE / 72  # borderpad 0.4 x 2, handle 2.0, gap 0.8 (em)
    return (0.02 * (figure_width - left) + legend + 0.06) / 1.02


@dataclass(frozen=True)
class DrawnText:
    """One text as drawn: its string, size, place (pixels, origin bottom left) and problems."""

    text: str
    points: float
    pixels: float
    extent: tuple[float, float, float, float]  # x0, y0, x1, y1 in figure pixels
    outside_figure: bool
    cut_by_axes: bool


@dataclass
class TextReport:
    """Every text of a figure as drawn at ``dpi`` on a ``width`` x ``height`` pixel canvas."""

    dpi: float
    width: float
    height: float
    texts: list[DrawnText] = field(default_factory=list)

    @property
    def smallest(self) -> DrawnText | None:
        """The text drawn smallest (None for a figure without text)."""
        return min(self.texts, key=lambda t: t.pixels, default=None)

    def overlaps(self, tolerance: float = CLIP_TOLERANCE_PX) -> list[tuple[DrawnText, DrawnText]]:
        """The pairs of texts whose drawn boxes overlap by more than ``tolerance`` px each way."""
        found = []
        for i, a in enumerate(self.texts):
            for b in self.texts[i + 1:]:
                dx = min(a.extent[2], b.extent[2]) - max(a.extent[0], b.extent[0])
                dy = min(a.extent[3], b.extent[3]) - max(a.extent[1], b.extent[1])
                if dx > tolerance and dy > tolerance:
                    found.append((a, b))
        return found

    @property
    def clipped(self) -> list[DrawnText]:
        """The texts that cross the figure's edge or are cut by their axes."""
        return [t for t in self.texts if t.outside_figure or t.cut_by_axes]

    def problems(self, scale: float = 1.0, min_px: float = MIN_TEXT_PX) -> list[str]:
        """What breaks the house style when the figure is shown at ``scale`` (1.0 = natural size)."""
        found = []
        for t in self.texts:
            if t.pixels * scale < min_px - 1e-9:
                found.append(f"text {t.text!r} is {t.pixels * scale:.1f} px on screen ({t.points:g} pt at "
                             f"{self.dpi:g} dpi, shown at {scale:.0%}); minimum {min_px:g} px")
        for t in self.clipped:
            where = "crosses the edge of the figure" if t.outside_figure else "is cut by its axes"
            found.append(f"text {t.text!r} {where}")
        return found

    def to_json(self) -> str:
        """The report as JSON (what the browser check stores in a PNG under :data:`PNG_TEXT_KEY`)."""
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, data: str) -> TextReport:
        """Read a report written by :meth:`to_json`."""
        raw = json.loads(data)
        texts = [DrawnText(**{**t, "extent": tuple(t["extent"])}) for t in raw.pop("texts")]
        return cls(**raw, texts=texts)


_recording: list[list] = []


def _record_draw_text(original):
    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if _recording and str(s).strip():
            _recording[-1].append((self, gc, x, y, s, prop, angle, ismath, mtext))
        return original(self, gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    draw_text.__wrapped__ = original
    return draw_text


@contextmanager
def _recording_texts() -> Iterator[list]:
    """While active, every ``RendererAgg.draw_text`` call is recorded (and still drawn)."""
    from matplotlib.backends.backend_agg import RendererAgg

    calls: list = []
    original = RendererAgg.draw_text
    RendererAgg.draw_text = _record_draw_text(original)
    _recording.append(calls)
    try:
        yield calls
    finally:
        _recording.pop()
        RendererAgg.draw_text = original


def _clip_extent(gc):
    """The clip box of a graphics context as (x0, y0, x1, y1), or None."""
    boxes = []
    rect = gc.get_clip_rectangle()
    if rect is not None:
        boxes.append(rect.extents)
    path, affine = gc.get_clip_path()
    if path is not None:
        boxes.append(path.get_extents(affine).extents)
    if not boxes:
        return None
    return (max(b[0] for b in boxes), max(b[1] for b in boxes),
            min(b[2] for b in boxes), min(b[3] for b in boxes))


def _report_from_calls(calls, dpi: float, width: float, height: float) -> TextReport:
    report = TextReport(dpi=float(dpi), width=float(width), height=float(height))
    seen: set[int] = set()
    tol = CLIP_TOLERANCE_PX
    for renderer, gc, x, y, s, prop, angle, ismath, mtext in calls:
        if mtext is not None:
            if id(mtext) in seen:
                continue
            seen.add(id(mtext))
            text = mtext.get_text()
            extent = tuple(float(v) for v in mtext.get_window_extent(renderer).extents)
            clip_on = mtext.get_clip_on()
        else:
            # One line of a text of several lines: (x, y) is where its baseline starts, counted
            # from the top of the canvas when the renderer flips y (Agg does).
            text = s
            w, h, d = renderer.get_text_width_height_descent(s, prop, ismath=ismath)
            if round(angle) % 180 == 90:
                w, h = h, w
            if renderer.flipy():
                y = height - y
            extent = (float(x), float(y) - d, float(x) + w, float(y) + h - d)
            clip_on = True
        points = float(prop.get_size_in_points())
        outside = (extent[0] < -tol or extent[1] < -tol
                   or extent[2] > width + tol or extent[3] > height + tol)
        box = _clip_extent(gc) if clip_on else None
        cut = box is not None and (extent[0] < box[0] - tol or extent[1] < box[1] - tol
                                   or extent[2] > box[2] + tol or extent[3] > box[3] + tol)
        report.texts.append(DrawnText(text=str(text), points=points, pixels=pixels(points, dpi),
                                      extent=extent, outside_figure=bool(outside), cut_by_axes=bool(cut)))
    return report


def text_report(fig) -> TextReport:
    """Draw ``fig`` at its own dpi and report every text as drawn (the texts a reader sees).

    Only texts that are drawn count (tick labels outside the view and invisible or empty
    texts do not). The figure keeps its canvas.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas
    agg = canvas if isinstance(canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    try:
        with _recording_texts() as calls:
            agg.draw()
        renderer = agg.get_renderer()
        return _report_from_calls(calls, fig.dpi, renderer.width, renderer.height)
    finally:
        if agg is not canvas:
            fig.set_canvas(canvas)


def check_readable(fig, *, scale: float = 1.0) -> TextReport:
    """Raise ``AssertionError`` naming every text of ``fig`` that is too small or clipped.

    ``scale`` is how much the page shrinks the figure (1.0: shown at natural size). Returns
    the :class:`TextReport` when the figure keeps the house style.
    """
    report = text_report(fig)
    found = report.problems(scale)
    if found:
        raise AssertionError("figure breaks the house style:\n  " + "\n  ".join(found))
    return report


def record_text_in_png() -> None:
    """Make every PNG that matplotlib's Agg canvas writes carry its :class:`TextReport`.

    For the browser check only: it runs this in the kernels it starts, then reads the
    report back from each picture on the page (inline figures, animation frames, slider
    pictures). It replaces ``FigureCanvasAgg.print_png`` for the rest of the process.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if getattr(FigureCanvasAgg.print_png, "_records_text", False):
        return

    def print_png(self, filename_or_obj, *, metadata=None, pil_kwargs=None, **_print_figure_kwargs):
        # print_figure passes dpi, facecolor, ... to a print method outside matplotlib; the
        # figure already holds them when it is drawn, as for matplotlib's own print_png.
        with _recording_texts() as calls:
            FigureCanvasAgg.draw(self)
        renderer = self.get_renderer()
        report = _report_from_calls(calls, self.figure.dpi, renderer.width, renderer.height)
        metadata = {**(metadata or {}), PNG_TEXT_KEY: report.to_json()}
        mpl.image.imsave(filename_or_obj, self.buffer_rgba(), format="png", origin="upper",
                         dpi=self.figure.dpi, metadata=metadata, pil_kwargs=pil_kwargs)

    print_png._records_text = True
    FigureCanvasAgg.print_png = print_png


def png_text_report(png: bytes) -> TextReport | None:
    """The :class:`TextReport` stored in a PNG by :func:`record_text_in_png`, or None."""
    import struct
    import zlib

    if png[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos = 8
    while pos + 8 <= len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        body = png[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind in (b"tEXt", b"zTXt", b"iTXt"):
            key, _, value = body.partition(b"\0")
            if key.decode("latin-1") != PNG_TEXT_KEY:
                continue
            if kind == b"zTXt":
                value = zlib.decompress(value[1:])
            elif kind == b"iTXt":
                compressed, value = value[0], value[2:]
                value = value.split(b"\0", 2)[2]
                if compressed:
                    value = zlib.decompress(value)
            return TextReport.from_json(value.decode("utf-8" if kind == b"iTXt" else "latin-1"))
        if kind == b"IEND":
            break
    return None


def png_bytes(fig, dpi: float | None = None) -> bytes:
    """The figure as PNG bytes, at ``dpi`` (default: the figure's own).

    The inline backend and the sliders' pictures come through here. ``savefig`` draws a figure
    that has a layout engine twice (once without rendering, to place things; then for real),
    although the engine runs inside the real draw anyway: here Agg draws it once. The bytes
    are the same as ``savefig``'s (a test compares them).
    """
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    buffer = io.BytesIO()
    if dpi is not None and dpi != fig.dpi:
        fig.savefig(buffer, format="png", dpi=dpi)
        return buffer.getvalue()
    canvas = fig.canvas
    agg = canvas if isinstance(canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    try:
        agg.print_png(buffer)
    finally:
        if agg is not canvas:
            fig.set_canvas(canvas)
    return buffer.getvalue()

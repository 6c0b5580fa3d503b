"""Fixed margins instead of a layout engine (lessons.figures.style.Margins), and the text report's
overlap check and multi-line texts."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lessons.figures import arrows, motion  # noqa: E402
from lessons.figures.style import Margins, check_readable, new_figure, set_margins, text_report  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _inches(ax):
    fig = ax.figure
    w, h = fig.get_size_inches()
    box = ax.get_position(original=True)
    return np.array([box.x0 * w, box.y0 * h, box.x1 * w, box.y1 * h])


def test_margins_place_a_grid_of_panels_in_inches_without_a_layout_engine():
    margins = Margins(left=0.8, right=0.3, bottom=0.6, top=0.4, wspace=0.5, hspace=0.7)
    fig, axes = new_figure(2, 3, width=9.0, height=6.0, margins=margins)
    assert fig.get_layout_engine() is None
    boxes = np.array([[_inches(ax) for ax in row] for row in axes])
    np.testing.assert_allclose(boxes[:, 0, 0], 0.8)           # left edge
    np.testing.assert_allclose(boxes[:, -1, 2], 9.0 - 0.3)    # right edge
    np.testing.assert_allclose(boxes[-1, :, 1], 0.6)          # bottom edge
    np.testing.assert_allclose(boxes[0, :, 3], 6.0 - 0.4)     # top edge
    np.testing.assert_allclose(boxes[:, 1, 0] - boxes[:, 0, 2], 0.5)  # between columns
    np.testing.assert_allclose(boxes[0, :, 1] - boxes[1, :, 3], 0.7)  # between rows
    widths = boxes[..., 2] - boxes[..., 0]
    np.testing.assert_allclose(widths, (9.0 - 0.8 - 0.3 - 2 * 0.5) / 3)


def test_margins_keep_width_ratios():
    fig, (a, b) = new_figure(1, 2, width=9.0, height=4.0, width_ratios=(1, 2),
                             margins=Margins(left=0.5, right=0.5, bottom=0.5, top=0.5, wspace=1.0))
    wa, wb = (_inches(ax)[2] - _inches(ax)[0] for ax in (a, b))
    np.testing.assert_allclose([wa, wb], [7.0 / 3, 14.0 / 3])
    np.testing.assert_allclose(_inches(b)[0] - _inches(a)[2], 1.0)


@pytest.mark.parametrize("kwargs, message", [
    ({"left": -0.1, "right": 0, "bottom": 0, "top": 0},
     "Margins.left must be a number of inches, 0 or more; got -0.1"),
    ({"left": 0, "right": "1", "bottom": 0, "top": 0},
     "Margins.right must be a number of inches, 0 or more; got '1'"),
    ({"left": 0, "right": 0, "bottom": float("nan"), "top": 0}, "Margins.bottom must be a number of inches"),
    ({"left": 0, "right": 0, "bottom": 0, "top": True},
     "Margins.top must be a number of inches, 0 or more; got True"),
])
def test_bad_margins_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Margins(**kwargs)


def test_margins_that_leave_no_room_and_margins_with_a_layout_are_refused():
    with pytest.raises(ValueError, match=r"leave no room for 1 x 2 panels in a 4 x 3 inch figure"):
        new_figure(1, 2, width=4.0, height=3.0, margins=Margins(left=2, right=1, bottom=0, top=0, wspace=1.5))
    with pytest.raises(ValueError, match="give margins or a layout, not both; got layout='constrained'"):
        new_figure(margins=Margins(left=1, right=1, bottom=1, top=1), layout="constrained")
    fig = plt.figure()
    with pytest.raises(ValueError, match="no grid of panels"):
        set_margins(fig, Margins(left=1, right=1, bottom=1, top=1))
    with pytest.raises(ValueError, match=r"margins must be a Margins \(inches\); got \(1, 1, 1, 1\)"):
        set_margins(fig, (1, 1, 1, 1))


def test_the_report_finds_overlapping_texts_and_only_those():
    fig, ax = new_figure(margins=Margins(left=0.8, right=0.2, bottom=0.6, top=0.4))
    ax.text(0.2, 0.5, "one text", transform=ax.transAxes)
    ax.text(0.22, 0.5, "on another", transform=ax.transAxes)
    ax.text(0.7, 0.2, "alone", transform=ax.transAxes)
    pairs = [(a.text, b.text) for a, b in text_report(fig).overlaps()]
    assert pairs == [("one text", "on another")]


def test_each_line_of_a_text_of_several_lines_is_reported_where_it_is_drawn():
    fig, ax = new_figure(width=4.0, height=3.0, margins=Margins(left=0.6, right=0.2, bottom=0.5, top=0.7))
    ax.set_title("first line\nsecond line")
    lines = {t.text: t.extent for t in text_report(fig).texts if "line" in t.text}
    top_of_axes = (3.0 - 0.7) * fig.dpi
    assert set(lines) == {"first line", "second line"}
    assert top_of_axes < lines["second line"][1] < lines["first line"][1] < 3.0 * fig.dpi


@pytest.mark.parametrize("make", [
    arrows.quarter_turn_figure,
    lambda: arrows.quarter_turn_figure([[1.0, 0.0]]),
    lambda: arrows.quarter_turn_figure([[30.0, 40.0], [-1.0, 2.0]]),
    arrows.unit_circle_figure,
    lambda: arrows.unit_circle_figure(3.0),
    arrows.decomposition_figure,
    lambda: arrows.decomposition_figure((-3.0, 12.0), 2.0),
    motion.key_frames_figure,
], ids=["quarter-turn", "quarter-turn-one", "quarter-turn-long", "unit-circle", "unit-circle-3rad",
        "decomposition", "decomposition-long", "key-frames"])
def test_figures_at_fixed_margins_run_no_layout_engine_and_keep_their_texts_apart(make):
    fig = make()
    assert fig.get_layout_engine() is None
    report = check_readable(fig)
    assert report.overlaps() == []


def test_text_inches_is_the_width_agg_draws_and_takes_the_widest():
    from lessons.figures.style import SMALL_FONT_SIZE, text_inches

    fig = plt.figure(figsize=(6, 2), dpi=100)
    renderer = fig.canvas.get_renderer()
    texts = ["0.75", "\u22121.00", "query position"]
    drawn = [fig.text(0.1, 0.5, t, fontsize=SMALL_FONT_SIZE).get_window_extent(renderer).width / 100
             for t in texts]
    for t, width in zip(texts, drawn, strict=True):
        assert text_inches([t]) == pytest.approx(width, abs=0.02), t
    assert text_inches(texts) == pytest.approx(max(drawn), abs=0.02)
    assert text_inches(["1"], points=20) == pytest.approx(2 * text_inches(["1"], points=10), rel=0.05)
    assert text_inches([]) == 0.0
    plt.close(fig)


@pytest.mark.parametrize("height", [3.0, 9.0])
def test_suptitle_at_top_hangs_the_same_inches_below_the_top_edge_at_any_height(height):
    from lessons.figures.style import SUPTITLE_GAP, suptitle_at_top

    fig = plt.figure(figsize=(6, height), dpi=100)
    title = suptitle_at_top(fig, "a title")
    box = title.get_window_extent(fig.canvas.get_renderer())
    assert (height * 100 - box.y1) / 100 == pytest.approx(SUPTITLE_GAP, abs=0.02)
    plt.close(fig)

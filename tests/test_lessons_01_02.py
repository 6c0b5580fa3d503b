"""Notebooks 01 and 02 say what they mean, and their pictures can be read.

* 02 has one signed distance, the query's position minus the key's: the sliders' text line
  and the picture's title come from one helper and always state the same distance;
* the labels of 01's arrow pictures stay inside the axes and off every arrow;
* the learner's prose of 01 and 02 holds no notes for maintainers, states the definition of
  distance once, and quotes the numbers its claims check.
"""

from __future__ import annotations

import gc
import re
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lessons.claims import all_claims  # noqa: E402
from lessons.figures import arrows, motion, style  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NB01 = ROOT / "notebooks" / "01_order_and_the_2d_turn.ipynb"
NB02 = ROOT / "notebooks" / "02_radians_and_relative_position.ipynb"

pytestmark = pytest.mark.filterwarnings("ignore:Animation was deleted without rendering anything")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")
    # Collect this test's animations now, while the warning about them is expected, rather
    # than during some later test.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Animation was deleted without rendering anything")
        gc.collect()


def _prose(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


# --- 02: one signed distance --------------------------------------------------------------

POSITIONS = [(1, 0), (4, 3), (4, 2), (0, 1), (3, 10), (7, 7), (12, 0), (0, 12), (2, 9)]


@pytest.mark.parametrize("q_position, k_position", POSITIONS)
def test_slider_text_and_picture_title_state_the_same_signed_distance(q_position, k_position):
    explorer = motion.PositionExplorer(0, 0, max_position=12)
    explorer.q_slider.value = q_position
    explorer.k_slider.value = k_position
    expected = f"Q at {q_position}, K at {k_position}, distance {q_position - k_position}"
    slider_words, dot = explorer.readout.value.split(": dot ")
    title = explorer.picture.ax.get_title()
    assert slider_words == expected
    assert title == expected
    assert float(dot) == pytest.approx(np.cos(q_position - k_position), abs=5e-9)


def test_a_key_after_its_query_is_at_a_negative_distance():
    state = motion.pair_state(0, 1)
    assert state.distance == -1
    assert state.description == "Q at 0, K at 1, distance -1"
    assert motion.pair_state(4, 2).description == "Q at 4, K at 2, distance 2"


def test_every_frame_of_the_story_is_titled_with_the_helper():
    anim = motion.moving_animation()
    for i, (q_position, k_position, caption) in enumerate(motion.STORY):
        anim.draw_frame(i)
        words = motion.describe_positions(q_position, k_position)
        assert anim.picture.ax.get_title() == f"{caption}\n{words}"
    fig = motion.key_frames_figure()
    for picture, (q_position, k_position, _) in zip(fig.pictures, motion.KEY_FRAMES, strict=True):
        assert picture.ax.get_title().endswith(f"distance {q_position - k_position:.0f}")


def test_the_committed_animation_shows_no_controls_where_its_script_cannot_run():
    """Opened untrusted, JupyterLab strips scripts: what is left must be a picture and a note."""
    nb = nbformat.read(NB02, as_version=4)
    players = [
        o.data["text/html"]
        for c in nb.cells if c.cell_type == "code"
        for o in c.outputs if "_anim_img" in o.get("data", {}).get("text/html", "")
    ]  # fmt: skip
    assert len(players) == 1
    static = re.sub(r"<script>.*?</script>", "", players[0], flags=re.S)
    assert "<button" not in static and "<input" not in static
    assert re.search(r'<img src="data:image/png;base64,', static)
    assert "To play it, run the notebook from the top" in static


def test_describe_positions_writes_fractional_positions_and_refuses_text():
    assert motion.describe_positions(2.5, 1.5) == "Q at 2.50, K at 1.50, distance 1"
    assert motion.describe_positions(0, 0) == "Q at 0, K at 0, distance 0"
    with pytest.raises(TypeError, match="q_position must be an array of real numbers"):
        motion.describe_positions("one", 0)


def test_notebook_02_defines_distance_once_and_every_claim_follows_it():
    prose = _prose(NB02)
    assert prose.count("**distance**") == 1
    assert len(re.findall(r"query's position minus the key's", prose)) == 1
    # No picture, slider or claim of 02 writes "distance -1" for a key before its query:
    # the claims that name a distance give the positions, and the distance is q - k.
    for c in all_claims():
        if c.notebook != "02":
            continue
        for q, k, d in re.findall(r"Q at (\d+), K at (\d+)\D+distance (-?\d+)", c.text):
            assert int(d) == int(q) - int(k), c.id


# --- 01: labels inside the axes, off the arrows -------------------------------------------

FIGURES_01 = {
    "quarter turn": lambda: arrows.quarter_turn_figure(),
    "quarter turn of [-2, 0.5]": lambda: arrows.quarter_turn_figure([[-2.0, 0.5]]),
    "worked example": lambda: arrows.decomposition_figure(),
    "decomposition (-1.5, 0.7) by 2.3": lambda: arrows.decomposition_figure((-1.5, 0.7), 2.3),
    "decomposition (1, 2) by 0.5": lambda: arrows.decomposition_figure((1.0, 2.0), 0.5),
    "unit circle": lambda: arrows.unit_circle_figure(),
}


def _segment_pixels(ax, tail, head, n=60):
    t = np.linspace(0.0, 1.0, n)[:, None]
    return ax.transData.transform(tail + t * (head - tail))


@pytest.mark.parametrize("make", FIGURES_01.values(), ids=FIGURES_01.keys())
def test_labels_stay_inside_the_axes_and_off_every_arrow(make):
    fig = make()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        labels = [t for t in ax.texts if t.get_text().strip()]
        assert labels
        boxes = [t.get_window_extent(renderer) for t in labels]
        for text, box in zip(labels, boxes, strict=True):
            name = repr(text.get_text())
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1, f"{name} crosses a side of the plot"
            assert frame.y0 <= box.y0 and box.y1 <= frame.y1, f"{name} crosses the top or bottom"
        for name, (tail, head) in arrows.arrows(ax).items():
            points = _segment_pixels(ax, tail, head)
            for text, box in zip(labels, boxes, strict=True):
                inner = box.padded(-1.0)
                hit = [p for p in points if inner.contains(*p)]
                assert not hit, f"label {text.get_text()!r} lies on the arrow {name!r}"
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                assert not boxes[i].padded(-1.0).overlaps(boxes[j].padded(-1.0)), (
                    f"labels {labels[i].get_text()!r} and {labels[j].get_text()!r} overlap"
                )


def test_the_old_label_placement_would_have_failed():
    """The check above can fail: a label centred on its arrow's head is caught."""
    fig, ax = plt.subplots(figsize=(4, 4))
    arrows.plane_axes(ax, 1.25)
    on_arrow = arrows.draw_arrow(ax, (0, 0), (1, 0), color="k", label="[1, 0]", label_shift=(0.05, 0))
    at_edge = arrows.draw_arrow(ax, (0, 0), (0, 1), color="k", label="[0, 1]", label_shift=(1.2, 0))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = on_arrow.label.get_window_extent(renderer)
    points = _segment_pixels(ax, np.array([0.0, 0.0]), np.array([1.0, 0.0]))
    assert any(box.padded(-1.0).contains(*p) for p in points)
    assert at_edge.label.get_window_extent(renderer).x1 > ax.get_window_extent(renderer).x1


# --- 01 and 02: the house style ------------------------------------------------------------


def _explorer_figure():
    return motion.PositionExplorer(4, 2).figure


def _animation_figure():
    anim = motion.moving_animation()
    anim.draw_frame(len(motion.STORY) - 1)
    return anim._fig


READABLE = {
    **FIGURES_01,
    "key frames": lambda: motion.key_frames_figure(),
    "animation frame": _animation_figure,
    "slider picture": _explorer_figure,
}


@pytest.mark.parametrize("make", READABLE.values(), ids=READABLE.keys())
def test_figures_of_01_and_02_keep_the_house_style(make):
    fig = make()
    assert fig.dpi == style.DPI
    assert fig.get_size_inches()[0] <= style.MAX_FIGURE_WIDTH
    report = style.check_readable(fig)  # no text below the minimum size, none clipped
    assert report.smallest.points >= style.SMALL_FONT_SIZE - 1


def test_the_animation_picture_is_larger_than_before():
    """It was 236 x 302 px with tick labels about 5 px high (issue 11)."""
    fig = _animation_figure()
    width, height = fig.get_size_inches() * fig.dpi
    assert width >= 380 and height >= 460
    ticks = [t for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert ticks and min(style.pixels(t.get_fontsize(), fig.dpi) for t in ticks) >= 12


# --- 01 and 02: prose for learners ---------------------------------------------------------

MAINTAINER_WORDS = re.compile(
    r"\bnbval\b|\bsaniti[sz]|\bCI\b|continuous integration|\bpytest\b|regression test"
)


@pytest.mark.parametrize("path", [NB01, NB02], ids=["01", "02"])
def test_prose_holds_no_notes_for_maintainers(path):
    found = MAINTAINER_WORDS.findall(_prose(path))
    assert not found, f"maintainer notes in {path.name}: {found}"


# --- every notebook: one sign of the distance, one meaning of theta -------------------------

ALL_ENGLISH = sorted(p for d in ("notebooks", "solutions") for p in (ROOT / d).glob("*.ipynb"))
DISTANCE_AS_N_MINUS_M = re.compile(r"distance[\s$`(]*n\s*[-−]\s*m\b")
THETA_AS_A_FREQUENCY = re.compile(r"e\^\{\s*i\s*[pmn]\s*\\theta\s*\}")


@pytest.mark.parametrize("path", ALL_ENGLISH, ids=[f"{p.parent.name}/{p.name[:2]}" for p in ALL_ENGLISH])
def test_prose_never_calls_n_minus_m_the_distance_nor_theta_a_frequency(path):
    """The course's distance is m - n (query minus key, notebook 02) and theta is the base
    (notebook 03); an expert read found both slips in learner prose and answers."""
    prose = _prose(path)
    assert not DISTANCE_AS_N_MINUS_M.findall(prose), path.name
    assert not THETA_AS_A_FREQUENCY.findall(prose), path.name


def test_the_two_patterns_catch_the_slips_they_guard_against():
    assert DISTANCE_AS_N_MINUS_M.search("then depends on the distance $n - m$.")
    assert DISTANCE_AS_N_MINUS_M.search("only the distance n − m counts")
    assert not DISTANCE_AS_N_MINUS_M.search("the distance $m - n$ (query minus key)")
    assert THETA_AS_A_FREQUENCY.search(r"a multiplication by $e^{ip\theta}$")
    assert not THETA_AS_A_FREQUENCY.search(r"a multiplication by $e^{ip\omega}$")

"""The figures of notebooks 01-03 draw what the lesson computes.

Each test reads back what a figure helper drew (arrow ends, line data, bar lengths, slider
read-outs) and compares it with the package's own rotation and frequency code.
"""

import base64
import gc
import json
import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lessons.figures import arrows, frequencies, motion  # noqa: E402
from lessons.figures.style import check_readable, text_report  # noqa: E402
from lessons.frequencies import pair_frequencies  # noqa: E402
from lessons.rotation import rotate_2d  # noqa: E402

# Tests that redraw frames by hand never render the animation; matplotlib warns when such an
# animation is garbage-collected (at some later test), which says nothing about the figure.
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


def _titled(fig) -> bool:
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""
    return all(ax.get_title() or suptitle for ax in fig.axes)


FIGURES = [
    arrows.quarter_turn_figure,
    arrows.decomposition_figure,
    arrows.unit_circle_figure,
    motion.key_frames_figure,
    frequencies.cos_distance_figure,
    frequencies.frequency_ladder_figure,
    frequencies.turn_count_figure,
    frequencies.two_planes_figure,
]


@pytest.mark.parametrize("make", FIGURES, ids=lambda f: f.__name__)
def test_every_figure_has_a_title_and_labelled_axes(make):
    fig = make()
    assert fig.axes
    assert _titled(fig)
    for ax in fig.axes:
        assert ax.get_xlabel().strip() and ax.get_ylabel().strip()


# --- 01: arrows -------------------------------------------------------------------------


def test_quarter_turn_draws_each_vector_turned_by_90_degrees():
    fig = arrows.quarter_turn_figure([[1, 0], [3, 4]])
    drawn = [arrows.arrows(ax) for ax in fig.axes]
    np.testing.assert_allclose(drawn[0]["after"][1], [0, 1], atol=1e-12)
    np.testing.assert_allclose(drawn[1]["after"][1], [-4, 3], atol=1e-12)
    np.testing.assert_allclose(drawn[1]["before"][1], [3, 4])
    for d in drawn:
        np.testing.assert_array_equal(d["after"][0], [0, 0])


@pytest.mark.parametrize(
    "vector, angle", [((2, 1), arrows.WORKED_ANGLE), ((-1.5, 0.7), 2.3), ((0.3, -2), -1.0)]
)
def test_decomposition_adds_the_two_turned_parts_head_to_tail(vector, angle):
    drawn = arrows.arrows(arrows.decomposition_figure(vector, angle).axes[0])
    a_tail, a_head = drawn["part_a"]
    moved_tail, moved_head = drawn["part_b_moved"]
    _, b_head = drawn["part_b"]
    _, total = drawn["sum"]
    expected = rotate_2d(vector, angle)
    np.testing.assert_allclose(total, expected, atol=1e-12)
    np.testing.assert_allclose(a_head, [vector[0] * np.cos(angle), vector[0] * np.sin(angle)], atol=1e-12)
    np.testing.assert_allclose(b_head, [-vector[1] * np.sin(angle), vector[1] * np.cos(angle)], atol=1e-12)
    # The dashed copy of the b part starts where the a part ends and ends at the sum.
    np.testing.assert_allclose(moved_tail, a_head)
    np.testing.assert_allclose(moved_head - moved_tail, b_head, atol=1e-12)
    np.testing.assert_allclose(moved_head, total, atol=1e-12)
    np.testing.assert_array_equal(a_tail, [0, 0])


def test_worked_example_figure_reaches_1_2_and_names_the_angle():
    fig = arrows.decomposition_figure()
    np.testing.assert_allclose(arrows.arrows(fig.axes[0])["sum"][1], [1, 2], atol=1e-12)
    assert "36.87 degrees" in fig.axes[0].get_title()


def test_unit_circle_arrow_ends_at_cos_sin():
    angle = 2.0
    fig = arrows.unit_circle_figure(angle)
    _, head = arrows.arrows(fig.axes[0])["radius"]
    np.testing.assert_allclose(head, [np.cos(angle), np.sin(angle)])


def test_draw_arrow_rejects_points_that_are_not_2d():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="tail and head must be 2D points"):
        arrows.draw_arrow(ax, (0, 0, 0), (1, 0), color="k")


# --- 02: the moving picture ---------------------------------------------------------------


@pytest.mark.parametrize("q_position, k_position", [(0, 0), (0, 1), (3, 4), (4, 3), (4, 2), (0, 7), (9, 2)])
def test_pair_state_dot_is_cos_of_the_distance(q_position, k_position):
    state = motion.pair_state(q_position, k_position)
    assert state.distance == q_position - k_position  # how far back the key sits
    assert state.dot == pytest.approx(np.cos(k_position - q_position), abs=1e-12)
    np.testing.assert_allclose(state.q, [np.cos(q_position), np.sin(q_position)], atol=1e-12)


def test_pair_state_uses_the_frequency_and_checks_it():
    assert motion.pair_state(1, 5, frequency=0.25).dot == pytest.approx(np.cos(1.0), abs=1e-12)
    with pytest.raises(ValueError, match="frequency must be a finite number greater than 0"):
        motion.pair_state(0, 1, frequency=0.0)
    with pytest.raises(ValueError, match="content must be one 2D vector"):
        motion.pair_state(0, 1, content=[1, 0, 0])


def test_pair_picture_draws_the_state_it_returns():
    fig, ax = plt.subplots()
    picture = motion.PairPicture(ax)
    state = picture.show(4, 2)
    drawn = arrows.arrows(ax)
    np.testing.assert_allclose(drawn["q"][1], state.q)
    np.testing.assert_allclose(drawn["k"][1], state.k)
    np.testing.assert_allclose(picture.bar.get_xdata(), [0, np.cos(2)])
    assert picture.dot_label.get_text() == f"dot {np.cos(2):.4f}"
    assert ax.get_title() == "Q at 4, K at 2, distance 2"


@pytest.mark.parametrize("where", ["sliders", "story"])
def test_no_label_of_the_pair_picture_covers_another(where):
    # Every whole-number setting of 02's sliders (and every frame of the story): Q and K at the
    # same position, an arrow pointing straight down onto the "dot" text (Q at 11) included.
    cases = ([(q, k) for q in range(13) for k in range(13)] if where == "sliders"
             else [f[:2] for f in motion.STORY + motion.KEY_FRAMES])
    fig, ax = plt.subplots(figsize=motion.PANEL_SIZE)
    picture = motion.PairPicture(ax)
    covered = []
    for q, k in cases:
        picture.show(q, k)
        covered += [(q, k, a.text, b.text) for a, b in text_report(fig).overlaps(tolerance=0.0)]
    plt.close(fig)
    assert covered == []


def test_labels_fan_apart_when_the_arrows_coincide_and_step_aside_when_pointing_down():
    q_at, k_at = motion.label_positions(np.array([0.6, 0.8]), np.array([0.6, 0.8]))
    assert np.hypot(q_at[0] - k_at[0], q_at[1] - k_at[1]) > 0.5  # fanned apart
    assert np.arctan2(q_at[1], q_at[0]) > np.arctan2(k_at[1], k_at[0])  # Q on the counter-clockwise side
    q_at, k_at = motion.label_positions(np.array([0.0, -1.0]), np.array([1.0, 0.0]))
    assert q_at == (pytest.approx(0.17), pytest.approx(-1.0))  # beside the head, not below it
    assert k_at == (pytest.approx(motion.LABEL_RADIUS), pytest.approx(0.0))


def test_the_story_moves_both_by_3_then_k_back_to_2():
    story = motion.STORY
    assert story[0][:2] == (1.0, 0.0)
    assert (4.0, 3.0) in [f[:2] for f in story]
    assert story[-1][:2] == (4.0, 2.0)
    # While both move, the distance stays 1, so the dot stays cos 1.
    moving = [f for f in story if f[2] == "both move on together"]
    assert len(moving) >= 3 and all(k - q == -1 for q, k, _ in moving)


def test_animation_frames_reproduce_the_dots():
    anim = motion.moving_animation()
    assert len(list(anim.new_frame_seq())) == len(motion.STORY)
    dots = {}
    for i, (q_position, k_position, _) in enumerate(motion.STORY):
        anim.draw_frame(i)
        state = anim.picture.state
        assert (state.q_position, state.k_position) == (q_position, k_position)
        assert anim.picture.bar.get_xdata()[1] == pytest.approx(np.cos(k_position - q_position), abs=1e-12)
        dots[(q_position, k_position)] = state.dot
    # Before the move, after moving both by 3, and after K moves to 2.
    assert dots[(1.0, 0.0)] == pytest.approx(0.54030231, abs=5e-9)
    assert dots[(4.0, 3.0)] == pytest.approx(dots[(1.0, 0.0)], abs=1e-12)
    assert dots[(4.0, 2.0)] == pytest.approx(-0.41614684, abs=5e-9)


def test_animation_embeds_one_png_per_frame_and_stays_small():
    anim = motion.moving_animation()
    html = anim.to_jshtml()
    frames = re.findall(r'frames\[(\d+)\] = "data:image/png;base64,(.*?)"', html, re.S)
    assert [int(i) for i, _ in frames] == list(range(len(motion.STORY)))
    first = base64.b64decode(frames[0][1].replace("\\\n", ""))
    assert first.startswith(b"\x89PNG")
    assert len(html) < 600_000


def test_animation_html_shows_a_still_frame_and_a_note_where_scripts_do_not_run():
    anim = motion.moving_animation()
    html = motion.animation_html(anim)
    # Outside the one script, the page holds the first frame and the note, and no player:
    # no buttons, no slider (a view that strips scripts shows exactly this).
    static, script = html.split("<script>", 1)
    assert "<button" not in static and "<input" not in static
    img = re.search(r'<img src="(data:image/png;base64,[^"]+)"', static)
    assert img is not None
    assert base64.b64decode(img.group(1).split(",", 1)[1]).startswith(b"\x89PNG")
    assert "run the notebook from the top" in static
    # The script carries the whole player, with frame 0 equal to the still picture.
    assert script.count("</script>") == 1 and script.rstrip().endswith("</script>")
    literal = re.search(r"box\.innerHTML = (\".*\");\n", script).group(1)
    player = json.loads(literal.replace("<\\/", "</"))
    assert 'class="animation"' in player and player.count("<button") == 9
    frame0 = re.search(r'frames\[0\] = "(data:image/png;base64,.*?)"', player, re.S).group(1)
    assert img.group(1) == frame0.replace("\\\n", "")


def test_animation_html_refuses_what_is_not_a_player_and_an_empty_note():
    class NotAPlayer:
        def to_jshtml(self):
            return "<p>no frames here</p>"

    with pytest.raises(ValueError, match="holds no frames\\[0\\] image"):
        motion.animation_html(NotAPlayer())
    with pytest.raises(ValueError, match="note must be a non-empty string"):
        motion.animation_html(motion.moving_animation(), note=" ")


def test_explorer_keeps_its_picture_at_its_own_size():
    explorer = motion.PositionExplorer(1, 0)
    assert explorer.widget.layout.align_items == "flex-start"


def test_key_frames_print_the_dot_of_each_moment():
    fig = motion.key_frames_figure()
    dots = [p.state.dot for p in fig.pictures]
    np.testing.assert_allclose(dots, [np.cos(1), np.cos(1), np.cos(2)], atol=1e-12)
    labels = [p.dot_label.get_text() for p in fig.pictures]
    assert labels == ["dot 0.5403", "dot 0.5403", "dot -0.4161"]


def test_explorer_sliders_move_the_dot_to_cos_of_the_distance():
    explorer = motion.PositionExplorer(1, 0)
    assert explorer.state.dot == pytest.approx(np.cos(1), abs=1e-12)
    first_image = bytes(explorer.image.value)
    assert first_image.startswith(b"\x89PNG")
    explorer.q_slider.value = 3
    explorer.k_slider.value = 10
    assert explorer.state.distance == -7  # the key 7 positions after the query
    assert explorer.state.dot == pytest.approx(np.cos(7), abs=1e-12)
    assert explorer.readout.value.endswith("dot 0.75390225")
    assert bytes(explorer.image.value) != first_image
    k_head = arrows.arrows(explorer.picture.ax)["k"][1]
    np.testing.assert_allclose(k_head, [np.cos(10), np.sin(10)], atol=1e-12)
    explorer.k_slider.value = 5
    assert explorer.state.dot == pytest.approx(np.cos(2), abs=1e-12)


def test_explorer_shows_a_widget_with_a_readable_text_fallback():
    bundle = motion.PositionExplorer(2, 2)._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "Sliders for the Q and K positions" in data["text/plain"]


# --- 02 and 03: frequencies -------------------------------------------------------------


def test_cos_distance_curve_is_cos_of_frequency_times_distance():
    fig = frequencies.cos_distance_figure(frequency=0.5, max_distance=30)
    curve = fig.axes[0].lines[0]
    x, y = curve.get_xdata(), curve.get_ydata()
    assert x[0] == 0 and x[-1] == 30
    np.testing.assert_allclose(y, np.cos(0.5 * x))


def test_frequency_ladder_plots_every_pair_on_a_log_axis():
    ax = frequencies.frequency_ladder_figure(32).axes[0]
    pairs, freqs = ax.lines[0].get_xdata(), ax.lines[0].get_ydata()
    np.testing.assert_array_equal(pairs, np.arange(16))
    np.testing.assert_allclose(freqs, pair_frequencies(32))
    assert ax.get_yscale() == "log"
    assert freqs[0] == max(freqs)


def test_turn_count_marks_the_lesson_counts_for_d64():
    ax = frequencies.turn_count_figure(64).axes[0]
    marked = ax.lines[1]
    np.testing.assert_array_equal(marked.get_xdata(), [1, 8, 16, 64, 256, 1000, 4096, 10000, 60000])
    np.testing.assert_array_equal(marked.get_ydata(), [32, 31, 28, 23, 19, 14, 9, 6, 0])
    staircase = ax.lines[0].get_ydata()
    assert staircase[0] == 32 and staircase[-1] == 0
    assert np.all(np.diff(staircase) <= 0)
    assert ax.get_xscale() == "log"


def test_turn_count_rejects_a_distance_of_zero():
    with pytest.raises(ValueError, match="marked must hold distances greater than 0"):
        frequencies.turn_count_figure(64, marked=[0, 8])


def test_two_planes_draw_each_position_at_its_pair_angle():
    positions = [0, 1, 2, 5]
    fig = frequencies.two_planes_figure(positions, pairs=(0, 4), d=32)
    freqs = pair_frequencies(32)
    for ax, pair in zip(fig.axes, (0, 4), strict=True):
        drawn = arrows.arrows(ax)
        for p in positions:
            angle = p * freqs[pair]
            np.testing.assert_allclose(drawn[f"position {p}"][1], [np.cos(angle), np.sin(angle)], atol=1e-12)


def test_two_planes_rejects_a_pair_outside_the_head():
    with pytest.raises(ValueError, match="pairs must be pair indices from 0 to 15 for d = 32; got 16"):
        frequencies.two_planes_figure(pairs=(0, 16), d=32)



@pytest.mark.parametrize("make", [
    frequencies.cos_distance_figure,
    lambda: frequencies.cos_distance_figure(frequency=0.5, max_distance=30),
    frequencies.frequency_ladder_figure,
    lambda: frequencies.frequency_ladder_figure(64, base=500000),
    frequencies.turn_count_figure,
    lambda: frequencies.turn_count_figure(128),
    # the default slow pair 4 puts the labels of positions 5 and 6 on one spot
    lambda: frequencies.two_planes_figure(range(7), pairs=(0, 2), d=32),
    lambda: frequencies.two_planes_figure(range(5), pairs=(0, 1, 2), d=32),
], ids=["cos-distance", "cos-distance-30", "ladder", "ladder-64", "turn-count", "turn-count-128",
        "two-planes", "two-planes-three"])
def test_frequency_figures_sit_at_fixed_margins_with_their_texts_apart(make):
    fig = make()
    assert fig.get_layout_engine() is None  # nothing measures the texts when a notebook prints it
    check_readable(fig)
    assert [(a.text, b.text) for a, b in text_report(fig).overlaps()] == []


# ------------------------------------------------------------------ printing a figure once


def _legend_figure():
    from lessons.figures.style import legend_outside, new_figure

    fig, axes = new_figure(1, 2)
    for ax in axes:
        ax.plot([0, 1, 2], [1, 0, 1], label="a line")
        ax.set_title("a panel")
    legend_outside(axes[1], where="below")
    return fig


@pytest.mark.parametrize(
    "make", [_legend_figure, frequencies.frequency_ladder_figure, arrows.unit_circle_figure],
    ids=["constrained-legend-below", "ladder", "unit-circle"],
)
def test_png_bytes_are_savefigs_bytes_from_one_draw(make, monkeypatch):
    import io

    from matplotlib.figure import Figure

    from lessons.figures.style import png_bytes

    draws = []
    real_draw = Figure.draw
    def counted_draw(self, renderer):
        draws.append(self)
        return real_draw(self, renderer)

    monkeypatch.setattr(Figure, "draw", counted_draw)
    saved = io.BytesIO()
    fig = make()
    fig.savefig(saved, format="png")
    savefig_draws, draws[:] = len(draws), []
    fast = png_bytes(make())
    assert fast == saved.getvalue()
    assert len(draws) == 1
    assert savefig_draws == (2 if fig.get_layout_engine() is not None else 1)  # a layout engine: twice


def test_png_bytes_at_another_dpi_is_savefigs_picture_at_that_dpi():
    import io

    from PIL import Image

    from lessons.figures.style import DPI, png_bytes

    saved = io.BytesIO()
    _legend_figure().savefig(saved, format="png", dpi=2 * DPI)
    assert png_bytes(_legend_figure(), 2 * DPI) == saved.getvalue()
    fig = _legend_figure()
    width, height = Image.open(io.BytesIO(png_bytes(fig))).size
    assert (width, height) == (round(fig.get_figwidth() * DPI), round(fig.get_figheight() * DPI))


def test_png_bytes_leaves_a_figure_without_pyplot_on_its_own_canvas():
    from matplotlib.figure import Figure

    from lessons.figures.style import png_bytes

    fig = Figure(figsize=(3, 2), layout="constrained")
    fig.add_subplot().plot([0, 1])
    canvas = fig.canvas
    assert png_bytes(fig)[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.canvas is canvas


def test_an_ipython_shell_shows_figures_through_png_bytes():
    # In a shell with the inline backend, importing lessons.figures makes the PNG formatter
    # draw each figure once; what it shows is savefig's picture, base64-encoded.
    import subprocess
    import sys

    code = "\n".join([
        "import base64, io, matplotlib",
        "matplotlib.use('module://matplotlib_inline.backend_inline')",
        "from IPython.core.interactiveshell import InteractiveShell",
        "from matplotlib_inline.backend_inline import configure_inline_support",
        "shell = InteractiveShell.instance()",
        "configure_inline_support(shell, 'inline')",
        "import matplotlib.pyplot as plt",
        "import lessons.figures",
        "from matplotlib.figure import Figure",
        "fig, ax = plt.subplots(layout='constrained'); ax.plot([0, 1], label='x')",
        "fig.legend(loc='outside lower center')",
        "shown = shell.display_formatter.formatters['image/png'](fig)",
        "saved = io.BytesIO(); fig.savefig(saved, format='png')",
        "print(shell.display_formatter.formatters['image/png'].lookup_by_type(Figure).__name__)",
        "print(base64.b64decode(shown) == saved.getvalue())",
        "print(shell.display_formatter.formatters['image/png'](plt.figure()))",
    ])
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["_inline_png", "True", "None"]


def _titled_pictures():
    from lessons.figures import attention, head, layouts

    table = np.cos(np.subtract.outer(np.arange(4), np.arange(4)))
    return [
        *FIGURES,
        head.decay_figure,
        head.two_planes_story_figure,
        lambda: head.block_matrix_heatmap(np.eye(4), title="R_0"),
        layouts.pairing_figure,
        lambda: attention.dot_table_heatmap(table, range(4), title="a table"),
        lambda: layouts.checks_figure(["a", "b"], [1e-3, 0.0], [0.0, 2.0]),
    ]


def test_the_house_style_puts_titles_at_the_top_without_searching_for_ticks_above():
    # matplotlib's default (axes.titley None) measures every axes' x axis and offset text at
    # each draw to lift a title over ticks at the top; the course fixes titles at y = 1.
    import lessons.figures  # noqa: F401

    assert matplotlib.rcParams["axes.titley"] == 1.0


@pytest.mark.parametrize("make", _titled_pictures(), ids=lambda f: getattr(f, "__name__", "lambda"))
def test_fixed_titles_draw_the_same_picture_as_the_search_would(make):
    # No course figure has ticks or an offset text above an axes, so the search moved no title:
    # with the search on, each picture is the same, pixel for pixel (same PNG bytes).
    from lessons.figures.style import png_bytes

    fixed = png_bytes(make())
    with matplotlib.rc_context({"axes.titley": None}):
        searched = png_bytes(make())
    assert fixed == searched


def test_the_comparison_sees_a_title_the_search_would_lift():
    # The check above can fail: with ticks above the axes the search lifts the title over them.
    from lessons.figures.style import png_bytes

    def ticks_on_top():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [0, 1])
        ax.xaxis.tick_top()
        ax.set_title("a title")
        return fig

    fixed = png_bytes(ticks_on_top())
    with matplotlib.rc_context({"axes.titley": None}):
        assert png_bytes(ticks_on_top()) != fixed

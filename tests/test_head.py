"""The whole head (lessons.head) and its pictures (lessons.figures.head): notebooks 03-05."""

import re
from pathlib import Path

import matplotlib
import nbformat

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lessons.attention import attention  # noqa: E402
from lessons.figures.style import check_readable, text_report  # noqa: E402
from lessons.frequencies import pair_frequencies  # noqa: E402
from lessons.head import (  # noqa: E402
    block_rotation_matrix,
    cosine_sum,
    diagonal_spread,
    look_back_query,
    pair_scores,
    roformer_bound,
    same_content_keys,
    score_table,
)
from lessons.rope import rope_rotate  # noqa: E402
from lessons.rotation import rotation_matrix  # noqa: E402

DISTANCES = [0, 2, 16, 256, 1024]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# --------------------------------------------------------------------------- R_m


def test_block_rotation_matrix_is_block_diagonal_with_one_rotation_per_pair():
    R = block_rotation_matrix(3, 8)
    assert R.shape == (8, 8)
    freqs = pair_frequencies(8)
    for i, w in enumerate(freqs):
        np.testing.assert_allclose(R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2], rotation_matrix(3 * w), atol=0)
    outside = ~np.kron(np.eye(4), np.ones((2, 2))).astype(bool)
    assert np.count_nonzero(R[outside]) == 0
    assert R[0, 0] == pytest.approx(np.cos(3.0)) and R[0, 1] == pytest.approx(-np.sin(3.0))
    np.testing.assert_allclose(R.T @ R, np.eye(8), atol=1e-12)  # orthogonal: lengths kept


def test_block_rotation_matrix_agrees_with_rope_rotate():
    x = np.random.default_rng(0).normal(size=(5, 16))
    positions = [0, 1, 7, 100, 4000]
    expected = rope_rotate(x, positions)
    for t, m in enumerate(positions):
        np.testing.assert_allclose(block_rotation_matrix(m, 16) @ x[t], expected[t], atol=1e-12)


def test_block_rotation_matrix_rejects_bad_arguments():
    with pytest.raises(ValueError, match="d must be a positive even integer .* got 7"):
        block_rotation_matrix(3, 7)
    with pytest.raises(ValueError, match=r"position must be a single number; got an array of shape \(2,\)"):
        block_rotation_matrix([1, 2], 8)
    with pytest.raises(ValueError, match="base must be a finite number greater than 0; got -1"):
        block_rotation_matrix(1, 8, base=-1)


# --------------------------------------------------------------------------- the sum over pairs


def test_pair_scores_sum_to_the_rotated_dot_and_depend_on_distance_only():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=32), rng.normal(size=32)
    shares = pair_scores(q, k, 5, 12)
    assert shares.shape == (16,)
    whole = rope_rotate(q[None], [5])[0] @ rope_rotate(k[None], [12])[0]
    assert shares.sum() == pytest.approx(whole, abs=1e-12)
    by_formula = [q[2 * i : 2 * i + 2] @ rotation_matrix(7 * w) @ k[2 * i : 2 * i + 2]
                  for i, w in enumerate(pair_frequencies(32))]
    np.testing.assert_allclose(shares, by_formula, atol=1e-12)
    np.testing.assert_allclose(pair_scores(q, k, 105, 112), shares, atol=1e-11)
    assert not np.allclose(pair_scores(q, k, 5, 13), shares)


def test_pair_scores_with_two_chosen_speeds():
    shares = pair_scores([1, 0, 1, 0], [1, 0, 1, 0], 2, 0, inv_freq=[1.0, 0.1])
    np.testing.assert_allclose(shares, [np.cos(2.0), np.cos(0.2)], atol=1e-15)


def test_pair_scores_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"same width .* got q \(4,\) and k \(6,\)"):
        pair_scores(np.ones(4), np.ones(6), 0, 1)
    with pytest.raises(ValueError, match=r"one frequency per pair: expected shape \(2,\) .* got \(3,\)"):
        pair_scores(np.ones(4), np.ones(4), 0, 1, inv_freq=[1, 2, 3])
    with pytest.raises(ValueError, match="k_position must be a single number"):
        pair_scores(np.ones(4), np.ones(4), 0, [1, 2])


# --------------------------------------------------------------------------- the long-term decay


def test_cosine_sum_has_the_lessons_values():
    np.testing.assert_allclose(
        cosine_sum(DISTANCES, 128), [64, 57.3819, 39.7017, 20.5248, 13.0843], atol=5e-5
    )
    assert cosine_sum(0, 128) == 64.0
    assert cosine_sum(-16, 128) == pytest.approx(cosine_sum(16, 128), abs=1e-12)  # even in the distance


def test_cosine_sum_is_half_the_brute_force_rotated_score_of_all_ones():
    ones = np.ones(128)
    for start in (0, 37):
        for delta in DISTANCES:
            q = block_rotation_matrix(start, 128) @ ones
            k = block_rotation_matrix(start + delta, 128) @ ones
            score = q @ k
            assert score == pytest.approx(2 * cosine_sum(delta, 128), abs=1e-9)


def test_roformer_bound_matches_its_definition_written_as_loops():
    freqs = pair_frequencies(128)
    for delta in DISTANCES:
        total = 0.0
        for j in range(1, 65):  # S_j sums the first j unit turns, k = 0 .. j-1
            s = sum(np.exp(1j * delta * freqs[k]) for k in range(j))
            total += abs(s)
        assert roformer_bound(delta, 128) == pytest.approx(total / 64, abs=1e-10)
    np.testing.assert_allclose(
        roformer_bound(DISTANCES, 128), [32.5, 28.9560, 15.7750, 6.5431, 4.0241], atol=5e-5
    )


def test_roformer_bound_really_bounds_a_score_by_abel_summation():
    # Summation by parts: sum_i h_i (S_{i+1} - S_i) = h_last S_N - sum_i S_{i+1} (h_{i+1} - h_i), so
    # |score| <= (|h_last| + sum_i |h_{i+1} - h_i|) * max_j |S_j|: small partial sums, small scores.
    rng = np.random.default_rng(5)
    freqs = pair_frequencies(64)
    for delta in (3, 50, 900):
        h = rng.normal(size=32) + 1j * rng.normal(size=32)
        score = abs(np.sum(h * np.exp(1j * delta * freqs)))
        partial = np.abs(np.cumsum(np.exp(1j * delta * freqs)))
        bound = (np.sum(np.abs(np.diff(h))) + abs(h[-1])) * partial.max()
        assert score <= bound + 1e-9
        assert roformer_bound(delta, 64) == pytest.approx(partial.mean(), abs=1e-12)


# --------------------------------------------------------------------------- the look-back head


def test_look_back_query_peaks_exactly_D_back_with_the_lessons_numbers():
    q = look_back_query(64, 3)
    assert q.shape == (64,)
    np.testing.assert_allclose(np.hypot(q[0::2], q[1::2]), 1.0, atol=1e-15)  # unit pairs
    keys = rope_rotate(same_content_keys(16, 64), np.arange(16))
    scores = rope_rotate(q[None], [15])[0] @ keys.T
    assert int(np.argmax(scores)) == 12
    assert scores[12] == pytest.approx(32.0, abs=1e-12)
    assert scores[11] == pytest.approx(30.917, abs=5e-4)
    assert scores[13] == pytest.approx(scores[11], abs=1e-12)
    assert scores[11] == pytest.approx(cosine_sum(1, 64), abs=1e-12)


@pytest.mark.parametrize("D", [0, 1, 5, 40])
def test_look_back_query_peaks_D_back_at_any_query_position(D):
    q = look_back_query(32, D)
    for m in (D, D + 9, 500):
        keys = rope_rotate(same_content_keys(m + 1, 32), np.arange(m + 1))
        scores = rope_rotate(q[None], [m])[0] @ keys.T
        assert int(np.argmax(scores)) == m - D


def test_scaling_the_look_back_query_sharpens_the_softmax():
    q = look_back_query(64, 3)
    keys = same_content_keys(16, 64)
    weights = [
        attention(s * q[None], keys, keys, causal=True, q_positions=[15], k_positions=np.arange(16))[0][0, 12]
        for s in (1, 4, 16, 64)
    ]
    np.testing.assert_allclose(weights, [0.1308, 0.3779, 0.8127, 0.9997], atol=5e-5)
    assert np.all(np.diff(weights) > 0)


def test_look_back_helpers_reject_bad_arguments():
    with pytest.raises(TypeError, match=r"D must be a whole number of positions \(an int\); got 2.5"):
        look_back_query(64, 2.5)
    with pytest.raises(ValueError, match="d must be a positive even integer"):
        look_back_query(63, 3)
    with pytest.raises(ValueError, match="n_keys must be a positive whole number of keys; got 0"):
        same_content_keys(0, 8)


# --------------------------------------------------------------------------- the score table


def test_same_content_score_table_is_constant_along_diagonals_and_random_content_is_not():
    rng = np.random.default_rng(2)
    content = rng.normal(size=32)
    table = score_table(np.tile(content, (10, 1)), np.arange(10))
    assert diagonal_spread(table) < 1e-12
    assert table[0, 3] == pytest.approx(table[6, 9], abs=1e-12)
    assert diagonal_spread(score_table(rng.normal(size=(10, 32)), np.arange(10))) > 1.0


def test_diagonal_spread_measures_the_worst_diagonal():
    table = np.array([[1.0, 2.0, 3.0], [5.0, 1.0, 2.0], [7.0, 4.0, 1.5]])
    assert diagonal_spread(table) == pytest.approx(1.0)  # main diagonal 1, 1, 1.5 -> 0.5; (5, 4) -> 1
    with pytest.raises(ValueError, match=r"square 2-D table \[T, T\]; got shape \(2, 3\)"):
        diagonal_spread(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="positions must hold one position per token: expected 3"):
        score_table(np.ones((3, 4)), [0, 1])


# --------------------------------------------------------------------------- the pictures


def test_block_matrix_heatmap_shows_the_matrix_and_leaves_zeros_blank():
    from lessons.figures.head import block_matrix_heatmap

    R = block_rotation_matrix(3, 8)
    fig = block_matrix_heatmap(R, title="R_3")
    ax = fig.axes[0]
    np.testing.assert_array_equal(np.asarray(ax.images[0].get_array()), R)
    assert len(ax.texts) == 16  # four 2 x 2 blocks, nothing outside them
    assert "-0.990" in [t.get_text() for t in ax.texts]
    assert ax.get_title() == "R_3" and ax.get_xlabel() and ax.get_ylabel()
    check_readable(fig)


def test_two_planes_story_locks_the_first_moment_and_shows_the_shares():
    from lessons.figures.head import two_planes_story_figure

    fig = two_planes_story_figure()
    start, both, only_k = fig.states
    np.testing.assert_allclose(both.shares, start.shares, atol=1e-12)
    assert only_k.total == pytest.approx(np.cos(1.0) + np.cos(0.1), abs=1e-12)
    bars = fig.pictures[2].bars
    assert [b.get_height() for b in bars] == pytest.approx([*only_k.shares, only_k.total])
    assert not any(b.get_visible() for b in fig.pictures[0].locked_bars)
    locked = [b.get_height() for b in fig.pictures[2].locked_bars]
    assert locked == pytest.approx([*start.shares, start.total])
    assert "distance +1" in fig.pictures[2].axes[2].get_title()  # Q at 7, K at 6: query minus key
    check_readable(fig)


def test_two_planes_explorer_moves_both_or_only_k_and_locks():
    pytest.importorskip("ipywidgets")
    from lessons.figures.head import MOVE_BOTH, MOVE_ONLY_K, TwoPlanesExplorer

    explorer = TwoPlanesExplorer(q_position=2, k_position=0, max_position=10)
    start = explorer.state
    assert explorer.mode.value == MOVE_BOTH
    explorer.lock()
    explorer.k_slider.value = 5  # drags Q from 2 to 7
    assert (explorer.q_slider.value, explorer.k_slider.value) == (7, 5)
    assert explorer.state.total == pytest.approx(start.total, abs=1e-12)
    explorer.k_slider.value = 10  # Q can only go 3 more, to 10: K stops at 8
    assert (explorer.q_slider.value, explorer.k_slider.value) == (10, 8)
    explorer.mode.value = MOVE_ONLY_K
    explorer.k_slider.value = 9
    assert (explorer.q_slider.value, explorer.k_slider.value) == (10, 9)
    assert explorer.state.distance == 1  # query minus key, as notebook 02 defines it
    assert "change of the total +0.9714" in explorer.locked_readout.value
    assert explorer.readout.value.startswith("Q at 10, K at 9, distance +1")
    assert explorer.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    check_readable(explorer.figure)
    bundle = explorer._repr_mimebundle_()
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    assert "application/vnd.jupyter.widget-view+json" in data


def test_decay_figure_draws_both_curves_on_a_log_axis():
    from lessons.figures.head import decay_figure

    fig = decay_figure(marked=(2, 16))
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    x, y = ax.lines[0].get_data()
    np.testing.assert_allclose(y, cosine_sum(x, 128), atol=1e-12)
    xb, yb = ax.lines[1].get_data()
    np.testing.assert_allclose(yb, roformer_bound(xb, 128), atol=1e-12)
    assert list(ax.lines[2].get_xdata()) == [2, 16]
    assert "57.3819" in [t.get_text() for t in ax.texts]
    fig.canvas.draw()
    legend = ax.get_legend()
    assert legend.get_window_extent().y1 <= ax.get_window_extent().y0  # below the axes, off the data
    check_readable(fig)
    with pytest.raises(ValueError, match="marked must hold distances greater than 0"):
        decay_figure(marked=(0, 2))


@pytest.mark.parametrize("base, bottom", [(10000.0, -14.0), (500.0, None)])
def test_decay_figure_keeps_the_whole_curve_inside_the_axes(base, bottom):
    """03's Try-it calls decay_figure(d=128, base=500): that curve dips to about -16.4 near
    distance 900, below the default figure's floor of -14; the axis goes down to meet it."""
    from lessons.figures.head import decay_figure

    fig = decay_figure(d=128, base=base, marked=(2, 16))
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    y = ax.lines[0].get_ydata()
    assert low < y.min() and high > y.max()
    if bottom is not None:
        assert low == bottom  # the course's own figure is unchanged
    else:
        assert y.min() < -14.0 and low == pytest.approx(1.1 * y.min())
    plt.close(fig)


def test_look_back_figure_shows_the_scores_and_weights_it_is_given():
    from lessons.figures.head import look_back_figure

    fig = look_back_figure([10, 11, 12], [1.0, 3.0, 2.0], [1, 2], [0.2, 0.9], query_position=15, target=12)
    ax_s, ax_w = fig.axes
    assert [p.get_height() for p in ax_s.patches] == [1.0, 3.0, 2.0]
    assert list(ax_w.lines[0].get_ydata()) == [0.2, 0.9]
    check_readable(fig)
    with pytest.raises(ValueError, match=r"one score per key: expected \(3,\), got \(2,\)"):
        look_back_figure([10, 11, 12], [1.0, 3.0], [1], [0.2], query_position=15, target=12)



def _explorer_figure(lock):
    pytest.importorskip("ipywidgets")
    from lessons.figures.head import TwoPlanesExplorer

    explorer = TwoPlanesExplorer(q_position=2, k_position=0, max_position=10)
    if lock:  # the locked result's heading takes a second line over the bars
        explorer.lock()
        explorer.k_slider.value = 5
    return explorer.figure


def _head_figure(name):
    from lessons.figures import head

    scales = [1, 2, 4, 8, 16, 32, 64]
    weights = [0.1308, 0.2187, 0.3779, 0.5777, 0.8127, 0.9744, 0.9997]
    return {
        "heatmap": lambda: head.block_matrix_heatmap(
            block_rotation_matrix(3, 8),
            title="R_3 of an 8-wide head: one 2 x 2 turn per pair, zeros elsewhere"),
        "heatmap-16": lambda: head.block_matrix_heatmap(block_rotation_matrix(3, 16), decimals=2, width=9.0,
                                                        height=7.5),
        # the third moment of the default story puts Q and K of pair 1 on one spot, labels and all
        "story": lambda: head.two_planes_story_figure(head.STORY[:2]),
        "story-one": lambda: head.two_planes_story_figure([(3, 1, "one moment")]),
        "explorer": lambda: _explorer_figure(lock=False),
        "explorer-locked": lambda: _explorer_figure(lock=True),
        "decay": lambda: head.decay_figure(d=128, marked=(2, 16, 256, 1024)),
        "decay-512": lambda: head.decay_figure(d=512, marked=(2, 16)),
        "look-back": lambda: head.look_back_figure(np.arange(16), 20 + np.arange(16.0), scales, weights,
                                                   query_position=15, target=12),
        "look-back-short": lambda: head.look_back_figure([10, 11, 12], [1.0, 3.0, 2.0], [1, 2], [0.2, 0.9],
                                                         query_position=15, target=12),
    }[name]()


@pytest.mark.parametrize("name", ["heatmap", "heatmap-16", "story", "story-one", "explorer",
                                  "explorer-locked", "decay", "decay-512", "look-back", "look-back-short"])
def test_head_figures_sit_at_fixed_margins_with_their_texts_apart(name):
    fig = _head_figure(name)
    assert fig.get_layout_engine() is None  # nothing measures the texts when a notebook prints it
    check_readable(fig)
    assert [(a.text, b.text) for a, b in text_report(fig).overlaps()] == []


# --------------------------------------------------------------------------- the notebooks that teach it

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MAINTAINER_WORDS = re.compile(r"\bnbval\b|\bCI\b|\bpytest\b|sanitiz|test run|rounding noise", re.IGNORECASE)


def _markdown(name: str) -> list[str]:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


@pytest.mark.parametrize(
    "name", ["03_many_pairs_many_speeds.ipynb", "04_the_code.ipynb", "05_the_token_swap.ipynb"]
)
def test_the_prose_of_03_to_05_holds_no_notes_for_maintainers(name):
    found = [m.group(0) for text in _markdown(name) for m in MAINTAINER_WORDS.finditer(text)]
    assert not found, f"{name} speaks to maintainers in its prose: {found}"


def test_the_whole_head_sections_are_where_other_notebooks_point():
    headings = {line.strip() for text in _markdown("03_many_pairs_many_speeds.ipynb")
                for line in text.splitlines() if line.startswith("## ")}
    assert "## A whole head fades with distance: the long-term decay" in headings
    assert "## The whole head as one matrix" in headings
    assert "## Two planes under your hands" in headings
    assert any("looks three tokens back" in t for t in _markdown("05_the_token_swap.ipynb"))
    assert any("Only the distance matters, at a glance" in t for t in _markdown("04_the_code.ipynb"))


def test_the_two_planes_labels_never_meet():
    """Every whole-number setting of 03's sliders up to 12 (and so the story's frames): Q and
    K, whose pair-1 arrows are 0.1 rad apart at distance 1, have labels apart in both planes."""
    from matplotlib.figure import Figure

    from lessons.figures import head as figures

    fig = Figure(figsize=(9.0, 3.7))
    picture = figures.TwoPlanesPicture(fig.subplots(1, 3))
    met = []
    for q in range(13):
        for k in range(13):
            picture.show(figures.two_planes_state(q, k))
            met += [(q, k, a.text, b.text) for a, b in text_report(fig).overlaps(tolerance=0.0)
                    if {a.text, b.text} == {"Q", "K"}]
    assert met == []

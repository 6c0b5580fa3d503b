"""The attention figures show exactly the numbers they are given (notebooks 04 and 05)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lessons.attention import attention  # noqa: E402
from lessons.claims.nb04 import same_content_dot_table  # noqa: E402
from lessons.figures.attention import (  # noqa: E402
    attention_weights_heatmap,
    dot_table_heatmap,
    dot_tables_side_by_side,
    shifted_dot_tables,
    swap_comparison,
)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _labelled(ax):
    return ax.get_xlabel() and ax.get_ylabel()


def test_dot_table_heatmap_shows_the_table_and_annotates_every_cell():
    table = same_content_dot_table()
    fig = dot_table_heatmap(table, positions=[0, 1, 2], title="three positions")
    ax = fig.axes[0]
    image = ax.images[0]
    np.testing.assert_allclose(np.asarray(image.get_array()), table, rtol=0, atol=0)
    texts = [t.get_text() for t in ax.texts]
    assert texts == [f"{v:.4f}" for v in table.ravel()]
    assert "-0.4161" in texts and "0.5403" in texts
    assert ax.get_title() == "three positions"
    assert _labelled(ax)
    # symmetric colour scale: a negative score is drawn on the blue side
    lo, hi = image.get_clim()
    assert lo == -hi == pytest.approx(-1.0)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]


def test_dot_table_heatmap_labels_shifted_positions():
    fig = dot_table_heatmap(np.eye(3), positions=[7, 8, 9])
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["7", "8", "9"]


def test_dot_table_heatmap_rejects_a_table_that_is_not_square():
    with pytest.raises(ValueError, match=r"square .* got shape \(2, 3\)"):
        dot_table_heatmap(np.zeros((2, 3)))
    with pytest.raises(ValueError,
                       match=r"positions must hold one position per token: expected 3 \(the T axis\), got 2"):
        dot_table_heatmap(np.eye(3), positions=[0, 1])


def test_shifted_dot_tables_share_one_colour_scale_and_show_both_tables():
    rng = np.random.default_rng(0)
    before = rng.normal(size=(4, 4))
    after = before * 2.0
    fig = shifted_dot_tables(before, after, np.arange(4), np.arange(4) + 7)
    left, right = fig.axes[:2]
    np.testing.assert_array_equal(np.asarray(left.images[0].get_array()), before)
    np.testing.assert_array_equal(np.asarray(right.images[0].get_array()), after)
    limit = np.max(np.abs(after))
    assert left.images[0].get_clim() == right.images[0].get_clim() == (-limit, limit)
    assert left.get_title() == "positions 0 .. 3" and right.get_title() == "positions 7 .. 10"
    assert [t.get_text() for t in right.get_xticklabels()] == ["7", "8", "9", "10"]
    assert fig.get_suptitle()
    assert _labelled(left) and _labelled(right)


def test_shifted_dot_tables_rejects_tables_of_different_shapes():
    with pytest.raises(ValueError, match="same shape"):
        shifted_dot_tables(np.eye(3), np.eye(4), range(3), range(4))


def test_attention_weights_heatmap_marks_the_causal_mask():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 6))
    weights, _ = attention(x, x, x, causal=True, q_positions=np.arange(4), k_positions=np.arange(4))
    fig = attention_weights_heatmap(weights)
    ax = fig.axes[0]
    data = np.ma.asarray(ax.images[0].get_array())
    future = np.triu(np.ones((4, 4), dtype=bool), k=1)
    assert np.array_equal(np.ma.getmaskarray(data), future)
    np.testing.assert_array_equal(data.data[~future], weights[~future])
    texts = np.array([t.get_text() for t in ax.texts]).reshape(4, 4)
    assert np.all(texts[future] == "masked")
    assert list(texts[~future]) == [f"{w:.2f}" for w in weights[~future]]
    assert ax.images[0].get_clim() == (0.0, 1.0)
    assert ax.get_title() and _labelled(ax)


def test_attention_weights_heatmap_fits_the_title_notebook_04_gives_it():
    # Drawn once at its own size (no tight crop), the title must stay inside the figure.
    from lessons.figures.style import check_readable

    weights = np.tril(np.ones((6, 6)))
    weights /= weights.sum(axis=1, keepdims=True)
    title = "Causal attention weights with RoPE (sequence 0, head 0)"
    report = check_readable(attention_weights_heatmap(weights, title=title))  # raises if cut
    assert title in [t.text for t in report.texts]


def test_attention_weights_heatmap_rejects_values_outside_0_1():
    with pytest.raises(ValueError, match="between 0 and 1"):
        attention_weights_heatmap(np.array([[1.5, 0.0], [0.5, 0.5]]))


def test_swap_comparison_bar_heights_are_the_weights_and_outputs():
    weights = {"original": [0.2, 0.3, 0.5], "swapped": [0.1, 0.6, 0.3]}
    outputs = {"original": [0.8, 1.2], "swapped": [0.6, 1.7]}
    fig = swap_comparison(["a", "b", "c"], weights, outputs, title="swap")
    ax_w, ax_o = fig.axes
    heights_w = [p.get_height() for p in ax_w.patches]
    heights_o = [p.get_height() for p in ax_o.patches]
    assert heights_w == pytest.approx(weights["original"] + weights["swapped"])
    assert heights_o == pytest.approx(outputs["original"] + outputs["swapped"])
    # bars of the second case sit to the right of the first within every group
    xs = [p.get_x() for p in ax_w.patches]
    assert all(xs[i + 3] > xs[i] for i in range(3))
    labels = [t.get_text() for t in ax_w.texts]
    assert labels == ["0.2000", "0.3000", "0.5000", "0.1000", "0.6000", "0.3000"]
    assert [t.get_text() for t in ax_w.get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["original", "swapped"]
    assert fig.get_suptitle() == "swap"
    assert _labelled(ax_w) and _labelled(ax_o)


def test_swap_comparison_rejects_mismatched_cases_and_lengths():
    with pytest.raises(ValueError, match="same cases"):
        swap_comparison(["a", "b"], {"x": [0.5, 0.5]}, {"y": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"one weight per row \(3\)"):
        swap_comparison(["a", "b", "c"], {"x": [0.5, 0.5]}, {"x": [1.0, 2.0]})


def test_dot_tables_side_by_side_show_each_table_on_its_own_scale():
    from lessons.figures.attention import dot_tables_side_by_side
    from lessons.head import score_table

    same = score_table(np.tile(np.arange(1.0, 9.0), (6, 1)), np.arange(6))
    other = np.random.default_rng(3).normal(size=(6, 6))
    fig = dot_tables_side_by_side([same, other], ["same content", "random content"], title="at a glance")
    left, right = [ax for ax in fig.axes if ax.get_title()]  # the two panels, not the colour bars
    np.testing.assert_array_equal(np.asarray(left.images[0].get_array()), same)
    np.testing.assert_array_equal(np.asarray(right.images[0].get_array()), other)
    assert left.images[0].get_clim() == (-np.max(np.abs(same)), np.max(np.abs(same)))
    assert right.images[0].get_clim() == (-np.max(np.abs(other)), np.max(np.abs(other)))
    assert (left.get_title(), right.get_title()) == ("same content", "random content")
    assert fig.get_suptitle() == "at a glance"
    assert _labelled(left) and _labelled(right)


def test_dot_tables_side_by_side_rejects_missing_titles_and_non_square_tables():
    from lessons.figures.attention import dot_tables_side_by_side

    with pytest.raises(ValueError, match="one title per table: expected 2, got 1"):
        dot_tables_side_by_side([np.eye(2), np.eye(2)], ["a"])
    with pytest.raises(ValueError, match=r"tables\[1\] must be square .* got shape \(2, 3\)"):
        dot_tables_side_by_side([np.eye(2), np.zeros((2, 3))], ["a", "b"])


def _swap_case(n_cases):
    cases = ["no RoPE, original", "no RoPE, swapped", "RoPE, original", "RoPE, swapped"][:n_cases]
    rng = np.random.default_rng(5)
    weights = {c: rng.dirichlet(np.ones(3)) for c in cases}
    outputs = {c: rng.normal(size=2) * 1.5 for c in cases}  # negative outputs: wider tick labels
    rows = ["k=[1, 0]  v=[1, 0]", "k=[0, 1]  v=[0, 2]", "k=[1, 1]  v=[1, 2]"]
    title = "Query [1, 0] at position 2 reading keys at positions 0, 1, 2: original vs swapped"
    return swap_comparison(rows, weights, outputs, title=title)


def _causal_weights(n):
    weights = np.tril(np.random.default_rng(2).uniform(0.1, 1.0, size=(n, n)))
    return weights / weights.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("make", [
    lambda: dot_table_heatmap(same_content_dot_table(), positions=range(3), decimals=8,
                              title="Content [1, 0] at positions 0, 1, 2: rotated q · k"),
    lambda: dot_table_heatmap(np.eye(3), positions=[7, 8, 9]),
    lambda: dot_table_heatmap(np.random.default_rng(0).normal(size=(4, 4)) * 300, positions=range(4000, 4004),
                              decimals=1),
    lambda: shifted_dot_tables(*(np.random.default_rng(0).normal(size=(12, 12)) * 20,) * 2,
                               np.arange(12), np.arange(12) + 7, title="before and after shifting by 7"),
    lambda: shifted_dot_tables(np.eye(4), np.eye(4), np.arange(4), np.arange(4) + 4000),
    lambda: dot_tables_side_by_side(
        [np.full((12, 12), 50.0), np.random.default_rng(3).normal(size=(12, 12))],
        ["the same content at every position", "a different content at each position"],
        positions=range(12), title="Score tables of one head (d = 64)"),
    lambda: dot_tables_side_by_side([np.eye(3)] * 3, ["a", "b", "c"], title="three"),
    lambda: attention_weights_heatmap(_causal_weights(5),
                                      title="Causal attention weights with RoPE (sequence 0, head 0)"),
    lambda: attention_weights_heatmap(_causal_weights(6)),
    lambda: _swap_case(4),
    lambda: _swap_case(2),
], ids=["dot-table-04", "dot-table-shifted", "dot-table-far", "shifted-04", "shifted-far", "side-by-side-04",
        "side-by-side-three", "weights-04", "weights-6", "swap-05", "swap-two-cases"])
def test_attention_figures_at_fixed_margins_run_no_layout_engine_and_keep_their_texts_apart(make):
    from lessons.figures.style import check_readable, text_report

    fig = make()
    assert fig.get_layout_engine() is None
    check_readable(fig)
    assert [(a.text, b.text) for a, b in text_report(fig).overlaps()] == []

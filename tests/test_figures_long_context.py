"""The figures of notebooks 07-09 draw exactly the numbers the lesson computes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lessons.claims.nb07 import seeded_qk  # noqa: E402
from lessons.claims.nb09 import EXTENDED, FACTOR, TRAINED, scaled_frequencies  # noqa: E402
from lessons.figures.added_vs_rotated import fixed_gap_figure, norm_figure  # noqa: E402
from lessons.figures.layouts import FLOOR, checks_figure, pair_of, pairing_figure  # noqa: E402
from lessons.figures.scaling import angle_coverage_figure, frequency_ratio_figure  # noqa: E402
from lessons.figures.style import MIN_FONT_SIZE, check_readable  # noqa: E402
from lessons.frequencies import pair_frequencies  # noqa: E402
from lessons.rope import interleaved_to_split_half_permutation, rope_rotate  # noqa: E402
from lessons.scaling import (  # noqa: E402
    ntk_aware_frequencies,
    unseen_angle_pairs,
    yarn_correction_range,
)
from lessons.sinusoidal import added_score, rotary_score, score_terms, sinusoidal_encoding  # noqa: E402

STARTS = (3, 10, 100, 4000)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _titled_and_labelled(fig):
    for ax in fig.axes:
        if ax.get_visible():
            assert ax.get_title(), "every panel has a title"
            assert ax.get_xlabel() and ax.get_ylabel(), f"panel {ax.get_title()!r} labels both axes"


# ---- 07 ------------------------------------------------------------------------------------

def test_fixed_gap_figure_draws_a_flat_rotary_line_and_the_moving_added_score():
    q, k = seeded_qk()
    fig = fixed_gap_figure(q, k, marked=STARTS, gap=2, last_start=300)
    _titled_and_labelled(fig)
    left, right = fig.axes
    additive, rotary, marked_added, marked_rotary = left.lines[:4]
    starts = additive.get_xdata()
    np.testing.assert_array_equal(starts, np.arange(1, 301))
    # the rotary line is one value at every start, and it is the rotary score
    np.testing.assert_allclose(rotary.get_ydata(), rotary_score(q, k, 3, 5), rtol=0, atol=1e-9)
    # the added line is the added score, start by start
    for m in (1, 17, 299):
        assert additive.get_ydata()[m - 1] == pytest.approx(added_score(q, k, m, m + 2), abs=1e-10)
    assert np.ptp(additive.get_ydata()) > 5
    # the experiment's four starts, as the claims state them
    np.testing.assert_array_equal(marked_added.get_xdata(), STARTS)
    np.testing.assert_allclose(marked_added.get_ydata(), [21.6566, 21.7020, 16.5754, 34.0631], atol=5e-5)
    np.testing.assert_allclose(marked_rotary.get_ydata(), 2.9014, atol=5e-5)
    assert left.get_xscale() == "log" and right.get_xscale() == "log"
    assert "Gap fixed at 2" in left.get_title()


def test_fixed_gap_figure_terms_panel_holds_the_four_terms():
    q, k = seeded_qk()
    fig = fixed_gap_figure(q, k, gap=2, last_start=200)
    right = fig.axes[1]
    assert len(right.lines) == 4
    qk, q_pn, pm_k, pm_pn = (line.get_ydata() for line in right.lines)
    for m in (1, 50, 200):
        np.testing.assert_allclose(
            [qk[m - 1], q_pn[m - 1], pm_k[m - 1], pm_pn[m - 1]], score_terms(q, k, m, m + 2), atol=1e-10
        )
    assert np.ptp(qk) == 0 and np.ptp(pm_pn) < 1e-10, "content and position-only terms are flat"
    assert np.ptp(q_pn) > 1 and np.ptp(pm_k) > 1, "the cross terms move"
    assert [t.get_text() for t in right.get_legend().get_texts()][1].startswith("q.P[n]")


def test_norm_figure_rotated_length_is_flat_added_length_moves():
    q, _ = seeded_qk()
    fig = norm_figure(q, last_position=120)
    _titled_and_labelled(fig)
    added, rotated, reference = fig.axes[0].lines
    np.testing.assert_allclose(rotated.get_ydata(), np.linalg.norm(q), rtol=0, atol=1e-12)
    expected = np.linalg.norm(q + sinusoidal_encoding(np.arange(121), 64), axis=1)
    np.testing.assert_allclose(added.get_ydata(), expected, rtol=0, atol=1e-12)
    assert np.ptp(added.get_ydata()) > 0.5
    assert reference.get_ydata()[0] == pytest.approx(np.linalg.norm(q))


def test_figures_07_refuse_mismatched_vectors():
    with pytest.raises(ValueError, match="same width"):
        fixed_gap_figure(np.ones(4), np.ones(6))
    with pytest.raises(ValueError, match="1-D"):
        norm_figure(np.ones((2, 4)))


# ---- 08 ------------------------------------------------------------------------------------

@pytest.mark.parametrize("d", [2, 4, 8, 16])
def test_pair_of_agrees_with_the_permutation(d):
    inter, split = pair_of(d, "interleaved"), pair_of(d, "split_half")
    perm = interleaved_to_split_half_permutation(d)
    # reordering the interleaved coordinates into split-half order keeps each one's pair
    np.testing.assert_array_equal(inter[perm], split)
    assert np.bincount(inter).tolist() == [2] * (d // 2) == np.bincount(split).tolist()


def test_pairing_figure_colours_each_coordinate_by_its_pair():
    fig = pairing_figure(8)
    _titled_and_labelled(fig)
    ax = fig.axes[0]
    gids = [p.get_gid() for p in ax.patches]
    assert len(gids) == 16
    assert "interleaved:3:1" in gids and "split_half:3:3" in gids and "split_half:4:0" in gids
    for gid, patch in zip(gids, ax.patches, strict=True):
        layout, j, p = gid.split(":")
        assert int(p) == pair_of(8, layout)[int(j)]
        same_pair = [q for g, q in zip(gids, ax.patches, strict=True) if g.split(":")[::2] == [layout, p]]
        assert all(q.get_facecolor() == patch.get_facecolor() for q in same_pair)
    assert "d = 8" in ax.get_title()


def test_pairing_figure_and_pair_of_refuse_bad_input():
    with pytest.raises(ValueError, match="d must be a positive even integer"):
        pairing_figure(5)
    with pytest.raises(ValueError, match="layout must be"):
        pair_of(4, "halves")


def test_checks_figure_bars_are_the_changes_with_a_floor():
    names = ["correct", "V rotated", "other base"]
    fig = checks_figure(names, [0.0, 1.9505, 0.2479], [1e-17, 0.9788, 0.0])
    _titled_and_labelled(fig)
    ax = fig.axes[0]
    reference, shift = ax.containers
    assert [b.get_height() for b in reference] == pytest.approx([FLOOR, 1.9505, 0.2479])
    assert [b.get_height() for b in shift] == pytest.approx([FLOOR, 0.9788, FLOOR])
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == names


def test_checks_figure_refuses_mismatched_lengths():
    with pytest.raises(ValueError, match="one value per name"):
        checks_figure(["a", "b"], [1.0], [1.0, 2.0])


# ---- 09 ------------------------------------------------------------------------------------

def test_angle_coverage_figure_draws_each_methods_ranges_and_marks_unseen_pairs():
    methods = scaled_frequencies()
    default = methods.pop("none")
    fig = angle_coverage_figure(methods, default, TRAINED, EXTENDED, ncols=3)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == len(methods) == 5
    _titled_and_labelled(fig)
    for ax, (name, inv) in zip(visible, methods.items(), strict=True):
        trained, unscaled, scaled, circles = ax.lines[:4]
        np.testing.assert_allclose(trained.get_ydata(), TRAINED * default, rtol=1e-12)
        np.testing.assert_allclose(unscaled.get_ydata(), EXTENDED * default, rtol=1e-12)
        np.testing.assert_allclose(scaled.get_ydata(), EXTENDED * inv, rtol=1e-12)
        unseen = unseen_angle_pairs(default, TRAINED, inv, EXTENDED)
        np.testing.assert_array_equal(circles.get_xdata(), np.flatnonzero(unseen))
        assert ax.get_title() == f"{name}: {int(unseen.sum())} pairs meet unseen angles"
        assert ax.get_yscale() == "log"
    titles = [ax.get_title() for ax in visible]
    assert titles[1] == "NTK-aware: 10 pairs meet unseen angles"
    assert titles[3] == "YaRN: 0 pairs meet unseen angles"


def test_angle_coverage_figure_refuses_frequencies_of_another_width():
    with pytest.raises(ValueError, match="must have shape"):
        angle_coverage_figure({"bad": np.ones(3)}, pair_frequencies(8), 100, 400)
    with pytest.raises(ValueError, match="non-empty mapping"):
        angle_coverage_figure({}, pair_frequencies(8), 100, 400)


def test_frequency_ratio_figure_plots_scaled_over_default_and_marks():
    methods = scaled_frequencies()
    default = methods.pop("none")
    low, high = yarn_correction_range(64, 10000.0, TRAINED)
    fig = frequency_ratio_figure(methods, default, FACTOR, marks={"YaRN low": low, "YaRN high": high})
    _titled_and_labelled(fig)
    ax = fig.axes[0]
    for line, inv in zip(ax.lines, methods.values(), strict=False):
        np.testing.assert_allclose(line.get_ydata(), inv / default, rtol=1e-12)
    linear = ax.lines[0].get_ydata()
    np.testing.assert_allclose(linear, 1 / FACTOR, rtol=1e-12)
    vertical = [
        line.get_xdata()[0] for line in ax.lines
        if len(line.get_xdata()) == 2 and np.ptp(line.get_xdata()) == 0
    ]
    assert sorted(vertical) == [low, high] == [8, 21]


# ---- the helpers these figures draw --------------------------------------------------------

def test_score_terms_add_up_and_only_cross_terms_hold_absolute_positions():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 16))
    for m, n in [(0, 3), (40, 43), (900, 903)]:
        terms = score_terms(q, k, m, n)
        assert terms.sum() == pytest.approx(added_score(q, k, m, n), abs=1e-10)
        assert terms[3] == pytest.approx(np.sum(np.cos(3 * pair_frequencies(16))), abs=1e-10)
    assert rotary_score(q, k, 900, 903) == pytest.approx(rotary_score(q, k, 0, 3), abs=1e-10)
    expected = rope_rotate(q[None], [5])[0] @ rope_rotate(k[None], [9])[0]
    assert rotary_score(q, k, 5, 9) == pytest.approx(expected, abs=1e-12)


def test_unseen_angle_pairs_counts_only_pairs_pushed_past_an_incomplete_turn():
    inv = pair_frequencies(64)
    assert unseen_angle_pairs(inv, 2048, inv, 2048).sum() == 0, "the trained length itself is fine"
    mask = unseen_angle_pairs(inv, 2048, inv, 8192)
    np.testing.assert_array_equal(np.flatnonzero(mask), np.arange(21, 32))
    assert unseen_angle_pairs(inv, 2048, ntk_aware_frequencies(64, 4), 8192).sum() == 10
    with pytest.raises(ValueError, match="one frequency per pair"):
        unseen_angle_pairs(inv, 2048, inv[:5], 8192)


# ---- house style: readable text, nothing clipped, legends off the data ---------------------

def _legends_outside_axes(fig):
    """Every legend's box lies outside every visible axes' plotting area."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    assert legends, "the figure has a legend"
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            if ax.get_visible():
                assert not box.overlaps(ax.get_window_extent(renderer)), (
                    f"a legend covers the axes titled {ax.get_title()!r}"
                )


def _figure(name):
    q, k = seeded_qk()
    methods = scaled_frequencies()
    default = methods.pop("none")
    names = ["correct", "V rotated", "mixed\nlayouts", "key rotated\ntwice", "other\nbase",
             "bfloat16\nangles", "full-width\nrotation", "checkpoint\nlayout", "sign\nflipped"]
    makers = {
        "fixed_gap": lambda: fixed_gap_figure(q, k),
        "norm": lambda: norm_figure(q),
        "checks": lambda: checks_figure(names, np.linspace(0.1, 3, 9), np.linspace(1e-16, 2, 9)),
        "ratio": lambda: frequency_ratio_figure(
            methods, default, FACTOR, marks={"YaRN low": 8, "YaRN high": 21}
        ),
        "coverage": lambda: angle_coverage_figure(methods, default, TRAINED, EXTENDED, ncols=2),
    }
    return makers[name]()


@pytest.mark.parametrize("name", ["fixed_gap", "norm", "checks", "ratio", "coverage"])
def test_figures_07_09_keep_the_house_style(name):
    fig = _figure(name)
    report = check_readable(fig)  # raises, naming the text, if any is too small or clipped
    assert report.smallest.points >= MIN_FONT_SIZE
    _legends_outside_axes(fig)


@pytest.mark.parametrize("make", [
    lambda m, d: frequency_ratio_figure(m, d, FACTOR, marks={"YaRN low": 8, "YaRN high": 21}),
    lambda m, d: frequency_ratio_figure({"Llama 3": m["Llama 3"]}, d, FACTOR, title="Llama 3: kept, blended",
                                        marks={"first blended": 15, "last blended": 20}, mark_label_y=0.5),
    lambda m, d: angle_coverage_figure(m, d, TRAINED, EXTENDED, ncols=2),
    lambda m, d: angle_coverage_figure(m, d, TRAINED, EXTENDED, ncols=1),
    lambda m, d: angle_coverage_figure({"linear": m["linear"], "YaRN": m["YaRN"]}, d, TRAINED, EXTENDED),
], ids=["ratio", "ratio-one", "coverage", "coverage-one-column", "coverage-one-row"])
def test_figures_09_at_fixed_margins_run_no_layout_engine_and_keep_their_texts_apart(make):
    methods = scaled_frequencies()
    default = methods.pop("none")
    fig = make(methods, default)
    assert fig.get_layout_engine() is None
    report = check_readable(fig)
    assert report.overlaps() == []
    _legends_outside_axes(fig)


def test_pairing_figure_keeps_the_house_style():
    check_readable(pairing_figure(8))


def test_fixed_gap_value_labels_sit_above_the_data_inside_the_axes():
    q, k = seeded_qk()
    fig = fixed_gap_figure(q, k)
    left = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in left.texts if t.get_text() in {"21.66", "21.70", "16.58", "34.06"}]
    assert len(labels) == 4
    top_of_data = max(line.get_ydata().max() for line in left.lines)
    axes_box = left.get_window_extent(renderer)
    for t in labels:
        assert t.xyann[1] > top_of_data, f"label {t.get_text()} is drawn in the band above the traces"
        box = t.get_window_extent(renderer)
        assert axes_box.x0 <= box.x0 and box.x1 <= axes_box.x1, f"label {t.get_text()} stays inside the axes"


@pytest.mark.parametrize("make", [
    lambda: fixed_gap_figure(*seeded_qk(), marked=STARTS, gap=2, last_start=5000),
    lambda: fixed_gap_figure(*seeded_qk(), marked=STARTS, gap=2, last_start=300),
    lambda: fixed_gap_figure(*(0.05 * v for v in seeded_qk()), gap=7, last_start=1000),
    lambda: norm_figure(seeded_qk()[0], last_position=200),
    lambda: norm_figure(0.1 * seeded_qk()[0], last_position=120),
    lambda: pairing_figure(8),
    lambda: pairing_figure(2),
    lambda: pairing_figure(16),
    lambda: checks_figure(["correct", "V rotated", "mixed\nlayouts", "key rotated\ntwice", "other\nbase",
                           "bfloat16\nangles", "full-width\nrotation", "checkpoint\nlayout", "sign\nflipped"],
                          np.linspace(0.1, 3, 9), np.linspace(1e-16, 2, 9)),
    lambda: checks_figure(["correct", "V rotated", "other base"], [0.0, 1.9505, 0.2479],
                          [1e-17, 0.9788, 0.0]),
], ids=["fixed-gap-07", "fixed-gap-300", "fixed-gap-small", "norm-07", "norm-small", "pairing-8", "pairing-2",
        "pairing-16", "checks-08", "checks-three"])
def test_figures_07_08_at_fixed_margins_run_no_layout_engine_and_keep_their_texts_apart(make):
    from lessons.figures.style import text_report

    fig = make()
    assert fig.get_layout_engine() is None
    check_readable(fig)
    assert [(a.text, b.text) for a, b in text_report(fig).overlaps()] == []

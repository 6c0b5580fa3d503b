"""The tiny trained head of notebook 10: gradients, RoPE's backward, determinism, errors, figures."""

from __future__ import annotations

from dataclasses import replace

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from lessons.head import look_back_query  # noqa: E402
from lessons.rope import rope_rotate  # noqa: E402
from lessons.tiny_model import (  # noqa: E402
    METHODS,
    Config,
    Run,
    accuracy,
    correct,
    forward,
    gradient_check,
    init_params,
    look_back_coefficients,
    loss_and_grads,
    own_token_coefficients,
    pair_coefficients,
    pair_score_by_distance,
    peak_distance,
    position_vectors,
    random_tokens,
    remedy_config,
    rope_angles,
    rotate,
    score_entries_per_step,
    tokens_per_step,
    train,
    train_seeds,
    unrotate,
)
from lessons.tiny_model import _matmul as blocked_matmul  # noqa: E402


def small(method: str, **kw) -> Config:
    return Config(method=method, vocab=6, width=6, train_length=8, **kw)


def perturbed_params(config: Config, seed: int = 5) -> dict:
    """Initial parameters moved off their start (b_o is zero there, W_o small) so that every
    gradient is exercised away from a special point."""
    rng = np.random.default_rng(seed)
    params = init_params(config)
    return {k: v + rng.normal(scale=0.3, size=v.shape) for k, v in params.items()}


# --------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("distance", [1, 3])
@pytest.mark.parametrize("method", METHODS)
def test_every_gradient_matches_central_differences(method, distance):
    config = small(method, distance=distance)
    tokens = random_tokens(np.random.default_rng(1), 3, 7, config.vocab)
    errors = gradient_check(perturbed_params(config), tokens, config)
    expected = {"W_q", "W_k", "W_o", "b_o"} | ({"P"} if method == "learned" else set())
    assert set(errors) == expected
    for name, err in errors.items():
        assert err < 1e-6, f"{method}, D={distance}: gradient of {name} off by {err:.2e} (relative)"


def test_gradient_check_catches_rope_backward_that_rotates_forward():
    config = small("rope")
    tokens = random_tokens(np.random.default_rng(2), 3, 8, config.vocab)
    errors = gradient_check(perturbed_params(config), tokens, config, rope_backward=rotate)
    assert errors["W_q"] > 0.1 and errors["W_k"] > 0.1
    assert errors["W_o"] < 1e-6 and errors["b_o"] < 1e-6


def test_gradient_check_catches_a_missing_rope_backward():
    config = small("rope")
    tokens = random_tokens(np.random.default_rng(2), 3, 8, config.vocab)
    errors = gradient_check(perturbed_params(config), tokens, config, rope_backward=lambda g, a: g)
    assert errors["W_q"] > 0.1 and errors["W_k"] > 0.1


def test_gradient_check_answers_equal_inputs_from_its_memo_and_changed_inputs_afresh(monkeypatch):
    import lessons.tiny_model as tiny_model

    config = small("rope")
    tokens = random_tokens(np.random.default_rng(3), 2, 5, config.vocab)
    params = perturbed_params(config, seed=11)
    first = gradient_check(params, tokens, config)
    calls = []
    monkeypatch.setattr(tiny_model, "forward", lambda *a: calls.append(a) or forward(*a))
    again = gradient_check({k: v.copy() for k, v in params.items()}, tokens.copy(), config)
    assert again == first and calls == [], "equal content: the first answer, not recomputed"
    again["W_q"] = -1.0
    assert gradient_check(params, tokens, config) == first, "the memo hands out copies"
    params["W_q"][0, 0] += 0.5  # new content, new check
    changed = gradient_check(params, tokens, config)
    assert calls and changed["W_q"] < 1e-6 and changed["W_o"] < 1e-6
    broken = gradient_check(params, tokens, config, rope_backward=rotate)
    assert broken["W_q"] > 0.1, "another rope_backward is another check"


def test_far_attention_share_of_an_equal_run_is_the_first_answer(monkeypatch):
    import lessons.tiny_model as tiny_model

    config = small("rope", steps=2, batch=2)
    run = train(config)
    share = tiny_model.far_attention_share(run, length=32, first_query=16, sequences=2)
    monkeypatch.setattr(tiny_model, "attention_weights", lambda *a: pytest.fail("recomputed"))
    twin = Run(config, {k: v.copy() for k, v in run.params.items()}, run.losses, run.seconds, run.tokens_seen)
    assert tiny_model.far_attention_share(twin, length=32, first_query=16, sequences=2) == share
    with pytest.raises(pytest.fail.Exception, match="recomputed"):
        tiny_model.far_attention_share(twin, length=32, first_query=16, sequences=1)


@pytest.fixture
def fresh_process(tmp_path, monkeypatch):
    """An empty results cache of its own and an empty memo: what another kernel of the run sees
    after the first one has measured (call ``forget()`` to play that kernel)."""
    import lessons.tiny_model as tiny_model
    from lessons.results_cache import ENV_VAR

    monkeypatch.setenv(ENV_VAR, str(tmp_path))
    monkeypatch.setattr(tiny_model, "_memo", type(tiny_model._memo)())
    return tiny_model._memo.clear


def test_gradient_check_of_another_process_comes_from_the_results_cache(fresh_process, tmp_path, monkeypatch):
    import lessons.tiny_model as tiny_model

    config = small("rope")
    tokens = random_tokens(np.random.default_rng(4), 2, 5, config.vocab)
    params = perturbed_params(config, seed=12)
    first = gradient_check(params, tokens, config, rope_backward=rotate)
    assert len(list(tmp_path.iterdir())) == 1
    fresh_process()
    monkeypatch.setattr(tiny_model, "forward", lambda *a: pytest.fail("recomputed"))
    monkeypatch.setattr(tiny_model, "loss_and_grads", lambda *a, **k: pytest.fail("recomputed"))
    again = gradient_check(params, tokens, config, rope_backward=rotate)
    assert again == first and list(again) == list(first), "the same errors, in the same order"
    with pytest.raises(pytest.fail.Exception, match="recomputed"):  # another backward: no entry
        gradient_check(params, tokens, config)


def test_a_backward_written_elsewhere_is_checked_every_time(fresh_process, tmp_path):
    # A function from a notebook (a learner's own backward) has no name the next process
    # could trust: its check is memoized in this process only, never stored.
    config = small("rope")
    tokens = random_tokens(np.random.default_rng(4), 2, 5, config.vocab)
    errors = gradient_check(perturbed_params(config), tokens, config, rope_backward=lambda g, a: g)
    assert errors["W_q"] > 0.1
    assert list(tmp_path.iterdir()) == []


def test_correct_of_an_equal_run_comes_from_the_results_cache(fresh_process, monkeypatch):
    import lessons.tiny_model as tiny_model

    config = small("rope", steps=2, batch=2)
    run = train(config)
    first = correct(run, 12, sequences=3)
    assert first.dtype == bool and first.shape == (3, 12 - config.distance)
    assert accuracy(run, 12, sequences=3) == first.mean()
    fresh_process()
    monkeypatch.setattr(tiny_model, "predict", lambda *a: pytest.fail("recomputed"))
    twin = Run(config, {k: v.copy() for k, v in run.params.items()}, run.losses, run.seconds, run.tokens_seen)
    again = correct(twin, 12, sequences=3)
    assert np.array_equal(again, first) and again.dtype == bool
    again[:] = False
    assert np.array_equal(correct(twin, 12, sequences=3), first), "the memo hands out copies"
    with pytest.raises(pytest.fail.Exception, match="recomputed"):
        correct(twin, 12, sequences=2)
    with pytest.raises(pytest.fail.Exception, match="recomputed"):  # accuracy always measures
        accuracy(twin, 12, sequences=3)


def test_far_attention_share_of_another_process_comes_from_the_results_cache(fresh_process, monkeypatch):
    import lessons.tiny_model as tiny_model

    run = train(small("rope", steps=2, batch=2))
    share = tiny_model.far_attention_share(run, length=32, first_query=16, sequences=2)
    fresh_process()
    monkeypatch.setattr(tiny_model, "attention_weights", lambda *a: pytest.fail("recomputed"))
    assert tiny_model.far_attention_share(run, length=32, first_query=16, sequences=2) == share


def test_the_cache_key_of_inputs_is_the_same_text_in_every_process():
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from lessons.tiny_model import Config, _content_text, rotate\n"
        "print(_content_text(({'b': np.arange(3.0), 'a': np.ones((2, 2))}, Config(), 1e-06, rotate, None)))"
    )
    texts = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
             for _ in range(2)}
    assert len(texts) == 1
    text = texts.pop()
    assert text.startswith("tuple({'a': array(<f8, (2, 2), ") and "lessons.tiny_model.rotate" in text
    from lessons.tiny_model import _content_text

    for unnamed in (lambda g, a: g, object()):
        with pytest.raises(TypeError, match="no content key"):
            _content_text((unnamed,))


def test_learned_rows_past_the_sequence_get_no_gradient():
    config = Config(method="learned", vocab=6, width=6, train_length=12)
    tokens = random_tokens(np.random.default_rng(3), 2, 5, config.vocab)
    _, grads = loss_and_grads(perturbed_params(config), tokens, config)
    assert np.all(grads["P"][5:] == 0)
    assert np.all(np.abs(grads["P"][:5]).sum(axis=1) > 0)


def test_loss_with_a_zero_read_out_is_log_vocab():
    config = small("rope")
    params = init_params(config)
    params["W_o"][:] = 0.0
    tokens = random_tokens(np.random.default_rng(4), 2, 8, config.vocab)
    assert forward(params, tokens, config).loss == pytest.approx(np.log(config.vocab), rel=1e-12)


# --------------------------------------------------------------------------- RoPE, forward and backward


def test_rotate_is_rope_rotate_and_unrotate_undoes_it():
    x = np.random.default_rng(5).normal(size=(3, 10, 8))
    config = Config(width=8)
    angles = rope_angles(config, 10)
    np.testing.assert_allclose(rotate(x, angles), rope_rotate(x, np.arange(10)), rtol=0, atol=1e-14)
    np.testing.assert_allclose(unrotate(rotate(x, angles), angles), x, rtol=0, atol=1e-14)


def test_unrotate_is_the_transpose_of_rotate():
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(2, 1, 9, 8))
    angles = rope_angles(Config(width=8), 9)
    assert np.sum(rotate(x, angles) * y) == pytest.approx(np.sum(x * unrotate(y, angles)), abs=1e-12)


def test_swap_puzzle_without_positions_and_with_rope():
    tokens = random_tokens(np.random.default_rng(7), 1, 16, 16)
    swapped = tokens.copy()
    swapped[0, [3, 14]] = swapped[0, [14, 3]]
    assert tokens[0, 3] != tokens[0, 14]
    blind, rope = Config(method="none"), Config(method="rope")
    for config, changes in ((blind, False), (rope, True)):
        params = init_params(config)
        a = forward(params, tokens, config).O[0, -1]
        b = forward(params, swapped, config).O[0, -1]
        assert bool(np.max(np.abs(a - b)) > 1e-6) is changes


# --------------------------------------------------------------------------- positions


def test_learned_table_has_no_rows_past_its_length():
    config = Config(method="learned")
    params = perturbed_params(config)
    vectors = position_vectors(params, config, 20)
    np.testing.assert_array_equal(vectors[:16], params["P"])
    assert np.all(vectors[16:] == 0)
    assert position_vectors(params, Config(method="rope"), 20) is None


# --------------------------------------------------------------------------- inside the head


def hand_built_run(D: int) -> Run:
    """A RoPE run whose every query is the look-back query of ``05`` and every key (1, 0, ...)."""
    config = Config(method="rope", distance=D)
    params = init_params(config)
    params["W_q"][:] = look_back_query(config.width, D)
    params["W_k"][:] = np.tile([1.0, 0.0], config.width // 2)
    return Run(config, params, np.zeros(0), 0.0, 0)


@pytest.mark.parametrize("D", [1, 3, 5])
def test_hand_built_head_has_the_look_back_coefficients_and_peaks_D_back(D):
    run = hand_built_run(D)
    np.testing.assert_allclose(pair_coefficients(run), look_back_coefficients(run.config), atol=1e-12)
    assert peak_distance(run, 15) == D


def test_pair_scores_are_the_token_averaged_attention_scores():
    """From distance 1 on the key is another token, drawn independently: the average is over
    every (query token, key token); at distance 0 the key is the query's own token."""
    config = Config(method="rope", vocab=5, width=6)
    params = perturbed_params(config)
    run = Run(config, params, np.zeros(0), 0.0, 0)
    m, distances = 40, np.array([0, 1, 7, 30])
    total = pair_score_by_distance(run, distances).sum(axis=1)
    for delta, expected in zip(distances, total, strict=True):
        q = rope_rotate(params["W_q"][:, None, :], [m])[:, 0]  # every query token at m
        k = rope_rotate(params["W_k"][:, None, :], [m - delta])[:, 0]  # every key token at m - delta
        scores = q @ k.T / np.sqrt(config.width)  # [query token, key token]
        average = np.mean(np.diag(scores)) if delta == 0 else np.mean(scores)
        assert average == pytest.approx(expected, abs=1e-12)
    # the two averages differ at distance 0 for these weights: the own-token one is not a special case
    every_pair = pair_coefficients(run).real.sum() / np.sqrt(config.width)
    assert abs(total[0] - every_pair) > 1e-3
    np.testing.assert_allclose(own_token_coefficients(run).real.sum() / np.sqrt(config.width), total[0],
                               atol=1e-12)


# --------------------------------------------------------------------------- training


def test_training_is_deterministic_and_seeded():
    config = small("rope", steps=15)
    a, b = train(config), train(config)
    np.testing.assert_array_equal(a.losses, b.losses)
    for name in a.params:
        np.testing.assert_array_equal(a.params[name], b.params[name])
    assert not np.array_equal(a.losses, train(small("rope", steps=15, seed=1)).losses)


def test_training_lowers_the_loss_and_accuracy_is_a_share():
    run = train(Config(method="rope", steps=60))
    assert run.losses[-5:].mean() < 0.5 * run.losses[:5].mean()
    right = correct(run, 32)
    assert right.shape == (128, 31) and right.dtype == bool
    assert accuracy(run, 32) == pytest.approx(right.mean())


@pytest.mark.parametrize(
    "config",
    [Config(method=m, steps=15) for m in METHODS]
    + [Config(method="learned", steps=15, train_length=64, batch=8), Config(steps=15, lengths=(16,))],
    ids=[*METHODS, "learned-at-64", "one-length-list"],
)
def test_seeds_trained_side_by_side_are_the_separate_runs(config):
    seeds = (0, 3, 7)
    together = train_seeds(config, seeds)
    for seed, run in zip(seeds, together, strict=True):
        alone = train(replace(config, seed=seed))
        assert run.config == alone.config
        assert np.max(np.abs(run.losses - alone.losses)) < 1e-12
        for name, value in alone.params.items():
            assert np.max(np.abs(run.params[name] - value)) < 1e-12, name
        assert run.tokens_seen == alone.tokens_seen
    assert not np.allclose(together[0].losses, together[1].losses)  # the seeds differ


def test_seeds_with_varying_lengths_are_trained_one_by_one():
    config = Config(steps=6, lengths=(12, 20))
    runs = train_seeds(config, (1, 2))
    assert np.array_equal(runs[1].losses, train(Config(steps=6, lengths=(12, 20), seed=2)).losses)


def test_train_seeds_needs_a_seed():
    with pytest.raises(ValueError, match="seeds must name at least one seed"):
        train_seeds(Config(steps=2), ())


@pytest.mark.parametrize(
    "shape_a, shape_b", [((3, 300, 16), (3, 16, 300)), ((4096, 16), (16, 16)), ((5, 8, 4), (4, 6))]
)
def test_blocked_product_is_the_product(shape_a, shape_b):
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=shape_a), rng.normal(size=shape_b)
    assert np.allclose(blocked_matmul(a, b), a @ b, rtol=0, atol=1e-12)


def test_varying_lengths_train_on_each():
    run = train(Config(method="learned", lengths=(8, 12), steps=10))
    assert run.params["P"].shape == (12, 16)
    assert run.tokens_seen % 32 == 0 and 10 * 32 * 8 < run.tokens_seen < 10 * 32 * 12


def test_remedy_keeps_the_tokens_per_step_and_quadruples_the_scores():
    assert tokens_per_step(remedy_config("rope")) == tokens_per_step(Config()) == 512
    assert score_entries_per_step(remedy_config("rope")) == 4 * score_entries_per_step(Config())


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "alibi"}, r"method must be one of none, sinusoidal, learned, rope; got 'alibi'"),
        ({"width": 7}, r"width must be even .*got 7"),
        ({"distance": 16}, r"distance must be smaller than train_length \(16\); got 16"),
        ({"vocab": 0}, r"vocab must be a positive integer; got 0"),
        ({"lengths": (1, 8)}, r"lengths must be a non-empty tuple of lengths above distance 1"),
        ({"lr": 0.0}, r"lr must be positive; got 0.0"),
    ],
)
def test_bad_config_is_refused_with_a_clear_message(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Config(**kwargs)


def test_bad_tokens_are_refused():
    config = Config()
    params = init_params(config)
    with pytest.raises(ValueError, match=r"tokens must lie in 0 \.\. 15; got 0 \.\. 16"):
        forward(params, np.array([[0, 16, 3]]), config)
    with pytest.raises(ValueError, match=r"tokens must be a \[batch, length\] array of integers"):
        forward(params, np.array([1, 2, 3]), config)
    with pytest.raises(ValueError, match=r"tokens must be longer than the distance 1; got length 1"):
        forward(params, np.array([[1]]), config)


def test_pair_coefficients_need_a_rope_run():
    run = Run(Config(method="none"), init_params(Config(method="none")), np.zeros(0), 0.0, 0)
    with pytest.raises(ValueError, match=r"pair coefficients need a RoPE run; got method 'none'"):
        pair_coefficients(run)


# --------------------------------------------------------------------------- figures


def test_figures_are_readable():
    from lessons.figures.style import check_readable
    from lessons.figures.tiny_model import (
        accuracy_by_length_figure,
        accuracy_by_position_figure,
        attention_row_figure,
        pairs_figure,
        training_curves_figure,
    )
    from lessons.tiny_model import sweep

    runs = {m: train(Config(method=m, steps=10)) for m in ("none", "rope")}
    results = {"RoPE": sweep(Config(method="rope", steps=10), (0, 1), (16, 32))}
    tokens = random_tokens(np.random.default_rng(8), 1, 64, 16)[0]
    figures = [
        training_curves_figure(runs),
        accuracy_by_length_figure(results, chance=1 / 16),
        accuracy_by_position_figure(runs, length=64),
        attention_row_figure(runs["rope"], tokens, 50, mark=(1,)),
        pairs_figure(runs["rope"]),
    ]
    for fig in figures:
        check_readable(fig)
    assert len(figures[0].axes[0].lines) == 2
    assert len(figures[4].axes) == 2
    with pytest.raises(ValueError, match=r"query must be a position in 0\.\.63; got 64"):
        attention_row_figure(runs["rope"], tokens, 64)


def test_figures_at_fixed_margins_run_no_layout_engine_and_keep_their_texts_apart():
    from lessons.figures.style import check_readable, text_report
    from lessons.figures.tiny_model import (
        accuracy_by_length_figure,
        accuracy_by_position_figure,
        attention_row_figure,
        pairs_figure,
        training_curves_figure,
    )
    from lessons.tiny_model import METHOD_NAMES, sweep

    runs = {m: train(Config(method=m, steps=30)) for m in ("none", "sinusoidal", "rope")}
    named = {METHOD_NAMES[m]: run for m, run in runs.items()}
    results = {
        "RoPE": sweep(Config(method="rope", steps=10), (0, 1), (16, 32, 64)),
        "RoPE, trained at 64": sweep(Config(method="rope", steps=10, train_length=64), (0, 1), (16, 32, 64)),
    }
    tokens = random_tokens(np.random.default_rng(8), 1, 96, 16)[0]
    figures = {
        "curves": training_curves_figure(runs),
        "by length": accuracy_by_length_figure(results, chance=1 / 16),
        "by position": accuracy_by_position_figure(named, length=96),
        "attention row": attention_row_figure(runs["rope"], tokens, 90, mark=(1,)),
        "pairs": pairs_figure(runs["rope"]),
    }
    for name, fig in figures.items():
        assert fig.get_layout_engine() is None, name
        check_readable(fig)
        assert text_report(fig).overlaps() == [], name
    # Off the data: chance is a legend entry, not a label on the bars; a mark on a low bar is
    # lifted above its neighbours and joined to its bar by a leader line.
    by_length = figures["by length"].axes[0]
    assert "chance (1 in 16)" in [t.get_text() for t in by_length.get_legend().get_texts()]
    assert "chance" not in [t.get_text() for t in by_length.texts]
    (mark,) = [t for t in figures["attention row"].axes[0].texts if t.get_text().startswith("1 back")]
    weight = float(mark.xy[1])
    top = figures["attention row"].axes[0].get_ylim()[1]
    assert (mark.arrow_patch is not None) == (weight < 0.5 * top)


def test_a_change_in_the_last_bits_of_the_start_changes_no_prediction(monkeypatch):
    """The claims of 10 state whole percentages: a run must not amplify the low-bit differences
    another BLAS would make. Perturb every initial weight by a relative 1e-12 and retrain."""
    import lessons.tiny_model as tm

    config = Config(method="rope")
    reference = train(config)
    original = tm.init_params

    def nudged(c):
        rng = np.random.default_rng(99)
        return {k: v * (1 + 1e-12 * rng.normal(size=v.shape)) for k, v in original(c).items()}

    monkeypatch.setattr(tm, "init_params", nudged)
    moved = train(config)
    assert np.max(np.abs(moved.params["W_q"] - reference.params["W_q"])) < 1e-8
    for length in (16, 64, 256):
        np.testing.assert_array_equal(correct(moved, length), correct(reference, length))


def test_token_pair_scores_are_the_rotated_dot_products_of_two_tokens():
    from lessons.rope import rope_rotate
    from lessons.tiny_model import token_pair_scores

    run = train(Config(method="rope", steps=10))
    d = run.config.width
    Wq, Wk = run.params["W_q"], run.params["W_k"]
    a, b, m, distance = 3, 7, 40, 5
    q = rope_rotate(Wq[a][None, :], [m])[0]
    k = rope_rotate(Wk[b][None, :], [m - distance])[0]
    full = token_pair_scores(run, distance)
    assert full.shape == (run.config.vocab, run.config.vocab)
    assert full[a, b] == pytest.approx(q @ k / np.sqrt(d), abs=1e-12)
    # Summed over some pairs: only their coordinates count.
    slow = token_pair_scores(run, distance, pairs=range(2, d // 2))
    assert slow[a, b] == pytest.approx(q[4:] @ k[4:] / np.sqrt(d), abs=1e-12)

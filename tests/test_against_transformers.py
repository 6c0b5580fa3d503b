"""The package against the deployed code itself: transformers' rotary classes and torch.

Optional. torch and transformers (5.x) are not course dependencies: this module is skipped
unless both can be imported. No model is downloaded; every config is built locally and the
rotary classes and functions are called directly.

transformers computes ``inv_freq``, the angles and cos/sin in float32 whatever the input
dtype (Meta's reference code as well); only the final multiply-add runs in the input dtype.
So each comparison comes in two forms:

* the whole deployed pipeline against the package, within the error of float32 tables: the
  angle is off by the relative error r of their float32 ``inv_freq`` (checked separately to
  be below ``INV_RTOL``) plus one float32 rounding of the product, and cos/sin by one more
  float32 rounding: |cos_theirs - cos_ours| <= (r + u) |angle| + 2u, u = 2**-24;
* the deployed rotation fed the package's float64 tables, against the package: equal to 1e-12.

Measured with transformers 5.24 / torch 2.13 (positions up to 32767): r is at most 8.3e-8
when d is a power of two and 3.3e-7 for d = 96 (2i/d is not exact in float32 then), and
|cos/sin error| / |angle| reaches 1.1e-7 and 3.5e-7 respectively, so a bound of the form
5e-8 |angle| + 1.5e-7 is too tight beyond an angle of about 2 radians. Blended pairs (YaRN's
ramp, Llama 3's smooth factor, both float32) add up to (s - 1) * 2u of relative error.

Meta's ``precompute_freqs_cis`` / ``apply_rotary_emb`` (github.com/meta-llama/llama,
``llama/model.py``) and the ``permute`` of Hugging Face's ``convert_llama_weights_to_hf.py``
are not in the installed package; they are transcribed below, torch calls unchanged.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers", minversion="5.0")

from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS  # noqa: E402
from transformers.models.gpt_neox import modeling_gpt_neox  # noqa: E402
from transformers.models.llama import modeling_llama  # noqa: E402
from transformers.models.phi3 import modeling_phi3  # noqa: E402

from lessons.frequencies import angle_table, pair_frequencies  # noqa: E402
from lessons.kv_cache import positions_from_attention_mask  # noqa: E402
from lessons.rope import apply_rope, interleaved_to_split_half_permutation  # noqa: E402
from lessons.scaling import (  # noqa: E402
    dynamic_ntk_frequencies,
    linear_frequencies,
    llama3_frequencies,
    longrope_frequencies,
    yarn_frequencies,
)

U32 = 2.0**-24  # float32 unit roundoff
INV_RTOL = 5e-7  # their float32 inv_freq against ours (measured at most 3.3e-7 without a blend)
EXACT = 1e-12


# =============================================================================================
# helpers
# =============================================================================================


def llama_config(head_dim, rope_parameters, max_position_embeddings=4096):
    return transformers.LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_position_embeddings,
        rope_parameters=dict(rope_parameters),
    )


def f64(t):
    return t.detach().to(torch.float64).numpy()


def float32_representable(rng, shape):
    """Random float64 values that float32 holds exactly (Meta's code calls ``.float()``)."""
    return rng.normal(size=shape).astype(np.float32).astype(np.float64)


def inv_freq_rel_error(theirs, ours, rtol=INV_RTOL):
    r = float(np.max(np.abs(f64(theirs) / ours - 1.0)))
    assert r <= rtol, f"their float32 inv_freq is {r:.3g} (relative) away from ours"
    return r


def table_tolerance(angles, r):
    """Bound on |cos/sin from float32 tables - cos/sin in float64| for these angles [.., d/2]."""
    return (r + U32) * np.abs(angles) + 2 * U32


def rotation_tolerance(x, half_tol, layout):
    """Bound on the rotated x when cos/sin are each off by up to half_tol [T, r/2] per pair.

    Output j mixes x_j and its partner: |error| <= (|x_j| + |x_partner|) * tol(pair of j).
    """
    r = 2 * half_tol.shape[-1]
    a = np.abs(x[..., :r])
    if layout == "split_half":
        partner = np.concatenate([a[..., r // 2 :], a[..., : r // 2]], axis=-1)
        tol = np.concatenate([half_tol, half_tol], axis=-1)
    else:
        partner = a.reshape(*a.shape[:-1], r // 2, 2)[..., ::-1].reshape(a.shape)
        tol = np.repeat(half_tol, 2, axis=-1)
    return (a + partner) * tol + 1e-13


def assert_within(actual, expected, bound):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    excess = np.abs(actual - expected) - bound
    assert np.max(excess) <= 0, f"exceeds the bound by {np.max(excess):.3g}"


def assert_exact(actual, expected, atol=EXACT):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=atol)


def our_tables(positions, inv_freq):
    """cos, sin [T, d] (Hugging Face's width: concat(freqs, freqs)) and the angles [T, d/2]."""
    angles = angle_table(positions, inv_freq)
    emb = np.concatenate([angles, angles], axis=-1)
    return np.cos(emb), np.sin(emb), angles


POSITIONS = np.array([0, 1, 2, 3, 7, 100, 511, 1000, 2047, 4095, 8191, 16_000, 32_767])


# =============================================================================================
# (a) LlamaRotaryEmbedding + apply_rotary_pos_emb against apply_rope(layout="split_half")
# =============================================================================================


@pytest.mark.parametrize("d", [2, 8, 64, 96, 128])
@pytest.mark.parametrize("base", [10_000.0, 500_000.0])
def test_llama_default_inv_freq(d, base):
    config = llama_config(d, {"rope_type": "default", "rope_theta": base})
    inv_freq, attention_factor = modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    assert inv_freq.dtype == torch.float32 and attention_factor == 1.0
    inv_freq_rel_error(inv_freq, pair_frequencies(d, base))
    rope = modeling_llama.LlamaRotaryEmbedding(config)
    assert_exact(f64(rope.inv_freq), f64(inv_freq), atol=0)


@pytest.mark.parametrize("d", [8, 64, 96, 128])
@pytest.mark.parametrize("base", [10_000.0, 500_000.0])
def test_llama_rotation_within_float32_table_error(d, base):
    rng = np.random.default_rng(d)
    q, k = rng.normal(size=(2, 1, 3, len(POSITIONS), d))
    config = llama_config(d, {"rope_type": "default", "rope_theta": base})
    rope = modeling_llama.LlamaRotaryEmbedding(config)
    r = inv_freq_rel_error(rope.inv_freq, pair_frequencies(d, base))
    cos, sin = rope(torch.from_numpy(q), torch.from_numpy(POSITIONS)[None])
    assert cos.dtype == torch.float64  # float32 values, handed over in the input dtype
    ref_q, ref_k = modeling_llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), cos, sin)

    our_cos, our_sin, angles = our_tables(POSITIONS, pair_frequencies(d, base))
    half_tol = table_tolerance(angles, r)
    bound = np.concatenate([half_tol, half_tol], axis=-1)
    assert_within(f64(cos[0]), our_cos, bound)
    assert_within(f64(sin[0]), our_sin, bound)

    ours_q, ours_k = apply_rope(q, k, POSITIONS, base=base, layout="split_half")
    assert_within(ours_q, f64(ref_q), rotation_tolerance(q, half_tol, "split_half"))
    assert_within(ours_k, f64(ref_k), rotation_tolerance(k, half_tol, "split_half"))


@pytest.mark.parametrize("d", [2, 8, 64, 128])
@pytest.mark.parametrize("base", [10_000.0, 500_000.0])
def test_llama_rotation_exact_given_the_same_tables(d, base):
    """Their ``apply_rotary_pos_emb`` (rotate_half) fed float64 tables is our split-half rotation."""
    rng = np.random.default_rng(d + 1)
    q, k = rng.normal(size=(2, 2, 3, len(POSITIONS), d))
    cos, sin, _ = our_tables(POSITIONS, pair_frequencies(d, base))
    ref_q, ref_k = modeling_llama.apply_rotary_pos_emb(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(cos)[None], torch.from_numpy(sin)[None]
    )
    ours_q, ours_k = apply_rope(q, k, POSITIONS, base=base, layout="split_half")
    assert_exact(ours_q, f64(ref_q))
    assert_exact(ours_k, f64(ref_k))


def test_llama_float32_inputs_stay_float32_and_agree():
    """Only the multiply-add runs in the input dtype: float32 in, float32 out on both sides."""
    rng = np.random.default_rng(5)
    q, k = rng.normal(size=(2, 1, 2, len(POSITIONS), 64)).astype(np.float32)
    rope = modeling_llama.LlamaRotaryEmbedding(llama_config(64, {"rope_type": "default", "rope_theta": 1e4}))
    r = inv_freq_rel_error(rope.inv_freq, pair_frequencies(64))
    cos, sin = rope(torch.from_numpy(q), torch.from_numpy(POSITIONS)[None])
    ref_q, _ = modeling_llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), cos, sin)
    ours_q, _ = apply_rope(q, k, POSITIONS, layout="split_half")
    assert ref_q.dtype == torch.float32 and ours_q.dtype == np.float32
    half_tol = table_tolerance(angle_table(POSITIONS, pair_frequencies(64)), r) + 2 * U32
    assert_within(ours_q.astype(np.float64), f64(ref_q), rotation_tolerance(q, half_tol, "split_half"))


def test_llama_left_padded_batch_with_generate_position_ids():
    """position_ids [B, T] as generate() builds them from a left-padded attention mask, fed to
    LlamaRotaryEmbedding; the package takes the same [B, T] positions in one call."""
    mask = torch.tensor([[0, 0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1, 1]])
    position_ids = mask.long().cumsum(-1) - 1  # generate(): transformers' own two lines
    position_ids.masked_fill_(mask == 0, 1)
    positions = positions_from_attention_mask(mask.numpy())
    np.testing.assert_array_equal(positions, position_ids.numpy())

    d = 64
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 3, 2, 7, d))  # [B, H, T, d] each
    rope = modeling_llama.LlamaRotaryEmbedding(llama_config(d, {"rope_type": "default", "rope_theta": 1e4}))
    r = inv_freq_rel_error(rope.inv_freq, pair_frequencies(d))
    cos, sin = rope(torch.from_numpy(q), position_ids)  # [B, T, d]
    ref_q, ref_k = modeling_llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), cos, sin)
    ours_q, ours_k = apply_rope(q, k, positions, layout="split_half")
    half_tol = table_tolerance(positions[..., None] * pair_frequencies(d), r)[:, None]  # [B, 1, T, d/2]
    assert_within(ours_q, f64(ref_q), rotation_tolerance(q, half_tol, "split_half"))
    assert_within(ours_k, f64(ref_k), rotation_tolerance(k, half_tol, "split_half"))


# =============================================================================================
# (b) GPT-NeoX partial rotary (rotary_pct -> partial_rotary_factor) against rotary_dim
# =============================================================================================


@pytest.mark.parametrize(("head_size", "rotary_pct"), [(64, 0.25), (80, 0.25), (128, 0.5), (32, 1.0)])
def test_gpt_neox_partial_rotary(head_size, rotary_pct):
    config = transformers.GPTNeoXConfig(
        hidden_size=4 * head_size, num_attention_heads=4, rotary_pct=rotary_pct, max_position_embeddings=2048
    )
    rotary_dim = int(head_size * rotary_pct)
    rope = modeling_gpt_neox.GPTNeoXRotaryEmbedding(config)
    assert rope.inv_freq.shape == (rotary_dim // 2,)
    r = inv_freq_rel_error(rope.inv_freq, pair_frequencies(rotary_dim))

    rng = np.random.default_rng(head_size)
    q, k = rng.normal(size=(2, 1, 4, len(POSITIONS), head_size))
    tq, tk = torch.from_numpy(q), torch.from_numpy(k)
    cos, sin = rope(tq, torch.from_numpy(POSITIONS)[None])
    ref_q, ref_k = modeling_gpt_neox.apply_rotary_pos_emb(tq, tk, cos, sin)
    ours_q, ours_k = apply_rope(q, k, POSITIONS, layout="split_half", rotary_dim=rotary_dim)

    half_tol = table_tolerance(angle_table(POSITIONS, pair_frequencies(rotary_dim)), r)
    for ours, ref, x in ((ours_q, ref_q, q), (ours_k, ref_k, k)):
        ref = f64(ref)
        bound = rotation_tolerance(x, half_tol, "split_half")
        assert_within(ours[..., :rotary_dim], ref[..., :rotary_dim], bound)
        # the dims past rotary_dim pass through untouched, bit for bit, on both sides
        np.testing.assert_array_equal(ours[..., rotary_dim:], x[..., rotary_dim:])
        np.testing.assert_array_equal(ref[..., rotary_dim:], x[..., rotary_dim:])

    # fed the same float64 tables, the partial rotation is the same to rounding
    our_cos, our_sin, _ = our_tables(POSITIONS, pair_frequencies(rotary_dim))
    exact_q, exact_k = modeling_gpt_neox.apply_rotary_pos_emb(
        tq, tk, torch.from_numpy(our_cos)[None], torch.from_numpy(our_sin)[None]
    )
    assert_exact(ours_q, f64(exact_q))
    assert_exact(ours_k, f64(exact_k))


# =============================================================================================
# (c) scalings: ROPE_INIT_FUNCTIONS of modeling_rope_utils against lessons.scaling
# =============================================================================================


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 8.5])
@pytest.mark.parametrize("d", [4, 64, 128])
def test_linear_scaling(d, factor):
    config = llama_config(d, {"rope_type": "linear", "rope_theta": 1e4, "factor": factor})
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["linear"](config)
    assert attention_factor == 1.0
    inv_freq_rel_error(inv_freq, linear_frequencies(d, factor))


@pytest.mark.parametrize(("d", "factor", "M"), [(64, 2.0, 2048), (128, 4.0, 4096), (16, 1.5, 100)])
def test_dynamic_ntk_init_function(d, factor, M):
    config = llama_config(d, {"rope_type": "dynamic", "rope_theta": 1e4, "factor": factor}, M)
    for seq_len in (None, 1, M // 2, M, M + 1, 2 * M, 10 * M + 3):
        inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["dynamic"](config, seq_len=seq_len)
        assert attention_factor == 1.0
        inv_freq_rel_error(inv_freq, dynamic_ntk_frequencies(d, factor, seq_len or M, M))


def test_dynamic_ntk_in_a_forward_pass_depends_on_call_history():
    """The real ``dynamic_rope_update``: the grown table stays until the length drops below M.

    The package's function is stateless: it equals the table of the longest length seen since
    the last reset (here the forward pass computes the grown base from a tensor, in float32).
    """
    d, factor, M = 64, 2.0, 2048
    rope = modeling_llama.LlamaRotaryEmbedding(
        llama_config(d, {"rope_type": "dynamic", "rope_theta": 1e4, "factor": factor}, M)
    )
    x = torch.zeros(1, dtype=torch.float64)
    expected_after = {1000: 1000, 5000: 5000, 3000: 5000, 8000: 8000, 100: 100}
    for length, table_of in expected_after.items():  # in this order
        rope(x, torch.arange(length)[None])
        inv_freq_rel_error(rope.inv_freq, dynamic_ntk_frequencies(d, factor, table_of, M))
    # after 5000 tokens, a 3000-token call keeps the 5000-token table, far from its own
    # (and the last call, below M, reset it to the default table)
    own, kept = (dynamic_ntk_frequencies(d, factor, n, M) for n in (3000, 5000))
    assert np.max(np.abs(own / kept - 1)) > 0.1


YARN_CASES = [
    dict(d=64, base=1e4, L=2048, factor=4.0),
    dict(d=128, base=1e4, L=4096, factor=8.0),
    dict(d=128, base=5e5, L=8192, factor=4.0),
    dict(d=32, base=1e4, L=512, factor=2.0),
    dict(d=64, base=1e4, L=2048, factor=16.0, beta_fast=16.0, beta_slow=2.0),
    dict(d=16, base=1e4, L=20, factor=2.0),  # a range that collapses (low == high)
    dict(d=128, base=1e4, L=4096, factor=40.0, mscale=0.707, mscale_all_dim=1.0),
    dict(d=128, base=1e4, L=4096, factor=40.0, mscale=1.0, mscale_all_dim=1.0),
]


def yarn_config(case, truncate):
    extra = {k: case[k] for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim") if k in case}
    params = {
        "rope_type": "yarn",
        "rope_theta": case["base"],
        "factor": case["factor"],
        "original_max_position_embeddings": case["L"],
        "truncate": truncate,
        **extra,
    }
    return llama_config(case["d"], params, max_position_embeddings=int(case["L"] * case["factor"])), extra


@pytest.mark.parametrize("case", YARN_CASES)
@pytest.mark.parametrize("truncate", [True, False])
def test_yarn_frequencies_and_attention_factor(case, truncate):
    config, extra = yarn_config(case, truncate)
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["yarn"](config)
    ours, our_factor = yarn_frequencies(
        case["d"], case["factor"], case["L"], case["base"], truncate=truncate, **extra
    )
    # their ramp is float32: an absolute error of 2u in it moves a blended pair by up to
    # (s - 1) * 2u of its value, the gap between its two frequencies
    inv_freq_rel_error(inv_freq, ours, INV_RTOL + (case["factor"] - 1) * 2 * U32)
    assert our_factor == pytest.approx(attention_factor, rel=1e-15, abs=0)


def test_yarn_rotation_with_attention_scaling():
    """LlamaRotaryEmbedding multiplies cos and sin by the attention factor (scores by its square)."""
    case = YARN_CASES[0]
    config, _ = yarn_config(case, True)
    rope = modeling_llama.LlamaRotaryEmbedding(config)
    ours_inv, ours_factor = yarn_frequencies(case["d"], case["factor"], case["L"], case["base"])
    r = inv_freq_rel_error(rope.inv_freq, ours_inv)
    assert rope.attention_scaling == pytest.approx(ours_factor, rel=1e-15, abs=0) and ours_factor > 1.1

    rng = np.random.default_rng(21)
    q, k = rng.normal(size=(2, 1, 2, len(POSITIONS), case["d"]))
    cos, sin = rope(torch.from_numpy(q), torch.from_numpy(POSITIONS)[None])
    ref_q, ref_k = modeling_llama.apply_rotary_pos_emb(torch.from_numpy(q), torch.from_numpy(k), cos, sin)
    ours_q, ours_k = apply_rope(q, k, POSITIONS, layout="split_half", inv_freq=ours_inv)
    # the tables are cos * factor rounded to float32: one more rounding
    half_tol = ours_factor * (table_tolerance(angle_table(POSITIONS, ours_inv), r) + U32)
    assert_within(ours_q * ours_factor, f64(ref_q), rotation_tolerance(q, half_tol, "split_half"))
    assert_within(ours_k * ours_factor, f64(ref_k), rotation_tolerance(k, half_tol, "split_half"))


@pytest.mark.parametrize(
    ("d", "base", "factor", "a", "b", "L"),
    [
        (128, 5e5, 8.0, 1.0, 4.0, 8192),
        (128, 5e5, 32.0, 1.0, 4.0, 8192),
        (64, 1e4, 4.0, 2.0, 8.0, 2048),
        (128, 5e5, 8.0, 1.0, 4.0, 2048),
    ],
)
def test_llama3_frequencies(d, base, factor, a, b, L):
    params = {
        "rope_type": "llama3",
        "rope_theta": base,
        "factor": factor,
        "low_freq_factor": a,
        "high_freq_factor": b,
        "original_max_position_embeddings": L,
    }
    inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["llama3"](llama_config(d, params, int(L * factor)))
    ours = llama3_frequencies(
        d, factor, base, low_freq_factor=a, high_freq_factor=b, original_max_position_embeddings=L
    )
    assert attention_factor == 1.0
    # the float32 smooth factor blends omega and omega / s: as for YaRN, up to (s - 1) * 2u more
    inv_freq_rel_error(inv_freq, ours, INV_RTOL + (factor - 1) * 2 * U32)


LONGROPE_CASES = [
    dict(d=96, base=1e4, L=4096, M=131072),  # Phi-3-mini-128k's lengths: s = 32 from M / L
    dict(d=96, base=1e4, L=4096, M=131072, factor=16.0),  # an explicit factor wins
    dict(d=64, base=5e5, L=2048, M=8192, attention_factor=1.3),
]


def longrope_factors(d, seed):
    rng = np.random.default_rng(seed)
    return 1.0 + 0.1 * rng.random(d // 2), np.sort(1.0 + 40.0 * rng.random(d // 2))


@pytest.mark.parametrize("case", LONGROPE_CASES)
def test_longrope_frequencies_and_attention_factor(case):
    d, L = case["d"], case["L"]
    short, long = longrope_factors(d, seed=d)
    extra = {k: case[k] for k in ("factor", "attention_factor") if k in case}
    params = {
        "rope_type": "longrope",
        "rope_theta": case["base"],
        "short_factor": [float(v) for v in short],
        "long_factor": [float(v) for v in long],
        "original_max_position_embeddings": L,
        **extra,
    }
    config = llama_config(d, params, case["M"])
    for seq_len in (None, 1, L, L + 1, case["M"]):
        inv_freq, attention_factor = ROPE_INIT_FUNCTIONS["longrope"](config, seq_len=seq_len)
        ours, our_factor = longrope_frequencies(
            d, short, long, seq_len or 1, L, case["base"], max_position_embeddings=case["M"], **extra
        )
        # their factors are float32: one more rounding of each
        inv_freq_rel_error(inv_freq, ours, INV_RTOL + 2 * U32)
        assert our_factor == pytest.approx(attention_factor, rel=1e-15, abs=0)
        assert (seq_len or 0) <= L or np.allclose(ours, pair_frequencies(d, case["base"]) / long)


def test_longrope_in_phi3_forward_switches_to_long_factors_beyond_the_original_length():
    """Phi3RotaryEmbedding picks the long factors once max(position_ids) + 1 exceeds L, and
    multiplies cos and sin by the attention factor (from M / L: Phi-3's configs give no factor)."""
    d, L, M = 16, 64, 1024
    short, long = longrope_factors(d, seed=7)
    config = transformers.Phi3Config(
        hidden_size=4 * d,
        num_attention_heads=4,
        max_position_embeddings=M,
        original_max_position_embeddings=L,
        rope_parameters={
            "rope_type": "longrope",
            "rope_theta": 1e4,
            "short_factor": [float(v) for v in short],
            "long_factor": [float(v) for v in long],
        },
    )
    rope = modeling_phi3.Phi3RotaryEmbedding(config)
    x = torch.zeros(1, dtype=torch.float64)
    for length in (L, L + 1, 10, 3 * L):
        rope(x, torch.arange(length)[None])
        ours, our_factor = longrope_frequencies(d, short, long, length, L, max_position_embeddings=M)
        inv_freq_rel_error(rope.inv_freq, ours, INV_RTOL + 2 * U32)
        assert rope.attention_scaling == pytest.approx(our_factor, rel=1e-15, abs=0)
    assert our_factor == pytest.approx(np.sqrt(1 + np.log(M / L) / np.log(L)), rel=1e-15)


# =============================================================================================
# (d) Meta's complex form (github.com/meta-llama/llama, llama/model.py) against "interleaved"
# =============================================================================================


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def our_freqs_cis(positions, inv_freq):
    """Meta's table built from the package's float64 angles: complex128."""
    angles = torch.from_numpy(angle_table(positions, inv_freq))
    return torch.polar(torch.ones_like(angles), angles)


def to_meta(x):
    """[B, H, T, d] -> Meta's [B, T, H, d]."""
    return np.swapaxes(x, 1, 2)


@pytest.mark.parametrize("d", [2, 8, 64, 128])
@pytest.mark.parametrize("theta", [10_000.0, 500_000.0])
def test_meta_complex_form_within_float32_error(d, theta):
    rng = np.random.default_rng(d + 2)
    q, k = (float32_representable(rng, (2, 3, len(POSITIONS), d)) for _ in range(2))
    freqs_cis = precompute_freqs_cis(d, int(POSITIONS.max()) + 1, theta)[torch.from_numpy(POSITIONS)]
    assert freqs_cis.dtype == torch.complex64
    ref_q, ref_k = apply_rotary_emb(torch.from_numpy(to_meta(q)), torch.from_numpy(to_meta(k)), freqs_cis)
    inv_freq = 1.0 / (theta ** (torch.arange(0, d, 2)[: (d // 2)].float() / d))
    r = inv_freq_rel_error(inv_freq, pair_frequencies(d, theta))
    # a complex64 multiply: each part of the product is rounded in float32 as well
    half_tol = table_tolerance(angle_table(POSITIONS, pair_frequencies(d, theta)), r) + 2 * U32
    ours_q, ours_k = apply_rope(q, k, POSITIONS, base=theta, layout="interleaved")
    assert_within(to_meta(ours_q), f64(ref_q), to_meta(rotation_tolerance(q, half_tol, "interleaved")))
    assert_within(to_meta(ours_k), f64(ref_k), to_meta(rotation_tolerance(k, half_tol, "interleaved")))


@pytest.mark.parametrize("d", [2, 8, 64, 128])
@pytest.mark.parametrize("theta", [10_000.0, 500_000.0])
def test_meta_complex_form_exact_given_the_same_table(d, theta):
    """Meta's ``apply_rotary_emb`` fed a complex128 table of our angles (inputs that float32
    holds exactly, so its ``.float()`` loses nothing) is our interleaved rotation."""
    rng = np.random.default_rng(d + 3)
    q, k = (float32_representable(rng, (2, 3, len(POSITIONS), d)) for _ in range(2))
    freqs_cis = our_freqs_cis(POSITIONS, pair_frequencies(d, theta))
    ref_q, ref_k = apply_rotary_emb(torch.from_numpy(to_meta(q)), torch.from_numpy(to_meta(k)), freqs_cis)
    assert ref_q.dtype == torch.float64
    ours_q, ours_k = apply_rope(q, k, POSITIONS, base=theta, layout="interleaved")
    assert_exact(to_meta(ours_q), f64(ref_q))
    assert_exact(to_meta(ours_k), f64(ref_k))


# =============================================================================================
# (e) convert_llama_weights_to_hf.py: permute the q/k rows, then split-half == Meta's interleaved
# =============================================================================================


def permute(w, n_heads, dim1, dim2):
    # "permute for sliced rotary" in convert_llama_weights_to_hf.py (there dim1, dim2 default to dim)
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


@pytest.mark.parametrize(("n_heads", "head_dim"), [(1, 2), (4, 8), (3, 64)])
def test_conversion_permute_is_the_interleaved_to_split_half_permutation(n_heads, head_dim):
    dim = 40
    w = torch.from_numpy(np.random.default_rng(head_dim).normal(size=(n_heads * head_dim, dim)))
    perm = interleaved_to_split_half_permutation(head_dim)
    expected = f64(w).reshape(n_heads, head_dim, dim)[:, perm].reshape(n_heads * head_dim, dim)
    np.testing.assert_array_equal(f64(permute(w, n_heads, n_heads * head_dim, dim)), expected)


@pytest.mark.parametrize(("n_heads", "n_kv_heads", "head_dim"), [(4, 4, 16), (4, 2, 8), (2, 1, 64)])
def test_converted_weights_with_split_half_equal_meta_interleaved(n_heads, n_kv_heads, head_dim):
    """Meta: x @ wq.T, interleaved. transformers: x @ permute(wq).T, split-half. Same scores."""
    dim, T = n_heads * head_dim, len(POSITIONS)
    kv_dim = n_kv_heads * head_dim
    # small integers: the projections are exact in any summation order and in float32, so
    # Meta's ``.float()`` loses nothing and both sides rotate the same numbers
    rng = np.random.default_rng(n_heads * head_dim + n_kv_heads)
    x = torch.from_numpy(rng.integers(-8, 9, size=(1, T, dim)).astype(np.float64))
    wq = torch.from_numpy(rng.integers(-8, 9, size=(dim, dim)).astype(np.float64))
    wk = torch.from_numpy(rng.integers(-8, 9, size=(kv_dim, dim)).astype(np.float64))

    # Meta's model: heads after the sequence axis, interleaved pairs
    xq = (x @ wq.T).view(1, T, n_heads, head_dim)
    xk = (x @ wk.T).view(1, T, n_kv_heads, head_dim)
    meta_q, _ = apply_rotary_emb(xq, xq, our_freqs_cis(POSITIONS, pair_frequencies(head_dim)))
    meta_k, _ = apply_rotary_emb(xk, xk, our_freqs_cis(POSITIONS, pair_frequencies(head_dim)))
    # transformers: converted weights, [B, H, T, d], split-half pairs
    hq = (x @ permute(wq, n_heads, dim, dim).T).view(1, T, n_heads, head_dim).transpose(1, 2)
    hk = (x @ permute(wk, n_kv_heads, kv_dim, dim).T).view(1, T, n_kv_heads, head_dim).transpose(1, 2)
    cos, sin, _ = our_tables(POSITIONS, pair_frequencies(head_dim))
    hf_q, hf_k = modeling_llama.apply_rotary_pos_emb(
        hq, hk, torch.from_numpy(cos)[None], torch.from_numpy(sin)[None]
    )

    perm = interleaved_to_split_half_permutation(head_dim)
    meta_q, meta_k = to_meta(f64(meta_q)), to_meta(f64(meta_k))  # -> [B, H, T, d]
    hf_q, hf_k = f64(hf_q), f64(hf_k)
    assert_exact(hf_q, meta_q[..., perm])
    assert_exact(hf_k, meta_k[..., perm])
    # the package reproduces both sides from the unrotated projections
    assert_exact(apply_rope(f64(hq), f64(hq), POSITIONS, layout="split_half")[0], hf_q)
    assert_exact(apply_rope(to_meta(f64(xq)), to_meta(f64(xq)), POSITIONS)[0], meta_q)
    # attention scores (grouped-query: each key head serves n_heads // n_kv_heads query heads)
    group = n_heads // n_kv_heads
    scores_hf = hf_q @ np.swapaxes(np.repeat(hf_k, group, axis=1), -1, -2)
    scores_meta = meta_q @ np.swapaxes(np.repeat(meta_k, group, axis=1), -1, -2)
    assert_exact(scores_hf, scores_meta, atol=1e-14 * np.max(np.abs(scores_meta)))  # scores ~ 1e6

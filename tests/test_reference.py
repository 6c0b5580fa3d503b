"""The package against deployed RoPE implementations, as shared REFERENCE_FORMULAS.md describes them.

Each reference below is a short numpy transcription written in the style of the code it
stands for -- Hugging Face transformers' Llama / GPT-NeoX / GPT-J rotary code and
``modeling_rope_utils.py``, and Meta's LLaMA reference model -- with torch calls replaced by
their numpy equivalents and everything in float64. (transformers computes its tables in
float32; in float64 the two agree to rounding, so the comparisons below use 1e-12.)
torch and transformers are not dependencies; when torch happens to be importable, one more
test repeats the Llama comparison with a torch transcription.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from lessons.frequencies import pair_frequencies
from lessons.kv_cache import RotaryKVCache, continuation_positions, positions_from_attention_mask
from lessons.rope import apply_rope, rope_rotate
from lessons.scaling import (
    dynamic_ntk_base,
    dynamic_ntk_frequencies,
    linear_frequencies,
    llama3_frequencies,
    longrope_frequencies,
    yarn_attention_factor,
    yarn_correction_range,
    yarn_frequencies,
)

ATOL = 1e-12


def assert_close(actual, expected, atol=ATOL):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=atol)


def assert_rel_close(actual, expected, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=0)


# =============================================================================================
# (a) transformers, Llama: split-half, q * cos + rotate_half(q) * sin
# =============================================================================================


def hf_default_rope_parameters(dim, base):
    """``_compute_default_rope_parameters``: (inv_freq, attention_factor)."""
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float64) / dim))
    return inv_freq, 1.0


class HFLlamaRotaryEmbedding:
    """``LlamaRotaryEmbedding.forward``: cos and sin tables [B, T, dim] for position_ids [B, T]."""

    def __init__(self, inv_freq, attention_scaling=1.0):
        self.inv_freq = inv_freq
        self.attention_scaling = attention_scaling

    def __call__(self, x, position_ids):
        inv_freq_expanded = np.broadcast_to(
            self.inv_freq[None, :, None], (position_ids.shape[0], self.inv_freq.shape[0], 1)
        )
        position_ids_expanded = position_ids[:, None, :].astype(np.float64)
        freqs = np.swapaxes(inv_freq_expanded @ position_ids_expanded, 1, 2)
        emb = np.concatenate((freqs, freqs), axis=-1)
        cos = np.cos(emb) * self.attention_scaling
        sin = np.sin(emb) * self.attention_scaling
        return cos.astype(x.dtype), sin.astype(x.dtype)


def hf_rotate_half(x):
    """Rotates half the hidden dims of the input."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return np.concatenate((-x2, x1), axis=-1)


def hf_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = np.expand_dims(cos, unsqueeze_dim)
    sin = np.expand_dims(sin, unsqueeze_dim)
    q_embed = (q * cos) + (hf_rotate_half(q) * sin)
    k_embed = (k * cos) + (hf_rotate_half(k) * sin)
    return q_embed, k_embed


def hf_llama_rope(q, k, position_ids, base=10000.0, inv_freq=None, attention_scaling=1.0):
    """q, k [B, H, T, d] (transformers' layout after the head split), position_ids [B, T]."""
    if inv_freq is None:
        inv_freq, attention_scaling = hf_default_rope_parameters(q.shape[-1], base)
    cos, sin = HFLlamaRotaryEmbedding(inv_freq, attention_scaling)(q, position_ids)
    return hf_apply_rotary_pos_emb(q, k, cos, sin)


def random_qk(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape), rng.normal(size=shape)


@pytest.mark.parametrize("d", [2, 8, 64, 128])
@pytest.mark.parametrize("base", [10_000.0, 500_000.0])
def test_llama_split_half_matches_transformers(d, base):
    q, k = random_qk((2, 3, 17, d), seed=d)
    position_ids = np.arange(17)[None, :].repeat(2, axis=0)
    ref_q, ref_k = hf_llama_rope(q, k, position_ids, base=base)
    ours_q, ours_k = apply_rope(q, k, base=base, layout="split_half")
    assert_close(ours_q, ref_q)
    assert_close(ours_k, ref_k)


def test_llama_split_half_matches_transformers_at_scattered_positions():
    q, k = random_qk((1, 4, 9, 64), seed=11)
    positions = np.array([0, 5, 6, 100, 511, 1024, 1500, 2047, 3])
    ref_q, ref_k = hf_llama_rope(q, k, positions[None, :])
    ours_q, ours_k = apply_rope(q, k, positions, layout="split_half")
    assert_close(ours_q, ref_q)
    assert_close(ours_k, ref_k)


@pytest.mark.parametrize("layout", ["split_half", "interleaved"])
def test_left_padded_batch_positions_equal_one_call_per_row(layout):
    """A left-padded batch: position_ids [B, T] from the mask, as generate() builds them."""
    mask = np.array([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 1, 1]])
    position_ids = hf_generate_position_ids(mask)  # [B, T], padded slots hold 1
    q, k = random_qk((3, 2, 6, 16), seed=5)
    ours_q, ours_k = apply_rope(q, k, positions_from_attention_mask(mask), layout=layout)
    for b in range(3):
        row_q, row_k = apply_rope(q[b], k[b], position_ids[b], layout=layout)
        assert_close(ours_q[b], row_q)
        assert_close(ours_k[b], row_k)
    if layout == "split_half":  # and transformers' Llama code, fed the same [B, T] position_ids
        ref_q, ref_k = hf_llama_rope(q, k, position_ids)
        assert_close(ours_q, ref_q)
        assert_close(ours_k, ref_k)
    # each row's real tokens start at position 0: row 0's first real token (slot 2) is
    # rotated like row 1's first token (slot 0)
    assert_close(ours_q[0, :, 2], apply_rope(q[0, :, 2:3], k[0, :, 2:3], [0], layout=layout)[0][:, 0])


def test_the_default_frequencies_are_transformers_inv_freq():
    for d in (2, 4, 32, 64, 128, 256):
        for base in (10_000.0, 500_000.0, 1_000_000.0):
            assert_rel_close(pair_frequencies(d, base), hf_default_rope_parameters(d, base)[0], rtol=1e-14)


def test_float32_input_agrees_with_transformers_given_its_tables():
    """Only the multiply-add runs in the input dtype; with the same cos/sin it is exact."""
    q, k = (a.astype(np.float32) for a in random_qk((1, 2, 8, 16), seed=5))
    ours_q, _ = apply_rope(q, k, layout="split_half")
    cos, sin = HFLlamaRotaryEmbedding(pair_frequencies(16))(q, np.arange(8)[None, :])
    ref_q, _ = hf_apply_rotary_pos_emb(q, k, cos, sin)
    assert ours_q.dtype == ref_q.dtype == np.float32
    assert_close(ours_q, ref_q, atol=4 * np.finfo(np.float32).eps * np.abs(q).max())


def test_llama_against_a_torch_transcription():
    torch = pytest.importorskip("torch")
    d, T = 64, 12
    q, k = random_qk((1, 2, T, d), seed=3)
    tq, tk = torch.from_numpy(q), torch.from_numpy(k)
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=torch.int64).to(torch.float64) / d))
    position_ids = torch.arange(T)[None, :]
    inv_freq_expanded = inv_freq[None, :, None].expand(position_ids.shape[0], -1, 1)
    position_ids_expanded = position_ids[:, None, :].to(torch.float64)
    freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos()[:, None], emb.sin()[:, None]

    def rotate_half(x):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
        return torch.cat((-x2, x1), dim=-1)

    ref_q = (tq * cos) + (rotate_half(tq) * sin)
    ref_k = (tk * cos) + (rotate_half(tk) * sin)
    ours_q, ours_k = apply_rope(q, k, layout="split_half")
    assert_close(ours_q, ref_q.numpy())
    assert_close(ours_k, ref_k.numpy())


# =============================================================================================
# (b) Meta LLaMA: interleaved pairs as complex numbers, times exp(1j * p * inv_freq)
# =============================================================================================


def meta_polar(abs_, angle):
    """``torch.polar(abs, angle)``: abs * (cos(angle) + 1j * sin(angle))."""
    return abs_ * np.cos(angle) + 1j * abs_ * np.sin(angle)


def meta_precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (np.arange(0, dim, 2)[: (dim // 2)].astype(np.float64) / dim))
    t = np.arange(end, dtype=np.float64)
    freqs = np.outer(t, freqs)
    return meta_polar(np.ones_like(freqs), freqs)  # complex128


def meta_reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.reshape(shape)


def meta_view_as_complex(x):
    return x[..., 0] + 1j * x[..., 1]


def meta_view_as_real(z):
    return np.stack([z.real, z.imag], axis=-1)


def meta_apply_rotary_emb(xq, xk, freqs_cis):
    """xq, xk [bsz, seqlen, n_heads, head_dim] (Meta's layout: T before the heads)."""
    xq_ = meta_view_as_complex(xq.reshape(*xq.shape[:-1], -1, 2))
    xk_ = meta_view_as_complex(xk.reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = meta_reshape_for_broadcast(freqs_cis, xq_)
    xq_out = meta_view_as_real(xq_ * freqs_cis).reshape(*xq.shape)
    xk_out = meta_view_as_real(xk_ * freqs_cis).reshape(*xk.shape)
    return xq_out, xk_out


def to_meta(x):
    """[B, H, T, d] -> [B, T, H, d]."""
    return np.swapaxes(x, 1, 2)


@pytest.mark.parametrize("d", [2, 8, 64, 128])
@pytest.mark.parametrize("theta", [10_000.0, 500_000.0])
def test_meta_complex_form_matches_interleaved(d, theta):
    q, k = random_qk((2, 3, 17, d), seed=d + 1)
    freqs_cis = meta_precompute_freqs_cis(d, 4096, theta)
    ref_q, ref_k = meta_apply_rotary_emb(to_meta(q), to_meta(k), freqs_cis[0:17])
    ours_q, ours_k = apply_rope(q, k, base=theta, layout="interleaved")
    assert_close(to_meta(ours_q), ref_q)
    assert_close(to_meta(ours_k), ref_k)


def test_meta_and_transformers_differ_by_the_head_permutation_only():
    """Converting Meta checkpoints to transformers permutes q/k rows: x_split[t*d/2+i] = x_inter[2i+t]."""
    d, T = 16, 7
    q, k = random_qk((1, 2, T, d), seed=8)
    perm = np.array([2 * i + t for t in (0, 1) for i in range(d // 2)])
    meta_q, meta_k = meta_apply_rotary_emb(to_meta(q), to_meta(k), meta_precompute_freqs_cis(d, T))
    hf_q, hf_k = hf_llama_rope(q[..., perm], k[..., perm], np.arange(T)[None, :])
    assert_close(to_meta(hf_q), meta_q[..., perm])
    assert_close(to_meta(hf_k), meta_k[..., perm])
    scores_meta = to_meta(meta_q) @ np.swapaxes(to_meta(meta_k), -1, -2)
    assert_close(hf_q @ np.swapaxes(hf_k, -1, -2), scores_meta)


# =============================================================================================
# (c) partial rotary: GPT-NeoX rotary_pct (split-half), GPT-J rotary_dim (interleaved)
# =============================================================================================


def gpt_neox_attention_rope(query, key, position_ids, rotary_pct, base=10000.0):
    """GPT-NeoX: rotate the first int(head_size * rotary_pct) dims, Llama-style; pass the rest."""
    head_size = query.shape[-1]
    rotary_ndims = int(head_size * rotary_pct)
    query_rot, query_pass = query[..., :rotary_ndims], query[..., rotary_ndims:]
    key_rot, key_pass = key[..., :rotary_ndims], key[..., rotary_ndims:]
    inv_freq, scaling = hf_default_rope_parameters(rotary_ndims, base)
    cos, sin = HFLlamaRotaryEmbedding(inv_freq, scaling)(query, position_ids)
    query_rot, key_rot = hf_apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
    query = np.concatenate((query_rot, query_pass), axis=-1)
    key = np.concatenate((key_rot, key_pass), axis=-1)
    return query, key


def gptj_create_sinusoidal_positions(num_pos, dim):
    inv_freq = 1.0 / (10000 ** (np.arange(0, dim, 2, dtype=np.int64) / dim))
    sinusoid_inp = np.einsum("i , j -> i j", np.arange(num_pos, dtype=np.int64).astype(np.float64), inv_freq)
    return np.concatenate((np.sin(sinusoid_inp), np.cos(sinusoid_inp)), axis=1)


def gptj_rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = np.stack((-x2, x1), axis=-1)
    return x.reshape(*x.shape[:-2], -1)  # flatten(-2)


def gptj_apply_rotary_pos_emb(tensor, sin, cos):
    sin = np.repeat(sin[:, :, None, :], 2, axis=3)
    cos = np.repeat(cos[:, :, None, :], 2, axis=3)
    return (tensor * cos) + (gptj_rotate_every_two(tensor) * sin)


def gptj_attention_rope(query, key, position_ids, rotary_dim, max_positions=2048):
    """GPT-J: query, key [B, T, H, head_dim] (before the permute to heads first)."""
    embed_positions = gptj_create_sinusoidal_positions(max_positions, rotary_dim)
    sincos = embed_positions[position_ids]
    sin, cos = np.split(sincos, 2, axis=-1)
    k_rot, k_pass = key[:, :, :, :rotary_dim], key[:, :, :, rotary_dim:]
    q_rot, q_pass = query[:, :, :, :rotary_dim], query[:, :, :, rotary_dim:]
    k_rot = gptj_apply_rotary_pos_emb(k_rot, sin, cos)
    q_rot = gptj_apply_rotary_pos_emb(q_rot, sin, cos)
    key = np.concatenate([k_rot, k_pass], axis=-1)
    query = np.concatenate([q_rot, q_pass], axis=-1)
    return query, key


@pytest.mark.parametrize(("head_size", "rotary_pct"), [(64, 0.25), (80, 0.25), (128, 0.5), (32, 1.0)])
def test_gpt_neox_partial_rotary(head_size, rotary_pct):
    q, k = random_qk((2, 3, 11, head_size), seed=head_size)
    positions = np.array([0, 1, 2, 3, 10, 50, 51, 52, 700, 701, 2000])
    ref_q, ref_k = gpt_neox_attention_rope(q, k, positions[None, :].repeat(2, 0), rotary_pct)
    rotary_dim = int(head_size * rotary_pct)
    ours_q, ours_k = apply_rope(q, k, positions, layout="split_half", rotary_dim=rotary_dim)
    assert_close(ours_q, ref_q)
    assert_close(ours_k, ref_k)
    if rotary_dim < head_size:
        assert np.max(np.abs(ours_q[..., rotary_dim:] - q[..., rotary_dim:])) == 0.0


@pytest.mark.parametrize(("head_dim", "rotary_dim"), [(256, 64), (64, 64), (32, 8)])
def test_gptj_partial_rotary(head_dim, rotary_dim):
    q, k = random_qk((2, 3, 9, head_dim), seed=rotary_dim)  # [B, H, T, d]
    position_ids = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8], [5, 6, 7, 8, 9, 10, 11, 12, 13]])
    ref_q, ref_k = gptj_attention_rope(to_meta(q), to_meta(k), position_ids, rotary_dim)
    for b in range(2):  # our positions are shared by the batch: one call per row
        ours_q, ours_k = apply_rope(q[b], k[b], position_ids[b], layout="interleaved", rotary_dim=rotary_dim)
        assert_close(np.swapaxes(ours_q, 0, 1), ref_q[b])
        assert_close(np.swapaxes(ours_k, 0, 1), ref_k[b])


# =============================================================================================
# (d) scalings, transcribed from modeling_rope_utils.py
# =============================================================================================


def hf_linear_scaling_parameters(dim, base, factor):
    inv_freq, attention_factor = hf_default_rope_parameters(dim, base)
    inv_freq /= factor
    return inv_freq, attention_factor


def hf_dynamic_ntk_parameters(dim, base, factor, max_position_embeddings, seq_len=None):
    attention_factor = 1.0
    seq_len = max_position_embeddings if seq_len is None else max(seq_len, max_position_embeddings)
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (np.arange(0, dim, 2, dtype=np.int64).astype(np.float64) / dim))
    return inv_freq, attention_factor


class HFDynamicRotaryEmbedding:
    """``dynamic_rope_update``: grow the table past the cached length, reset below the original."""

    def __init__(self, dim, base, factor, max_position_embeddings):
        self.args = (dim, base, factor, max_position_embeddings)
        self.inv_freq, _ = hf_default_rope_parameters(dim, base)
        self.original_inv_freq = self.inv_freq
        self.max_seq_len_cached = max_position_embeddings
        self.original_max_seq_len = max_position_embeddings

    def update(self, position_ids):
        seq_len = int(np.max(position_ids)) + 1
        if seq_len > self.max_seq_len_cached:  # growth
            self.inv_freq, _ = hf_dynamic_ntk_parameters(*self.args, seq_len=seq_len)
            self.max_seq_len_cached = seq_len
        if seq_len < self.original_max_seq_len and self.max_seq_len_cached > self.original_max_seq_len:
            self.inv_freq = self.original_inv_freq  # reset
            self.max_seq_len_cached = self.original_max_seq_len
        return self.inv_freq


def hf_yarn_get_mscale(scale, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def hf_yarn_parameters(
    dim, base, factor, original_max_position_embeddings,
    beta_fast=32, beta_slow=1, mscale=None, mscale_all_dim=None, truncate=True,
):  # fmt: skip
    if mscale and mscale_all_dim:
        attention_factor = float(
            hf_yarn_get_mscale(factor, mscale) / hf_yarn_get_mscale(factor, mscale_all_dim)
        )
    else:
        attention_factor = hf_yarn_get_mscale(factor)

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (
            2 * math.log(base)
        )

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings, truncate):
        low = find_correction_dim(low_rot, dim, base, max_position_embeddings)
        high = find_correction_dim(high_rot, dim, base, max_position_embeddings)
        if truncate:
            low = math.floor(low)
            high = math.ceil(high)
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):  # noqa: A002 (the reference's names)
        if min == max:
            max += 0.001
        linear_func = (np.arange(dim, dtype=np.float64) - min) / (max - min)
        return np.clip(linear_func, 0, 1)

    pos_freqs = base ** (np.arange(0, dim, 2).astype(np.float64) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(
        beta_fast, beta_slow, dim, base, original_max_position_embeddings, truncate
    )
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2)
    inv_freq = (
        inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
        + inv_freq_extrapolation * inv_freq_extrapolation_factor
    )
    return inv_freq, attention_factor, (low, high)


def hf_llama3_parameters(
    dim, base, factor, low_freq_factor=1, high_freq_factor=4, original_max_position_embeddings=8192
):
    inv_freq, attention_factor = hf_default_rope_parameters(dim, base)
    old_context_len = original_max_position_embeddings
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    wavelen = 2 * math.pi / inv_freq
    inv_freq_llama = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed_inv_freq = (1 - smooth_factor) * inv_freq_llama / factor + smooth_factor * inv_freq_llama
    is_medium_freq = ~(wavelen < high_freq_wavelen) * ~(wavelen > low_freq_wavelen)
    inv_freq_llama = np.where(is_medium_freq, smoothed_inv_freq, inv_freq_llama)
    return inv_freq_llama, attention_factor


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 8.5])
@pytest.mark.parametrize("d", [4, 64, 128])
def test_linear_scaling(d, factor):
    assert_rel_close(
        linear_frequencies(d, factor), hf_linear_scaling_parameters(d, 10_000.0, factor)[0], 1e-14
    )


def test_linear_scaling_is_positions_divided_by_the_factor():
    q, k = random_qk((1, 2, 10, 32), seed=9)
    positions = np.arange(10) * 7
    by_freq = apply_rope(q, k, positions, inv_freq=linear_frequencies(32, 4.0))
    by_position = apply_rope(q, k, positions / 4.0)
    for a, b in zip(by_freq, by_position, strict=True):
        assert_close(a, b)


@pytest.mark.parametrize(("d", "factor", "M"), [(64, 2.0, 2048), (128, 4.0, 4096), (16, 1.5, 100)])
def test_dynamic_ntk_within_and_beyond_the_trained_length(d, factor, M):
    default = pair_frequencies(d)
    for seq_len in (1, M // 2, M):  # within M: the default frequencies
        assert dynamic_ntk_base(d, factor, seq_len, M) == 10_000.0
        assert_rel_close(dynamic_ntk_frequencies(d, factor, seq_len, M), default, 1e-15)
        assert_rel_close(
            HFDynamicRotaryEmbedding(d, 10_000.0, factor, M).update(np.arange(seq_len)), default, 1e-14
        )
    for seq_len in (M + 1, 2 * M, 10 * M + 3):  # beyond: a grown base
        ref = HFDynamicRotaryEmbedding(d, 10_000.0, factor, M).update(np.arange(seq_len))
        grown = 10_000.0 * ((factor * seq_len / M) - (factor - 1)) ** (d / (d - 2))
        assert math.isclose(dynamic_ntk_base(d, factor, seq_len, M), grown, rel_tol=1e-14)
        assert_rel_close(dynamic_ntk_frequencies(d, factor, seq_len, M), ref, 1e-12)
        assert dynamic_ntk_frequencies(d, factor, seq_len, M)[-1] < default[-1]


def test_dynamic_ntk_in_transformers_depends_on_call_history():
    """REFERENCE_FORMULAS.md: the grown table is kept until the length drops below M again.

    The package's function is stateless; it equals transformers' table for a fresh model.
    """
    d, factor, M = 64, 2.0, 2048
    rope = HFDynamicRotaryEmbedding(d, 10_000.0, factor, M)
    rope.update(np.arange(8000))
    after_long = rope.update(np.arange(3000))  # still the 8000-token table
    assert_rel_close(after_long, dynamic_ntk_frequencies(d, factor, 8000, M), 1e-12)
    assert np.max(np.abs(after_long - dynamic_ntk_frequencies(d, factor, 3000, M))) > 1e-6
    assert_rel_close(rope.update(np.arange(100)), pair_frequencies(d), 1e-14)  # reset below M


YARN_CASES = [
    dict(d=64, base=1e4, L=2048, factor=4.0),
    dict(d=128, base=1e4, L=4096, factor=8.0),
    dict(d=128, base=5e5, L=8192, factor=4.0),
    dict(d=32, base=1e4, L=512, factor=2.0),
    dict(d=64, base=1e4, L=2048, factor=16.0, beta_fast=16.0, beta_slow=2.0),
    dict(d=16, base=1e4, L=20, factor=2.0),  # a range that collapses (low == high)
]


@pytest.mark.parametrize("case", YARN_CASES)
@pytest.mark.parametrize("truncate", [True, False])
def test_yarn_frequencies_and_attention_factor(case, truncate):
    betas = {k: case[k] for k in ("beta_fast", "beta_slow") if k in case}
    ref_inv, ref_factor, ref_range = hf_yarn_parameters(
        case["d"], case["base"], case["factor"], case["L"], truncate=truncate, **betas
    )
    inv, attention_factor = yarn_frequencies(
        case["d"], case["factor"], case["L"], case["base"], truncate=truncate, **betas
    )
    assert_rel_close(inv, ref_inv, 1e-12)
    assert math.isclose(attention_factor, ref_factor, rel_tol=1e-15)
    assert yarn_correction_range(
        case["d"], case["base"], case["L"], truncate=truncate, **betas
    ) == pytest.approx(ref_range, abs=1e-12)


def test_yarn_worked_example_low_8_high_21():
    assert yarn_correction_range(64, 1e4, 2048) == (8, 21)
    inv, _ = yarn_frequencies(64, 4.0, 2048)
    default = pair_frequencies(64)
    assert_rel_close(inv[:9], default[:9], 1e-15)  # i <= low: ramp 0, kept
    assert_rel_close(inv[21:], default[21:] / 4.0, 1e-15)  # i >= high: divided by s
    blended = inv[9:21] / default[9:21]
    assert np.all((blended < 1) & (blended > 0.25)) and np.all(np.diff(blended) < 0)


@pytest.mark.parametrize(
    ("factor", "mscale", "mscale_all_dim"),
    [
        (4.0, None, None),
        (1.0, None, None),
        (0.5, None, None),
        (40.0, 1.0, 1.0),
        (40.0, 0.707, 1.0),
        (16.0, 1.0, 0.0),
    ],
)
def test_yarn_attention_factor(factor, mscale, mscale_all_dim):
    if mscale and mscale_all_dim:
        expected = hf_yarn_get_mscale(factor, mscale) / hf_yarn_get_mscale(factor, mscale_all_dim)
    else:
        expected = hf_yarn_get_mscale(factor)
    assert math.isclose(yarn_attention_factor(factor, mscale, mscale_all_dim), expected, rel_tol=1e-15)


def test_yarn_attention_factor_values():
    assert yarn_attention_factor(4.0) == pytest.approx(0.1 * math.log(4.0) + 1, rel=1e-15)
    assert yarn_attention_factor(1.0) == 1.0
    assert yarn_attention_factor(40.0, 0.707, 1.0) == pytest.approx(
        (0.1 * 0.707 * math.log(40) + 1) / (0.1 * math.log(40) + 1), rel=1e-15
    )


def test_yarn_rotation_with_attention_scaling_matches_transformers():
    """transformers multiplies cos and sin by the attention factor: scores scale by its square."""
    q, k = random_qk((1, 2, 12, 64), seed=21)
    positions = np.arange(12) * 180  # within the original 2048
    inv_freq, attention_factor, _ = hf_yarn_parameters(64, 1e4, 4.0, 2048)
    ref_q, ref_k = hf_llama_rope(
        q, k, positions[None, :], inv_freq=inv_freq, attention_scaling=attention_factor
    )
    ours_inv, ours_factor = yarn_frequencies(64, 4.0, 2048)
    ours_q, ours_k = apply_rope(q, k, positions, layout="split_half", inv_freq=ours_inv)
    assert_close(ours_q * ours_factor, ref_q)
    assert_close(ours_k * ours_factor, ref_k)


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
    ref, attention_factor = hf_llama3_parameters(d, base, factor, a, b, L)
    ours = llama3_frequencies(
        d, factor, base, low_freq_factor=a, high_freq_factor=b, original_max_position_embeddings=L
    )
    assert attention_factor == 1.0
    assert_rel_close(ours, ref, 1e-12)


def test_llama3_worked_example_pairs_0_28_kept_29_34_blended_35_63_divided():
    inv = llama3_frequencies(128, 8.0, 500_000.0)
    default = pair_frequencies(128, 500_000.0)
    ratio = inv / default
    assert_rel_close(ratio[:29], np.ones(29), 1e-14)
    assert np.all((ratio[29:35] < 1 - 1e-6) & (ratio[29:35] > 1 / 8 + 1e-6))
    assert_rel_close(ratio[35:], np.full(29, 1 / 8), 1e-14)


def hf_longrope_parameters(rope_parameters, max_position_embeddings, dim, seq_len=None):
    """``_compute_longrope_parameters`` (transformers 5.x) with the config read from a dict."""
    base = rope_parameters["rope_theta"]
    long_factor = rope_parameters["long_factor"]
    short_factor = rope_parameters["short_factor"]
    factor = rope_parameters.get("factor")
    attention_factor = rope_parameters.get("attention_factor")
    original_max_position_embeddings = rope_parameters["original_max_position_embeddings"]
    if factor is None:
        factor = max_position_embeddings / original_max_position_embeddings
    if attention_factor is None:
        if factor <= 1.0:
            attention_factor = 1.0
        else:
            attention_factor = math.sqrt(1 + math.log(factor) / math.log(original_max_position_embeddings))
    if seq_len and seq_len > original_max_position_embeddings:
        ext_factors = np.array(long_factor, dtype=np.float64)
    else:
        ext_factors = np.array(short_factor, dtype=np.float64)
    inv_freq_shape = np.arange(0, dim, 2, dtype=np.int64).astype(np.float64) / dim
    inv_freq = 1.0 / (ext_factors * base**inv_freq_shape)
    return inv_freq, attention_factor


def longrope_case(d, seed):
    """Short factors near 1, long ones growing with the pair (Phi-3's factors look like this)."""
    rng = np.random.default_rng(seed)
    short = 1.0 + 0.1 * rng.random(d // 2)
    long = np.sort(1.0 + 40.0 * rng.random(d // 2))
    return short, long


@pytest.mark.parametrize(
    ("d", "base", "L", "M", "factor", "attention_factor"),
    [
        (96, 1e4, 4096, 131072, None, None),  # Phi-3-mini-128k: s = 131072 / 4096 = 32
        (96, 1e4, 4096, 131072, 16.0, None),  # an explicit factor wins over M / L
        (64, 5e5, 2048, 8192, None, 1.3),  # an explicit attention factor
        (8, 1e4, 100, 100, None, None),  # s = 1: attention factor 1
    ],
)
@pytest.mark.parametrize("seq_len", ["short", "at L", "long"])
def test_longrope_frequencies_and_attention_factor(d, base, L, M, factor, attention_factor, seq_len):
    short, long = longrope_case(d, seed=d)
    n = {"short": L // 3, "at L": L, "long": L + 1}[seq_len]
    params = {
        "rope_theta": base,
        "short_factor": list(short),
        "long_factor": list(long),
        "original_max_position_embeddings": L,
    }
    if factor is not None:
        params["factor"] = factor
    if attention_factor is not None:
        params["attention_factor"] = attention_factor
    ref_inv, ref_factor = hf_longrope_parameters(params, M, d, seq_len=n)
    inv, af = longrope_frequencies(
        d, short, long, n, L, base,
        max_position_embeddings=M, factor=factor, attention_factor=attention_factor,
    )
    assert_rel_close(inv, ref_inv, 1e-14)
    assert af == pytest.approx(ref_factor, rel=1e-15, abs=0)
    per_pair = long if seq_len == "long" else short  # long factors only beyond L
    assert_rel_close(inv, pair_frequencies(d, base) / per_pair, 1e-15)


def test_longrope_phi3_attention_factor_value():
    # s = 32, L = 4096: sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12)
    short, long = longrope_case(96, seed=1)
    _, af = longrope_frequencies(96, short, long, 10, 4096, max_position_embeddings=131072)
    assert af == pytest.approx(math.sqrt(17 / 12), rel=1e-15)
    _, af16 = longrope_frequencies(96, short, long, 10, 4096, max_position_embeddings=131072, factor=16.0)
    assert af16 == pytest.approx(math.sqrt(1 + 4 / 12), rel=1e-15)


# =============================================================================================
# (e) positions with a KV cache
# =============================================================================================


def hf_cache_position(past_seen_tokens, new_tokens):
    """``cache_position = torch.arange(past_seen_tokens, past_seen_tokens + inputs_embeds.shape[1])``."""
    return np.arange(past_seen_tokens, past_seen_tokens + new_tokens)


@pytest.mark.parametrize(("cache_len", "new"), [(0, 1), (0, 7), (2, 1), (5, 3), (4095, 1)])
def test_continuation_positions_are_arange_plus_cache_length(cache_len, new):
    np.testing.assert_array_equal(continuation_positions(cache_len, new), np.arange(new) + cache_len)
    np.testing.assert_array_equal(continuation_positions(cache_len, new), hf_cache_position(cache_len, new))


def hf_generate_position_ids(attention_mask):
    """transformers' generate(): ``position_ids = attention_mask.long().cumsum(-1) - 1`` then
    ``position_ids.masked_fill_(attention_mask == 0, 1)``, transcribed to numpy."""
    attention_mask = np.asarray(attention_mask)
    position_ids = attention_mask.astype(np.int64).cumsum(-1) - 1
    return np.where(attention_mask == 0, 1, position_ids)


def test_left_padding_positions():
    # the padded slots hold 1, as in generate() (they are masked out of attention)
    np.testing.assert_array_equal(positions_from_attention_mask([0, 0, 1, 1, 1]), [1, 1, 0, 1, 2])
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 1, 1], [0, 0, 0, 0, 1]])
    positions = positions_from_attention_mask(mask)
    assert positions.shape == (4, 5) and positions.dtype == np.int64
    np.testing.assert_array_equal(
        positions, [[1, 1, 0, 1, 2], [0, 1, 2, 3, 4], [1, 0, 1, 2, 3], [1, 1, 1, 1, 0]]
    )
    np.testing.assert_array_equal(positions, hf_generate_position_ids(mask))
    rng = np.random.default_rng(8)
    lengths = rng.integers(1, 17, size=6)
    random_mask = (np.arange(16)[None, :] >= 16 - lengths[:, None]).astype(int)  # left padded
    np.testing.assert_array_equal(
        positions_from_attention_mask(random_mask), hf_generate_position_ids(random_mask)
    )
    # a boolean mask works the same way
    np.testing.assert_array_equal(positions_from_attention_mask(mask.astype(bool)), positions)


def test_continuation_positions_per_row_follow_generate():
    """The next step of generate(): the mask grows by a 1 and the new token's position_ids
    are the last column of cumsum - 1; that is each row's count of real tokens so far."""
    mask = np.array([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1], [0, 1, 1, 1, 1]])
    for _ in range(3):
        expected = continuation_positions(mask.sum(-1), 1)  # [B, 1]
        mask = np.concatenate([mask, np.ones((3, 1), dtype=int)], axis=1)
        np.testing.assert_array_equal(expected, hf_generate_position_ids(mask)[:, -1:])
    np.testing.assert_array_equal(continuation_positions(np.array([3, 5, 0]), 2), [[3, 4], [5, 6], [0, 1]])


def test_cache_step_by_step_equals_one_pass_and_meta_slices():
    """Keys rotated as they enter the cache equal the whole sequence rotated at once, and
    Meta's start_pos slice of the table."""
    d, T = 8, 6
    rng = np.random.default_rng(13)
    keys, values, query = rng.normal(size=(T, d)), rng.normal(size=(T, 2)), rng.normal(size=d)
    cache = RotaryKVCache(d)
    cache.append(keys[:3], values[:3])  # a prompt of 3, then one token at a time
    for t in range(3, T):
        cache.append(keys[t : t + 1], values[t : t + 1])
    assert_close(cache.keys, rope_rotate(keys, np.arange(T)))
    freqs_cis = meta_precompute_freqs_cis(d, 64)
    start_pos = T  # the next token
    meta_q, _ = meta_apply_rotary_emb(
        query[None, None, None], query[None, None, None], freqs_cis[start_pos : start_pos + 1]
    )
    meta_k, _ = meta_apply_rotary_emb(keys[None, :, None], keys[None, :, None], freqs_cis[0:T])
    expected = meta_k[0, :, 0] @ meta_q[0, 0, 0] / np.sqrt(d)
    assert_close(cache.scores(query), expected)
    assert cache.next_position() == T


def test_cache_position_reset_is_a_different_score():
    cache = RotaryKVCache(2)
    cache.append(np.array([[1.0, 0.0], [1.0, 0.0]]), np.zeros((2, 1)))
    right = cache.scores(np.array([1.0, 0.0]))
    wrong = cache.scores(np.array([1.0, 0.0]), position=0)
    assert_close(right, np.array([math.cos(2), math.cos(1)]) / math.sqrt(2))
    assert_close(wrong, np.array([1.0, math.cos(1)]) / math.sqrt(2))
